//! ListOperations over each protocol `serve` speaks, on loopback against the in-process server
//! and the embedded API (the demo's 7 operations, then 1,000): the median latency of one call
//! (from sending the request to the whole answer read; the bearer token is reviewed and the
//! list read as the caller on every call, as in production), and the bytes of one call: the
//! request and response bodies, and everything on the wire each way (headers, HTTP/2 frames)
//! through a counting loopback relay, on a connection already open.
//!
//! The protocols are sent by a plain hyper client, the same way for each: the Connect protocol
//! in binary and in JSON over HTTP/1.1, gRPC over h2c, gRPC-Web over HTTP/1.1. The dashboard's
//! own client (Connect and gRPC) is measured too, its answer decoded into the domain types.
//!
//!     cargo bench --bench protocols

mod common;

#[path = "../tests/common/server.rs"]
mod server;

use bytes::{BufMut as _, Bytes, BytesMut};
use common::relay::Relay;
use common::world::world;
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use ichor_client::remote::{Protocol, RemoteClient};
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient as _;
use ichor_server::wire::proto;
use prost::Message as _;
use std::time::Duration;
use tokio::runtime::Runtime;

const PATH: &str = "/ichor.v1alpha1.OperationService/ListOperations";

/// How a call travels.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    ConnectProto,
    ConnectJson,
    Grpc,
    GrpcWeb,
}

impl Wire {
    const ALL: [Wire; 4] = [
        Wire::ConnectProto,
        Wire::ConnectJson,
        Wire::Grpc,
        Wire::GrpcWeb,
    ];

    fn name(self) -> &'static str {
        match self {
            Wire::ConnectProto => "Connect, binary (HTTP/1.1)",
            Wire::ConnectJson => "Connect, JSON (HTTP/1.1)",
            Wire::Grpc => "gRPC (h2c)",
            Wire::GrpcWeb => "gRPC-Web (HTTP/1.1)",
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Wire::ConnectProto => "application/proto",
            Wire::ConnectJson => "application/json",
            Wire::Grpc => "application/grpc",
            Wire::GrpcWeb => "application/grpc-web+proto",
        }
    }

    /// The request body: the message as the protocol carries it.
    fn body(self) -> Bytes {
        let msg = proto::ListOperationsRequest {
            namespace: "default".into(),
            ..Default::default()
        };
        match self {
            Wire::ConnectProto => Bytes::from(msg.encode_to_vec()),
            Wire::ConnectJson => Bytes::from_static(br#"{"namespace":"default"}"#),
            Wire::Grpc | Wire::GrpcWeb => {
                let m = msg.encode_to_vec();
                let mut b = BytesMut::with_capacity(5 + m.len());
                b.put_u8(0);
                b.put_u32(u32::try_from(m.len()).unwrap_or(u32::MAX));
                b.put_slice(&m);
                b.freeze()
            }
        }
    }
}

/// A plain HTTP client speaking one protocol to one address.
struct Raw {
    client: Client<HttpConnector, Full<Bytes>>,
    wire: Wire,
    url: String,
}

impl Raw {
    fn new(wire: Wire, addr: &str) -> Raw {
        let mut b = Client::builder(TokioExecutor::new());
        if wire == Wire::Grpc {
            b.http2_only(true);
        }
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        Raw {
            client: b.build(http),
            wire,
            url: format!("http://{addr}{PATH}"),
        }
    }

    /// One call; returns the response body's size, after checking that it is an answer.
    async fn call(&self) -> usize {
        let mut req = http::Request::post(&self.url)
            .header("content-type", self.wire.content_type())
            .header("authorization", format!("Bearer {}", users::VIEWER_TOKEN));
        req = match self.wire {
            Wire::ConnectProto | Wire::ConnectJson => req.header("connect-protocol-version", "1"),
            Wire::Grpc => req.header("te", "trailers"),
            Wire::GrpcWeb => req.header("x-grpc-web", "1"),
        };
        let resp = self
            .client
            .request(req.body(Full::new(self.wire.body())).unwrap())
            .await
            .expect("the call");
        assert_eq!(resp.status(), 200, "{}", self.wire.name());
        let collected = resp.into_body().collect().await.expect("the answer");
        let grpc_status = collected
            .trailers()
            .and_then(|t| t.get("grpc-status"))
            .map(|v| v.as_bytes().to_vec());
        let body = collected.to_bytes();
        match self.wire {
            Wire::Grpc => assert_eq!(grpc_status.as_deref(), Some(&b"0"[..]), "gRPC status"),
            Wire::GrpcWeb => assert!(
                body.windows(13).any(|w| w == b"grpc-status:0"),
                "gRPC-Web status"
            ),
            _ => {}
        }
        body.len()
    }
}

