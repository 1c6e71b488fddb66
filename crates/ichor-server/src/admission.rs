//! Between the gate (the caller decided from the headers) and the protocols: a call's priority
//! level by its method, then its body, then its seat, each shared by person ([`Shares`]). The
//! body is read whole first, under its own deadline (the gate's: [`super::listen::BODY_TIMEOUT`]
//! or the call's, sooner), holding only a slot among its level's bodies, its person's share of
//! them; only a call whose body has come waits for a seat (a call in flight, a turn to
//! subscribe), so nothing anyone else needs is held while a body is awaited. A body that does
//! not come ends its call with DEADLINE_EXCEEDED, having held its person's slot until then; a
//! body that is not HTTP (a chunk size past 64 bits, say) is INVALID_ARGUMENT; one past
//! [`MAX_BODY_BYTES`] is refused as one over the message limit is (OUT_OF_RANGE over gRPC and
//! gRPC-Web, as tonic answers; INVALID_ARGUMENT over the Connect protocol, as its layer does). A seat is held until the answer's body
//! ends (a subscription's: until its stream is set up). A caller who waits longer than its
//! deadline or [`MAX_QUEUE_WAIT`], or finds its queues full, is refused RESOURCE_EXHAUSTED with
//! `Retry-After`; after [`PACE`] when its person holds its share already. Health is exempt; reflection's streams (bidirectional: their bodies never end
//! before their answers) take a seat of their own level and are read as they come.

use super::gate::{BodyDue, CallDeadline};
use super::listen::Holding;
use super::pools::{Level, Pools};
use super::protocol::{Protocol, refused};
use super::shares::{Person, Seat, Shares};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use ichor_model::{ApiError, Code};
use ichor_service::access::Caller;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;
use tonic::body::Body;

/// The longest a caller waits for a slot when its deadline is later or unset: a quarter of
/// kube-apiserver's request timeout, as API Priority and Fairness waits.
pub(crate) const MAX_QUEUE_WAIT: Duration = Duration::from_secs(15);

/// How long the refusal of a person who holds its share already, and whose queue is full, waits
/// before it is said (unless the call's deadline is sooner): the `Retry-After` it carries. A
/// client that sends again as soon as it is answered (as a hostile one does) then sends at most
/// once a second for each call it keeps open, not as fast as serve can refuse; the wait holds
/// only that person's own stream (its request and body are let go first), and the refusals of
/// everyone else are said at once.
pub(crate) const PACE: Duration = Duration::from_secs(super::front::RETRY_AFTER_SECONDS);

/// The largest body read: a message of [`super::MAX_REQUEST_BYTES`] in base64 (gRPC-Web's
/// text) with its framing fits; anything larger is no request of this API.
pub(crate) const MAX_BODY_BYTES: usize = super::MAX_REQUEST_BYTES * 2;

/// A call's priority level, by its method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Health: before any pool.
    Exempt,
    Reflection,
    Reads,
    Writes,
    Subscribe,
}

/// The level of the call at `path`: what writes and what streams, from the table of calls.
fn kind_of(path: &str) -> Kind {
    if path.starts_with("/grpc.health.v1.Health/") {
        return Kind::Exempt;
    }
    if path.starts_with("/grpc.reflection.") {
        return Kind::Reflection;
    }
    match crate::wire::Rpc::of_path(path) {
        Some(rpc) if rpc.streams() => Kind::Subscribe,
        Some(rpc) if rpc.writes() => Kind::Writes,
        _ => Kind::Reads,
    }
}

/// The admission layer: a service made with tower's `layer_fn`, behind the gate.
#[derive(Clone)]
pub(crate) struct Admission<S> {
    inner: S,
    pools: Pools,
    metrics: super::metrics::Metrics,
}

impl<S> Admission<S> {
    pub(crate) fn new(inner: S, pools: Pools, metrics: super::metrics::Metrics) -> Admission<S> {
        Admission {
            inner,
            pools,
            metrics,
        }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S> tower::Service<http::Request<Body>> for Admission<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let kind = kind_of(req.uri().path());
        let (pools, metrics) = (self.pools.clone(), self.metrics.clone());
        Box::pin(async move {
            let level = match kind {
                Kind::Exempt => return inner.oneshot_call(req).await,
                Kind::Reflection => return reflection(inner, &pools.reflection, req).await,
                Kind::Reads => pools.reads,
                Kind::Writes => pools.writes,
                Kind::Subscribe => pools.subscribe,
            };
            let (req, seat) = match admitted(req, &level, &metrics).await {
                Ok(admitted) => admitted,
                Err(refusal) => return Ok(*refusal),
            };
            let resp = inner.oneshot_call(req).await?;
            Ok(match kind {
                // Set up: the turn is given back; the stream holds its place among the streams.
                Kind::Subscribe => resp,
                _ => resp.map(|b| Body::new(Holding::new(b, seat))),
            })
        })
    }
}

