//! Which of the three protocols a request speaks, what its headers ask of the call (its
//! deadline), and a refusal written in the request's own protocol, before any handler runs:
//! the Connect protocol's JSON error with its HTTP status, or a gRPC / gRPC-Web trailers-only
//! answer (HTTP 200 and `grpc-status`). The header rules are connect-go's
//! (`protocol_grpc.go`'s `grpcParseTimeout`, `protocol_connect.go`'s `SetTimeout` and
//! `connectCheckProtocolVersion`).

use bytes::Bytes;
use http_body_util::Full;
use ichor_model::{ApiError, Code, Reason};
use std::time::Duration;
use tonic::body::Body;

/// The protocol of a request, from its content type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Protocol {
    Grpc,
    GrpcWeb,
    Connect,
}

impl Protocol {
    /// `application/grpc-web…` is gRPC-Web, `application/grpc…` gRPC, anything else the Connect
    /// protocol (whose layer refuses a content type it does not take).
    pub(crate) fn of<B>(req: &http::Request<B>) -> Protocol {
        Protocol::of_headers(req.headers())
    }

    /// The same, of a request's headers.
    pub(crate) fn of_headers(headers: &http::HeaderMap) -> Protocol {
        let ct = headers
            .get(http::header::CONTENT_TYPE)
            .map(http::HeaderValue::as_bytes)
            .unwrap_or_default();
        if ct.starts_with(b"application/grpc-web") {
            Protocol::GrpcWeb
        } else if ct.starts_with(b"application/grpc") {
            Protocol::Grpc
        } else {
            Protocol::Connect
        }
    }

    /// The label metrics use.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Protocol::Grpc => "grpc",
            Protocol::GrpcWeb => "grpc-web",
            Protocol::Connect => "connect",
        }
    }
}

/// A refusal of the request's framing or headers (not of its arguments): `what` names the
/// header or part, `message` is bounded by the caller.
pub(crate) fn refused(code: Code, what: &str, message: String) -> ApiError {
    let detail = message.clone();
    ApiError::refused(
        code,
        Reason::Invalid,
        &[("what", what), ("detail", &detail)],
        message,
    )
}

/// The refusal `e` as an answer in `protocol`: the Connect protocol's JSON error with the
/// code's HTTP status, or a trailers-only gRPC answer (`grpc-status`, `grpc-message` and the
/// `google.rpc.Status` in `grpc-status-details-bin`), with the request's gRPC-Web content type
/// for gRPC-Web.
pub(crate) fn refusal(protocol: Protocol, e: &ApiError) -> http::Response<Body> {
    match protocol {
        Protocol::Connect => connect_error(e),
        Protocol::Grpc | Protocol::GrpcWeb => {
            let (mut parts, ()) = crate::wire::status_from_error(e)
                .into_http::<()>()
                .into_parts();
            let ct = match protocol {
                Protocol::GrpcWeb => "application/grpc-web+proto",
                _ => "application/grpc",
            };
            parts.headers.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(ct),
            );
            http::Response::from_parts(parts, Body::empty())
        }
    }
}

/// The refusal `e` of the request whose headers are `headers`, before its call began, in the
/// request's own protocol: [`refusal`]; for a Connect stream its end (HTTP 200, as connect-go
/// writes it); for gRPC-Web in base64 text, that content type.
pub(crate) fn refusal_to(headers: &http::HeaderMap, e: &ApiError) -> http::Response<Body> {
    if let Some(codec) = super::connect_stream::streaming_codec(headers) {
        return super::connect_stream::refusal(codec, e);
    }
    let protocol = Protocol::of_headers(headers);
    let mut resp = refusal(protocol, e);
    if protocol == Protocol::GrpcWeb && super::grpc_web::is_text(headers) {
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(super::grpc_web::TEXT),
        );
    }
    resp
}

/// A Connect error response.
pub(crate) fn connect_error(e: &ApiError) -> http::Response<Body> {
    let status = http::StatusCode::from_u16(crate::wire::connect_http_status(e.code))
        .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = http::Response::new(Body::new(Full::new(Bytes::from(
        crate::wire::connect_error_body(e),
    ))));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// A header's value, quoted short for a message.
fn quoted(v: &http::HeaderValue) -> String {
    ichor_model::error_text::quoted(&String::from_utf8_lossy(v.as_bytes()))
}

/// `grpc-timeout` (gRPC and gRPC-Web): 1–8 ASCII digits and a unit (`H M S m u n`), as the
/// gRPC spec writes it; `None` without one, or for hours too many to count (connect-go and
/// grpc-go then set none). Anything else is INVALID_ARGUMENT, as connect-go answers it.
pub(crate) fn grpc_timeout(headers: &http::HeaderMap) -> Result<Option<Duration>, ApiError> {
    let Some(value) = headers.get("grpc-timeout") else {
        return Ok(None);
    };
    let bad = |why: &str| {
        refused(
            Code::InvalidArgument,
            "grpc-timeout",
            format!(
                "protocol error: invalid grpc-timeout {}: {why}",
                quoted(value)
            ),
        )
    };
    let text = value.as_bytes();
    let Some((&unit, digits)) = text.split_last() else {
        return Err(bad("it is empty"));
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(bad("a timeout is 1 to 8 digits and a unit"));
    }
    if digits.len() > 8 {
        return Err(bad("more than 8 digits"));
    }
    // At most 8 digits: always fits.
    let n: u64 = std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| bad("a timeout is 1 to 8 digits and a unit"))?;
    let d = match unit {
        b'H' => Duration::from_secs(n.saturating_mul(3600)),
        b'M' => Duration::from_secs(n.saturating_mul(60)),
        b'S' => Duration::from_secs(n),
        b'm' => Duration::from_millis(n),
        b'u' => Duration::from_micros(n),
        b'n' => Duration::from_nanos(n),
        _ => return Err(bad("the unit is one of H M S m u n")),
    };
    Ok(Some(d))
}

