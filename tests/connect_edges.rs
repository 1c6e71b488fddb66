//! connect-es (connect-node) at serve's protocol edges (tests/interop/connect_edges.mjs), over
//! HTTP/1.1 and HTTP/2, the Connect protocol, gRPC and gRPC-Web: a refusal costs an HTTP/1.1
//! connection none of its next calls; WatchOperations ends at the caller's deadline and stops
//! counting as a subscriber; a refused stream carries its code, message and ErrorInfo; gRPC-Web
//! in JSON is a clean UNIMPLEMENTED; a revoked token ends its streams.
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

/// Waits until the server counts no subscriber.
pub(crate) async fn until_no_subscribers(metrics: &ichor_server::Metrics) {
    crate::common::eventually("no subscriber counted", || subscribers(metrics) == 0).await;
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

/// Over HTTP/1.1 a refused call's large body is read before the refusal (200 KiB, under the
/// request size limit: the connection goes on), or the connection is closed under it so that
/// the caller reads the refusal (1.5 MiB): never a broken pipe (connect-node reported `EPIPE`
/// for 8 of 20 at 200 KiB before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_with_a_large_body_is_read_not_a_broken_pipe() {
    let api = world();
    let server = start(&api, Default::default()).await;
    let http1 = [
        "--transport",
        "connect-http1",
        "--transport",
        "connect-http1-json",
        "--transport",
        "grpc-web-http1",
    ];
    for bytes in ["204800", "1572864"] {
        let args = [&["--rounds", "20", "--bytes", bytes][..], &http1].concat();
        let Some(out) = edges(&server, "refusals", &args).await else {
            return;
        };
        for t in ["connect-http1", "connect-http1-json", "grpc-web-http1"] {
            assert!(
                out.contains(&format!(
                    "[{t}] refusals right 20/20, valid calls answered 20/20"
                )),
                "{t} at {bytes} bytes:\n{out}"
            );
        }
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

/// A token Kubernetes no longer accepts ends its open streams: connect-es holds one on every
/// transport (Connect and gRPC-Web over HTTP/1.1 and HTTP/2, gRPC); once each has its first
/// page the token is revoked, and each must end Unauthenticated with its ErrorInfo within a
/// recheck.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_ends_its_streams_on_every_transport() {
    use tokio::io::AsyncBufReadExt as _;
    const TRANSPORTS: usize = 5;
    let Some(modules) = node_modules() else {
        return;
    };
    let api = world();
    api.add_token("revocable-token", "revocable", &["ichor:viewers"]);
    let opts = common::server::Options {
        recheck: Some(Duration::from_millis(500)),
        ..Default::default()
    };
    let server = start(&api, opts).await;
    let dir = tempfile::tempdir().unwrap();
    let fds = descriptors(dir.path());
    let mut node = tokio::process::Command::new("node")
        .arg(format!("{INTEROP}/connect_edges.mjs"))
        .arg("--descriptors")
        .arg(&fds)
        .args(["--url", &server.url(false), "--token", "revocable-token"])
        .args(["--check", "revoked"])
        .env("ICHOR_NODE_MODULES", &modules)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("running node");
    let mut lines = tokio::io::BufReader::new(node.stdout.take().unwrap()).lines();
    let mut out = String::new();
    let subscribed = async {
        let mut n = 0;
        while n < TRANSPORTS {
            let line = lines.next_line().await.unwrap().expect("node says more");
            out.push_str(&line);
            out.push('\n');
            n += usize::from(line.ends_with("] subscribed"));
        }
    };
    let all_subscribed = tokio::time::timeout(Duration::from_secs(60), subscribed)
        .await
        .is_ok();
    assert!(all_subscribed, "every transport subscribes:\n{out}");
    api.remove_token("revocable-token");
    let rest = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            out.push_str(&line);
            out.push('\n');
        }
        node.wait().await.unwrap()
    };
    let status = tokio::time::timeout(Duration::from_secs(60), rest)
        .await
        .expect("every stream ends");
    println!("{out}");
    assert!(status.success(), "{out}");
    assert!(out.contains("OK: revoked on 5 transports"), "{out}");
    until_no_subscribers(&server.metrics).await;
    assert!(api.write_log().is_empty());
}
