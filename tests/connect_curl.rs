//! curl speaking the Connect protocol in JSON to the built binary's `serve --demo`: docs/serve.md's
//! examples, run as the page gives them (only the port differs), answer a 200 with the
//! operations in JSON, and a refusal's JSON error body carries the google.rpc.ErrorInfo. Also
//! what a JSON client relies on beyond the page: the server names its version, and a field
//! this build does not know is skipped (as connect-go's JSON codec does), not refused.
//!
//! Needs curl (`.ci/run` installs it); without it the test is skipped with a notice, unless
//! `$CI` is set, when it fails.

use crate::common;

use base64::Engine as _;
use common::process::Process;
use prost::Message as _;
use std::process::Command;
use std::time::Duration;

const PAGE: &str = include_str!("../docs/serve.md");

/// Where the page's examples send their calls; the test's server listens elsewhere.
const PAGE_ADDR: &str = "127.0.0.1:50051";

/// The page's curl examples: each indented line that starts with `curl `, with the lines its
/// trailing backslashes continue it onto, as written.
fn page_examples() -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = PAGE.lines();
    while let Some(line) = lines.next() {
        if !line.trim_start().starts_with("curl ") || !line.starts_with("    ") {
            continue;
        }
        let mut cmd = line.trim().to_string();
        while cmd.ends_with('\\') {
            let Some(next) = lines.next() else { break };
            cmd.push('\n');
            cmd.push_str(next);
        }
        out.push(cmd);
    }
    out
}