/// `oneshot` for a service that was made ready by the caller's `poll_ready`.
trait OneshotCall<S> {
    fn oneshot_call(self, req: http::Request<Body>) -> S;
}

impl<S> OneshotCall<S::Future> for S
where
    S: tower::Service<http::Request<Body>>,
{
    fn oneshot_call(mut self, req: http::Request<Body>) -> S::Future {
        self.call(req)
    }
}

/// The caller's person (the gate has put the caller in the request).
fn person_of<B>(req: &http::Request<B>) -> Person {
    req.extensions()
        .get::<Caller>()
        .map(Person::of)
        .unwrap_or(Person::Anonymous)
}

/// When waiting for a seat ends: the call's deadline, or [`MAX_QUEUE_WAIT`] from now.
fn seat_wait_until<B>(req: &http::Request<B>) -> Instant {
    let longest = Instant::now() + MAX_QUEUE_WAIT;
    match req.extensions().get::<CallDeadline>() {
        Some(CallDeadline(at)) => (*at).min(longest),
        None => longest,
    }
}

/// The request with its body read, and its seat; or the answer that refuses it.
async fn admitted(
    req: http::Request<Body>,
    level: &Level,
    metrics: &super::metrics::Metrics,
) -> Result<(http::Request<Body>, Seat), Box<http::Response<Body>>> {
    let person = person_of(&req);
    let body_due = req.extensions().get::<BodyDue>().map(|d| d.0);
    let deadline = req.extensions().get::<CallDeadline>().map(|d| d.0);
    let (parts, body) = req.into_parts();
    let body_slot = match level.bodies.take(&person, body_due).await {
        Ok(slot) => slot,
        Err(r) => {
            drop(body);
            return Err(paced(r, parts, deadline).await);
        }
    };
    let bytes = match read(body).await {
        Ok(b) => b,
        Err(fault) => {
            let e = fault.error(metrics);
            let mut resp = super::protocol::refusal_to(&parts.headers, &e);
            if matches!(fault, BodyFault::TooLarge)
                && Protocol::of_headers(&parts.headers) != Protocol::Connect
            {
                // As tonic answers a message over the limit (and the Connect layer does not).
                resp.headers_mut().insert(
                    "grpc-status",
                    http::HeaderValue::from(tonic::Code::OutOfRange as i32),
                );
            }
            if parts.version < http::Version::HTTP_2 && fault.breaks_http() {
                resp.headers_mut().insert(
                    http::header::CONNECTION,
                    http::HeaderValue::from_static("close"),
                );
            }
            return Err(Box::new(resp));
        }
    };
    let req = http::Request::from_parts(parts, Body::new(Full::new(bytes)));
    let seat = match level.seats.take(&person, Some(seat_wait_until(&req))).await {
        Ok(seat) => seat,
        Err(r) => {
            drop(body_slot);
            return Err(paced(r, req.into_parts().0, deadline).await);
        }
    };
    drop(body_slot);
    Ok((req, seat))
}

/// The refusal `r` of the call whose head is `parts`: at once, or after [`PACE`] (at most until
/// the call's deadline) when its person holds its share already; the request is let go first.
async fn paced(
    r: super::shares::Refused,
    parts: http::request::Parts,
    deadline: Option<Instant>,
) -> Box<http::Response<Body>> {
    let resp = super::front::over_a_bound(&parts.headers, &r.error());
    drop(parts);
    if r.over_share {
        let until = Instant::now() + PACE;
        tokio::time::sleep_until(deadline.map_or(until, |d| d.min(until))).await;
    }
    Box::new(resp)
}

/// Why a body could not be read.
enum BodyFault {
    /// Over [`MAX_BODY_BYTES`].
    TooLarge,
    /// Its deadline passed ([`super::listen::DeadlineBody`]'s DEADLINE_EXCEEDED).
    Late(tonic::Status),
    /// Not HTTP: a malformed chunk, a stream reset, a connection that broke.
    Broken(String),
}

