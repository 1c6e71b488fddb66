//! gzip on every protocol, both ways, as grpc-go and connect-go negotiate it; with curl (gRPC
//! and gRPC-Web framed by hand, the Connect protocol with `--compressed` and a gzipped body).

use super::common::server::{Options, start};
use super::world;
use ichor_demo::apiserver::auth::users;
use ichor_server::wire::proto;
use prost::Message as _;
use std::io::Write as _;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn frame(flag: u8, message: &[u8]) -> Vec<u8> {
    let mut f = vec![flag];
    f.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    f.extend_from_slice(message);
    f
}

fn list_default() -> Vec<u8> {
    proto::ListOperationsRequest {
        namespace: "default".into(),
        ..Default::default()
    }
    .encode_to_vec()
}

#[tokio::test]
async fn grpc_and_grpc_web_take_and_give_gzip() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = format!(
        "http://{}/ichor.v1alpha1.OperationService/ListOperations",
        server.addr
    );
    let bearer = format!("Authorization: Bearer {}", users::VIEWER_TOKEN);
    let compressed = frame(1, &gzip(&list_default()));
    for (what, transport, content_type) in [
        (
            "gRPC",
            "--http2-prior-knowledge",
            "Content-Type: application/grpc",
        ),
        (
            "gRPC-Web",
            "--http1.1",
            "Content-Type: application/grpc-web+proto",
        ),
    ] {
        let args = [
            transport,
            "-H",
            content_type,
            "-H",
            "grpc-encoding: gzip",
            "-H",
            "grpc-accept-encoding: gzip",
            "-H",
            "TE: trailers",
            "-H",
            &bearer,
            "--data-binary",
            "@-",
            "-o",
            "/dev/null",
            "-D",
            "-",
            &url,
        ];
        let Some(head) = super::curl::run_with_input(&args, &compressed).await else {
            return;
        };
        let lower = head.to_ascii_lowercase();
        assert!(
            lower.contains("grpc-encoding: gzip"),
            "{what}: the answer is gzip: {head}"
        );
        assert!(!lower.contains("grpc-status: 12"), "{what}: {head}");
        assert!(!lower.contains("grpc-status: 3"), "{what}: {head}");
    }
}

#[tokio::test]
async fn the_connect_protocol_takes_and_gives_gzip() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = format!(
        "http://{}/ichor.v1alpha1.OperationService/ListOperations",
        server.addr
    );
    let bearer = format!("Authorization: Bearer {}", users::VIEWER_TOKEN);
    let json = br#"{"namespace": "default"}"#;
    // curl --compressed asks for gzip (among others) and decodes the answer.
    let args = [
        "--compressed",
        "-H",
        "Content-Type: application/json",
        "-H",
        &bearer,
        "--data-binary",
        "@-",
        &url,
    ];
    let Some(answer) = super::curl::run_with_input(&args, json).await else {
        return;
    };
    let lower = answer.to_ascii_lowercase();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(lower.contains("content-encoding: gzip"), "{answer}");
    assert!(
        answer.contains("{\"version\":"),
        "curl decoded it: {answer}"
    );
    // A gzipped request.
    let args = [
        "-H",
        "Content-Type: application/json",
        "-H",
        "Content-Encoding: gzip",
        "-H",
        &bearer,
        "--data-binary",
        "@-",
        &url,
    ];
    let answer = super::curl::run_with_input(&args, &gzip(json))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-encoding: gzip"),
        "answered as asked: {answer}"
    );
    // An encoding the server does not have: UNIMPLEMENTED, naming the one it has.
    let args = [
        "-H",
        "Content-Type: application/json",
        "-H",
        "Content-Encoding: br",
        "-H",
        &bearer,
        "--data-binary",
        "@-",
        &url,
    ];
    let answer = super::curl::run_with_input(&args, json).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 501"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("accept-encoding: gzip"),
        "{answer}"
    );
    // A body that says gzip and is not.
    let args = [
        "-H",
        "Content-Type: application/json",
        "-H",
        "Content-Encoding: gzip",
        "-H",
        &bearer,
        "--data-binary",
        "@-",
        &url,
    ];
    let answer = super::curl::run_with_input(&args, json).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("invalid_argument"), "{answer}");
}
