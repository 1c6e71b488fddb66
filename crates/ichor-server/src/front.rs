//! The outermost service of every call: it answers the health endpoints before anything else,
//! names the server's version on every answer, and counts each call in the metrics when its
//! answer ends (the code from the Connect layer, or gRPC's `grpc-status` in the headers or
//! the trailers). [`over_a_bound`] writes a pool's refusal in the caller's protocol
//! (RESOURCE_EXHAUSTED with retry advice; HTTP 503 with `Retry-After` over the Connect
//! protocol), for [`super::admission`] and the gate.

use super::connect_stream::{self, StreamEnd};
use super::health::Health;
use super::metrics::{Metrics, call_of};
use super::protocol::{Protocol, refusal};
use bytes::Bytes;
use http_body::Frame;
use ichor_model::{ApiError, Code, Reason};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::time::Instant;
use tonic::body::Body;

/// The response header that names the server's version.
pub(crate) const VERSION_HEADER: &str = crate::wire::version::HEADER;

/// Reads being answered at once, on all connections (writes and subscriptions have levels of
/// their own: [`super::pools`]); one more waits its turn in its person's queue.
pub const MAX_CALLS_IN_FLIGHT: usize = 256;

/// What a refusal for load says to wait, in seconds (`Retry-After`).
pub const RETRY_AFTER_SECONDS: u64 = 1;

/// The code a Connect answer carries, set by whoever wrote it (for the metrics).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AnswerCode(pub &'static str);

/// Wraps the in-flight-limited stack.
#[derive(Clone)]
pub(crate) struct Front<S> {
    inner: S,
    metrics: Metrics,
    /// `/livez`, `/readyz` and `/healthz`: answered here, before any limit or the gate, as
    /// kube-apiserver exempts them from its in-flight limits; not counted as calls.
    health: Health,
}

impl<S> Front<S> {
    pub(crate) fn new(inner: S, metrics: Metrics, health: Health) -> Front<S> {
        Front {
            inner,
            metrics,
            health,
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The refusal of a call by a pool it found full (its bound in `e`), in the request's
/// protocol, with `Retry-After` (HTTP 503 over the Connect protocol's unary calls, which load
/// balancers and clients read as "try again"; a Connect stream's end, HTTP 200, for a stream).
pub(crate) fn over_a_bound(headers: &http::HeaderMap, e: &ApiError) -> http::Response<Body> {
    let mut resp = super::protocol::refusal_to(headers, e);
    let unary_connect = Protocol::of_headers(headers) == Protocol::Connect
        && connect_stream::streaming_codec(headers).is_none();
    if unary_connect {
        *resp.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
        resp.extensions_mut()
            .insert(AnswerCode(crate::wire::code_to_connect(e.code)));
    }
    resp.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from(RETRY_AFTER_SECONDS),
    );
    resp
}

impl<S> tower::Service<http::Request<Body>> for Front<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = BoxError>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Every layer inside is ready when its inner service is; tonic's routes always are.
        match self.inner.poll_ready(cx) {
            Poll::Ready(_) => Poll::Ready(Ok(())),
            Poll::Pending => Poll::Pending,
        }
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if super::health::is_health_request(&req) {
            let (health, uri) = (self.health.clone(), req.uri().clone());
            return Box::pin(async move {
                let resp = health.answer(&uri).await;
                Ok(resp.map(|b| Body::new(http_body_util::Full::new(b))))
            });
        }
        let protocol = Protocol::of(&req);
        let stream = connect_stream::streaming_codec(req.headers());
        self.metrics.call_began();
        // Counted once, however the call ends: dropped before its answer (the caller went
        // away), or when its answer's body ends.
        let mut observer = Observer {
            metrics: self.metrics.clone(),
            call: call_of(req.uri().path()),
            protocol: protocol.label(),
            started: Instant::now(),
            code: None,
            text: false,
            stream_end: None,
            done: false,
        };
        let fut = self.inner.call(req);
        Box::pin(async move {
            let mut resp = match fut.await {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, "a call failed in the server's layers");
                    let e = ApiError::said(
                        Code::Internal,
                        Reason::Internal,
                        &[("detail", "the call failed in the server's layers")],
                    );
                    match stream {
                        Some(codec) => connect_stream::refusal(codec, &e),
                        None => refusal(protocol, &e),
                    }
                }
            };
            resp.headers_mut().insert(
                VERSION_HEADER,
                http::HeaderValue::from_static(env!("CARGO_PKG_VERSION")),
            );
            let code = match protocol {
                Protocol::Connect => Some(
                    resp.extensions()
                        .get::<AnswerCode>()
                        .map(|c| c.0)
                        .unwrap_or_else(|| connect_code_of_status(resp.status())),
                ),
                Protocol::Grpc | Protocol::GrpcWeb => resp
                    .headers()
                    .get("grpc-status")
                    .map(|s| grpc_code_name(s.as_bytes())),
            };
            observer.code = code;
            observer.text = protocol == Protocol::GrpcWeb
                && resp
                    .headers()
                    .get(http::header::CONTENT_TYPE)
                    .is_some_and(|ct| ct.as_bytes().starts_with(b"application/grpc-web-text"));
            observer.stream_end = resp.extensions().get::<StreamEnd>().cloned();
            Ok(resp.map(|body| Body::new(Observed { body, observer })))
        })
    }
}

