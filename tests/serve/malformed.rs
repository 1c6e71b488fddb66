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

/// The gRPC code `path` answers a body of `frames` with, sent as raw HTTP/2 frames
/// (`grpc-encoding` when `gzip`); `None`: a stream began (its first message came).
async fn grpc_code(
    addr: std::net::SocketAddr,
    path: &str,
    frames: bytes::Bytes,
    gzip: bool,
) -> Option<tonic::Code> {
    use super::common::attacks;
    let mut sender = attacks::h2(addr).await.expect("a connection");
    let extra: &[(&str, &str)] = match gzip {
        true => &[("grpc-encoding", "gzip")],
        false => &[],
    };
    let req = attacks::grpc(
        addr,
        path,
        Some(users::VIEWER_TOKEN),
        extra,
        attacks::whole(frames),
    );
    let resp = sender.send_request(req).await.expect("an answer");
    match path == attacks::LIST {
        true => attacks::unary_code(resp).await,
        false => attacks::code_of(resp).await,
    }
}

/// One malformed body: what it is, how it is made from a request and a gzip bomb, whether it
/// is sent gzipped, and the code both methods answer (`None`: read as its first message).
type Case = (
    &'static str,
    fn(&[u8], &[u8]) -> bytes::Bytes,
    bool,
    Option<tonic::Code>,
);

/// Malformed bodies over gRPC, as raw HTTP/2 frames: WatchOperations answers each as
/// ListOperations does (tonic's own decoder reads both), with the codes docs/protocol.md
/// documents: an empty body, a frame claiming 4 GiB, a gzip bomb, a compressed flag without an
/// encoding; and two messages are read as one request (the first), on both.
#[tokio::test]
async fn malformed_watch_bodies_are_answered_as_list_bodies_are() {
    use super::common::attacks::{LIST, WATCH, frame};
    let api = world();
    let server = start(&api, Options::default()).await;
    let request =
        prost::Message::encode_to_vec(&ichor_server::wire::proto::WatchOperationsRequest {
            list: Some(ichor_server::wire::proto::ListOperationsRequest {
                namespace: "default".into(),
                ..Default::default()
            }),
            ..Default::default()
        });
    let list = prost::Message::encode_to_vec(&ichor_server::wire::proto::ListOperationsRequest {
        namespace: "default".into(),
        ..Default::default()
    });
    let bomb = {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![0u8; 8 * 1024 * 1024]).unwrap();
        gz.finish().unwrap()
    };
    let two = |m: &[u8]| [frame(0, m, None), frame(0, m, None)].concat().into();
    let cases: [Case; 5] = [
        (
            "an empty body",
            |_, _| bytes::Bytes::new(),
            false,
            Some(tonic::Code::InvalidArgument),
        ),
        (
            "a frame claiming 4 GiB",
            |m, _| frame(0, m, Some(u32::MAX)),
            false,
            Some(tonic::Code::OutOfRange),
        ),
        (
            "a gzip bomb",
            |_, bomb| frame(1, bomb, None),
            true,
            Some(tonic::Code::OutOfRange),
        ),
        (
            "a compressed flag without an encoding",
            |m, _| frame(1, m, None),
            false,
            Some(tonic::Code::InvalidArgument),
        ),
        ("two messages", |_, _| bytes::Bytes::new(), false, None),
    ];
    for (what, body, gzip, expected) in cases {
        let (watch_body, list_body) = match what {
            "two messages" => (two(&request), two(&list)),
            _ => (body(&request, &bomb), body(&list, &bomb)),
        };
        let listed = grpc_code(server.addr, LIST, list_body, gzip).await;
        let watched = grpc_code(server.addr, WATCH, watch_body, gzip).await;
        match expected {
            Some(code) => {
                assert_eq!(listed, Some(code), "ListOperations, {what}");
                assert_eq!(watched, Some(code), "WatchOperations, {what}");
            }
            // The first message is the request: the list answered, the stream begun.
            None => {
                assert_eq!(listed, Some(tonic::Code::Ok), "ListOperations, {what}");
                assert_eq!(watched, None, "WatchOperations, {what}");
            }
        }
    }
    assert!(api.write_log().is_empty());
}

/// An HTTP/1.1 chunk size past 64 bits is the caller's malformed body: 400 and
/// `invalid_argument` over the Connect protocol, `grpc-status: 3` over gRPC-Web, never the
/// server's fault (it was 500 and INTERNAL).
#[tokio::test]
async fn a_chunk_size_that_overflows_is_the_callers_fault() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let api = world();
    let server = start(&api, Options::default()).await;
    for (content_type, expected) in [
        ("application/json", "HTTP/1.1 400"),
        ("application/grpc-web+proto", "grpc-status: 3"),
    ] {
        let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let head = format!(
            "POST {LIST} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\nAuthorization: Bearer {}\r\nTransfer-Encoding: chunked\r\n\r\n",
            users::VIEWER_TOKEN
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        tcp.write_all(b"FFFFFFFFFFFFFFFFFFFF\r\nabc\r\n0\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            tcp.read_to_end(&mut answer),
        )
        .await;
        assert!(read.is_ok(), "the server answers and closes");
        let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
        assert!(
            answer.contains(&expected.to_ascii_lowercase()),
            "{content_type}: {answer}"
        );
        assert!(!answer.contains("internal"), "{content_type}: {answer}");
        assert!(!answer.contains("hyper::error"), "{content_type}: {answer}");
    }
    assert!(api.write_log().is_empty());
}
