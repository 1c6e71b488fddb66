//! WatchOperations in `serve`: each subscriber reads the shared watch of its namespace once
//! Kubernetes said it may list and watch there; it is asked again every recheck, and a revoked
//! permission ends the stream with PERMISSION_DENIED
//! ([`ichor_service::shared::SharedReads::watch_operations`]), a token Kubernetes no longer
//! accepts with UNAUTHENTICATED ([`Review`]). A stream holds its place under the bounds of
//! [`super::stream_bounds`] until it ends.

use super::stream_bounds::Place;
use crate::wire::{self, proto};
use futures::{Stream, StreamExt as _};
use ichor_model::ApiError;
use ichor_service::feed::{Pushed, Pushes};
use std::pin::Pin;
use std::sync::Arc;

/// The stream tonic sends.
pub(crate) type WatchStream =
    Pin<Box<dyn Stream<Item = Result<proto::WatchOperationsResponse, tonic::Status>> + Send>>;

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
            () = stopped(&mut s.w.stop) => Err(ApiError::shutting_down("subscribe")),
            () = until(s.w.deadline) => Err(ApiError::deadline_passed("stream")),
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
    use super::super::stream_bounds::{MAX_STREAMS_PER_CALLER, Streams, tests::list};
    use super::*;
    use ichor_service::access::Caller;
    use std::time::Duration;

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
        let streams = Streams::counted(metrics.clone(), &crate::Bounds::default());
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
        assert_eq!(ended.code, ichor_model::Code::DeadlineExceeded);
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
