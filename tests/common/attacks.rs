//! One person's attacks on `serve`, through real sockets: HTTP/2 requests sent frame by frame
//! with hyper's client connection (headers whose body never comes, bodies no client library
//! would send), as the tests and `benches/hostile.rs` make them. Each attacker counts what it
//! got in a [`Tally`].
#![allow(dead_code)]

use bytes::{BufMut as _, Bytes, BytesMut};
use http_body_util::BodyExt as _;
use http_body_util::combinators::BoxBody;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The two methods attacked.
pub const LIST: &str = "/ichor.v1alpha1.OperationService/ListOperations";
pub const WATCH: &str = "/ichor.v1alpha1.OperationService/WatchOperations";

/// One HTTP/2 connection's handle.
pub type Sender = hyper::client::conn::http2::SendRequest<BoxBody<Bytes, Infallible>>;

/// What the attackers got, counted as it happens.
#[derive(Default)]
pub struct Tally {
    /// Calls sent (headers written).
    pub sent: AtomicUsize,
    /// Calls the server answered, by code: `answered[code]` (gRPC's codes, 0 to 16).
    pub answered: [AtomicUsize; 17],
    /// Connections the server closed (or refused).
    pub closed: AtomicUsize,
    /// Attackers that have made their first try.
    pub started: AtomicUsize,
    /// Set to stop every attacker at its next step.
    pub stop: AtomicBool,
}

impl Tally {
    /// How many calls were answered with `code`.
    pub fn got(&self, code: tonic::Code) -> usize {
        self.answered[code as usize].load(Ordering::SeqCst)
    }

    fn answered_with(&self, code: Option<tonic::Code>) {
        let i = code.map_or(tonic::Code::Unknown as usize, |c| c as usize);
        self.answered[i].fetch_add(1, Ordering::SeqCst);
    }
}

/// An HTTP/2 connection (prior knowledge, as gRPC over h2c), its task spawned.
pub async fn h2(addr: SocketAddr) -> Result<Sender, String> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    let io = hyper_util::rt::TokioIo::new(tcp);
    let exec = hyper_util::rt::TokioExecutor::new();
    let (sender, conn) = hyper::client::conn::http2::handshake(exec, io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    Ok(sender)
}

/// `flag`, the length `claimed` (the message's own unless said), then `message`: one gRPC frame.
pub fn frame(flag: u8, message: &[u8], claimed: Option<u32>) -> Bytes {
    let mut b = BytesMut::with_capacity(5 + message.len());
    b.put_u8(flag);
    b.put_u32(claimed.unwrap_or_else(|| u32::try_from(message.len()).unwrap_or(u32::MAX)));
    b.put_slice(message);
    b.freeze()
}

/// A body that never comes: its headers are sent without END_STREAM, then nothing.
pub fn never() -> BoxBody<Bytes, Infallible> {
    http_body_util::StreamBody::new(futures::stream::pending::<
        Result<hyper::body::Frame<Bytes>, Infallible>,
    >())
    .boxed()
}

/// A whole body.
pub fn whole(bytes: Bytes) -> BoxBody<Bytes, Infallible> {
    http_body_util::Full::new(bytes).boxed()
}

/// A gRPC request of `path` with `token` (none: no authorization) and `extra` headers.
pub fn grpc(
    addr: SocketAddr,
    path: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
    body: BoxBody<Bytes, Infallible>,
) -> http::Request<BoxBody<Bytes, Infallible>> {
    let mut req = http::Request::post(format!("http://{addr}{path}"))
        .header(http::header::CONTENT_TYPE, "application/grpc")
        .header(http::header::TE, "trailers");
    if let Some(t) = token {
        req = req.header(http::header::AUTHORIZATION, format!("Bearer {t}"));
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    req.body(body).expect("a request")
}

/// The gRPC code of an answer: `grpc-status` in its headers (trailers-only), else in its
/// trailers once its body ends; `None` for a stream whose first message came instead (it is
/// read no further) or an answer that is not gRPC.
pub async fn code_of(resp: http::Response<hyper::body::Incoming>) -> Option<tonic::Code> {
    code_in(resp, false).await
}

/// The gRPC code of a unary answer: in its headers (trailers-only) or its trailers, its
/// message (if any) read past.
pub async fn unary_code(resp: http::Response<hyper::body::Incoming>) -> Option<tonic::Code> {
    code_in(resp, true).await
}

async fn code_in(
    resp: http::Response<hyper::body::Incoming>,
    past_messages: bool,
) -> Option<tonic::Code> {
    if let Some(s) = tonic::Status::from_header_map(resp.headers()) {
        return Some(s.code());
    }
    let mut body = resp.into_body();
    while let Some(Ok(frame)) = body.frame().await {
        if let Some(trailers) = frame.trailers_ref() {
            return tonic::Status::from_header_map(trailers).map(|s| s.code());
        }
        if !past_messages && frame.data_ref().is_some_and(|d| !d.is_empty()) {
            return None;
        }
    }
    None
}

/// One connection holding `calls` calls of `path` by `token` whose bodies never come, each sent
/// again as soon as the server answers it; made again a second after the server closes it.
/// Until `tally.stop`.
pub async fn hold_bodiless(
    addr: SocketAddr,
    path: &'static str,
    token: String,
    calls: usize,
    tally: Arc<Tally>,
) {
    let mut first = true;
    while !tally.stop.load(Ordering::SeqCst) {
        let sender = h2(addr).await;
        if std::mem::take(&mut first) {
            tally.started.fetch_add(1, Ordering::SeqCst);
        }
        let Ok(sender) = sender else {
            tally.closed.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        let held: Vec<_> = (0..calls)
            .map(|_| {
                let (sender, token, tally) = (sender.clone(), token.clone(), tally.clone());
                tokio::spawn(one_bodiless(addr, path, token, sender, tally))
            })
            .collect();
        for h in held {
            let _ = h.await;
        }
        tally.closed.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// One body-less call, sent again each time it is answered, until its connection closes.
async fn one_bodiless(
    addr: SocketAddr,
    path: &'static str,
    token: String,
    mut sender: Sender,
    tally: Arc<Tally>,
) {
    while !tally.stop.load(Ordering::SeqCst) {
        if sender.ready().await.is_err() {
            return;
        }
        let req = grpc(addr, path, Some(&token), &[], never());
        tally.sent.fetch_add(1, Ordering::SeqCst);
        match sender.send_request(req).await {
            Ok(resp) => tally.answered_with(code_of(resp).await),
            Err(_) => return,
        }
    }
}
