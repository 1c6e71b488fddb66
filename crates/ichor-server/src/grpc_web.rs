//! gRPC-Web's content types before tonic-web, as the gRPC-Web protocol (PROTOCOL-WEB.md)
//! writes them. `application/grpc-web` and `+proto` are binary; `application/grpc-web-text` and
//! `-text+proto` are base64 both ways: tonic-web decodes such a request, but answers in base64
//! only when `Accept` names the text type, so a text request whose `Accept` names no gRPC-Web
//! type is given that `Accept` (one that asks for binary keeps it). Any other codec
//! (`application/grpc-web+json`, `application/grpc+json`, …) is refused UNIMPLEMENTED,
//! trailers-only (HTTP 200, `grpc-status` 12, the words and the ErrorInfo) in the request's own
//! content type, which every gRPC-Web and gRPC client reads; tonic-web would answer
//! `+json` with a bare HTTP 400 over HTTP/1.1 and feed it to the protobuf decoder over HTTP/2.
//! JSON is served over the Connect protocol. A content type with parameters is read by its
//! essence, and handed on without them (tonic-web compares the whole value).

use super::protocol::refused;
use crate::wire;
use ichor_model::Code;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;

/// gRPC-Web in base64 text, as answers name it.
pub(crate) const TEXT: &str = "application/grpc-web-text+proto";

/// The content types served, binary and base64 text.
const BINARY_TYPES: [&str; 2] = ["application/grpc-web", "application/grpc-web+proto"];
const TEXT_TYPES: [&str; 2] = ["application/grpc-web-text", TEXT];
const GRPC_TYPES: [&str; 2] = ["application/grpc", "application/grpc+proto"];

