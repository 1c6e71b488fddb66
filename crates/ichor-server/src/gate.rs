//! What a call must pass from its headers alone, before any byte of its body is read: the
//! protocol's headers (a malformed deadline or Connect protocol version is refused as
//! connect-go refuses it), then the caller's bearer token. An unauthenticated call is answered
//! at once (HTTP 401 with `unauthenticated` over the Connect protocol, a Connect stream's end
//! with its code over Connect streaming, UNAUTHENTICATED over gRPC and gRPC-Web) and its body is
//! not given to anything: HTTP/2 resets the stream, and over HTTP/1.1 [`super::drain`] reads
//! the rest of a small body before the answer so the connection goes on. A call that passes
//! carries its [`Caller`] and its [`CallDeadline`] to the handlers, counts its connection among
//! its person's connections ([`Authenticated::vouch`]: a person who holds its share of them
//! already is refused, and the connection closed), and its body is cut off at [`BODY_TIMEOUT`]
//! or its deadline, whichever comes first ([`BodyDue`]). The token is decided here, before any
//! queue: only the TokenReview itself, not a wait for its turn, keeps the connection open
//! ([`Authenticator::caller_on`]); [`super::admission`] comes after. Health needs no token; its
//! streams have a bound of their own ([`MAX_HEALTH_STREAMS`]).

use super::auth::Authenticator;
use super::listen::{Authenticated, BODY_TIMEOUT, DeadlineBody, Holding};
use super::metrics::Metrics;
use super::protocol::{self, Protocol, refusal_to};
use super::shares::{Person, Shares};
use ichor_model::ApiError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::time::Instant;
use tonic::body::Body;

/// When the call's answer is due (`grpc-timeout` or `Connect-Timeout-Ms` from its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallDeadline(pub Instant);

/// When the call's body is due: [`BODY_TIMEOUT`] from its headers, or its deadline if sooner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BodyDue(pub Instant);

/// The services anyone may call without a token: health, for probes. Reflection needs a token
/// as the calls do (its streams would otherwise let anyone hold buffers).
const OPEN_PREFIXES: [&str; 1] = ["/grpc.health.v1.Health/"];

/// The one stream that needs no token.
const HEALTH_WATCH: &str = "/grpc.health.v1.Health/Watch";

/// Health's Watch streams open at once, everyone's together: a probe checks (a unary call);
/// a load balancer or a mesh that watches holds one or two per connection. Past it the next is
/// refused RESOURCE_EXHAUSTED; and a connection that carries no authenticated call is closed
/// after [`super::listen::AUTHENTICATED_WITHIN`] anyway, its streams with it.
pub const MAX_HEALTH_STREAMS: usize = 16;

/// The places of health's Watch streams, shared by every connection's gate, counted in the
/// metrics (`ichor_serve_health_streams`, and `refused{limit="health_streams"}`).
#[derive(Clone)]
pub(crate) struct HealthStreams {
    places: Arc<tokio::sync::Semaphore>,
    metrics: Metrics,
}

impl HealthStreams {
    pub(crate) fn counted(metrics: Metrics) -> HealthStreams {
        HealthStreams {
            places: Arc::new(tokio::sync::Semaphore::new(MAX_HEALTH_STREAMS)),
            metrics,
        }
    }

    /// A place for one more health stream, or the refusal.
    fn take(&self) -> Result<HealthPlace, ApiError> {
        match self.places.clone().try_acquire_owned() {
            Ok(permit) => {
                self.metrics.health_stream_opened();
                Ok(HealthPlace {
                    _permit: permit,
                    metrics: self.metrics.clone(),
                })
            }
            Err(_) => {
                self.metrics.refused("health_streams");
                Err(super::stream_bounds::over(
                    "health_streams",
                    MAX_HEALTH_STREAMS,
                ))
            }
        }
    }
}

/// One health stream's place, given back when its answer's body ends.
struct HealthPlace {
    _permit: tokio::sync::OwnedSemaphorePermit,
    metrics: Metrics,
}

impl Drop for HealthPlace {
    fn drop(&mut self) {
        self.metrics.health_stream_closed();
    }
}

