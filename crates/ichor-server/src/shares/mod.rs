//! Shares by person: one type for every pool serve shares (connections, token reviews, bodies
//! being read, calls in flight, subscribe turns, whole-list reads, streams), so that no person
//! can take what others need, as kube-apiserver's API Priority and Fairness shares a priority
//! level's seats among flows.
//!
//! - A pool has `capacity` slots in all; one person holds at most `per_person` of them (all the
//!   callers without a token, under `--allow-anonymous`, are one person: [`Person::Anonymous`]).
//! - A caller who finds no slot it may take waits in a queue, when the pool has queues: its
//!   person's hash deals a hand of queues (shuffle sharding, [`dealer`]) and it waits in the
//!   shortest of them, at most `length` to a queue; past that, or past its wait's end, it is
//!   refused. A pool without queues refuses at once.
//! - A slot given back goes to a waiter whose person is under its share, the one whose person
//!   holds fewest (so a person who holds nothing gets the next free slot), queues taken in turn
//!   for ties (fair queuing: each queue served in turn, not the longest first).
//!
//! A refusal names its bound as the others do (`limit`: the pool's name, or its per-person
//! name when the person holds its share already; `max`: that bound's number), counted in
//! `ichor_serve_refused_total` under the same name.

pub(crate) mod dealer;
#[cfg(test)]
mod tests;

use super::metrics::Metrics;
use ichor_model::{ApiError, Code, Reason};
use ichor_service::access::Caller;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher as _;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Who a slot is counted against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Person {
    /// The user a TokenReview named.
    Named(Arc<str>),
    /// Every caller without a token (`--allow-anonymous`): one person together.
    Anonymous,
    /// Every caller whose token is still to be reviewed: one person together, since a token
    /// says who it is only once Kubernetes has said so.
    Undecided,
}

impl Person {
    /// The person a caller is.
    pub(crate) fn of(caller: &Caller) -> Person {
        match &caller.identity {
            Some(id) => Person::Named(Arc::from(id.user.as_str())),
            None => Person::Anonymous,
        }
    }
}

/// How a pool's waiters queue (`serve --fair-queues`, `--queue-hand`, `--queue-length`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queues {
    /// How many queues; 0: none (a caller without a slot is refused at once).
    pub queues: usize,
    /// How many of them one person's hash deals (its waiters go to the shortest).
    pub hand: usize,
    /// How many wait in one queue at most.
    pub length: usize,
}

impl Queues {
    /// No queue: refused at once (a connection or a stream has nothing to wait for).
    pub(crate) const NONE: Queues = Queues {
        queues: 0,
        hand: 0,
        length: 0,
    };

    /// One queue, first come first served, `length` long: for the one person there is.
    pub(crate) fn single(length: usize) -> Queues {
        Queues {
            queues: 1,
            hand: 1,
            length,
        }
    }
}

/// A pool: its names, its size and its shares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pool {
    /// Its name in refusals and metrics (e.g. `calls_in_flight`).
    pub(crate) name: &'static str,
    /// The refusal's name when the person holds its share already (e.g. `calls_per_person`).
    pub(crate) per_person_name: &'static str,
    /// The same for [`Person::Anonymous`].
    pub(crate) anonymous_name: &'static str,
    pub(crate) capacity: usize,
    pub(crate) per_person: usize,
    /// The share of [`Person::Anonymous`] (callers without a token, together).
    pub(crate) anonymous: usize,
    pub(crate) queues: Queues,
}

/// A refusal by a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) limit: &'static str,
    pub(crate) max: usize,
    /// The person held its whole share when refused: it asks for more than it may hold.
    pub(crate) over_share: bool,
}

impl Refused {
    /// RESOURCE_EXHAUSTED, LIMIT_REACHED naming the bound, with the retry advice a call over a
    /// bound gets (`retry`, in seconds; `Retry-After` says the same).
    pub(crate) fn error(self) -> ApiError {
        ApiError::said(
            Code::ResourceExhausted,
            Reason::LimitReached,
            &[
                ("limit", self.limit),
                ("max", &self.max.to_string()),
                ("retry", &super::front::RETRY_AFTER_SECONDS.to_string()),
            ],
        )
    }
}