impl BodyFault {
    fn error(&self, metrics: &super::metrics::Metrics) -> ApiError {
        match self {
            BodyFault::TooLarge => refused(
                Code::InvalidArgument,
                "size",
                format!("the request is larger than {MAX_BODY_BYTES} bytes"),
            ),
            BodyFault::Late(status) => {
                metrics.refused("body_timeout");
                crate::wire::error_from_status(status)
            }
            BodyFault::Broken(why) => refused(
                Code::InvalidArgument,
                "body",
                format!(
                    "the request's body is not valid HTTP: {}",
                    ichor_model::inert::truncate(why, 80)
                ),
            ),
        }
    }

    /// Whether the connection cannot go on after it (HTTP/1.1 loses its framing).
    fn breaks_http(&self) -> bool {
        !matches!(self, BodyFault::Late(_))
    }
}

/// The whole body, at most [`MAX_BODY_BYTES`].
async fn read(body: Body) -> Result<Bytes, BodyFault> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(BodyFault::TooLarge),
        Err(e) => match e.downcast::<tonic::Status>() {
            Ok(status) if status.code() == tonic::Code::DeadlineExceeded => {
                Err(BodyFault::Late(*status))
            }
            Ok(status) => Err(BodyFault::Broken(deepest(&*status))),
            Err(e) => Err(BodyFault::Broken(deepest(&*e))),
        },
    }
}

/// The innermost cause's words (hyper's "invalid chunk size: overflow", say), not its wrappers'.
fn deepest(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

/// A reflection stream: a seat of its own level for as long as it lasts; its body is read by
/// the stream as it comes.
async fn reflection<S>(
    inner: S,
    seats: &Shares,
    req: http::Request<Body>,
) -> Result<http::Response<Body>, S::Error>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>,
{
    let seat = match seats
        .take(&person_of(&req), Some(seat_wait_until(&req)))
        .await
    {
        Ok(seat) => seat,
        Err(r) => {
            let deadline = req.extensions().get::<CallDeadline>().map(|d| d.0);
            return Ok(*paced(r, req.into_parts().0, deadline).await);
        }
    };
    let resp = inner.oneshot_call(req).await?;
    Ok(resp.map(|b| Body::new(Holding::new(b, seat))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_has_its_level() {
        assert_eq!(kind_of("/grpc.health.v1.Health/Check"), Kind::Exempt);
        assert_eq!(
            kind_of("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"),
            Kind::Reflection
        );
        assert_eq!(
            kind_of("/ichor.v1alpha1.OperationService/WatchOperations"),
            Kind::Subscribe
        );
        assert_eq!(
            kind_of("/ichor.v1alpha1.OperationService/SetOperationPaused"),
            Kind::Writes
        );
        assert_eq!(
            kind_of("/ichor.v1alpha1.OperationService/ListOperations"),
            Kind::Reads
        );
        assert_eq!(kind_of("/no/such"), Kind::Reads);
    }

    fn head() -> http::request::Parts {
        let req = http::Request::post(super::super::connect_stream::WATCH_PATH)
            .header(http::header::CONTENT_TYPE, "application/grpc")
            .body(())
            .unwrap();
        req.into_parts().0
    }

    #[tokio::test(start_paused = true)]
    async fn a_person_over_its_share_is_answered_after_retry_after_and_no_one_else_is() {
        let refused = |over_share| super::super::shares::Refused {
            limit: "calls_per_person",
            max: 32,
            over_share,
        };
        let started = Instant::now();
        let resp = paced(refused(true), head(), None).await;
        assert_eq!(started.elapsed(), PACE);
        assert_eq!(
            resp.headers().get("grpc-status").map(|v| v.as_bytes()),
            Some(&b"8"[..])
        );
        assert_eq!(
            resp.headers()
                .get(http::header::RETRY_AFTER)
                .map(|v| v.as_bytes()),
            Some(&b"1"[..])
        );
        let started = Instant::now();
        let soon = started + Duration::from_millis(300);
        paced(refused(true), head(), Some(soon)).await;
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(300),
            "the deadline first"
        );
        let started = Instant::now();
        paced(refused(false), head(), None).await;
        assert_eq!(
            started.elapsed(),
            Duration::ZERO,
            "a full pool is said at once"
        );
    }
}