struct Plan {
    runs: usize,
    iters: usize,
    bytes_calls: u64,
}

/// The median time of one call (each call is run to completion on the runtime by `call`).
fn latency(plan: &Plan, mut call: impl FnMut() -> usize) -> f64 {
    let times = common::time_runs(plan.runs, plan.iters, || {
        std::hint::black_box(call());
    });
    common::median_us(&times)
}

/// Bytes per call each way, on an open connection: one call to open it, then `calls` counted.
async fn bytes_per_call<F, Fut>(relay: &Relay, calls: u64, call: F) -> (u64, u64)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    call().await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    relay.reset();
    for _ in 0..calls {
        call().await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (up, down) = relay.counts();
    (up / calls, down / calls)
}

fn report_wire(label: &str, n: usize, us: f64, body: Option<(usize, usize)>, wire: (u64, u64)) {
    let bodies = body
        .map(|(req, resp)| format!("; bodies {req} B up, {resp} B down"))
        .unwrap_or_default();
    common::report(
        &format!("ListOperations, {n} operations, {label}"),
        format!(
            "{:.2} ms/call{bodies}; on the wire {} B up, {} B down",
            us / 1000.0,
            wire.0,
            wire.1
        ),
    );
}

fn measure(rt: &Runtime, plan: &Plan, n: usize) {
    let api = world(n - 7);
    let srv = rt.block_on(server::start(&api, server::Options::default()));
    let addr = srv.addr.to_string();
    let relay = rt.block_on(Relay::start(addr.clone()));

    for wire in Wire::ALL {
        let raw = Raw::new(wire, &addr);
        let resp = rt.block_on(raw.call());
        let us = latency(plan, || rt.block_on(raw.call()));
        let counted = Raw::new(wire, &relay.addr);
        let on_wire = rt.block_on(bytes_per_call(&relay, plan.bytes_calls, || async {
            counted.call().await;
        }));
        report_wire(wire.name(), n, us, Some((wire.body().len(), resp)), on_wire);
    }
    for (protocol, label) in [
        (Protocol::Connect, "dashboard client, Connect"),
        (Protocol::Grpc, "dashboard client, gRPC"),
    ] {
        let c: RemoteClient = server::client_over(
            &format!("http://{addr}"),
            Some(users::VIEWER_TOKEN),
            protocol,
        );
        let list = || async {
            let ops = c.list_operations(Some("default")).await.expect("listing");
            assert_eq!(ops.len(), n);
        };
        rt.block_on(list());
        let us = latency(plan, || {
            rt.block_on(list());
            n
        });
        let counted: RemoteClient = server::client_over(
            &format!("http://{}", relay.addr),
            Some(users::VIEWER_TOKEN),
            protocol,
        );
        let on_wire = rt.block_on(bytes_per_call(&relay, plan.bytes_calls, || async {
            counted
                .list_operations(Some("default"))
                .await
                .expect("listing");
        }));
        report_wire(label, n, us, None, on_wire);
    }
    drop(srv);
}

fn main() {
    let full = common::full();
    let rt = common::runtime();
    // tonic's lazy channel is made inside the runtime.
    let _inside = rt.enter();
    // The smoke run (cargo test) lists 100 operations where the measure lists 1,000: it only
    // proves that every path still works, and a debug build is slow at it.
    let large = if full { 1_000 } else { 100 };
    for (n, runs, iters) in [(7, 15, 100), (large, 15, 5)] {
        let plan = if full {
            Plan {
                runs,
                iters,
                bytes_calls: 5,
            }
        } else {
            Plan {
                runs: 1,
                iters: 1,
                bytes_calls: 1,
            }
        };
        measure(&rt, &plan, n);
    }
    if full {
        println!("(median of 15 runs: 100 calls each with 7 operations, 5 with 1,000)");
    }
}
