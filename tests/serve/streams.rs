//! WatchOperations through curl, an outside client: the Connect protocol's server streaming with
//! JSON messages (`application/connect+json`) and gRPC-Web (`application/grpc-web+proto`), each
//! over HTTP/1.1. The stream stays open (it is live), so curl is stopped after its first
//! messages; what it printed by then is read.

use crate::common;
use common::server::start;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_server::wire::proto;
use prost::Message as _;
use std::process::Stdio;
use tokio::io::AsyncWriteExt as _;

/// `curl -sS -i ARGS` with `input`, stopped after two seconds: what it printed by then.
async fn curl_for_a_while(args: &[&str], input: &[u8]) -> Option<Vec<u8>> {
    if !super::curl::present() {
        return None;
    }
    let mut child = tokio::process::Command::new("curl")
        .args(["-sS", "-i", "-N", "--max-time", "2"])
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
    // 28: stopped at --max-time, as meant; anything else is curl's failure.
    assert!(
        out.status.success() || out.status.code() == Some(28),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}

/// WatchOperations' URL on the server at `base`, and the viewer's authorization header.
fn watch_target(base: &str) -> (String, String) {
    (
        format!("{base}/ichor.v1alpha1.OperationService/WatchOperations"),
        format!("authorization: Bearer {}", users::VIEWER_TOKEN),
    )
}

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    api.seed(&common::op("c1-talos-streamed", "c1", "talos", 1))
        .unwrap();
    api
}

#[tokio::test]
async fn the_connect_stream_in_json_through_curl() {
    let api = world();
    let running = start(&api, Default::default()).await;
    let (url, auth) = watch_target(&running.url(false));
    let request = br#"{"list":{"namespace":"default","view":"OPERATION_VIEW_SUMMARY"}}"#;
    let args = [
        "-X",
        "POST",
        "-H",
        "content-type: application/connect+json",
        "-H",
        "connect-protocol-version: 1",
        "-H",
        &auth,
        "--data-binary",
        "@-",
        &url,
    ];
    let Some(out) = curl_for_a_while(&args, &super::curl::enveloped(request)).await else {
        return;
    };
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: application/connect+json"),
        "{text}"
    );
    assert!(
        text.contains(r#""name":"c1-talos-streamed""#),
        "the first page, in JSON: {text}"
    );
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn the_connect_stream_ends_with_the_refusal_of_a_bad_request() {
    let api = world();
    let running = start(&api, Default::default()).await;
    let (url, auth) = watch_target(&running.url(false));
    // A followed operation needs both its namespace and its name.
    let request = br#"{"list":{"namespace":"default"},"followName":"x"}"#;
    let args = [
        "-X",
        "POST",
        "-H",
        "content-type: application/connect+json",
        "-H",
        &auth,
        "--data-binary",
        "@-",
        &url,
    ];
    let Some(out) = curl_for_a_while(&args, &super::curl::enveloped(request)).await else {
        return;
    };
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.starts_with("HTTP/1.1 200"),
        "errors end the stream: {text}"
    );
    assert!(
        text.contains(r#"{"error":{"code":"invalid_argument""#),
        "{text}"
    );
}

#[tokio::test]
async fn the_grpc_web_stream_through_curl() {
    let api = world();
    let running = start(&api, Default::default()).await;
    let (url, auth) = watch_target(&running.url(false));
    let request = proto::WatchOperationsRequest {
        list: Some(proto::ListOperationsRequest {
            namespace: "default".into(),
            view: proto::OperationView::Summary as i32,
            ..Default::default()
        }),
        ..Default::default()
    };
    let args = [
        "-X",
        "POST",
        "-H",
        "content-type: application/grpc-web+proto",
        "-H",
        "x-grpc-web: 1",
        "-H",
        &auth,
        "--data-binary",
        "@-",
        &url,
    ];
    let Some(out) =
        curl_for_a_while(&args, &super::curl::enveloped(&request.encode_to_vec())).await
    else {
        return;
    };
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("c1-talos-streamed"), "the first page: {text}");
    assert!(api.write_log().is_empty());
}
