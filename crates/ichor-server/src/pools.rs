//! Every pool serve shares, each a [`Shares`] built here from the bounds in force, with its
//! numbers and why (docs/limits.md lists them with their tests). Priority levels, as
//! kube-apiserver's API Priority and Fairness has them: writes (start, pause, resume, delete),
//! reads, subscriptions and reflection each have pools of their own, so no read waits for a
//! write's slot nor a write for a read's; health is exempt (answered before any pool, as
//! kube-apiserver exempts its probes).

use super::metrics::Metrics;
use super::shares::{Pool, Queues, Shares};

/// What one person may hold of each pool, and how the callers who wait queue (`serve
/// --connections-per-person`, `--calls-per-person`, `--bodies-per-person`,
/// `--subscribing-per-person`, `--live-queries-per-person`, `--fair-queues`, `--queue-hand`,
/// `--queue-length`). Callers without a token (`--allow-anonymous`) are one person together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fairness {
    /// Connections one person's calls hold ([`CONNECTIONS_PER_PERSON`]).
    pub connections_per_person: usize,
    /// Reads one person has answered at once ([`CALLS_PER_PERSON`]).
    pub calls_per_person: usize,
    /// Bodies of one person's calls read at once, in each level ([`BODIES_PER_PERSON`]).
    pub bodies_per_person: usize,
    /// Subscriptions of one person set up at once ([`SUBSCRIBING_PER_PERSON`]).
    pub subscribing_per_person: usize,
    /// Distinct lists one person's streams keep up to date in one namespace
    /// ([`LIVE_QUERIES_PER_PERSON`]).
    pub live_queries_per_person: usize,
    /// How the callers who wait for a slot queue ([`QUEUES`]).
    pub queues: Queues,
}

/// A dashboard holds one connection, a CI job over HTTP/1.1 a few at once: 128 is a sixteenth
/// of [`super::MAX_CONNECTIONS`], so sixteen people at their share leave room, and one person
/// who opens thousands holds 128; past it the call is refused and its connection closed.
pub const CONNECTIONS_PER_PERSON: usize = 128;

/// A dashboard makes one call at a time, a CI job a few: 32 of the
/// [`super::MAX_CALLS_IN_FLIGHT`], so one person's slow or held calls leave seven eighths to
/// everyone else; more of that person's calls wait their turn.
pub const CALLS_PER_PERSON: usize = 32;

/// A request's body comes with its headers, in milliseconds: 8 bodies of one person being read
/// at once (or, read, waiting for their seat) in each level, so a person whose bodies never come
/// holds 8 slots until their deadline, and at most 8 of the largest requests in memory a level.
pub const BODIES_PER_PERSON: usize = 8;

/// A dashboard subscribes once, and again when its list changes: 8 of the
/// [`MAX_SUBSCRIBING`] turns, as many as [`super::MAX_STREAMS_PER_CALLER`] streams.
pub const SUBSCRIBING_PER_PERSON: usize = 8;

/// Two lists per person in a namespace: a dashboard's list and the next it moves to (its old
/// stream ends a moment later); a quarter of [`super::MAX_LIVE_QUERIES_PER_NAMESPACE`], so two
/// people at their share leave half of the namespace's lists to everyone else.
pub const LIVE_QUERIES_PER_PERSON: usize = 2;

/// kube-apiserver's default for its priority levels that queue: 64 queues, hands of 6, 50
/// waiting a queue. A person's waiters wait in one queue of its hand; two people share a whole
/// hand once in 75 million pairs.
pub const QUEUES: Queues = Queues {
    queues: 64,
    hand: 6,
    length: 50,
};

impl Default for Fairness {
    fn default() -> Fairness {
        Fairness {
            connections_per_person: CONNECTIONS_PER_PERSON,
            calls_per_person: CALLS_PER_PERSON,
            bodies_per_person: BODIES_PER_PERSON,
            subscribing_per_person: SUBSCRIBING_PER_PERSON,
            live_queries_per_person: LIVE_QUERIES_PER_PERSON,
            queues: QUEUES,
        }
    }
}

/// Subscriptions set up at once (from their body to their stream: the SubjectAccessReviews and
/// the shared watch), apart from the reads in flight: a WatchOperations call never counts
/// against [`super::MAX_CALLS_IN_FLIGHT`] (a live subscription is not a call being answered,
/// and a fleet of dashboards subscribing after a restart must not be refused by it). Each asks
/// Kubernetes two SubjectAccessReviews, one after the other, both creates: 64 at once stay well
/// within kube-apiserver's default of 200 mutating requests in flight
/// (`--max-mutating-requests-inflight`), leaving room for every other client, and set up a
/// thousand dashboards in a few seconds (each takes milliseconds). The next waits its turn in
/// its person's queue; the streams' own bounds ([`super::MAX_STREAMS`], per person and
/// anonymous) say when there is no room.
pub const MAX_SUBSCRIBING: usize = 64;

