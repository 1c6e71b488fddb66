//! serve's protocol edges through curl, which leaves deadlines and connections to the server:
//! an HTTP/1.1 connection goes on after a refusal of a small body, and says `Connection: close`
//! after a large one; WatchOperations ends at the deadline its header gives, on gRPC, gRPC-Web
//! and Connect, and stops counting as a subscriber; gRPC-Web in base64 text is answered in
//! base64; a unary Connect call to the streaming method (and a Connect stream to a unary one) is
//! HTTP 415, as connect-go answers it.

use super::common::server::{Options, start};
use super::world;
use base64::Engine as _;
use ichor_demo::apiserver::auth::users;
use ichor_server::wire::proto;
use prost::Message as _;
use std::process::Stdio;
use tokio::io::AsyncWriteExt as _;

const LIST: &str = "/ichor.v1alpha1.OperationService/ListOperations";
const WATCH: &str = "/ichor.v1alpha1.OperationService/WatchOperations";

fn bearer() -> String {
    format!("Authorization: Bearer {}", users::VIEWER_TOKEN)
}

/// `curl -sS -i -v ARGS` with `input` on its standard input: what it printed (the answers'
/// heads and bodies) and what it said on stderr (which connection each request took).
async fn curl_verbose(args: &[&str], input: &[u8]) -> Option<(String, String)> {
    if !super::curl::present() {
        return None;
    }
    let mut child = tokio::process::Command::new("curl")
        .args(["-sS", "-i", "-v", "--max-time", "60"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "curl {args:?}: {stderr}");
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), stderr))
}

/// The head of each answer in curl's output, lower case.
fn heads(out: &str) -> Vec<String> {
    out.split("HTTP/1.1 ")
        .skip(1)
        .map(|a| {
            a.split("\r\n\r\n")
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
        })
        .collect()
}

#[tokio::test]
async fn a_refused_http1_call_leaves_its_connection_to_the_next_one() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = format!("http://{}{LIST}", server.addr);
    let json = "Content-Type: application/json";
    let body = r#"{"namespace":"default"}"#;
    let bearer = bearer();
    let args = [
        "--http1.1",
        "-H",
        json,
        "-d",
        body,
        &url,
        "--next",
        "-sS",
        "-i",
        "-v",
        "--http1.1",
        "-H",
        json,
        "-H",
        &bearer,
        "-d",
        body,
        &url,
    ];
    let Some((out, said)) = curl_verbose(&args, &[]).await else {
        return;
    };
    let answered = heads(&out);
    assert!(answered[0].starts_with("401"), "{out}");
    assert!(!answered[0].contains("connection: close"), "{out}");
    assert!(answered[1].starts_with("200"), "{out}");
    assert!(said.contains("Re-using existing connection"), "{said}");

    // A body under the request size limit is read before the refusal: the connection goes on.
    let large = vec![b' '; 100 * 1024];
    let args = ["--http1.1", "-H", json, "--data-binary", "@-", &url];
    let Some((out, _)) = curl_verbose(&args, &large).await else {
        return;
    };
    let answered = heads(&out);
    assert!(answered[0].starts_with("401"), "{out}");
    assert!(!answered[0].contains("connection: close"), "{out}");
    // A body over it: answered at once, and the connection closed after the answer is read.
    let over = vec![b' '; 1536 * 1024];
    let Some((out, _)) = curl_verbose(&args, &over).await else {
        return;
    };
    let answered = heads(&out);
    assert!(answered[0].starts_with("401"), "{out}");
    assert!(answered[0].contains("connection: close"), "{out}");
    assert!(api.write_log().is_empty());
}

/// The watch request for the `default` namespace, in a gRPC frame.
fn watch_frame() -> Vec<u8> {
    let request = proto::WatchOperationsRequest {
        list: Some(proto::ListOperationsRequest {
            namespace: "default".into(),
            view: proto::OperationView::Summary as i32,
            ..Default::default()
        }),
        ..Default::default()
    };
    super::curl::enveloped(&request.encode_to_vec())
}

