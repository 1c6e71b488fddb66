//! connect-es (connect-node) at serve's protocol edges (tests/interop/connect_edges.mjs), over
//! HTTP/1.1 and HTTP/2, the Connect protocol, gRPC and gRPC-Web: a refusal costs an HTTP/1.1
//! connection none of its next calls; WatchOperations ends at the caller's deadline and stops
//! counting as a subscriber; a refused stream carries its code, message and ErrorInfo; gRPC-Web
//! in JSON is a clean UNIMPLEMENTED.
//!
//! Needs `$ICHOR_NODE_MODULES` as tests/connect_peers.rs does (skipped with a notice without
//! it, unless `$CI` is set).

use crate::common;
use crate::connect_peers::{INTEROP, descriptors, node_modules};
use common::server::{Running, start};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use std::time::Duration;

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    api.seed(&common::op("c1-talos-edges", "c1", "talos", 1))
        .unwrap();
    api
}

/// Runs `connect_edges.mjs --check CHECK` against `server` with the viewer's token: what it
/// printed, once it succeeded; `None` where connect-es is not installed.
async fn edges(server: &Running, check: &str, extra: &[&str]) -> Option<String> {
    let modules = node_modules()?;
    let dir = tempfile::tempdir().unwrap();
    let fds = descriptors(dir.path());
    let run = tokio::process::Command::new("node")
        .arg(format!("{INTEROP}/connect_edges.mjs"))
        .arg("--descriptors")
        .arg(&fds)
        .args(["--url", &server.url(false), "--token", users::VIEWER_TOKEN])
        .args(["--check", check])
        .args(extra)
        .env("ICHOR_NODE_MODULES", &modules)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("connect-es finishes within two minutes")
        .expect("running node");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    assert!(
        out.status.success(),
        "connect-es --check {check}:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(stdout)
}

/// The open WatchOperations streams the server counts (`ichor_serve_subscribers`).
pub(crate) fn subscribers(metrics: &ichor_server::Metrics) -> i64 {
    metrics
        .encode()
        .lines()
        .find_map(|l| l.strip_prefix("ichor_serve_subscribers "))
        .and_then(|n| n.trim().parse().ok())
        .expect("the subscribers gauge")
}

/// Waits (up to 10 s) until the server counts no subscriber.
pub(crate) async fn until_no_subscribers(metrics: &ichor_server::Metrics) {
    let none = async {
        while subscribers(metrics) != 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), none)
        .await
        .unwrap_or_else(|_| panic!("{} subscribers still counted", subscribers(metrics)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_costs_no_call_on_any_transport_in_twenty_rounds() {
    let api = world();
    let server = start(&api, Default::default()).await;
    let Some(out) = edges(&server, "refusals", &["--rounds", "20"]).await else {
        return;
    };
    for t in [
        "connect-http1",
        "connect-http1-json",
        "grpc-web-http1",
        "connect-http2",
        "grpc-web-http2",
        "grpc",
    ] {
        assert!(
            out.contains(&format!(
                "[{t}] refusals right 20/20, valid calls answered 20/20"
            )),
            "{t}:\n{out}"
        );
    }
    assert!(api.write_log().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_operations_ends_at_the_callers_deadline_on_every_transport() {
    let api = world();
    let server = start(&api, Default::default()).await;
    let Some(out) = edges(&server, "deadlines", &[]).await else {
        return;
    };
    assert!(out.contains("OK: deadlines on 5 transports"), "{out}");
    // The streams ended at the server too: none is counted any more.
    until_no_subscribers(&server.metrics).await;
    let text = server.metrics.encode();
    assert!(
        text.contains("method=\"WatchOperations\",protocol=\"grpc\",code=\"deadline_exceeded\""),
        "{text}"
    );
    assert!(api.write_log().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_stream_carries_its_code_message_and_error_info() {
    let api = world();
    let server = start(&api, Default::default()).await;
    let Some(out) = edges(&server, "refused-stream", &[]).await else {
        return;
    };
    assert!(out.contains("OK: refused-stream on 5 transports"), "{out}");
    assert_eq!(subscribers(&server.metrics), 0);
    assert!(api.write_log().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_in_json_is_a_clean_unimplemented() {
    let api = world();
    let server = start(&api, Default::default()).await;
    let Some(out) = edges(&server, "grpc-web-json", &[]).await else {
        return;
    };
    assert!(out.contains("OK: grpc-web-json on 2 transports"), "{out}");
    assert!(api.write_log().is_empty());
}
