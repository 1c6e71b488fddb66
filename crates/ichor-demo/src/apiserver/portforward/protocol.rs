//! Which wire protocol a port-forward request asks for, the 101 that agrees to it, and the
//! ports a WebSocket request names.

use super::{PORT_FORWARD_V1, SPDY_TUNNEL, upgrade_required};
use crate::apiserver::responses::{Failure, fail};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use http_body_util::Full;

/// The protocol a port-forward request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Protocol {
    /// WebSocket channels; `subprotocol` as agreed (none: the client offered none).
    Channel {
        subprotocol: Option<&'static str>,
        base64: bool,
    },
    /// WebSocket tunneling SPDY.
    SpdyTunnel,
    /// SPDY/3.1 on the upgraded connection.
    Spdy { versioned: bool },
}

/// The WebSocket subprotocols served, with whether each is base64.
const CHANNEL_PROTOCOLS: [(&str, bool); 4] = [
    ("v4.channel.k8s.io", false),
    ("channel.k8s.io", false),
    ("v4.base64.channel.k8s.io", true),
    ("base64.channel.k8s.io", true),
];

fn header_tokens(headers: &HeaderMap, name: header::HeaderName) -> Vec<&str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

impl Protocol {
    /// The protocol of an upgrade request: the client's first WebSocket subprotocol that is
    /// served, or SPDY if it asks for `portforward.k8s.io` (or names no version).
    pub(super) fn negotiate(method: &Method, headers: &HeaderMap) -> Result<Protocol, Failure> {
        let upgrade = header_tokens(headers, header::UPGRADE);
        let connection_upgrade = header_tokens(headers, header::CONNECTION)
            .iter()
            .any(|t| t.eq_ignore_ascii_case("upgrade"));
        if !connection_upgrade {
            return Err(upgrade_required());
        }
        if upgrade.iter().any(|u| u.eq_ignore_ascii_case("websocket")) {
            if method != Method::GET || !headers.contains_key(header::SEC_WEBSOCKET_KEY) {
                return Err(fail(400, "BadRequest", "invalid WebSocket upgrade request"));
            }
            let offered = header_tokens(headers, header::SEC_WEBSOCKET_PROTOCOL);
            if offered.is_empty() {
                return Ok(Protocol::Channel {
                    subprotocol: None,
                    base64: false,
                });
            }
            for o in &offered {
                if *o == SPDY_TUNNEL {
                    return Ok(Protocol::SpdyTunnel);
                }
                if let Some((p, base64)) = CHANNEL_PROTOCOLS.iter().find(|(p, _)| p == o) {
                    return Ok(Protocol::Channel {
                        subprotocol: Some(p),
                        base64: *base64,
                    });
                }
            }
            return Err(fail(
                400,
                "BadRequest",
                format!(
                    "unable to upgrade: unable to negotiate protocol: client supports {offered:?}, server supports [{SPDY_TUNNEL} {}]",
                    CHANNEL_PROTOCOLS.map(|(p, _)| p).join(" ")
                ),
            ));
        }
        if upgrade.iter().any(|u| u.eq_ignore_ascii_case("SPDY/3.1")) {
            let versions = header_tokens(
                headers,
                header::HeaderName::from_static("x-stream-protocol-version"),
            );
            if versions.is_empty() {
                return Ok(Protocol::Spdy { versioned: false });
            }
            if versions.contains(&PORT_FORWARD_V1) {
                return Ok(Protocol::Spdy { versioned: true });
            }
            return Err(fail(
                403,
                "Forbidden",
                format!(
                    "unable to upgrade: unable to negotiate protocol: client supports {versions:?}, server accepts [\"{PORT_FORWARD_V1}\"]"
                ),
            ));
        }
        Err(upgrade_required())
    }

    /// The 101 response that agrees to it.
    pub(super) fn switching(self, headers: &HeaderMap) -> Response<Full<Bytes>> {
        let mut resp = Response::new(Full::new(Bytes::new()));
        *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let h = resp.headers_mut();
        h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        match self {
            Protocol::Spdy { versioned } => {
                h.insert(header::UPGRADE, HeaderValue::from_static("SPDY/3.1"));
                if versioned {
                    h.insert(
                        "x-stream-protocol-version",
                        HeaderValue::from_static(PORT_FORWARD_V1),
                    );
                }
            }
            Protocol::SpdyTunnel | Protocol::Channel { .. } => {
                h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
                let key = headers
                    .get(header::SEC_WEBSOCKET_KEY)
                    .map(|k| k.as_bytes())
                    .unwrap_or_default();
                let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key);
                if let Ok(v) = HeaderValue::from_str(&accept) {
                    h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
                }
                let sub = match self {
                    Protocol::SpdyTunnel => Some(SPDY_TUNNEL),
                    Protocol::Channel { subprotocol, .. } => subprotocol,
                    Protocol::Spdy { .. } => None,
                };
                if let Some(sub) = sub {
                    h.insert(
                        header::SEC_WEBSOCKET_PROTOCOL,
                        HeaderValue::from_static(sub),
                    );
                }
            }
        }
        resp
    }
}

/// The ports a channel request names: `?ports=8080,9090` (repeatable; `port` too, as the
/// kubelet names it).
pub(super) fn query_ports(query: Option<&str>) -> Result<Vec<u16>, Failure> {
    let mut ports = Vec::new();
    for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        if k != "ports" && k != "port" {
            continue;
        }
        for p in v.split(',') {
            match p.trim().parse::<u16>() {
                Ok(port) if port > 0 => ports.push(port),
                _ => {
                    return Err(fail(
                        400,
                        "BadRequest",
                        format!("unable to parse {p:?} as a port: it must be in 1..=65535"),
                    ));
                }
            }
        }
    }
    if ports.is_empty() {
        return Err(fail(
            400,
            "BadRequest",
            "query parameter \"ports\" is required",
        ));
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_from_the_query() {
        assert_eq!(
            query_ports(Some("&ports=80%2C1234")).ok(),
            Some(vec![80, 1234])
        );
        assert_eq!(
            query_ports(Some("ports=80&ports=81")).ok(),
            Some(vec![80, 81])
        );
        assert!(query_ports(Some("ports=0")).is_err());
        assert!(query_ports(Some("ports=x")).is_err());
        assert!(query_ports(None).is_err());
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn negotiation() {
        let ws = |proto: &'static str| {
            headers(&[
                ("connection", "Upgrade"),
                ("upgrade", "websocket"),
                ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
                ("sec-websocket-protocol", proto),
            ])
        };
        assert_eq!(
            Protocol::negotiate(&Method::GET, &ws("v5.channel.k8s.io, v4.channel.k8s.io")),
            Ok(Protocol::Channel {
                subprotocol: Some("v4.channel.k8s.io"),
                base64: false
            })
        );
        assert_eq!(
            Protocol::negotiate(&Method::GET, &ws(SPDY_TUNNEL)),
            Ok(Protocol::SpdyTunnel)
        );
        assert!(Protocol::negotiate(&Method::GET, &ws("v5.channel.k8s.io")).is_err());
        let spdy = headers(&[
            ("connection", "Upgrade"),
            ("upgrade", "SPDY/3.1"),
            ("x-stream-protocol-version", PORT_FORWARD_V1),
        ]);
        assert_eq!(
            Protocol::negotiate(&Method::POST, &spdy),
            Ok(Protocol::Spdy { versioned: true })
        );
        let plain = headers(&[]);
        assert_eq!(
            Protocol::negotiate(&Method::POST, &plain).map_err(|(c, _)| c),
            Err(400)
        );
    }
}
