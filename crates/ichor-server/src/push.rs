//! WatchOperations in `serve`: each subscriber reads the shared watch of its namespace once
//! Kubernetes said it may list and watch there; it is asked again every minute, and a revoked
//! permission ends the stream with PERMISSION_DENIED ([`ichor_service::shared::SharedReads::watch_operations`]). A
//! caller holds at most
//! [`MAX_STREAMS_PER_CALLER`] streams.

use crate::wire::{self, proto};
use futures::{Stream, StreamExt as _};
use ichor_model::{ApiError, Code, ListQuery};
use ichor_service::access::Caller;
use ichor_service::feed::{Pushed, Pushes};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// How many streams one person may hold at once (a dashboard holds one; `--follow` another).
pub const MAX_STREAMS_PER_CALLER: usize = 8;

/// How many streams the anonymous callers of `--allow-anonymous` hold at once, all together:
/// they cannot be told apart (each acts as the server). A team's dashboards on a trusted
/// network, and at most a thirty-second of [`MAX_STREAMS`], so they never crowd out named
/// people.
pub const MAX_ANONYMOUS_STREAMS: usize = 64;

/// How many streams serve holds at once, everyone's together: each costs about 70 KiB at the
/// dashboard's 100 summaries a page (the subscribers bench: 44 MiB with 20, 113 MiB with 1,000,
/// at 10,000 operations), so 2,048 stay within about 200 MiB; twice the thousand dashboards a
/// restart must take back at once.
pub const MAX_STREAMS: usize = 2048;

/// The stream tonic sends.
pub(crate) type WatchStream =
    Pin<Box<dyn Stream<Item = Result<proto::WatchOperationsResponse, tonic::Status>> + Send>>;

/// How many distinct queries (namespace, filters, order, page size) the streams keep up to date
/// at once, everyone's together. Each costs a page made again at every change (at 10,000
/// operations and 1,000 a page, about a millisecond and a half: `cargo bench --bench queries`);
/// streams that share a query share the page. A dashboard's default list is one query for the
/// whole fleet; 16 leave room for a team's filtered and ordered lists, and bound the work of a
/// change.
pub const MAX_LIVE_QUERIES: usize = 16;

/// How many of those one person's streams may bring in (anonymous callers together count as
/// one): two dashboards' lists, each while it moves to its next list (a dashboard subscribes
/// anew when its filter, order or rows held change, and its old stream ends a moment later).
/// Joining a query someone else's stream already keeps costs nothing more and is not counted.
pub const MAX_LIVE_QUERIES_PER_CALLER: usize = 4;

/// A query the streams keep, and how many streams of each person keep it.
struct Live {
    query: ListQuery,
    holders: HashMap<Option<String>, usize>,
}

/// The streams held, by person (anonymous callers under `None`) and in all, and their queries.
struct Held {
    by: HashMap<Option<String>, usize>,
    all: usize,
    queries: Vec<Live>,
    /// The bound of `all` (`serve --max-streams`, [`MAX_STREAMS`] unless said).
    max_streams: usize,
}

impl Default for Held {
    fn default() -> Held {
        Held {
            by: HashMap::new(),
            all: 0,
            queries: Vec::new(),
            max_streams: MAX_STREAMS,
        }
    }
}

/// The query as the streams share it: the version a caller holds is its own.
fn live_key(q: &ListQuery) -> ListQuery {
    ListQuery {
        known_version: None,
        ..q.clone()
    }
}

/// The streams each caller holds, counted in the server's metrics (subscribers open; a stream
/// refused by a bound as `refused{limit="streams_per_caller"}`, `"anonymous_streams"`,
/// `"streams"`, `"queries_per_caller"` or `"queries"`).
#[derive(Clone, Default)]
pub(crate) struct Streams(Arc<Mutex<Held>>, super::metrics::Metrics);

/// One stream's place, given back when the stream ends.
pub(crate) struct Place {
    streams: Streams,
    who: Option<String>,
    query: ListQuery,
}