/// One caller waiting in a queue.
struct Waiter {
    id: u64,
    person: Person,
    grant: oneshot::Sender<Seat>,
}

/// What is held and who waits.
#[derive(Default)]
struct State {
    all: usize,
    held: HashMap<Person, usize>,
    waiting: Vec<VecDeque<Waiter>>,
    /// The queue served first when people hold as few as each other (taken in turn).
    turn: usize,
    next_id: u64,
}

impl State {
    fn held(&self, p: &Person) -> usize {
        self.held.get(p).copied().unwrap_or(0)
    }

    fn hold(&mut self, p: &Person) {
        self.all += 1;
        *self.held.entry(p.clone()).or_default() += 1;
    }

    fn give_back(&mut self, p: &Person) {
        self.all = self.all.saturating_sub(1);
        if let Some(n) = self.held.get_mut(p) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.held.remove(p);
            }
        }
    }
}

struct Inner {
    pool: Pool,
    hasher: std::collections::hash_map::RandomState,
    metrics: Metrics,
    state: Mutex<State>,
}

/// A pool shared by person; cloned cheaply (every clone is the same pool).
#[derive(Clone)]
pub(crate) struct Shares(Arc<Inner>);

/// One slot of a pool, given back when dropped.
pub(crate) struct Seat {
    shares: Arc<Inner>,
    person: Person,
}

impl Drop for Seat {
    fn drop(&mut self) {
        let undelivered = {
            let mut state = self.shares.lock();
            state.give_back(&self.person);
            self.shares.dispatch(&mut state)
        };
        // Seats whose waiter went away give themselves back, with the lock released.
        drop(undelivered);
    }
}

impl std::fmt::Debug for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Seat({}, {:?})", self.shares.pool.name, self.person)
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn share_of(&self, p: &Person) -> usize {
        match p {
            Person::Anonymous => self.pool.anonymous,
            Person::Named(_) | Person::Undecided => self.pool.per_person,
        }
    }

    fn may_take(&self, state: &State, p: &Person) -> bool {
        state.held(p) < self.share_of(p)
    }

    /// The refusal of `p` now: its share's when it holds its share, else the pool's.
    fn refusal(&self, state: &State, p: &Person) -> Refused {
        let share = self.share_of(p);
        let over_share = state.held(p) >= share;
        let (limit, max) = match (over_share, p) {
            (true, Person::Anonymous) => (self.pool.anonymous_name, share),
            (true, _) => (self.pool.per_person_name, share),
            (false, _) => (self.pool.name, self.pool.capacity),
        };
        let refused = Refused {
            limit,
            max,
            over_share,
        };
        self.metrics.refused(refused.limit);
        refused
    }

    /// The waiter to serve next: in each queue the first whose person is under its share; of
    /// those, the one whose person holds fewest, queues in turn from `state.turn` for ties.
    fn next_waiter(&self, state: &State) -> Option<(usize, usize)> {
        let n = state.waiting.len();
        let mut best: Option<(usize, usize, usize)> = None;
        for k in 0..n {
            let q = (state.turn + k) % n;
            let Some(i) = state.waiting[q]
                .iter()
                .position(|w| !w.grant.is_closed() && self.may_take(state, &w.person))
            else {
                continue;
            };
            let held = state.held(&state.waiting[q][i].person);
            if best.is_none_or(|(fewest, _, _)| held < fewest) {
                best = Some((held, q, i));
                if held == 0 {
                    break;
                }
            }
        }
        best.map(|(_, q, i)| (q, i))
    }

    /// Gives free slots to waiters; returns the seats whose waiters had gone (to be dropped
    /// once the lock is released).
    fn dispatch(self: &Arc<Self>, state: &mut State) -> Vec<Seat> {
        for queue in &mut state.waiting {
            queue.retain(|w| !w.grant.is_closed());
        }
        let mut undelivered = Vec::new();
        while state.all < self.pool.capacity {
            let Some((q, i)) = self.next_waiter(state) else {
                break;
            };
            let Some(waiter) = state.waiting[q].remove(i) else {
                break;
            };
            state.turn = (q + 1) % state.waiting.len().max(1);
            state.hold(&waiter.person);
            let seat = Seat {
                shares: self.clone(),
                person: waiter.person,
            };
            if let Err(seat) = waiter.grant.send(seat) {
                undelivered.push(seat);
            }
        }
        undelivered
    }
}