/// A content type's essence: before its parameters, lower case.
fn essence(v: &http::HeaderValue) -> String {
    let s = String::from_utf8_lossy(v.as_bytes());
    s.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn content_type(headers: &http::HeaderMap) -> Option<String> {
    headers.get(http::header::CONTENT_TYPE).map(essence)
}

/// Whether a request is gRPC-Web in base64 text.
pub(crate) fn is_text(headers: &http::HeaderMap) -> bool {
    content_type(headers).is_some_and(|ct| TEXT_TYPES.contains(&ct.as_str()))
}

/// Whether `Accept` names a gRPC-Web content type.
fn accepts_grpc_web(headers: &http::HeaderMap) -> bool {
    headers.get_all(http::header::ACCEPT).iter().any(|v| {
        String::from_utf8_lossy(v.as_bytes())
            .split(',')
            .map(|t| {
                t.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            })
            .any(|t| BINARY_TYPES.contains(&t.as_str()) || TEXT_TYPES.contains(&t.as_str()))
    })
}

/// What to do with a request, by its content type.
enum Kind {
    /// Not gRPC or gRPC-Web: the Connect layer answered it already, or tonic answers it.
    Other,
    /// Served: the content type to hand on (its essence), and for a text request with no
    /// gRPC-Web `Accept`, the text answer it asks for.
    Served { essence: String, text_answer: bool },
    /// A codec not served: refused in this content type.
    Refused(String),
}

fn kind(headers: &http::HeaderMap) -> Kind {
    let Some(ct) = content_type(headers) else {
        return Kind::Other;
    };
    if ct.starts_with("application/grpc-web") {
        if BINARY_TYPES.contains(&ct.as_str()) {
            return Kind::Served {
                essence: ct,
                text_answer: false,
            };
        }
        if TEXT_TYPES.contains(&ct.as_str()) {
            let text_answer = !accepts_grpc_web(headers);
            return Kind::Served {
                essence: ct,
                text_answer,
            };
        }
        return Kind::Refused(ct);
    }
    match ct.strip_prefix("application/grpc") {
        Some(rest) if rest.starts_with('+') && !GRPC_TYPES.contains(&ct.as_str()) => {
            Kind::Refused(ct)
        }
        _ => Kind::Other,
    }
}

/// The longest content type a refusal says back.
const MAX_ECHOED: usize = 64;

/// The refusal of a codec not served: trailers-only, in the request's own content type.
fn not_served(content_type: &str) -> http::Response<Body> {
    let quoted = ichor_model::error_text::quoted(content_type);
    let e = refused(
        Code::Unimplemented,
        "content-type",
        format!(
            "content type {quoted} is not served: gRPC-Web is served in binary (application/grpc-web+proto) and base64 text (application/grpc-web-text), gRPC in binary (application/grpc+proto); JSON over the Connect protocol (application/json, application/connect+json)"
        ),
    );
    let (mut parts, ()) = wire::status_from_error(&e).into_http::<()>().into_parts();
    // Echoed when it is a content type's length; a longer one is not said back.
    let echoed = match content_type.len() <= MAX_ECHOED {
        true => http::HeaderValue::from_str(content_type).ok(),
        false => None,
    };
    let fallback = match content_type.starts_with("application/grpc-web") {
        true => "application/grpc-web+proto",
        false => "application/grpc",
    };
    parts.headers.insert(
        http::header::CONTENT_TYPE,
        echoed.unwrap_or(http::HeaderValue::from_static(fallback)),
    );
    http::Response::from_parts(parts, Body::empty())
}

/// The edges of gRPC-Web that tonic-web leaves (text, other codecs), in front of it: a service
/// made with tower's `layer_fn(GrpcWebEdges::new)`.
#[derive(Clone)]
pub(crate) struct GrpcWebEdges<S> {
    inner: S,
}

impl<S> GrpcWebEdges<S> {
    pub(crate) fn new(inner: S) -> GrpcWebEdges<S> {
        GrpcWebEdges { inner }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S> tower::Service<http::Request<Body>> for GrpcWebEdges<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<Body>) -> Self::Future {
        match kind(req.headers()) {
            Kind::Other => {}
            Kind::Refused(ct) => {
                let resp = not_served(&ct);
                return Box::pin(async move { Ok(resp) });
            }
            Kind::Served {
                essence,
                text_answer,
            } => {
                let headers = req.headers_mut();
                if let Ok(v) = http::HeaderValue::from_str(&essence) {
                    headers.insert(http::header::CONTENT_TYPE, v);
                }
                if text_answer {
                    headers.insert(
                        http::header::ACCEPT,
                        http::HeaderValue::from_static("application/grpc-web-text"),
                    );
                }
            }
        }
        Box::pin(self.inner.call(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(ct: &str, accept: Option<&str>) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        h.insert(http::header::CONTENT_TYPE, ct.parse().unwrap());
        if let Some(a) = accept {
            h.insert(http::header::ACCEPT, a.parse().unwrap());
        }
        h
    }

    fn served(h: &http::HeaderMap) -> Option<(String, bool)> {
        match kind(h) {
            Kind::Served {
                essence,
                text_answer,
            } => Some((essence, text_answer)),
            _ => None,
        }
    }

    #[test]
    fn text_is_answered_as_text_unless_binary_is_asked_for() {
        let text = "application/grpc-web-text";
        assert_eq!(served(&headers(text, None)), Some((text.into(), true)));
        assert_eq!(
            served(&headers(text, Some("*/*"))),
            Some((text.into(), true))
        );
        assert_eq!(
            served(&headers(text, Some("application/grpc-web+proto"))),
            Some((text.into(), false))
        );
        assert_eq!(
            served(&headers(
                "application/grpc-web-text+proto; charset=utf-8",
                None
            )),
            Some((TEXT.into(), true))
        );
        assert_eq!(
            served(&headers("application/grpc-web+proto", None)),
            Some(("application/grpc-web+proto".into(), false))
        );
    }

    #[test]
    fn other_codecs_are_refused_and_the_rest_is_not_ours() {
        for ct in [
            "application/grpc-web+json",
            "application/grpc-web-text+json",
            "application/grpc+json",
        ] {
            assert!(matches!(kind(&headers(ct, None)), Kind::Refused(_)), "{ct}");
            let resp = not_served(ct);
            assert_eq!(resp.status(), http::StatusCode::OK);
            assert_eq!(resp.headers()["grpc-status"], "12");
            assert_eq!(resp.headers()[http::header::CONTENT_TYPE], ct);
        }
        let long = format!("application/grpc-web+{}", "x".repeat(5000));
        let resp = not_served(&long);
        assert_eq!(
            resp.headers()[http::header::CONTENT_TYPE],
            "application/grpc-web+proto"
        );
        let message = resp.headers()["grpc-message"].to_str().unwrap();
        assert!(message.len() < 600, "{message}");
        for ct in [
            "application/grpc",
            "application/grpc+proto",
            "application/json",
        ] {
            assert!(matches!(kind(&headers(ct, None)), Kind::Other), "{ct}");
        }
    }
}
