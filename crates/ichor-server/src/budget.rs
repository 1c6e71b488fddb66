//! Subscriptions have a budget of their own, apart from the calls in flight: a WatchOperations
//! call never counts against [`super::front::MAX_CALLS_IN_FLIGHT`] (a live subscription is not a
//! call being answered, and a fleet of dashboards subscribing after a restart must not be
//! refused by it). At most [`MAX_SUBSCRIBING`] subscriptions are being set up at once (from
//! their headers to their stream: the token's review, the SubjectAccessReviews, the shared
//! watch); the next waits its turn instead of being refused, and the streams' own bounds
//! ([`super::stream_bounds::MAX_STREAMS`], per person and anonymous) say when there is no room.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;
use tower::ServiceExt as _;

/// Subscriptions set up at once. Each asks Kubernetes a TokenReview and two
/// SubjectAccessReviews, one after the other, all creates: 64 at once stay well within
/// kube-apiserver's default of 200 mutating requests in flight (`--max-mutating-requests-inflight`),
/// leaving room for every other client, and set up a thousand dashboards in a few seconds (each
/// takes milliseconds).
pub const MAX_SUBSCRIBING: usize = 64;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Sends WatchOperations to `streams`, every other call to `calls`.
#[derive(Clone)]
pub(crate) struct Split<C, S> {
    pub(crate) calls: C,
    pub(crate) streams: S,
}

impl<C, S> tower::Service<http::Request<Body>> for Split<C, S>
where
    C: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = BoxError>
        + Clone
        + Send
        + 'static,
    C::Future: Send + 'static,
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = BoxError>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = BoxError;
    type Future = BoxFuture<Result<http::Response<Body>, BoxError>>;

    /// Always ready: each call waits for its own way's readiness (a turn to subscribe) or is
    /// refused by it (the in-flight limit sheds).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if req.uri().path() == super::connect_stream::WATCH_PATH {
            Box::pin(self.streams.clone().oneshot(req))
        } else {
            Box::pin(self.calls.clone().oneshot(req))
        }
    }
}
