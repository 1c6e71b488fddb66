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

/// How many streams one caller may hold at once (a dashboard holds one).
pub const MAX_STREAMS_PER_CALLER: usize = 8;

/// The stream tonic sends.
pub(crate) type WatchStream =
    Pin<Box<dyn Stream<Item = Result<proto::WatchOperationsResponse, tonic::Status>> + Send>>;

/// The streams each caller holds, counted in the server's metrics (subscribers open, and a
/// stream refused by the bound as `refused{limit="streams_per_caller"}`).
#[derive(Clone, Default)]
pub(crate) struct Streams(Arc<Mutex<HashMap<String, usize>>>, super::metrics::Metrics);

/// One stream's place, given back when the stream ends.
pub(crate) struct Place {
    streams: Streams,
    who: String,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.streams.1.subscriber_left();
        let mut held = self.streams.lock();
        if let Some(n) = held.get_mut(&self.who) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.remove(&self.who);
            }
        }
    }
}

impl Streams {
    /// Streams counted in `metrics`.
    pub(crate) fn counted(metrics: super::metrics::Metrics) -> Streams {
        Streams(Arc::default(), metrics)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for one more stream of `caller`, or RESOURCE_EXHAUSTED.
    pub(crate) fn take(&self, caller: &Caller) -> Result<Place, ApiError> {
        let who = caller
            .identity
            .as_ref()
            .map(|i| i.user.clone())
            .unwrap_or_default();
        let mut held = self.lock();
        let n = held.entry(who.clone()).or_default();
        if *n >= MAX_STREAMS_PER_CALLER {
            self.1.refused("streams_per_caller");
            return Err(ApiError::new(
                Code::ResourceExhausted,
                format!(
                    "you hold {MAX_STREAMS_PER_CALLER} streams of updates already: close one first"
                ),
            ));
        }
        *n += 1;
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
