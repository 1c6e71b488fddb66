//! What WatchOperations' streams may hold of `serve`, per person and in all: a stream's place is
//! taken before anything is asked of Kubernetes, and given back when the stream ends. Streams
//! are bounded per person ([`MAX_STREAMS_PER_CALLER`]), for anonymous callers together
//! ([`MAX_ANONYMOUS_STREAMS`]) and in all ([`MAX_STREAMS`]); the distinct lists they keep up to
//! date (each a page made again at every change) per person in a namespace
//! (`--live-queries-per-person`, [`crate::pools::LIVE_QUERIES_PER_PERSON`]: so another person's
//! list in that namespace is served), per person in all, per namespace and in all
//! ([`MAX_LIVE_QUERIES_PER_CALLER`], [`MAX_LIVE_QUERIES_PER_NAMESPACE`], [`MAX_LIVE_QUERIES`]).
//! The stream counts are a [`Shares`] without queues.
//! A refusal is RESOURCE_EXHAUSTED with reason LIMIT_REACHED naming the bound (`limit`, the
//! label it is counted under in `ichor_serve_refused_total`) and its number (`max`).

use super::metrics::Metrics;
use super::shares::{Person, Pool, Queues, Seat, Shares};
use ichor_model::{ApiError, Code, ListQuery, Reason};
use ichor_service::access::Caller;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How many streams one person may hold at once (a dashboard holds one; `--follow` another).
pub const MAX_STREAMS_PER_CALLER: usize = 8;

/// How many streams the anonymous callers of `--allow-anonymous` hold at once, all together:
/// they cannot be told apart (each acts as the server). A team's dashboards on a trusted
/// network, and at most a thirty-second of [`MAX_STREAMS`], so they never crowd out named
/// people.
pub const MAX_ANONYMOUS_STREAMS: usize = 64;

/// How many streams serve holds at once, everyone's together: a dashboard's stream, with its
/// connection, costs serve tens of kilobytes, nearly all of it the connection's HTTP/2 buffers
/// (measured by `cargo bench --bench fleet`: docs/performance.md), so this bounds the memory
/// streams take; twice the thousand dashboards a restart must take back at once. `serve
/// --max-streams` raises it for a larger fleet.
pub const MAX_STREAMS: usize = 2048;

/// How many distinct queries (filters, order, page size) the streams keep up to date in one
/// namespace (all namespaces together count as one more): each is a page made again at every
/// change there, under the lock the namespace's lists read from (what that costs at 10,000
/// operations: `cargo bench --bench queries`, docs/performance.md). Streams that share a query share its
/// page: a dashboard's default list is one query for the whole fleet. Eight leave room for a
/// team's filtered and ordered lists and bound a change's work to 16 pages (its namespace's and
/// all namespaces'); the store keeps as many pages a revision
/// ([`ichor_service::store::KEPT_PAGES`]), so none is made twice.
pub const MAX_LIVE_QUERIES_PER_NAMESPACE: usize = ichor_service::store::KEPT_PAGES;

/// How many distinct queries the streams keep, everyone's together: two in each namespace serve
/// may watch ([`ichor_service::shared::MAX_WATCHES`]), a dashboard's default list and one other.
pub const MAX_LIVE_QUERIES: usize = 2 * ichor_service::shared::MAX_WATCHES;

/// How many of those one person's streams may bring in (anonymous callers together count as
/// one): two dashboards' lists, each while it moves to its next list (a dashboard subscribes
/// anew when its filter, order or rows held change, and its old stream ends a moment later).
/// Joining a query someone else's stream already keeps costs nothing more and is not counted.
pub const MAX_LIVE_QUERIES_PER_CALLER: usize = 4;

/// A query the streams keep, and how many streams of each person keep it.
struct Live {
    query: ListQuery,
    holders: HashMap<Person, usize>,
}

/// The queries the streams keep, and how many one person may bring into one namespace.
struct Queries {
    live: Vec<Live>,
    per_person_in_namespace: usize,
}

/// The query as the streams share it: the version a caller holds is its own.
fn live_key(q: &ListQuery) -> ListQuery {
    ListQuery {
        known_version: None,
        ..q.clone()
    }
}

/// The streams each person holds (a [`Shares`] without queues: a stream waits for nothing) and
/// the queries they keep, counted in the server's metrics (subscribers open; a stream refused
/// by a bound as `refused{limit="..."}`, the bound's name).
#[derive(Clone)]
pub(crate) struct Streams {
    count: Shares,
    queries: Arc<Mutex<Queries>>,
    metrics: Metrics,
}

