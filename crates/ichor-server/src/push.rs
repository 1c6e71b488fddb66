//! WatchOperations in `serve`: each subscriber reads the shared watch of its namespace once
//! Kubernetes said it may list and watch there; it is asked again every minute, and a revoked
//! permission ends the stream with PERMISSION_DENIED ([`ichor_service::shared::SharedReads::watch_operations`]). A
//! caller holds at most
//! [`MAX_STREAMS_PER_CALLER`] streams.

use crate::wire::{self, proto};
use futures::{Stream, StreamExt as _};
use ichor_model::{ApiError, Code, Updates};
use ichor_service::access::Caller;
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

/// The streams held, by person (anonymous callers under `None`) and in all.
#[derive(Default)]
struct Held {
    by: HashMap<Option<String>, usize>,
    all: usize,
}

/// The streams each caller holds, counted in the server's metrics (subscribers open; a stream
/// refused by a bound as `refused{limit="streams_per_caller"}`, `"anonymous_streams"` or
/// `"streams"`).
#[derive(Clone, Default)]
pub(crate) struct Streams(Arc<Mutex<Held>>, super::metrics::Metrics);

/// One stream's place, given back when the stream ends.
pub(crate) struct Place {
    streams: Streams,
    who: Option<String>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.streams.1.subscriber_left();
        let mut held = self.streams.lock();
        held.all = held.all.saturating_sub(1);
        if let Some(n) = held.by.get_mut(&self.who) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.by.remove(&self.who);
            }
        }
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

impl Streams {
    /// Streams counted in `metrics`.
    pub(crate) fn counted(metrics: super::metrics::Metrics) -> Streams {
        Streams(Arc::default(), metrics)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for one more stream of `caller`, or RESOURCE_EXHAUSTED naming the bound.
    pub(crate) fn take(&self, caller: &Caller) -> Result<Place, ApiError> {
        let who = caller.identity.as_ref().map(|i| i.user.clone());
        let mut held = self.lock();
        let mine = held.by.get(&who).copied().unwrap_or(0);
        let refusal = if held.all >= MAX_STREAMS {
            Some((
                "streams",
                over(
                    "streams",
                    format!(
                        "the server holds {MAX_STREAMS} streams of updates, its limit: poll, and subscribe again later"
                    ),
                ),
            ))
        } else if who.is_none() && mine >= MAX_ANONYMOUS_STREAMS {
            Some((
                "anonymous_streams",
                over(
                    "anonymous streams",
                    format!(
                        "callers without a token hold {MAX_ANONYMOUS_STREAMS} streams of updates together, their limit: send a token, or close one"
                    ),
                ),
            ))
        } else if who.is_some() && mine >= MAX_STREAMS_PER_CALLER {
            Some((
                "streams_per_caller",
                over(
                    "streams per caller",
                    format!(
                        "you hold {MAX_STREAMS_PER_CALLER} streams of updates already: close one first"
                    ),
                ),
            ))
        } else {
            None
        };
        if let Some((label, e)) = refusal {
            self.1.refused(label);
            return Err(e);
        }
        *held.by.entry(who.clone()).or_default() += 1;
        held.all += 1;
        self.1.subscriber_joined();
        Ok(Place {
            streams: self.clone(),
            who,
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
            if let Err(e) = self.auth.caller(&self.headers).await {
                return e;
            }
        }
    }
}

/// What a subscriber's stream is kept under: its place among the caller's streams, the review
/// of its token, and the server's stop.
pub(crate) struct Watched {
    /// Held: dropped with the stream, it gives the place back.
    pub(crate) place: Place,
    pub(crate) review: Review,
    pub(crate) stop: tokio::sync::watch::Receiver<bool>,
}

/// The updates as tonic sends them (Kubernetes asked again every recheck whether the caller
/// may still list and watch: [`ichor_service::shared::SharedReads::watch_operations`], and
/// whether it still accepts the caller's token: [`Review`]); the server's shutdown ends the
/// stream with UNAVAILABLE.
pub(crate) fn until_stopped(updates: Updates, watched: Watched) -> WatchStream {
    struct S {
        updates: Updates,
        _place: Place,
        stop: tokio::sync::watch::Receiver<bool>,
        /// The review under way (its sleep included): kept across updates.
        refused: Pin<Box<dyn std::future::Future<Output = ApiError> + Send>>,
    }
    let Watched {
        place,
        review,
        stop,
    } = watched;
    let state = S {
        updates,
        _place: place,
        stop,
        refused: Box::pin(async move { review.refused().await }),
    };
    let stream = futures::stream::unfold(Some(state), |s| async move {
        let mut s = s?;
        let item = tokio::select! {
            next = s.updates.next() => next?,
            e = &mut s.refused => {
                tracing::info!(code = ?e.code, "a stream's token was refused at its review: the stream ends");
                Err(e)
            }
            () = stopped(&mut s.stop) => Err(ApiError::new(
                Code::Unavailable,
                "the server is shutting down: subscribe again",
            )),
        };
        match item {
            Ok(update) => Some((Some(Ok(wire::watch_update_to_proto(&update))), Some(s))),
            Err(e) => {
                tracing::info!(code = ?e.code, error = %e.message, "a stream of updates ended");
                Some((Some(Err(wire::status_from_error(&e))), None))
            }
        }
    });
    Box::pin(stream.filter_map(std::future::ready))
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

    fn person(i: usize) -> Caller {
        Caller::user(&format!("person-{i}"), &[])
    }

    #[test]
    fn each_person_anonymous_callers_and_everyone_have_their_bounds() {
        let streams = Streams::default();
        let mine: Vec<Place> = (0..MAX_STREAMS_PER_CALLER)
            .map(|_| streams.take(&person(0)).unwrap())
            .collect();
        let e = streams.take(&person(0)).err().unwrap();
        assert_eq!(e.param("limit"), Some("streams per caller"), "{e:?}");
        let anonymous: Vec<Place> = (0..MAX_ANONYMOUS_STREAMS)
            .map(|_| streams.take(&Caller::in_process()).unwrap())
            .collect();
        let e = streams.take(&Caller::in_process()).err().unwrap();
        assert_eq!(e.param("limit"), Some("anonymous streams"), "{e:?}");
        let held = mine.len() + anonymous.len();
        let rest: Vec<Place> = (held..MAX_STREAMS)
            .map(|i| {
                streams
                    .take(&person(1 + i / MAX_STREAMS_PER_CALLER))
                    .unwrap()
            })
            .collect();
        let e = streams.take(&person(usize::MAX)).err().unwrap();
        assert_eq!(e.code, Code::ResourceExhausted);
        assert_eq!(e.param("limit"), Some("streams"), "{e:?}");
        drop(mine);
        streams
            .take(&person(usize::MAX))
            .expect("a place given back is taken");
        drop((anonymous, rest));
        assert_eq!(streams.lock().all, 0);
        assert!(streams.lock().by.is_empty());
    }
}
