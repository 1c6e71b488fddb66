//! The accept loop: what one caller can hold of the server, bounded with hyper's own limits.
//! At most [`MAX_CONNECTIONS`] connections are open (the next waits in the kernel's backlog
//! until one closes); a connection must send its first request's headers within
//! [`HEADER_TIMEOUT`] (the TLS handshake, HTTP/2's preface and HTTP/1.1's request line
//! included) and each later HTTP/1.1 request's headers too (hyper's `header_read_timeout`);
//! HTTP/2 carries at most [`MAX_STREAMS_PER_CONNECTION`] calls at once on one connection, and
//! each request body must arrive within [`BODY_TIMEOUT`] ([`DeadlineBody`]). A connection that
//! has not carried an authenticated call within [`AUTHENTICATED_WITHIN`] of its accept is
//! closed, whatever it holds (a health stream needs no token): no one holds a connection
//! without a token for long. Only a token Kubernetes is reviewing at that moment
//! ([`UnderReview`]) keeps the connection open until its answer; waiting for anything else (a
//! turn to be reviewed, any pool's queue) does not: tokens are decided before any queue, so a
//! connection whose calls all wait without a valid token is closed at 10 s whatever they wait
//! in. One with no call in flight is closed as an idle one is (HTTP/2's GOAWAY), so a client
//! that connected early loses no call; one that holds calls is cut off. A connection counts
//! among the connections of the person of its first authenticated call
//! ([`Authenticated::vouch`]); a call of a person who holds its share of connections already is
//! refused and its connection closed.
//! A call counts as in flight on its connection until its answer's body ends, so a connection
//! that holds a stream is busy, never idle.

use super::metrics::Metrics;
use bytes::Bytes;
use http_body::Frame;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;
use tonic::body::Body;

/// Connections open at once unless `serve --max-connections` says otherwise; the next is
/// accepted when one closes.
pub const MAX_CONNECTIONS: usize = 2048;

/// A listener on `addr` whose kernel queue (the connections completed before serve accepts
/// them) holds `connections`, as many as serve holds open (`--max-connections`, by default
/// [`MAX_CONNECTIONS`]); the kernel caps it at `net.core.somaxconn`, 4,096 since Linux 5.4.
/// tokio's own `bind` queues 1,024: a fleet of dashboards reconnecting at once after a restart
/// overflows it, the kernel drops their handshakes, and a client retrying its SYN after 1 and
/// 3 s passes its connect timeout. `SO_REUSEADDR` as tokio's `bind` sets it; an IPv6 wildcard
/// takes IPv4 too ([`super::addr`]); within a tokio runtime.
pub fn bind(addr: std::net::SocketAddr, connections: usize) -> std::io::Result<TcpListener> {
    super::addr::bind_socket(addr, connections)
}

/// Calls at once on one HTTP/2 connection (its SETTINGS_MAX_CONCURRENT_STREAMS).
pub(crate) const MAX_STREAMS_PER_CONNECTION: u32 = 100;

/// Time from a connection's accept to its first request's headers (TLS handshake included),
/// and for each later HTTP/1.1 request's headers.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Time from a request's headers to the end of its body (less when the call's deadline is
/// sooner). Our requests are a few hundred bytes.
pub(crate) const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Time from a connection's accept to its first authenticated call (the gate marks it,
/// [`Authenticated`]); a connection without one is closed then, its calls and streams with it.
pub const AUTHENTICATED_WITHIN: Duration = HEADER_TIMEOUT;

/// How often a connection past [`AUTHENTICATED_WITHIN`] whose token is under review looks
/// again (the review itself is bounded by the call's deadline or the client's timeout).
const REVIEW_RECHECK: Duration = Duration::from_millis(250);

/// How long a connection closed for want of an authenticated call has to finish closing before
/// it is cut off.
const CLOSING_GRACE: Duration = Duration::from_secs(1);

/// The flow-control window of one HTTP/2 stream: what a caller may send before the server reads
/// (HTTP/2's own default; a request message is at most [`super::MAX_REQUEST_BYTES`]).
pub(crate) const STREAM_WINDOW_BYTES: u32 = 64 * 1024;

/// The HTTP/2 connection's window: what all of one connection's streams may send unread.
pub(crate) const CONNECTION_WINDOW_BYTES: u32 = 1024 * 1024;

/// HTTP/1.1's read buffer, which bounds a request's headers (HTTP/2's bound is
/// [`super::MAX_HEADER_LIST_BYTES`]) and what one connection can hold unread (1,000 slow
/// uploads: at most 24 MiB in these buffers).
pub(crate) const HTTP1_MAX_BUFFER_BYTES: usize = 24 * 1024;

