//! CORS for browser clients (`serve --cors-origin`), with curl: a preflight from a named origin
//! is answered before the token is asked for (POST, the Connect and gRPC-Web headers and
//! Authorization allowed, kept 2 hours); every answer to that origin, a refusal too, names it
//! and exposes the gRPC-Web status headers; another origin, or a server with none named (the
//! default), allows nothing. The browser itself: tests/browser.rs.

use super::common::server::{Options, start};
use super::world;
use ichor_demo::apiserver::auth::users;

const LIST: &str = "/ichor.v1alpha1.OperationService/ListOperations";
const ORIGIN: &str = "http://dashboard.example:8080";

/// The value of `name` in a head curl printed (`-i`), lower case.
fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_ascii_lowercase())
    })
}

fn preflight<'a>(url: &'a str, origin: &'a str) -> Vec<&'a str> {
    vec![
        "-X",
        "OPTIONS",
        "-H",
        origin,
        "-H",
        "Access-Control-Request-Method: POST",
        "-H",
        "Access-Control-Request-Headers: authorization,content-type,connect-protocol-version,connect-timeout-ms",
        url,
    ]
}

#[tokio::test]
async fn preflights_from_a_named_origin_are_answered_and_answers_name_it() {
    let api = world();
    let opts = Options {
        cors_origins: vec![http::HeaderValue::from_static(ORIGIN)],
        ..Options::default()
    };
    let server = start(&api, opts).await;
    let url = format!("http://{}{LIST}", server.addr);
    let origin = format!("Origin: {ORIGIN}");
    let Some(head) = super::curl::run(&preflight(&url, &origin)).await else {
        return;
    };
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        header(&head, "access-control-allow-origin").as_deref(),
        Some(ORIGIN)
    );
    assert_eq!(
        header(&head, "access-control-allow-methods").as_deref(),
        Some("post")
    );
    let allowed = header(&head, "access-control-allow-headers").unwrap_or_default();
    for h in [
        "authorization",
        "content-type",
        "connect-protocol-version",
        "connect-timeout-ms",
        "grpc-timeout",
        "x-grpc-web",
        "x-user-agent",
    ] {
        assert!(allowed.contains(h), "{h} not in {allowed}");
    }
    assert_eq!(
        header(&head, "access-control-max-age").as_deref(),
        Some("7200")
    );
    assert!(
        header(&head, "vary").is_some_and(|v| v.contains("origin")),
        "{head}"
    );
    assert!(
        header(&head, "access-control-allow-credentials").is_none(),
        "{head}"
    );

    // The call itself, and a refusal, name the origin and expose the status headers.
    let bearer = format!("Authorization: Bearer {}", users::VIEWER_TOKEN);
    let json = "Content-Type: application/json";
    let body = r#"{"namespace":"default"}"#;
    for (auth, status) in [(Some(bearer.as_str()), "200"), (None, "401")] {
        let mut args = vec!["-H", origin.as_str(), "-H", json, "-d", body];
        if let Some(a) = auth {
            args.extend(["-H", a]);
        }
        args.push(&url);
        let Some(answer) = super::curl::run(&args).await else {
            return;
        };
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{answer}"
        );
        assert_eq!(
            header(&answer, "access-control-allow-origin").as_deref(),
            Some(ORIGIN),
            "{answer}"
        );
        let exposed = header(&answer, "access-control-expose-headers").unwrap_or_default();
        for h in [
            "grpc-status",
            "grpc-message",
            "grpc-status-details-bin",
            "ichor-version",
        ] {
            assert!(exposed.contains(h), "{h} not in {exposed}");
        }
    }

    // Another origin is allowed nothing.
    let other = "Origin: http://elsewhere.example";
    let Some(head) = super::curl::run(&preflight(&url, other)).await else {
        return;
    };
    assert!(
        header(&head, "access-control-allow-origin").is_none(),
        "{head}"
    );
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn without_a_named_origin_no_origin_is_allowed() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = format!("http://{}{LIST}", server.addr);
    let origin = format!("Origin: {ORIGIN}");
    let Some(head) = super::curl::run(&preflight(&url, &origin)).await else {
        return;
    };
    assert!(
        header(&head, "access-control-allow-origin").is_none(),
        "{head}"
    );
}