/// Writes answered at once: a person confirms each one; 32 leave room for a team's operators,
/// and no read waits for them (a level of their own).
pub const MAX_WRITES_IN_FLIGHT: usize = 32;

/// Writes one person has answered at once: a quarter of [`MAX_WRITES_IN_FLIGHT`].
pub const WRITES_PER_PERSON: usize = 8;

/// Reflection streams at once (grpcurl's `list` and `describe`): they are held for as long as
/// the tool runs.
pub const MAX_REFLECTION_STREAMS: usize = 16;

/// Reflection streams one person holds at once.
pub const REFLECTION_STREAMS_PER_PERSON: usize = 4;

/// TokenReviews asked at once, everyone's together (a token has no person until it is
/// reviewed): creates, as the subscriptions' SubjectAccessReviews are, well within
/// kube-apiserver's 200 mutating requests in flight. A reviewed token is remembered
/// ([`super::auth::REVIEW_TTL`]), so a dashboard's polls ask none.
pub const MAX_TOKEN_REVIEWS: usize = 64;

/// Tokens waiting for a review, first come first served; past it a call is refused at once.
/// Waiting does not keep a connection open: a connection without an authenticated call is
/// closed [`super::AUTHENTICATED_WITHIN`] after its accept, whatever its calls wait in.
pub const TOKEN_REVIEW_QUEUE: usize = 4096;

/// Whole-list reads of one person at once (of [`super::handlers::MAX_LISTS_IN_FLIGHT`]).
pub const LISTS_PER_PERSON: usize = 2;

/// A pool whose refusals name it `name` and `per_person` (anonymous callers' too).
fn pool(
    (name, per_person_name): (&'static str, &'static str),
    capacity: usize,
    per_person: usize,
    queues: Queues,
) -> Pool {
    let per_person = per_person.clamp(1, capacity.max(1));
    Pool {
        name,
        per_person_name,
        anonymous_name: per_person_name,
        capacity,
        per_person,
        anonymous: per_person,
        queues,
    }
}

/// One priority level: the bodies of its calls being read, then its seats.
#[derive(Clone)]
pub(crate) struct Level {
    pub(crate) bodies: Shares,
    pub(crate) seats: Shares,
}

impl Level {
    fn new(
        seats: (&'static str, &'static str),
        capacity: usize,
        per_person: usize,
        fairness: &Fairness,
        metrics: &Metrics,
    ) -> Level {
        let bodies = pool(
            ("bodies", "bodies_per_person"),
            capacity,
            fairness.bodies_per_person,
            fairness.queues,
        );
        Level {
            bodies: Shares::new(bodies, metrics.clone()),
            seats: Shares::new(
                pool(seats, capacity, per_person, fairness.queues),
                metrics.clone(),
            ),
        }
    }
}

/// Every pool of one server.
#[derive(Clone)]
pub(crate) struct Pools {
    /// The connections one person's calls hold (the bound in all is the accept loop's).
    pub(crate) connections: Shares,
    /// TokenReviews under way.
    pub(crate) reviews: Shares,
    pub(crate) reads: Level,
    pub(crate) writes: Level,
    pub(crate) subscribe: Level,
    pub(crate) reflection: Shares,
    /// ListOperations read whole from the API.
    pub(crate) lists: Shares,
}

impl Pools {
    pub(crate) fn new(bounds: &super::Bounds, metrics: &Metrics) -> Pools {
        let f = &bounds.fairness;
        let shares = |p: Pool| Shares::new(p, metrics.clone());
        Pools {
            connections: shares(pool(
                ("connections", "connections_per_person"),
                bounds.connections,
                f.connections_per_person,
                Queues::NONE,
            )),
            reviews: shares(pool(
                ("token_reviews", "token_reviews"),
                MAX_TOKEN_REVIEWS,
                MAX_TOKEN_REVIEWS,
                Queues::single(TOKEN_REVIEW_QUEUE),
            )),
            reads: Level::new(
                ("calls_in_flight", "calls_per_person"),
                super::MAX_CALLS_IN_FLIGHT,
                f.calls_per_person,
                f,
                metrics,
            ),
            writes: Level::new(
                ("writes_in_flight", "writes_per_person"),
                MAX_WRITES_IN_FLIGHT,
                WRITES_PER_PERSON,
                f,
                metrics,
            ),
            subscribe: Level::new(
                ("subscribing", "subscribing_per_person"),
                MAX_SUBSCRIBING,
                f.subscribing_per_person,
                f,
                metrics,
            ),
            reflection: shares(pool(
                ("reflection_streams", "reflection_streams_per_person"),
                MAX_REFLECTION_STREAMS,
                REFLECTION_STREAMS_PER_PERSON,
                f.queues,
            )),
            lists: shares(pool(
                ("lists_in_flight", "lists_per_person"),
                super::handlers::MAX_LISTS_IN_FLIGHT,
                LISTS_PER_PERSON,
                f.queues,
            )),
        }
    }
}