/// The connection builder with the limits above.
fn builder() -> auto::Builder<TokioExecutor> {
    let mut b = auto::Builder::new(TokioExecutor::new());
    b.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_buf_size(HTTP1_MAX_BUFFER_BYTES);
    b.http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION)
        .max_header_list_size(super::MAX_HEADER_LIST_BYTES)
        .initial_stream_window_size(STREAM_WINDOW_BYTES)
        .initial_connection_window_size(CONNECTION_WINDOW_BYTES)
        .keep_alive_interval(Some(Duration::from_secs(60)))
        .keep_alive_timeout(Duration::from_secs(20));
    b
}

/// The service each request goes to.
pub(crate) trait RequestService:
    tower::Service<
        http::Request<Body>,
        Response = http::Response<Body>,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<S> RequestService for S where
    S: tower::Service<
            http::Request<Body>,
            Response = http::Response<Body>,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// Accepts connections on `listener` until `stop` turns true, then lets each finish its calls
/// and returns once every connection has closed (the caller bounds that wait).
pub(crate) async fn accept(
    listener: super::addr::Listeners,
    tls: Option<tokio_rustls::TlsAcceptor>,
    service: impl RequestService,
    (metrics, max_connections): (Metrics, usize),
    mut stop: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(max_connections));
    let builder = Arc::new(builder());
    let (open_tx, _) = watch::channel(());
    loop {
        let permit = match permits.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                // At the limit: the next connection waits in the kernel's backlog.
                metrics.refused("connections");
                tokio::select! {
                    _ = stop.wait_for(|s| *s) => break,
                    p = permits.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
                }
            }
        };
        let (tcp, _) = tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::debug!(error = %e, "accepting a connection");
                    continue;
                }
            },
        };
        let conn = Conn {
            builder: builder.clone(),
            service: service.clone(),
            stop: stop.clone(),
            metrics: metrics.clone(),
            _open: open_tx.subscribe(),
            _permit: permit,
        };
        let tls = tls.clone();
        tokio::spawn(conn.run(tcp, tls));
    }
    drop(listener);
    // Every connection holds a receiver: closed() completes when the last one ends.
    open_tx.closed().await;
}

/// One connection's task and what it holds.
struct Conn<S> {
    builder: Arc<auto::Builder<TokioExecutor>>,
    service: S,
    stop: watch::Receiver<bool>,
    metrics: Metrics,
    _open: watch::Receiver<()>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl<S: RequestService> Conn<S> {
    async fn run(self, tcp: TcpStream, tls: Option<tokio_rustls::TlsAcceptor>) {
        let _ = tcp.set_nodelay(true);
        let started = Instant::now();
        let metrics = self.metrics.clone();
        metrics.connection_opened();
        match tls {
            None => self.first_request(tcp, started).await,
            Some(acceptor) => {
                match tokio::time::timeout_at(started + HEADER_TIMEOUT, acceptor.accept(tcp)).await
                {
                    Ok(Ok(io)) => self.first_request(io, started).await,
                    Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
                    Err(_) => tracing::debug!("no TLS handshake within the header timeout"),
                }
            }
        }
        metrics.connection_closed();
    }

    /// Waits for the first request's head in a small buffer of its own ([`super::head`]), then
    /// gives the connection to hyper (boxed: a connection that never sends a request never
    /// holds hyper's state).
    async fn first_request<IO>(self, mut io: IO, started: Instant)
    where
        IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let head = super::head::read(&mut io, HTTP1_MAX_BUFFER_BYTES);
        match tokio::time::timeout_at(started + HEADER_TIMEOUT, head).await {
            Ok(Ok(Some(head))) => {
                let io = super::head::Prefixed::new(head, io);
                Box::pin(self.serve(io, started)).await;
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "reading a connection's first request"),
            Err(_) => {
                self.metrics.refused("header_timeout");
                tracing::debug!("no request within the header timeout: closing");
            }
        }
    }

