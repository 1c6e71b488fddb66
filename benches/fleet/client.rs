//! One dashboard of the fleet, as lean as a load client can be, so ten thousand fit in one
//! process: its own TCP connection and HTTP/2 handshake (hyper's connection alone: no channel,
//! no pool), one WatchOperations call as its own person over gRPC or the Connect protocol, and
//! the messages read as they come. It holds no page: a created operation has arrived when its
//! row is in a page sent whole or among a delta's rows.

use bytes::{Buf as _, BufMut as _, Bytes, BytesMut};
use http_body_util::BodyExt as _;
use ichor_server::wire::proto;
use prost::Message as _;
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PATH: &str = "/ichor.v1alpha1.OperationService/WatchOperations";

/// What the dashboards share: when each operation was created, how long each took to reach
/// each dashboard, and counts.
#[derive(Default)]
pub struct Tally {
    /// Each operation created: its number and when.
    pub created: Mutex<HashMap<String, (usize, Instant)>>,
    /// Each arrival: the operation's number, and the time from its creation.
    pub latencies: Mutex<Vec<(usize, Duration)>>,
    /// Dashboards that have their first page.
    pub ready: AtomicUsize,
    /// Streams refused or broken (each subscribes again after the dashboard's own waits).
    pub broken: AtomicUsize,
    /// Messages received, and their bytes (envelopes included).
    pub messages: AtomicU64,
    pub bytes: AtomicU64,
}

/// One dashboard: where serve listens, which person it is, how it speaks.
pub struct Dashboard {
    pub addr: SocketAddr,
    /// The `i`th demo bench viewer (`ichor_demo::demo::bench_token`).
    pub person: usize,
    /// gRPC, else the Connect protocol.
    pub grpc: bool,
    /// Asks for deltas (a client from before them does not).
    pub deltas: bool,
    pub page_size: i32,
}

/// Subscribes after `start_after` (a fleet joins over a while) and reads for as long as the
/// task lives, subscribing again after a refusal or a broken stream after the dashboard's own
/// waits ([`ichor_runtime::reopen_waits`], from the first again once an update came).
pub async fn run(d: Dashboard, start_after: Duration, tally: Arc<Tally>) {
    tokio::time::sleep(start_after).await;
    let mut seen = HashSet::new();
    let mut counted = false;
    let mut waits = ichor_runtime::reopen_waits();
    loop {
        if let Ok((sender, body)) = watch(&d).await {
            if read(body, &tally, &mut seen, &mut counted).await {
                waits = ichor_runtime::reopen_waits();
            }
            drop(sender);
        }
        tally.broken.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(waits.next().unwrap_or(Duration::from_secs(30))).await;
    }
}

type Sender = hyper::client::conn::http2::SendRequest<http_body_util::Full<Bytes>>;

/// The request's one message in its envelope (the same for gRPC and Connect's streaming).
fn request(d: &Dashboard) -> Bytes {
    let list = proto::ListOperationsRequest {
        namespace: "default".into(),
        view: proto::OperationView::Summary as i32,
        page_size: d.page_size,
        ..Default::default()
    };
    let message = proto::WatchOperationsRequest {
        list: Some(list),
        page_deltas: d.deltas,
        ..Default::default()
    }
    .encode_to_vec();
    let mut b = BytesMut::with_capacity(5 + message.len());
    b.put_u8(0);
    b.put_u32(message.len() as u32);
    b.put_slice(&message);
    b.freeze()
}

/// Connects, shakes hands and calls: the connection's handle (kept while the stream is read)
/// and the answer's body.
async fn watch(d: &Dashboard) -> Result<(Sender, hyper::body::Incoming), String> {
    let tcp = tokio::net::TcpStream::connect(d.addr)
        .await
        .map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    let io = hyper_util::rt::TokioIo::new(tcp);
    let exec = hyper_util::rt::TokioExecutor::new();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(exec, io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let token = ichor_demo::demo::bench_token(d.person);
    let content_type = match d.grpc {
        true => "application/grpc",
        false => "application/connect+proto",
    };
    let req = http::Request::post(format!("http://{}{PATH}", d.addr))
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::TE, "trailers")
        .header("connect-protocol-version", "1")
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(http_body_util::Full::new(request(d)))
        .map_err(|e| e.to_string())?;
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    Ok((sender, resp.into_body()))
}

/// Reads the stream's messages until it ends (gRPC's trailers, Connect's end of stream, a
/// broken connection); whether an update came.
async fn read(
    mut body: hyper::body::Incoming,
    tally: &Tally,
    seen: &mut HashSet<String>,
    counted: &mut bool,
) -> bool {
    let mut updated = false;
    let mut buf = BytesMut::new();
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else {
            return updated;
        };
        buf.extend_from_slice(&data);
        while buf.len() >= 5 {
            let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
            if buf.len() < 5 + len {
                break;
            }
            let flags = buf[0];
            buf.advance(5);
            let message = buf.split_to(len).freeze();
            if flags & 0x02 != 0 {
                return updated;
            }
            tally.messages.fetch_add(1, Ordering::Relaxed);
            tally.bytes.fetch_add(5 + len as u64, Ordering::Relaxed);
            let Ok(m) = proto::WatchOperationsResponse::decode(message) else {
                return updated;
            };
            updated = true;
            arrived(&m, tally, seen, counted);
        }
    }
    updated
}

/// Notes the first page, and each created operation's first arrival.
fn arrived(
    m: &proto::WatchOperationsResponse,
    tally: &Tally,
    seen: &mut HashSet<String>,
    counted: &mut bool,
) {
    let now = Instant::now();
    let rows = m
        .page
        .iter()
        .flat_map(|p| p.operations.iter())
        .chain(m.page_delta.iter().flat_map(|d| d.rows.iter()));
    if m.page.is_some() && !*counted {
        *counted = true;
        tally.ready.fetch_add(1, Ordering::Relaxed);
    }
    let arrivals: Vec<(usize, Duration)> = {
        let Ok(created) = tally.created.lock() else {
            return;
        };
        rows.filter_map(|op| {
            let (n, at) = created.get(&op.name)?;
            seen.insert(op.name.clone()).then(|| (*n, now - *at))
        })
        .collect()
    };
    if !arrivals.is_empty()
        && let Ok(mut l) = tally.latencies.lock()
    {
        l.extend(arrivals);
    }
}