/// The gate in front of the calls: a service made with tower's `layer_fn`, around the Connect
/// layer and tonic's routes.
#[derive(Clone)]
pub(crate) struct Gate<S> {
    inner: S,
    auth: Arc<Authenticator>,
    health_streams: HealthStreams,
    /// The connections each person's calls hold.
    connections: Shares,
}

impl<S> Gate<S> {
    pub(crate) fn new(
        inner: S,
        auth: Arc<Authenticator>,
        health_streams: HealthStreams,
        connections: Shares,
    ) -> Gate<S> {
        Gate {
            inner,
            auth,
            health_streams,
            connections,
        }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S> tower::Service<http::Request<Body>> for Gate<S>
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
        // The clone that was made ready takes the call; `self` keeps a fresh one.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let auth = self.auth.clone();
        let health_streams = self.health_streams.clone();
        let connections = self.connections.clone();
        Box::pin(async move {
            let started = Instant::now();
            let protocol = Protocol::of(&req);
            let timeout = match protocol::deadline(protocol, req.headers()) {
                Ok(t) => t,
                Err(e) => return Ok(refusal_to(req.headers(), &e)),
            };
            let deadline = timeout.and_then(|t| started.checked_add(t));
            let (mut parts, body) = req.into_parts();
            let mut said_caller = None;
            let mut health_place = None;
            let path = parts.uri.path();
            if path == HEALTH_WATCH {
                match health_streams.take() {
                    Ok(p) => health_place = Some(p),
                    Err(e) => return Ok(refusal_to(&parts.headers, &e)),
                }
            } else if !OPEN_PREFIXES.iter().any(|p| path.starts_with(p)) {
                let connection = parts.extensions.get::<Authenticated>().cloned();
                let caller = auth.caller_on(&parts.headers, connection.as_ref());
                let caller = match deadline {
                    Some(d) => tokio::time::timeout_at(d, caller)
                        .await
                        .unwrap_or_else(|_| Err(ApiError::deadline_passed("authentication"))),
                    None => caller.await,
                };
                match caller {
                    Ok(c) => {
                        if let Some(connection) = &connection
                            && let Err(refused) = connection.vouch(&Person::of(&c), &connections)
                        {
                            let e = refused.error();
                            tracing::debug!(path = %ichor_model::error_text::quoted(path), limit = refused.limit, "a person's share of connections is held: the call refused, its connection closed");
                            return Ok(super::front::over_a_bound(&parts.headers, &e));
                        }
                        said_caller = caller_header(&c);
                        parts.extensions.insert(c);
                    }
                    Err(e) => {
                        tracing::info!(path = %ichor_model::error_text::quoted(path), code = ?e.code, error = %e.message, "call not authenticated");
                        return Ok(refusal_to(&parts.headers, &e));
                    }
                }
            }
            let body_due = started + BODY_TIMEOUT;
            let (body_deadline, what) = match deadline {
                Some(d) if d < body_due => (d, "the call's deadline"),
                _ => (body_due, "the server's body timeout"),
            };
            if let Some(d) = deadline {
                parts.extensions.insert(CallDeadline(d));
            }
            parts.extensions.insert(BodyDue(body_deadline));
            let body = Body::new(DeadlineBody::new(body, body_deadline, what));
            let mut resp = inner.call(http::Request::from_parts(parts, body)).await?;
            if let Some(v) = said_caller {
                resp.headers_mut()
                    .insert(crate::wire::version::CALLER_HEADER, v);
            }
            if let Some(place) = health_place {
                resp = resp.map(|b| Body::new(Holding::new(b, place)));
            }
            Ok(resp)
        })
    }
}

/// The longest user name said in `ichor-caller`: a name a header cannot carry as it is (not
/// visible ASCII, or longer) is not said.
const MAX_CALLER_CHARS: usize = 253;

fn caller_header(c: &ichor_service::access::Caller) -> Option<http::HeaderValue> {
    let user = &c.identity.as_ref()?.user;
    let fits = !user.is_empty()
        && user.len() <= MAX_CALLER_CHARS
        && user.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    fits.then(|| http::HeaderValue::from_str(user).ok())?
}
