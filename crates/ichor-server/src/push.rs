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

/// What a subscriber's stream is kept under: its place among the caller's streams, the
/// server's stop, and the call's deadline.
pub(crate) struct Watched {
    #[expect(
        dead_code,
        reason = "held: dropped with the stream, it gives the place back"
    )]
    pub(crate) place: Place,
    pub(crate) stop: tokio::sync::watch::Receiver<bool>,
    /// `grpc-timeout` or `Connect-Timeout-Ms` from the call's start: the stream ends there.
    pub(crate) deadline: Option<tokio::time::Instant>,
}

/// The updates as tonic sends them (Kubernetes asked again every recheck whether the caller
/// may still list and watch: [`ichor_service::shared::SharedReads::watch_operations`]); the server's shutdown ends
/// the stream with UNAVAILABLE, the call's deadline with DEADLINE_EXCEEDED (and either gives
/// its place back at once).
pub(crate) fn until_stopped(updates: Updates, watched: Watched) -> WatchStream {
    struct S {
        updates: Updates,
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
            Ok(update) => Some((Some(Ok(wire::watch_update_to_proto(&update))), Some(s))),
            Err(e) => {
                tracing::info!(code = ?e.code, error = %e.message, "a stream of updates ended");
                Some((Some(Err(wire::status_from_error(&e))), None))
            }
        }
    });
    Box::pin(stream.filter_map(std::future::ready))
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
        let streams = Streams::counted(metrics.clone());
        let caller = Caller::user("alice", &["team"]);
        let started = tokio::time::Instant::now();
        let watched = Watched {
            place: streams.take(&caller).unwrap(),
            stop: tokio::sync::watch::channel(false).1,
            deadline: Some(started + Duration::from_secs(2)),
        };
        // A stream with nothing to say: only the deadline ends it.
        let updates: Updates = Box::pin(futures::stream::pending());
        let mut stream = until_stopped(updates, watched);
        assert_eq!(subscribers(&metrics), "ichor_serve_subscribers 1");
        let ended = stream.next().await.unwrap().unwrap_err();
        assert_eq!(ended.code(), tonic::Code::DeadlineExceeded);
        assert!(ended.message().contains("deadline"), "{}", ended.message());
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert_eq!(subscribers(&metrics), "ichor_serve_subscribers 0");
        assert!(stream.next().await.is_none(), "the stream ends after it");
        // The caller's place is free again: all of them can be taken.
        let held: Result<Vec<Place>, _> = (0..MAX_STREAMS_PER_CALLER)
            .map(|_| streams.take(&caller))
            .collect();
        assert!(held.is_ok());
    }
}