    async fn serve<IO>(self, io: IO, started: Instant)
    where
        IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let mut stop = self.stop.clone();
        let activity = Arc::new(Activity::new(started));
        let service = self.service.clone();
        let seen_by_service = activity.clone();
        let hyper_service =
            hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                one_call(&service, &seen_by_service, req)
            });
        let io = super::drain::Lingering::new(io, activity.closing.clone());
        let conn = self
            .builder
            .serve_connection(TokioIo::new(io), hyper_service);
        tokio::pin!(conn);
        let idle = tokio::time::sleep_until(started + HEADER_TIMEOUT);
        tokio::pin!(idle);
        let unauthenticated = tokio::time::sleep_until(started + AUTHENTICATED_WITHIN);
        tokio::pin!(unauthenticated);
        let mut vouched = false;
        let mut closing = false;
        loop {
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(error = %e, "connection ended");
                    }
                    break;
                }
                _ = &mut unauthenticated, if !vouched => {
                    if activity.authenticated.load(Ordering::Relaxed) {
                        vouched = true;
                    } else if activity.reviewing.load(Ordering::Relaxed) > 0 {
                        // A token is being reviewed: judged again once it is.
                        unauthenticated.as_mut().reset(Instant::now() + REVIEW_RECHECK);
                    } else if !closing && activity.in_flight.load(Ordering::Relaxed) == 0 {
                        // Nothing held: closed as an idle one is (HTTP/2 GOAWAY), and cut off
                        // if the client goes on regardless.
                        self.metrics.refused("unauthenticated_connection");
                        tracing::debug!("no authenticated call on the connection in time: closing");
                        closing = true;
                        conn.as_mut().graceful_shutdown();
                        unauthenticated.as_mut().reset(Instant::now() + CLOSING_GRACE);
                    } else {
                        if !closing {
                            self.metrics.refused("unauthenticated_connection");
                        }
                        tracing::debug!("no authenticated call on the connection in time: cut off");
                        break;
                    }
                }
                _ = &mut idle, if !closing => match activity.idle_until() {
                    Idle::NeverUsed => {
                        self.metrics.refused("header_timeout");
                        tracing::debug!("no request within the header timeout: closing");
                        break;
                    }
                    Idle::Busy(until) => idle.as_mut().reset(until),
                    Idle::Since => {
                        closing = true;
                        conn.as_mut().graceful_shutdown();
                    }
                },
                _ = stop.wait_for(|s| *s), if !closing => {
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                }
                () = activity.close.notified(), if !closing => {
                    // Its person holds its share of connections: closed once the refusal is
                    // written, and cut off if the client goes on regardless.
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                    vouched = false;
                    unauthenticated.as_mut().reset(Instant::now() + CLOSING_GRACE);
                }
            }
        }
    }
}

/// One call on a connection, as hyper hands it over: counted in flight on `activity` until its
/// answer's body ends (a stream's too), carrying its connection for the gate to mark
/// ([`Authenticated`]); over HTTP/1.x a body the answer left unread is read first, within bounds.
fn one_call<S: RequestService>(
    service: &S,
    activity: &Arc<Activity>,
    req: http::Request<hyper::body::Incoming>,
) -> impl std::future::Future<Output = Result<http::Response<Body>, Infallible>> + Send + use<S> {
    let call = Call::begin(activity.clone());
    let activity_closing = activity.closing.clone();
    let http1 = req.version() < http::Version::HTTP_2;
    let worth = super::drain::worth_reading(&req);
    let left = super::drain::Left::new();
    let mut req = req.map(|b| Body::new(super::drain::Watched::new(b, left.clone())));
    req.extensions_mut().insert(Authenticated(activity.clone()));
    let fut = tower::ServiceExt::oneshot(service.clone(), req);
    async move {
        let r = match fut.await {
            Ok(resp) if http1 => {
                Ok(super::drain::answer(resp, &left, worth, &activity_closing).await)
            }
            r => r,
        };
        r.map(|resp| resp.map(|body| Body::new(Holding::new(body, call))))
    }
}

/// How long a connection with no call in flight stays open (HTTP/1.1's keep-alive ends sooner,
/// at [`HEADER_TIMEOUT`]); then HTTP/2 says GOAWAY and the connection closes.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// A connection's calls: how many are in flight and when the last one ended.
struct Activity {
    started: Instant,
    in_flight: std::sync::atomic::AtomicUsize,
    used: AtomicBool,
    /// A call on it was authenticated (a token reviewed, or anonymous where that is allowed).
    authenticated: AtomicBool,
    /// Its calls whose tokens Kubernetes is reviewing now ([`UnderReview`]).
    reviewing: std::sync::atomic::AtomicUsize,
    /// Its place among the connections of the person of its first authenticated call.
    person: std::sync::Mutex<Option<super::shares::Seat>>,
    /// Told when the connection is to close at once (its person holds its share already).
    close: tokio::sync::Notify,
    /// Milliseconds from `started` to the last call's end.
    last_ms: std::sync::atomic::AtomicU64,
    /// An answer closed it under a body it did not read: it lingers ([`super::drain`]).
    closing: Arc<AtomicBool>,
}

/// What the idle timer finds.
enum Idle {
    /// No request came within [`HEADER_TIMEOUT`].
    NeverUsed,
    /// A call is in flight or one ended recently: look again then.
    Busy(Instant),
    /// Idle for [`IDLE_TIMEOUT`].
    Since,
}

impl Activity {
    fn new(started: Instant) -> Activity {
        Activity {
            started,
            in_flight: Default::default(),
            used: AtomicBool::new(false),
            authenticated: AtomicBool::new(false),
            reviewing: Default::default(),
            person: std::sync::Mutex::new(None),
            close: tokio::sync::Notify::new(),
            last_ms: Default::default(),
            closing: Arc::default(),
        }
    }