/// Takes one off `who`'s count in `counts`, forgetting a count that reaches 0.
fn give_back(counts: &mut HashMap<Option<String>, usize>, who: &Option<String>) {
    if let Some(n) = counts.get_mut(who) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            counts.remove(who);
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.streams.1.subscriber_left();
        let mut held = self.streams.lock();
        held.all = held.all.saturating_sub(1);
        give_back(&mut held.by, &self.who);
        if let Some(live) = held.queries.iter_mut().find(|l| l.query == self.query) {
            give_back(&mut live.holders, &self.who);
        }
        held.queries.retain(|l| !l.holders.is_empty());
    }
}

/// The refusal of a stream over a bound.
fn over(limit: &str, message: String) -> ApiError {
    ApiError::refused(
        Code::ResourceExhausted,
        ichor_model::Reason::Unavailable,
        &[("limit", limit)],
        message,
    )
}

/// Why one more stream of `who` keeping `query` is refused, if it is: its metrics label and the
/// refusal.
fn refusal(
    held: &Held,
    who: &Option<String>,
    query: &ListQuery,
) -> Option<(&'static str, ApiError)> {
    let mine = held.by.get(who).copied().unwrap_or(0);
    let live = held.queries.iter().any(|l| l.query == *query);
    let my_queries = held
        .queries
        .iter()
        .filter(|l| l.holders.contains_key(who))
        .count();
    let (label, limit, message) = if held.all >= held.max_streams {
        (
            "streams",
            "streams",
            format!(
                "the server holds {} streams of updates, its limit: poll, and subscribe again later",
                held.max_streams
            ),
        )
    } else if who.is_none() && mine >= MAX_ANONYMOUS_STREAMS {
        (
            "anonymous_streams",
            "anonymous streams",
            format!(
                "callers without a token hold {MAX_ANONYMOUS_STREAMS} streams of updates together, their limit: send a token, or close one"
            ),
        )
    } else if who.is_some() && mine >= MAX_STREAMS_PER_CALLER {
        (
            "streams_per_caller",
            "streams per caller",
            format!(
                "you hold {MAX_STREAMS_PER_CALLER} streams of updates already: close one first"
            ),
        )
    } else if !live && held.queries.len() >= MAX_LIVE_QUERIES {
        (
            "queries",
            "live queries",
            format!(
                "the server keeps {MAX_LIVE_QUERIES} distinct lists up to date, its limit: poll this one, or subscribe with a list someone already keeps"
            ),
        )
    } else if !live && my_queries >= MAX_LIVE_QUERIES_PER_CALLER {
        (
            "queries_per_caller",
            "live queries per caller",
            format!(
                "your streams keep {MAX_LIVE_QUERIES_PER_CALLER} distinct lists up to date already: close one, or poll this one"
            ),
        )
    } else {
        return None;
    };
    Some((label, over(limit, message)))
}

impl Streams {
    /// Streams counted in `metrics`, at most `max_streams` of them at once.
    pub(crate) fn counted(metrics: super::metrics::Metrics, max_streams: usize) -> Streams {
        let held = Held {
            max_streams,
            ..Held::default()
        };
        Streams(Arc::new(Mutex::new(held)), metrics)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for one more stream of `caller` keeping `query`, or RESOURCE_EXHAUSTED naming
    /// the bound.
    pub(crate) fn take(&self, caller: &Caller, query: &ListQuery) -> Result<Place, ApiError> {
        let who = caller.identity.as_ref().map(|i| i.user.clone());
        let query = live_key(query);
        let mut held = self.lock();
        if let Some((label, e)) = refusal(&held, &who, &query) {
            self.1.refused(label);
            return Err(e);
        }
        *held.by.entry(who.clone()).or_default() += 1;
        held.all += 1;
        match held.queries.iter_mut().find(|l| l.query == query) {
            Some(live) => *live.holders.entry(who.clone()).or_default() += 1,
            None => held.queries.push(Live {
                query: query.clone(),
                holders: HashMap::from([(who.clone(), 1)]),
            }),
        }
        self.1.subscriber_joined();
        Ok(Place {
            streams: self.clone(),
            who,
            query,
        })
    }
}

/// The caller's token, reviewed again by TokenReview every `every` (as the permission is
/// rechecked): a token Kubernetes no longer accepts ends the stream with UNAUTHENTICATED.
pub(crate) struct Review {
    pub(crate) auth: Arc<super::auth::Authenticator>,
    /// The call's `authorization` header alone (none for an anonymous caller).
    pub(crate) headers: http::HeaderMap,
    pub(crate) every: std::time::Duration,
}

impl Review {
    /// Completes with the refusal of the token at the first review that refuses it.
    async fn refused(&self) -> ApiError {
        loop {
            tokio::time::sleep(self.every).await;
            // Boxed while it runs: a stream waits on this future between reviews, and the
            // review's own state (about 6 KiB) would otherwise be held by every stream.
            if let Err(e) = Box::pin(self.auth.caller(&self.headers)).await {
                return e;
            }
        }
    }