/// The Connect code of an HTTP status without a code of ours (the protocol's mapping).
fn connect_code_of_status(s: http::StatusCode) -> &'static str {
    match s.as_u16() {
        200 => "ok",
        400 => "invalid_argument",
        401 => "unauthenticated",
        403 => "permission_denied",
        404 => "unimplemented",
        408 => "deadline_exceeded",
        409 => "aborted",
        412 => "failed_precondition",
        413 => "resource_exhausted",
        415 => "internal",
        429 => "unavailable",
        431 => "resource_exhausted",
        502..=504 => "unavailable",
        _ => "unknown",
    }
}

/// The name of a `grpc-status` (the Connect protocol's spelling).
fn grpc_code_name(status: &[u8]) -> &'static str {
    const NAMES: [&str; 17] = [
        "ok",
        "canceled",
        "unknown",
        "invalid_argument",
        "deadline_exceeded",
        "not_found",
        "already_exists",
        "permission_denied",
        "resource_exhausted",
        "failed_precondition",
        "aborted",
        "out_of_range",
        "unimplemented",
        "internal",
        "unavailable",
        "data_loss",
        "unauthenticated",
    ];
    std::str::from_utf8(status)
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .and_then(|i| NAMES.get(i).copied())
        .unwrap_or("unknown")
}

/// The code in a gRPC-Web answer's trailers, which tonic-web writes as one body frame (flag
/// 0x80, then `grpc-status:N` among HTTP/1-style header lines), base64 on its own in a text
/// answer (`text`); `None` for anything else.
fn grpc_web_trailers_code(protocol: &str, text: bool, data: &[u8]) -> Option<&'static str> {
    use base64::Engine as _;
    if protocol != Protocol::GrpcWeb.label() {
        return None;
    }
    let decoded;
    let data = match text {
        true => {
            // The flag is in the first 3 bytes, the first 4 characters: the rest only then.
            let head = base64::engine::general_purpose::STANDARD
                .decode(data.get(..4)?)
                .ok()?;
            if head.first()? & 0x80 == 0 {
                return None;
            }
            decoded = base64::engine::general_purpose::STANDARD
                .decode(data)
                .ok()?;
            &decoded[..]
        }
        false => data,
    };
    if data.first()? & 0x80 == 0 {
        return None;
    }
    let lines = std::str::from_utf8(data.get(5..)?).ok()?;
    lines
        .lines()
        .find_map(|l| l.trim().strip_prefix("grpc-status:"))
        .map(|v| grpc_code_name(v.trim().as_bytes()))
}

/// Counts a call once, when its answer ends or is dropped.
struct Observer {
    metrics: Metrics,
    call: (&'static str, &'static str),
    protocol: &'static str,
    started: Instant,
    code: Option<&'static str>,
    /// A gRPC-Web answer in base64 text: its trailers frame is base64 too.
    text: bool,
    /// A Connect stream's end, whose code outranks the answer's head.
    stream_end: Option<StreamEnd>,
    done: bool,
}

impl Observer {
    fn finish(&mut self, code: Option<&'static str>) {
        if self.done {
            return;
        }
        self.done = true;
        let ended = self.stream_end.as_ref().and_then(StreamEnd::code);
        let code = ended.or(self.code).or(code).unwrap_or("unknown");
        self.metrics.call_ended(
            self.call,
            self.protocol,
            code,
            self.started.elapsed().as_secs_f64(),
        );
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        // An answer dropped before its end: the caller went away.
        self.finish(Some("canceled"));
    }
}

/// An answer's body that tells its observer how it ended.
struct Observed {
    body: Body,
    observer: Observer,
}

impl http_body::Body for Observed {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref() {
                    let code = trailers
                        .get("grpc-status")
                        .map(|s| grpc_code_name(s.as_bytes()));
                    this.observer.finish(code);
                } else if let Some(code) = frame.data_ref().and_then(|d| {
                    grpc_web_trailers_code(this.observer.protocol, this.observer.text, d)
                }) {
                    this.observer.finish(Some(code));
                } else if this.body.is_end_stream() {
                    this.observer.finish(None);
                }
            }
            Poll::Ready(Some(Err(_))) => this.observer.finish(Some("internal")),
            Poll::Ready(None) => this.observer.finish(None),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
