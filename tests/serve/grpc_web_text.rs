//! gRPC-Web in base64 text, with curl: text that is not base64 is INVALID_ARGUMENT, as every
//! body that is not a message is (tonic-web said INTERNAL, "Invalid symbol 33"); and every
//! answer in text, to a text request or to a binary one that asks for text, is counted in the
//! metrics with its code (each was `unknown`: the code is in the base64 trailers).

use super::common::server::{Options, start};
use super::world;
use base64::Engine as _;
use ichor_demo::apiserver::auth::users;

const LIST: &str = "/ichor.v1alpha1.OperationService/ListOperations";

/// ListOperationsRequest{namespace: "default"} in a gRPC-Web frame.
fn list_frame() -> Vec<u8> {
    let message = b"\x0a\x07default";
    let mut f = vec![0u8];
    f.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    f.extend_from_slice(message);
    f
}

/// The calls of ListOperations over gRPC-Web counted with `code`.
fn counted(metrics: &ichor_server::Metrics, code: &str) -> u64 {
    let label = format!(
        "ichor_serve_requests_total{{service=\"ichor.v1alpha1.OperationService\",method=\"ListOperations\",protocol=\"grpc-web\",code=\"{code}\"}} "
    );
    metrics
        .encode()
        .lines()
        .find_map(|l| l.strip_prefix(&label))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// The status in a text answer's base64 trailers frame.
fn text_trailers_status(answer: &str) -> Option<String> {
    let body = answer.split("\r\n\r\n").nth(1)?;
    // Each frame is base64 on its own (padded): decode them one by one.
    let mut rest = body.trim();
    let mut decoded = Vec::new();
    while !rest.is_empty() {
        let end = rest.find('=').map_or(rest.len(), |i| {
            i + rest[i..].chars().take_while(|c| *c == '=').count()
        });
        decoded.extend(
            base64::engine::general_purpose::STANDARD
                .decode(&rest[..end])
                .ok()?,
        );
        rest = &rest[end..];
    }
    let text = String::from_utf8_lossy(&decoded).into_owned();
    let (_, after) = text.split_once("grpc-status:")?;
    Some(after.chars().take_while(char::is_ascii_digit).collect())
}

#[tokio::test]
async fn grpc_web_text_that_is_not_base64_is_invalid_argument_and_text_answers_are_counted() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = format!("http://{}{LIST}", server.addr);
    let bearer = format!("Authorization: Bearer {}", users::VIEWER_TOKEN);
    let text = "Content-Type: application/grpc-web-text";
    let call = |content_type: &'static str, accept: Option<&'static str>| {
        let mut args = vec!["--http1.1", "-H", content_type, "-H", bearer.as_str()];
        if let Some(a) = accept {
            args.extend(["-H", a]);
        }
        args.extend(["--data-binary", "@-", url.as_str()]);
        args.into_iter().map(String::from).collect::<Vec<String>>()
    };

    // Not base64: an invalid symbol, and a length that is not a multiple of 4.
    for body in [&b"!!!!"[..], b"AAAAAAc"] {
        let args = call(text, None);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let Some(answer) = super::curl::run_with_input(&args, body).await else {
            return;
        };
        let lower = answer.to_ascii_lowercase();
        assert!(lower.contains("grpc-status: 3"), "{answer}");
        assert!(lower.contains("not%20a%20message"), "{answer}");
    }
    assert_eq!(counted(&server.metrics, "invalid_argument"), 2);

    // Valid text, answered in text; and binary asking for text.
    let encoded = base64::engine::general_purpose::STANDARD.encode(list_frame());
    let args = call(text, None);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(answer) = super::curl::run_with_input(&args, encoded.as_bytes()).await else {
        return;
    };
    assert!(answer.contains("application/grpc-web-text"), "{answer}");
    assert_eq!(
        text_trailers_status(&answer).as_deref(),
        Some("0"),
        "{answer}"
    );
    let args = call(
        "Content-Type: application/grpc-web+proto",
        Some("Accept: application/grpc-web-text"),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(answer) = super::curl::run_with_input(&args, &list_frame()).await else {
        return;
    };
    assert_eq!(
        text_trailers_status(&answer).as_deref(),
        Some("0"),
        "{answer}"
    );
    assert_eq!(
        counted(&server.metrics, "ok"),
        2,
        "{}",
        server.metrics.encode()
    );
    assert_eq!(counted(&server.metrics, "unknown"), 0);
    assert!(api.write_log().is_empty());
}