    fn idle_until(&self) -> Idle {
        let now = Instant::now();
        if !self.used.load(Ordering::Relaxed) {
            return Idle::NeverUsed;
        }
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return Idle::Busy(now + IDLE_TIMEOUT);
        }
        let last = self.started + Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        match last + IDLE_TIMEOUT {
            until if until > now => Idle::Busy(until),
            _ => Idle::Since,
        }
    }
}

/// In a request's extensions: the connection it came on, for the gate to mark as carrying an
/// authenticated call.
#[derive(Clone)]
pub(crate) struct Authenticated(Arc<Activity>);

impl Authenticated {
    /// The connection carried a call of `person`: it is not closed for want of one, and it
    /// counts among that person's connections (its first authenticated call's person, for as
    /// long as it is open). When that person holds its share of `connections` already, the
    /// refusal, and the connection is closed after its answer (HTTP/2's GOAWAY, HTTP/1.1's
    /// `Connection: close`).
    pub(crate) fn vouch(
        &self,
        person: &super::shares::Person,
        connections: &super::shares::Shares,
    ) -> Result<(), super::shares::Refused> {
        let mut held = self.0.person.lock().unwrap_or_else(|p| p.into_inner());
        if held.is_none() {
            match connections.try_take(person) {
                Ok(seat) => *held = Some(seat),
                Err(refused) => {
                    self.0.close.notify_one();
                    return Err(refused);
                }
            }
        }
        self.0.authenticated.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Kubernetes is reviewing a token of a call on this connection: the connection waits for
    /// the answer until the returned value is dropped.
    pub(crate) fn under_review(&self) -> UnderReview {
        UnderReview::begin(self.0.clone())
    }
}

/// Held while Kubernetes reviews the token of a call on a connection (not while the call
/// waits for its turn to be reviewed, nor in any queue): the connection counts it
/// ([`Activity::reviewing`]) until it is dropped.
pub(crate) struct UnderReview {
    _reviewing: Arc<Reviewing>,
}

/// One token being decided on a connection.
struct Reviewing(Arc<Activity>);

impl UnderReview {
    fn begin(a: Arc<Activity>) -> UnderReview {
        a.reviewing.fetch_add(1, Ordering::Relaxed);
        UnderReview {
            _reviewing: Arc::new(Reviewing(a)),
        }
    }
}

impl Drop for Reviewing {
    fn drop(&mut self) {
        self.0.reviewing.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An answer's body that holds `T` (a call's count on its connection, a place under a bound)
/// until the body ends or is dropped.
pub(crate) struct Holding<T> {
    body: Body,
    held: Option<T>,
}

impl<T> Holding<T> {
    pub(crate) fn new(body: Body, held: T) -> Holding<T> {
        Holding {
            body,
            held: Some(held),
        }
    }
}

impl<T: Unpin> http_body::Body for Holding<T> {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.held = None;
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

/// One call in flight on a connection, counted until dropped.
struct Call(Arc<Activity>);

impl Call {
    fn begin(a: Arc<Activity>) -> Call {
        a.used.store(true, Ordering::Relaxed);
        a.in_flight.fetch_add(1, Ordering::Relaxed);
        Call(a)
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let ms = u64::try_from(self.0.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.last_ms.store(ms, Ordering::Relaxed);
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The body of a request, cut off at a deadline: past it, the next read fails with
/// DEADLINE_EXCEEDED (a `tonic::Status`, which tonic's decoder and the Connect layer pass on
/// as they are). tower-http's body timeout restarts at each frame, so a body sent a byte at a
/// time would never end; this one bounds the whole body.
pub(crate) struct DeadlineBody {
    inner: Body,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    what: &'static str,
}

impl DeadlineBody {
    /// `what` says which deadline it is, for the message.
    pub(crate) fn new(inner: Body, deadline: Instant, what: &'static str) -> DeadlineBody {
        DeadlineBody {
            inner,
            sleep: Some(Box::pin(tokio::time::sleep_until(deadline))),
            what,
        }
    }
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(None) => {
                this.sleep = None;
                Poll::Ready(None)
            }
            Poll::Ready(Some(r)) => Poll::Ready(Some(r)),
            Poll::Pending => {
                let due = match &mut this.sleep {
                    Some(sleep) => sleep.as_mut().poll(cx).is_ready(),
                    None => false,
                };
                if !due {
                    return Poll::Pending;
                }
                this.sleep = None;
                Poll::Ready(Some(Err(tonic::Status::deadline_exceeded(format!(
                    "the request's body did not arrive within {}",
                    this.what
                )))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