/// `Connect-Timeout-Ms`: 1–10 ASCII digits (the Connect protocol's Positive-Integer of at most
/// 10 digits); anything else is INVALID_ARGUMENT, as connect-go answers it.
pub(crate) fn connect_timeout(headers: &http::HeaderMap) -> Result<Option<Duration>, ApiError> {
    let Some(value) = headers.get("connect-timeout-ms") else {
        return Ok(None);
    };
    let text = value.as_bytes();
    let bad = |why: &str| {
        refused(
            Code::InvalidArgument,
            "connect-timeout-ms",
            format!("parse timeout: {} {why}", quoted(value)),
        )
    };
    if text.len() > 10 {
        return Err(bad("has >10 digits"));
    }
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return Err(bad("is not a number of milliseconds"));
    }
    let ms: u64 = std::str::from_utf8(text)
        .ok()
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| bad("is not a number of milliseconds"))?;
    Ok(Some(Duration::from_millis(ms)))
}

/// `Connect-Protocol-Version`: absent or `1` (connect-go does not require it by default).
pub(crate) fn connect_protocol_version(headers: &http::HeaderMap) -> Result<(), ApiError> {
    match headers.get("connect-protocol-version") {
        None => Ok(()),
        Some(v) if v.as_bytes() == b"1" => Ok(()),
        Some(v) => Err(refused(
            Code::InvalidArgument,
            "connect-protocol-version",
            format!("Connect-Protocol-Version must be \"1\": got {}", quoted(v)),
        )),
    }
}

/// The deadline a request's headers give its call, or the refusal of a malformed header.
pub(crate) fn deadline(
    protocol: Protocol,
    headers: &http::HeaderMap,
) -> Result<Option<Duration>, ApiError> {
    match protocol {
        Protocol::Grpc | Protocol::GrpcWeb => grpc_timeout(headers),
        Protocol::Connect => {
            connect_protocol_version(headers)?;
            connect_timeout(headers)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: &'static str, value: &str) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        h.insert(name, http::HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn grpc_timeouts_follow_the_spec() {
        let t = |v: &str| grpc_timeout(&headers("grpc-timeout", v));
        assert_eq!(t("50m").unwrap(), Some(Duration::from_millis(50)));
        assert_eq!(t("1H").unwrap(), Some(Duration::from_secs(3600)));
        assert_eq!(
            t("99999999n").unwrap(),
            Some(Duration::from_nanos(99_999_999))
        );
        assert_eq!(t("3S").unwrap(), Some(Duration::from_secs(3)));
        for bad in [
            "banana",
            "123456789S",
            "",
            "m",
            "-5S",
            "5s",
            "5 S",
            "+5S",
            "1.5S",
        ] {
            let e = t(bad).unwrap_err();
            assert_eq!(e.code, Code::InvalidArgument, "{bad:?}");
            assert!(e.message.len() < 200, "{}", e.message);
        }
        assert_eq!(grpc_timeout(&http::HeaderMap::new()).unwrap(), None);
    }

    #[test]
    fn connect_timeouts_and_versions_follow_connect_go() {
        let t = |v: &str| connect_timeout(&headers("connect-timeout-ms", v));
        assert_eq!(t("50").unwrap(), Some(Duration::from_millis(50)));
        assert_eq!(
            t("9999999999").unwrap(),
            Some(Duration::from_millis(9_999_999_999))
        );
        for bad in ["abc", "12345678901", "", "-1", "1e3", " 5"] {
            assert_eq!(t(bad).unwrap_err().code, Code::InvalidArgument, "{bad:?}");
        }
        let e = t(&"9".repeat(500)).unwrap_err();
        assert!(e.message.len() < 200, "the input is not echoed whole");
        let v = |v: &str| connect_protocol_version(&headers("connect-protocol-version", v));
        assert!(v("1").is_ok());
        assert_eq!(v("2").unwrap_err().code, Code::InvalidArgument);
        assert!(connect_protocol_version(&http::HeaderMap::new()).is_ok());
    }
}