#[tokio::test]
async fn watch_operations_ends_at_the_deadline_its_header_gives_on_every_protocol() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = format!("http://{}{WATCH}", server.addr);
    let bearer = bearer();
    let grpc = [
        "--http2-prior-knowledge",
        "-H",
        "Content-Type: application/grpc",
        "-H",
        "TE: trailers",
        "-H",
        "grpc-timeout: 2S",
        "-H",
        &bearer,
        "--data-binary",
        "@-",
        &url,
    ];
    let Some(out) = super::curl::run_with_input(&grpc, &watch_frame()).await else {
        return;
    };
    let out = out.to_ascii_lowercase();
    assert!(out.contains("grpc-status: 4"), "{out}");
    assert!(
        out.contains("deadline%20passed"),
        "the server's words: {out}"
    );
    let web = [
        "--http1.1",
        "-H",
        "Content-Type: application/grpc-web+proto",
        "-H",
        "grpc-timeout: 2S",
        "-H",
        &bearer,
        "--data-binary",
        "@-",
        &url,
    ];
    let out = super::curl::run_with_input(&web, &watch_frame()).await;
    let out = out.unwrap_or_default().to_ascii_lowercase();
    assert!(out.contains("grpc-status:4"), "the trailers' frame: {out}");
    let connect = [
        "--http1.1",
        "-H",
        "Content-Type: application/connect+json",
        "-H",
        "Connect-Timeout-Ms: 2000",
        "-H",
        &bearer,
        "--data-binary",
        "@-",
        &url,
    ];
    let request = super::curl::enveloped(br#"{"list":{"namespace":"default"}}"#);
    let out = super::curl::run_with_input(&connect, &request).await;
    let out = out.unwrap_or_default();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(
        out.contains(r#"{"error":{"code":"deadline_exceeded""#),
        "{out}"
    );
    crate::connect_edges::until_no_subscribers(&server.metrics).await;
    let metrics = server.metrics.encode();
    for protocol in ["grpc", "grpc-web", "connect"] {
        let want = format!(
            "method=\"WatchOperations\",protocol=\"{protocol}\",code=\"deadline_exceeded\"}} 1"
        );
        assert!(metrics.contains(&want), "{want} in\n{metrics}");
    }
    assert!(api.write_log().is_empty());
}

/// gRPC-Web text as it arrives: base64 chunks, each padded, one after another.
fn unbase64(text: &str) -> Vec<u8> {
    let engine = base64::engine::general_purpose::STANDARD;
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    clean
        .chunks(4)
        .flat_map(|c| engine.decode(c).unwrap_or_else(|e| panic!("{e}: {text}")))
        .collect()
}

#[tokio::test]
async fn grpc_web_text_is_answered_in_base64_text() {
    let api = world();
    api.seed(&super::common::op("c1-talos-text", "c1", "talos", 1))
        .unwrap();
    let server = start(&api, Options::default()).await;
    let url = format!("http://{}{LIST}", server.addr);
    let request = proto::ListOperationsRequest {
        namespace: "default".into(),
        ..Default::default()
    };
    let frame = super::curl::enveloped(&request.encode_to_vec());
    let text = base64::engine::general_purpose::STANDARD.encode(frame);
    let bearer = bearer();
    let ct = "Content-Type: application/grpc-web-text";
    let args = ["--http1.1", "-H", ct, "-H", &bearer, "-d", "@-", &url];
    let Some(out) = super::curl::run_with_input(&args, text.as_bytes()).await else {
        return;
    };
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{out}");
    assert!(
        head.contains("content-type: application/grpc-web-text+proto"),
        "{out}"
    );
    let answer = unbase64(body);
    let len = u32::from_be_bytes(answer[1..5].try_into().unwrap()) as usize;
    let listed = proto::ListOperationsResponse::decode(&answer[5..5 + len]).unwrap();
    assert!(!listed.operations.is_empty(), "{listed:?}");
    let trailers = String::from_utf8_lossy(&answer[5 + len..]).to_ascii_lowercase();
    assert!(trailers.contains("grpc-status:0"), "{trailers}");

    // Refused without a token: in the same content type.
    let args = ["--http1.1", "-H", ct, "-d", "@-", &url];
    let out = super::curl::run_with_input(&args, text.as_bytes()).await;
    let out = out.unwrap_or_default().to_ascii_lowercase();
    assert!(out.contains("grpc-status: 16"), "{out}");
    assert!(
        out.contains("content-type: application/grpc-web-text+proto"),
        "{out}"
    );
}

#[tokio::test]
async fn a_unary_connect_call_to_the_stream_is_415_as_connect_go_answers_it() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = format!("http://{}{WATCH}", server.addr);
    let bearer = bearer();
    let args = [
        "-H",
        "Content-Type: application/json",
        "-H",
        &bearer,
        "-d",
        r#"{"list":{"namespace":"default"}}"#,
        &url,
    ];
    let Some(out) = super::curl::run(&args).await else {
        return;
    };
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 415"), "{out}");
    assert!(
        head.contains("accept-post: application/connect+json, application/connect+proto"),
        "{out}"
    );
    assert!(body.is_empty(), "no body, as connect-go: {out}");

    // And a Connect stream to a unary method.
    let list = format!("http://{}{LIST}", server.addr);
    let request = super::curl::enveloped(br#"{"namespace":"default"}"#);
    let ct = "Content-Type: application/connect+json";
    let args = ["-H", ct, "-H", &bearer, "--data-binary", "@-", &list];
    let out = super::curl::run_with_input(&args, &request).await;
    let out = out.unwrap_or_default();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 415"), "{out}");
    assert!(
        head.contains("accept-post: application/grpc, application/grpc+proto"),
        "{out}"
    );
    assert!(
        head.contains("application/json, application/proto"),
        "{out}"
    );
    assert!(body.is_empty(), "{out}");
}