    /// The reviews, under way from now until one refuses the token.
    pub(crate) fn ends(self) -> Refused {
        Box::pin(async move { self.refused().await })
    }
}

/// Completes with the refusal that ends a stream ([`Review::ends`]).
pub(crate) type Refused = Pin<Box<dyn std::future::Future<Output = ApiError> + Send>>;

/// What a subscriber's stream is kept under: its place among the caller's streams, the review
/// of its token, the server's stop, and the call's deadline.
pub(crate) struct Watched {
    #[expect(
        dead_code,
        reason = "held: dropped with the stream, it gives the place back"
    )]
    pub(crate) place: Place,
    pub(crate) refused: Refused,
    pub(crate) stop: tokio::sync::watch::Receiver<bool>,
    /// `grpc-timeout` or `Connect-Timeout-Ms` from the call's start: the stream ends there.
    pub(crate) deadline: Option<tokio::time::Instant>,
}

/// A subscriber's updates until its stream ends: after its error, if one ends it.
pub(crate) type Stopped = Pin<Box<dyn Stream<Item = Result<Pushed, ApiError>> + Send>>;

/// The updates as the routes send them (Kubernetes asked again every recheck whether the caller
/// may still list and watch: [`ichor_service::shared::SharedReads::watch_operations`], and
/// whether it still accepts the caller's token: [`Review`]); the server's shutdown ends the
/// stream with UNAVAILABLE, the call's deadline with DEADLINE_EXCEEDED (and either gives its
/// place back at once).
pub(crate) fn until_stopped(updates: Pushes, watched: Watched) -> Stopped {
    struct S {
        updates: Pushes,
        w: Watched,
    }
    let state = S {
        updates,
        w: watched,
    };
    let stream = futures::stream::unfold(Some(state), |s| async move {
        let mut s = s?;
        let item = tokio::select! {
            next = s.updates.next() => next?,
            e = &mut s.w.refused => {
                tracing::info!(code = ?e.code, "a stream's token was refused at its review: the stream ends");
                Err(e)
            }
            () = stopped(&mut s.w.stop) => Err(ApiError::new(
                Code::Unavailable,
                "the server is shutting down: subscribe again",
            )),
            () = until(s.w.deadline) => Err(ApiError::new(
                Code::DeadlineExceeded,
                "the call's deadline passed: the stream ends there (subscribe again, with a later deadline or none)",
            )),
        };
        match item {
            Ok(update) => Some((Ok(update), Some(s))),
            Err(e) => {
                tracing::info!(code = ?e.code, error = %e.message, "a stream of updates ended");
                Some((Err(e), None))
            }
        }
    });
    Box::pin(stream)
}

/// The updates as messages (the generated service's stream; the routes send the bytes of
/// [`crate::encoded`] instead).
pub(crate) fn as_messages(updates: Stopped) -> WatchStream {
    Box::pin(updates.map(|item| match item {
        Ok(update) => Ok(wire::watch_update_to_proto(&update.into_update())),
        Err(e) => Err(wire::status_from_error(&e)),
    }))
}