impl Default for Streams {
    fn default() -> Streams {
        Streams::counted(Metrics::default(), &crate::Bounds::default())
    }
}

/// One stream's place, given back when the stream ends.
pub(crate) struct Place {
    _seat: Seat,
    streams: Streams,
    who: Person,
    query: ListQuery,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.streams.metrics.subscriber_left();
        let mut queries = self.streams.lock();
        if let Some(live) = queries.live.iter_mut().find(|l| l.query == self.query)
            && let Some(n) = live.holders.get_mut(&self.who)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                live.holders.remove(&self.who);
            }
        }
        queries.live.retain(|l| !l.holders.is_empty());
    }
}

/// The refusal of anything over a bound: `limit` names it (as the metrics do), `max` is its
/// number. Said in `locales/*/errors.ftl` (`error-limit-reached`).
pub(crate) fn over(limit: &str, max: usize) -> ApiError {
    ApiError::said(
        Code::ResourceExhausted,
        Reason::LimitReached,
        &[("limit", limit), ("max", &max.to_string())],
    )
}

/// The bound a stream of `who` keeping `query` would pass by bringing in a query not kept yet,
/// if any, and its number: the person's own bounds first (in the namespace, then in all), then
/// the namespace's, then everyone's.
fn query_bound_passed(
    queries: &Queries,
    who: &Person,
    query: &ListQuery,
) -> Option<(&'static str, usize)> {
    if queries.live.iter().any(|l| l.query == *query) {
        // Joining a list kept already costs nothing more.
        return None;
    }
    let here = |l: &&Live| l.query.namespace == query.namespace;
    let mine = |l: &&Live| l.holders.contains_key(who);
    let mine_here = queries.live.iter().filter(here).filter(mine).count();
    if mine_here >= queries.per_person_in_namespace {
        Some((
            "live_queries_per_caller_in_namespace",
            queries.per_person_in_namespace,
        ))
    } else if queries.live.iter().filter(mine).count() >= MAX_LIVE_QUERIES_PER_CALLER {
        Some(("live_queries_per_caller", MAX_LIVE_QUERIES_PER_CALLER))
    } else if queries.live.iter().filter(here).count() >= MAX_LIVE_QUERIES_PER_NAMESPACE {
        Some(("live_queries_per_namespace", MAX_LIVE_QUERIES_PER_NAMESPACE))
    } else if queries.live.len() >= MAX_LIVE_QUERIES {
        Some(("live_queries", MAX_LIVE_QUERIES))
    } else {
        None
    }
}

