//! Bodies that are not messages are INVALID_ARGUMENT on every protocol, never INTERNAL: a
//! compressed flag without a negotiated encoding over gRPC and gRPC-Web, a truncated message
//! and bad JSON over the Connect protocol. With curl.

use super::common::server::{Options, start};
use super::world;
use ichor_demo::apiserver::auth::users;

const LIST: &str = "/ichor.v1alpha1.OperationService/ListOperations";

/// `flag`, then the length, then `message`: one gRPC frame.
fn frame(flag: u8, message: &[u8]) -> Vec<u8> {
    let mut f = vec![flag];
    f.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    f.extend_from_slice(message);
    f
}

#[tokio::test]
async fn malformed_bodies_are_invalid_argument_on_every_protocol() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = format!("http://{}{LIST}", server.addr);
    let bearer = format!("Authorization: Bearer {}", users::VIEWER_TOKEN);
    let flagged = frame(1, b"\x0a\x07default");
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
            &bearer,
            "--data-binary",
            "@-",
            &url,
        ];
        let Some(answer) = super::curl::run_with_input(&args, &flagged).await else {
            return;
        };
        let lower = answer.to_ascii_lowercase();
        assert!(lower.contains("grpc-status: 3"), "{what}: {answer}");
        assert!(lower.contains("compressed-flag"), "{what}: {answer}");
    }
    for (what, content_type, body) in [
        ("a truncated message", "application/proto", &b"\x0a\xff"[..]),
        (
            "a string that is not UTF-8",
            "application/proto",
            b"\x0a\x02\xff\xfe",
        ),
        ("bad JSON", "application/json", b"{\"namespace\": "),
        (
            "JSON of the wrong type",
            "application/json",
            b"{\"namespace\": 5}",
        ),
    ] {
        let ct = format!("Content-Type: {content_type}");
        let args = ["-H", &ct, "-H", &bearer, "--data-binary", "@-", &url];
        let Some(answer) = super::curl::run_with_input(&args, body).await else {
            return;
        };
        assert!(answer.starts_with("HTTP/1.1 400"), "{what}: {answer}");
        assert!(
            answer.contains("\"code\":\"invalid_argument\""),
            "{what}: {answer}"
        );
    }
}