/// Completes at `deadline` (never without one).
async fn until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Completes when the server begins to stop (never, if the sender is gone without stopping).
async fn stopped(stop: &mut tokio::sync::watch::Receiver<bool>) {
    if stop.wait_for(|stopping| *stopping).await.is_err() {
        std::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn person(i: usize) -> Caller {
        Caller::user(&format!("person-{i}"), &[])
    }

    /// The `i`th of many distinct lists.
    fn list(i: u32) -> ListQuery {
        ListQuery {
            namespace: Some("default".into()),
            page_size: 1 + i,
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
        assert_eq!(e.param("limit"), Some("streams per caller"), "{e:?}");
        let anonymous: Vec<Place> = (0..MAX_ANONYMOUS_STREAMS)
            .map(|_| take(&Caller::in_process()).unwrap())
            .collect();
        let e = take(&Caller::in_process()).err().unwrap();
        assert_eq!(e.param("limit"), Some("anonymous streams"), "{e:?}");
        let held = mine.len() + anonymous.len();
        let rest: Vec<Place> = (held..MAX_STREAMS)
            .map(|i| take(&person(1 + i / MAX_STREAMS_PER_CALLER)).unwrap())
            .collect();
        let e = take(&person(usize::MAX)).err().unwrap();
        assert_eq!(e.code, Code::ResourceExhausted);
        assert_eq!(e.param("limit"), Some("streams"), "{e:?}");
        drop(mine);
        take(&person(usize::MAX)).expect("a place given back is taken");
        drop((anonymous, rest));
        assert_eq!(streams.lock().all, 0);
        assert!(streams.lock().by.is_empty() && streams.lock().queries.is_empty());
    }

    #[test]
    fn distinct_queries_are_bounded_per_person_and_in_all_and_a_shared_one_is_free() {
        let streams = Streams::default();
        let at = |i: usize| u32::try_from(i).unwrap();
        let _mine: Vec<Place> = (0..MAX_LIVE_QUERIES_PER_CALLER)
            .map(|i| streams.take(&person(0), &list(at(i))).unwrap())
            .collect();
        let e = streams.take(&person(0), &list(999)).err().unwrap();
        assert_eq!(e.param("limit"), Some("live queries per caller"), "{e:?}");
        let again = ListQuery {
            known_version: Some("v1".into()),
            ..list(0)
        };
        let _same = streams
            .take(&person(0), &again)
            .expect("a query kept already, whatever version is held");
        let others: Vec<Place> = (MAX_LIVE_QUERIES_PER_CALLER..MAX_LIVE_QUERIES)
            .map(|i| streams.take(&person(i), &list(at(i))).unwrap())
            .collect();
        let e = streams.take(&person(999), &list(999)).err().unwrap();
        assert_eq!(e.param("limit"), Some("live queries"), "{e:?}");
        let _joined = streams
            .take(&person(999), &list(0))
            .expect("joining a query kept costs nothing");
        drop(others);
        streams
            .take(&person(999), &list(999))
            .expect("a query given back makes room");
    }

    fn subscribers(m: &super::super::metrics::Metrics) -> String {
        let text = m.encode();
        text.lines()
            .find(|l| l.starts_with("ichor_serve_subscribers "))
            .unwrap_or_default()
            .to_string()
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_ends_at_its_deadline_and_gives_its_place_back() {
        let metrics = super::super::metrics::Metrics::new();
        let streams = Streams::counted(metrics.clone(), MAX_STREAMS);
        let caller = Caller::user("alice", &["team"]);
        let started = tokio::time::Instant::now();
        let watched = Watched {
            place: streams.take(&caller, &list(0)).unwrap(),
            refused: Box::pin(std::future::pending()),
            stop: tokio::sync::watch::channel(false).1,
            deadline: Some(started + Duration::from_secs(2)),
        };
        // A stream with nothing to say: only the deadline ends it.
        let updates: Pushes = Box::pin(futures::stream::pending());
        let mut stream = until_stopped(updates, watched);
        assert_eq!(subscribers(&metrics), "ichor_serve_subscribers 1");
        let ended = stream.next().await.unwrap().unwrap_err();
        assert_eq!(ended.code, Code::DeadlineExceeded);
        assert!(ended.message.contains("deadline"), "{}", ended.message);
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert_eq!(subscribers(&metrics), "ichor_serve_subscribers 0");
        assert!(stream.next().await.is_none(), "the stream ends after it");
        // The caller's place is free again: all of them can be taken.
        let held: Result<Vec<Place>, _> = (0..MAX_STREAMS_PER_CALLER)
            .map(|_| streams.take(&caller, &list(0)))
            .collect();
        assert!(held.is_ok());
    }
}