impl Streams {
    /// Streams counted in `metrics`, at most `bounds.streams` of them at once.
    pub(crate) fn counted(metrics: Metrics, bounds: &crate::Bounds) -> Streams {
        let pool = Pool {
            name: "streams",
            per_person_name: "streams_per_caller",
            anonymous_name: "anonymous_streams",
            capacity: bounds.streams,
            per_person: MAX_STREAMS_PER_CALLER,
            anonymous: MAX_ANONYMOUS_STREAMS,
            queues: Queues::NONE,
        };
        let queries = Queries {
            live: Vec::new(),
            per_person_in_namespace: bounds.fairness.live_queries_per_person.max(1),
        };
        Streams {
            count: Shares::new(pool, metrics.clone()),
            queries: Arc::new(Mutex::new(queries)),
            metrics,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queries> {
        self.queries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for one more stream of `caller` keeping `query`, or RESOURCE_EXHAUSTED naming
    /// the bound.
    pub(crate) fn take(&self, caller: &Caller, query: &ListQuery) -> Result<Place, ApiError> {
        let who = Person::of(caller);
        let query = live_key(query);
        let seat = self
            .count
            .try_take(&who)
            .map_err(|r| over(r.limit, r.max))?;
        let mut queries = self.lock();
        if let Some((limit, max)) = query_bound_passed(&queries, &who, &query) {
            self.metrics.refused(limit);
            return Err(over(limit, max));
        }
        match queries.live.iter_mut().find(|l| l.query == query) {
            Some(live) => *live.holders.entry(who.clone()).or_default() += 1,
            None => queries.live.push(Live {
                query: query.clone(),
                holders: HashMap::from([(who.clone(), 1)]),
            }),
        }
        drop(queries);
        self.metrics.subscriber_joined();
        Ok(Place {
            _seat: seat,
            streams: self.clone(),
            who,
            query,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn person(i: usize) -> Caller {
        Caller::user(&format!("person-{i}"), &[])
    }

    /// The `i`th of many distinct lists in namespace `default`.
    pub(crate) fn list(i: usize) -> ListQuery {
        in_namespace("default", i)
    }

    fn in_namespace(ns: &str, i: usize) -> ListQuery {
        ListQuery {
            namespace: Some(ns.into()),
            page_size: 1 + u32::try_from(i).unwrap(),
            ..ListQuery::default()
        }
    }

    #[test]
    fn each_person_anonymous_callers_and_everyone_have_their_bounds() {
        let streams = Streams::default();
        let take = |c: &Caller| streams.take(c, &list(0));
        let mine: Vec<Place> = (0..MAX_STREAMS_PER_CALLER)
            .map(|_| take(&person(0)).unwrap())
            .collect();
        let e = take(&person(0)).err().unwrap();
        assert_eq!(e.param("limit"), Some("streams_per_caller"), "{e:?}");
        assert_eq!(e.reason, Some(Reason::LimitReached));
        assert_eq!(
            e.message,
            "You hold 8 streams of updates already: close one first."
        );
        let anonymous: Vec<Place> = (0..MAX_ANONYMOUS_STREAMS)
            .map(|_| take(&Caller::in_process()).unwrap())
            .collect();
        let e = take(&Caller::in_process()).err().unwrap();
        assert_eq!(e.param("limit"), Some("anonymous_streams"), "{e:?}");
        let held = mine.len() + anonymous.len();
        let rest: Vec<Place> = (held..MAX_STREAMS)
            .map(|i| take(&person(1 + i / MAX_STREAMS_PER_CALLER)).unwrap())
            .collect();
        let e = take(&person(usize::MAX)).err().unwrap();
        assert_eq!(e.code, Code::ResourceExhausted);
        assert_eq!(e.param("limit"), Some("streams"), "{e:?}");
        assert_eq!(e.param("max"), Some("2048"), "{e:?}");
        drop(mine);
        take(&person(usize::MAX)).expect("a place given back is taken");
        drop((anonymous, rest));
        assert!(streams.lock().live.is_empty());
    }

    #[test]
    fn distinct_queries_are_bounded_per_person_per_namespace_and_in_all() {
        use crate::pools::LIVE_QUERIES_PER_PERSON;
        let streams = Streams::default();
        let _mine: Vec<Place> = (0..LIVE_QUERIES_PER_PERSON)
            .map(|i| streams.take(&person(0), &list(i)).unwrap())
            .collect();
        let e = streams.take(&person(0), &list(999)).err().unwrap();
        assert_eq!(
            e.param("limit"),
            Some("live_queries_per_caller_in_namespace"),
            "{e:?}"
        );
        let again = ListQuery {
            known_version: Some("v1".into()),
            ..list(0)
        };
        let _same = streams
            .take(&person(0), &again)
            .expect("a query kept already, whatever version is held");
        let _elsewhere: Vec<Place> = (0..MAX_LIVE_QUERIES_PER_CALLER - LIVE_QUERIES_PER_PERSON)
            .map(|i| streams.take(&person(0), &in_namespace("other", i)).unwrap())
            .collect();
        let e = streams
            .take(&person(0), &in_namespace("third", 0))
            .err()
            .unwrap();
        assert_eq!(e.param("limit"), Some("live_queries_per_caller"), "{e:?}");
        // Three more people fill the namespace, two lists each.
        let others: Vec<Place> = (LIVE_QUERIES_PER_PERSON..MAX_LIVE_QUERIES_PER_NAMESPACE)
            .map(|i| streams.take(&person(1 + i / 2), &list(i)).unwrap())
            .collect();
        let e = streams.take(&person(999), &list(999)).err().unwrap();
        assert_eq!(
            e.param("limit"),
            Some("live_queries_per_namespace"),
            "{e:?}"
        );
        let _joined = streams
            .take(&person(999), &list(0))
            .expect("joining a query kept costs nothing");
        drop(others);
        let _back = streams
            .take(&person(998), &list(999))
            .expect("a query given back makes room");
        let kept = streams.lock().live.len();
        let spread: Vec<Place> = (kept..MAX_LIVE_QUERIES)
            .map(|i| streams.take(&person(1000 + i), &in_namespace(&format!("ns-{i}"), i)))
            .collect::<Result<_, _>>()
            .unwrap();
        let e = streams
            .take(&person(2000), &in_namespace("ns-last", 0))
            .err()
            .unwrap();
        assert_eq!(e.param("limit"), Some("live_queries"), "{e:?}");
        drop(spread);
    }
}