/// Runs `cmd` with the server's address, printing the HTTP status after the body; returns the
/// status and the body as JSON.
fn run(cmd: &str, addr: &str) -> (u16, serde_json::Value) {
    let cmd = format!("{} -w '\\n%{{http_code}}'", cmd.replace(PAGE_ADDR, addr));
    let out = Command::new("sh").args(["-c", &cmd]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{cmd}\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (body, status) = stdout.rsplit_once('\n').unwrap();
    let json = serde_json::from_str(body).unwrap_or_else(|e| panic!("{cmd}: {e}: {body}"));
    (status.trim().parse().unwrap(), json)
}

/// The ErrorInfo in a Connect error body's details.
fn error_info(body: &serde_json::Value) -> tonic_types::pb::ErrorInfo {
    let details = body["details"].as_array().expect("details");
    assert_eq!(details.len(), 1, "{body}");
    assert_eq!(details[0]["type"], "google.rpc.ErrorInfo", "{body}");
    let value = details[0]["value"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(value.trim_end_matches('='))
        .unwrap();
    tonic_types::pb::ErrorInfo::decode(bytes.as_slice()).unwrap()
}

#[test]
fn the_readmes_curl_examples_speak_the_connect_protocol_in_json() {
    let examples = page_examples();
    let list = examples
        .iter()
        .find(|c| c.contains("OperationService/ListOperations"))
        .expect("docs/serve.md shows ListOperations with curl");
    let refused = examples
        .iter()
        .find(|c| c.contains("OperationService/PlanOperation"))
        .expect("docs/serve.md shows a refused PlanOperation with curl");
    for c in [list, refused] {
        assert!(c.contains(PAGE_ADDR), "{c}");
        assert!(c.contains("Content-Type: application/json"), "{c}");
    }
    if !crate::grpc::curl::present() {
        return;
    }
    let log = tempfile::NamedTempFile::new().unwrap();
    let (server, first) =
        Process::start(&["serve", "--demo", "--listen", "127.0.0.1:0"], log.path());
    let addr = first
        .strip_prefix("serving on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();

    let (status, body) = run(list, &addr);
    assert_eq!(status, 200, "{body}");
    let ops = body["operations"].as_array().expect("operations");
    assert_eq!(ops.len(), 7, "the demo's operations: {body}");
    for op in ops {
        assert!(op["name"].is_string(), "{op}");
        // The canonical proto3 JSON mapping: enum names, 64-bit integers as strings.
        assert!(
            op["kind"].as_str().unwrap().starts_with("OPERATION_KIND_"),
            "{op}"
        );
        assert!(op["generation"].is_string(), "{op}");
    }

    let (status, body) = run(refused, &addr);
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["code"], "invalid_argument", "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("takes no target"),
        "{body}"
    );
    let info = error_info(&body);
    assert_eq!(
        (info.reason.as_str(), info.domain.as_str()),
        ("TARGET_NOT_TAKEN", "ichor.maesh.dev")
    );
    assert_eq!(
        info.metadata.get("kind").map(String::as_str),
        Some("shutdown")
    );

    version_and_unknown_fields(&addr);

    let status = server.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status after SIGTERM: {status}");
}

/// Beyond the page: the server names its version, and a field this build does not know is
/// skipped, not refused.
fn version_and_unknown_fields(addr: &str) {
    let out = Command::new("curl")
        .args(["-sS", "-D", "-", "-H", "Content-Type: application/json"])
        .args(["-H", "Authorization: Bearer demo-viewer-token"])
        .args([
            "-d",
            r#"{"namespace": "default", "fieldFromANewerSchema": {"x": [1]}}"#,
        ])
        .arg(format!(
            "http://{addr}/ichor.v1alpha1.ClusterService/ListClusters"
        ))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{text}");
    let version = format!("ichor-version: {}", env!("CARGO_PKG_VERSION"));
    assert!(
        head.lines().any(|l| l.eq_ignore_ascii_case(&version)),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["clusters"].as_array().map(Vec::len), Some(3), "{body}");
}

/// AIP-158: a ListOperations without a page size is the server's default page of 100, with a
/// token for the next; the token leads on to the rest.
#[test]
fn an_unpaged_list_is_a_default_page_with_a_token() {
    if !crate::grpc::curl::present() {
        return;
    }
    let log = tempfile::NamedTempFile::new().unwrap();
    let (server, first) = Process::start_with_env(
        &["serve", "--demo", "--listen", "127.0.0.1:0"],
        log.path(),
        &[("ICHOR_DEMO_OPERATIONS", "150")],
    );
    let addr = first.strip_prefix("serving on ").unwrap().to_string();
    let list = |body: &str| {
        let cmd = format!(
            "curl -sS -H 'Content-Type: application/json' -H 'Authorization: Bearer demo-viewer-token' -d '{body}' http://{PAGE_ADDR}/ichor.v1alpha1.OperationService/ListOperations"
        );
        run(&cmd, &addr)
    };
    let (status, page) = list(r#"{"allNamespaces": true, "view": "OPERATION_VIEW_SUMMARY"}"#);
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["operations"].as_array().map(Vec::len), Some(100));
    assert_eq!(page["totalSize"], 157, "{}", page["totalSize"]);
    let token = page["nextPageToken"].as_str().expect("a next page token");
    let (status, rest) = list(&format!(
        r#"{{"allNamespaces": true, "view": "OPERATION_VIEW_SUMMARY", "pageToken": "{token}"}}"#
    ));
    assert_eq!(status, 200, "{rest}");
    assert_eq!(rest["operations"].as_array().map(Vec::len), Some(57));
    assert!(rest.get("nextPageToken").is_none(), "the last page: {rest}");
    let status = server.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status after SIGTERM: {status}");
}

/// `serve --metrics-listen`: Prometheus metrics on a port of their own, scraped with curl after
/// a Connect call, a gRPC call (its code read from the trailers) and a refused one.
#[test]
fn serve_exposes_prometheus_metrics_on_a_port_of_its_own() {
    if !crate::grpc::curl::present() {
        return;
    }
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let metrics_addr = free.local_addr().unwrap().to_string();
    drop(free);
    let log = tempfile::NamedTempFile::new().unwrap();
    let (server, first) = Process::start(
        &[
            "serve",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            &metrics_addr,
        ],
        log.path(),
    );
    let addr = first.strip_prefix("serving on ").unwrap().to_string();
    let url = format!("http://{addr}/ichor.v1alpha1.OperationService/ListOperations");
    let curl = |args: &[&str], input: &[u8]| {
        use std::io::Write as _;
        let mut child = Command::new("curl")
            .args(["-sS", "-o", "/dev/null"])
            .args(args)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        assert!(child.wait().unwrap().success(), "{args:?}");
    };
    let bearer = "Authorization: Bearer demo-viewer-token";
    let json = br#"{"namespace": "default"}"#;
    curl(
        &[
            "-H",
            "Content-Type: application/json",
            "-H",
            bearer,
            "--data-binary",
            "@-",
            &url,
        ],
        json,
    );
    curl(
        &[
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            "@-",
            &url,
        ],
        json,
    );
    let mut frame = vec![0, 0, 0, 0, 9];
    frame.extend_from_slice(b"\x0a\x07default");
    let grpc = [
        "--http2-prior-knowledge",
        "-H",
        "Content-Type: application/grpc",
        "-H",
        "TE: trailers",
        "-H",
        bearer,
        "--data-binary",
        "@-",
        &url,
    ];
    curl(&grpc, &frame);
    // A dashboard subscribed: a Connect stream curl holds open while the metrics are scraped.
    let watch = format!("http://{addr}/ichor.v1alpha1.OperationService/WatchOperations");
    let mut subscribed = Command::new("curl")
        .args(["-sS", "-N", "-o", "/dev/null", "-X", "POST"])
        .args(["-H", "content-type: application/connect+json"])
        .args(["-H", "connect-protocol-version: 1", "-H", bearer])
        .args(["--data-binary", "@-", &watch])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let body = crate::grpc::curl::enveloped(br#"{"list":{"namespace":"default"}}"#);
        let mut stdin = subscribed.stdin.take().unwrap();
        stdin.write_all(&body).unwrap();
    }
    let scrape = || {
        let out = Command::new("curl")
            .args(["-sS", &format!("http://{metrics_addr}/metrics")])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let mut text = String::new();
    common::eventually_blocking("serve counts the subscriber", || {
        text = scrape();
        text.contains("ichor_serve_subscribers 1")
    });
    let _ = subscribed.kill();
    let _ = subscribed.wait();
    println!("{text}");
    let calls = |protocol: &str, code: &str| {
        format!(
            "ichor_serve_requests_total{{service=\"ichor.v1alpha1.OperationService\",method=\"ListOperations\",protocol=\"{protocol}\",code=\"{code}\"}} 1"
        )
    };
    for want in [
        calls("connect", "ok"),
        calls("connect", "unauthenticated"),
        calls("grpc", "ok"),
        "ichor_serve_request_duration_seconds_bucket{".to_string(),
        "ichor_serve_requests_in_flight ".to_string(),
        "ichor_serve_connections_open ".to_string(),
        "ichor_serve_subscribers 1".to_string(),
    ] {
        assert!(text.contains(&want), "{want} in\n{text}");
    }
    let status = server.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status after SIGTERM: {status}");
}