/// Takes a waiter out of its queue if it is still there when its wait ends.
struct Waiting {
    shares: Arc<Inner>,
    queue: usize,
    id: u64,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut state = self.shares.lock();
        if let Some(q) = state.waiting.get_mut(self.queue) {
            q.retain(|w| w.id != self.id);
        }
    }
}

impl Shares {
    /// A pool as `pool` says, its refusals counted in `metrics`.
    pub(crate) fn new(pool: Pool, metrics: Metrics) -> Shares {
        let state = State {
            waiting: (0..pool.queues.queues).map(|_| VecDeque::new()).collect(),
            ..State::default()
        };
        Shares(Arc::new(Inner {
            pool,
            hasher: Default::default(),
            metrics,
            state: Mutex::new(state),
        }))
    }

    /// A slot for `person` now, or the refusal (no waiting).
    pub(crate) fn try_take(&self, person: &Person) -> Result<Seat, Refused> {
        let inner = &self.0;
        let mut state = inner.lock();
        match self.seat_now(&mut state, person) {
            Some(seat) => Ok(seat),
            None => Err(inner.refusal(&state, person)),
        }
    }

    /// A slot for `person` if the pool and its share have one free now.
    fn seat_now(&self, state: &mut State, person: &Person) -> Option<Seat> {
        let inner = &self.0;
        if state.all < inner.pool.capacity && inner.may_take(state, person) {
            state.hold(person);
            return Some(Seat {
                shares: inner.clone(),
                person: person.clone(),
            });
        }
        None
    }

    /// A slot for `person`: now, or after waiting in its queue until `until` (without one, until
    /// it is served or the caller goes away); refused when its queues are full or the wait ends.
    pub(crate) async fn take(
        &self,
        person: &Person,
        until: Option<Instant>,
    ) -> Result<Seat, Refused> {
        let inner = &self.0;
        let (granted, waiting) = {
            let mut state = inner.lock();
            if let Some(seat) = self.seat_now(&mut state, person) {
                return Ok(seat);
            }
            let Some(queue) = self.shortest_queue(&state, person) else {
                return Err(inner.refusal(&state, person));
            };
            let (grant, granted) = oneshot::channel();
            let id = state.next_id;
            state.next_id += 1;
            state.waiting[queue].push_back(Waiter {
                id,
                person: person.clone(),
                grant,
            });
            let waiting = Waiting {
                shares: inner.clone(),
                queue,
                id,
            };
            (granted, waiting)
        };
        let served = match until {
            Some(at) => tokio::time::timeout_at(at, granted).await.ok(),
            None => Some(granted.await),
        };
        drop(waiting);
        match served {
            Some(Ok(seat)) => Ok(seat),
            // The wait ended (or the pool went away with its waiters).
            _ => Err(inner.refusal(&inner.lock(), person)),
        }
    }

    /// The queue of `person`'s hand its waiters wait in already, else the shortest of its
    /// hand; `None` when that one is full. A person's waiters stay in one queue, so serving
    /// the queues in turn serves the people in turn.
    fn shortest_queue(&self, state: &State, person: &Person) -> Option<usize> {
        let q = self.0.pool.queues;
        if q.queues == 0 || q.length == 0 {
            return None;
        }
        let hash = self.0.hasher.hash_one(person);
        let hand = dealer::deal(hash, q.queues, q.hand.max(1));
        let theirs = hand
            .iter()
            .copied()
            .find(|&i| state.waiting[i].iter().any(|w| w.person == *person));
        theirs
            .or_else(|| hand.into_iter().min_by_key(|&i| state.waiting[i].len()))
            .filter(|&i| state.waiting[i].len() < q.length)
    }

    /// How many slots are held, in all and by `person` (for tests and the benchmarks' checks).
    #[cfg(test)]
    pub(crate) fn held(&self, person: &Person) -> (usize, usize) {
        let state = self.0.lock();
        (state.all, state.held(person))
    }
}
