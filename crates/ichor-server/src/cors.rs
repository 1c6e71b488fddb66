//! Cross-origin calls from browsers (`serve --cors-origin ORIGIN`, repeatable; none by
//! default), with tower-http's CORS layer outside everything else, so that a preflight is
//! answered before the in-flight limit, the metrics and the token are asked about: the
//! Fetch standard's preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`)
//! sends no credentials, so the gate would refuse it.
//!
//! As the Connect project's CORS guide (and its `cors-go`) sets it up for the Connect protocol
//! and gRPC-Web: `POST` (the one method served), the protocols' request headers and
//! `Authorization` allowed, the gRPC-Web status headers and the encodings exposed (with
//! `ichor-version`, `ichor-caller` and `Retry-After`), preflights kept for 2 hours (Chrome's
//! cap), and `Vary: Origin, Access-Control-Request-Method, Access-Control-Request-Headers`. An
//! origin not named gets no `Access-Control-Allow-Origin`, so the browser refuses the call; no
//! wildcard and no credentials (cookies): a browser client sends its bearer token itself.

use std::time::Duration;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The request headers a browser may send (besides the CORS-safelisted ones).
pub const ALLOWED_HEADERS: [&str; 12] = [
    "authorization",
    "content-type",
    "content-encoding",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-content-encoding",
    "connect-accept-encoding",
    "grpc-timeout",
    "grpc-encoding",
    "grpc-accept-encoding",
    "x-grpc-web",
    "x-user-agent",
];

/// The response headers a browser lets its page read (besides the CORS-safelisted ones).
pub const EXPOSED_HEADERS: [&str; 10] = [
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "grpc-encoding",
    "grpc-accept-encoding",
    "connect-content-encoding",
    "connect-accept-encoding",
    "retry-after",
    crate::wire::version::HEADER,
    crate::wire::version::CALLER_HEADER,
];

/// How long a browser may keep a preflight's answer (Chrome keeps at most 2 hours).
pub const MAX_AGE: Duration = Duration::from_secs(7200);

/// The longest origin taken (a scheme, a host name of at most 253 characters, a port).
const MAX_ORIGIN_CHARS: usize = 300;

/// An origin as `--cors-origin` takes it: `http://` or `https://`, a host, an optional port,
/// nothing else (a browser sends `Origin` in exactly that form, so it is compared as it is).
pub fn parse_origin(s: &str) -> Result<http::HeaderValue, String> {
    let bad = || {
        format!(
            "{} is not an origin: give SCHEME://HOST[:PORT], e.g. https://dashboard.example.com (no path, no wildcard)",
            ichor_model::error_text::quoted(s)
        )
    };
    if s.len() > MAX_ORIGIN_CHARS {
        return Err(bad());
    }
    let uri: http::Uri = s.parse().map_err(|_| bad())?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    // `http::Uri` gives a URI without a path the path `/`; the text itself has none.
    let bare = uri.path_and_query().is_none_or(|p| p.as_str() == "/")
        && !s.ends_with('/')
        && uri.authority().is_some_and(|a| !a.as_str().contains('@'));
    if !scheme_ok || !bare || s.contains('*') {
        return Err(bad());
    }
    http::HeaderValue::from_str(&s.to_ascii_lowercase()).map_err(|_| bad())
}

/// The CORS layer for `origins`; `None` when there is none (no CORS at all).
pub(crate) fn layer(origins: &[http::HeaderValue]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let names = |list: &[&'static str]| -> Vec<http::HeaderName> {
        list.iter()
            .map(|h| http::HeaderName::from_static(h))
            .collect()
    };
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins.iter().cloned()))
            .allow_methods([http::Method::POST])
            .allow_headers(names(&ALLOWED_HEADERS))
            .expose_headers(names(&EXPOSED_HEADERS))
            .max_age(MAX_AGE),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_a_scheme_a_host_and_a_port() {
        for ok in [
            "http://127.0.0.1:8080",
            "https://dashboard.example.com",
            "HTTPS://Dashboard.example.com",
        ] {
            assert!(parse_origin(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            parse_origin("HTTPS://Dash.example.com").ok(),
            Some(http::HeaderValue::from_static("https://dash.example.com"))
        );
        for bad in [
            "*",
            "https://*.example.com",
            "dashboard.example.com",
            "ftp://example.com",
            "https://example.com/",
            "https://example.com/path",
            "https://example.com?x",
            "https://user@example.com",
            "",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
        let long = format!("https://{}.com", "a".repeat(400));
        let said = parse_origin(&long).err().unwrap_or_default();
        assert!(said.len() < 200, "{said}");
    }

    #[test]
    fn no_origin_no_layer() {
        assert!(layer(&[]).is_none());
        assert!(layer(&[http::HeaderValue::from_static("https://a.example")]).is_some());
    }
}
