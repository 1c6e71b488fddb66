//! `pods/{name}/portforward`: a connection upgrade that forwards TCP connections to a pod's
//! ports. The demo has no containers, so a pod's port forwards to a TCP address the demo is
//! given ([`EmbeddedApi::set_forward`]); a port with none refuses, as a port nothing listens on
//! does in a real pod.
//!
//! Three wire protocols, as kube-apiserver (through the kubelet) speaks them:
//! - WebSocket with the channel protocol (`v4.channel.k8s.io`, its base64 form, or none):
//!   kube-rs's `Api::<Pod>::portforward`; see [`channel`].
//! - WebSocket with `SPDY/3.1+portforward.k8s.io`: SPDY tunneled in binary messages, kubectl
//!   1.31+'s first try; see [`tunnel`] and [`spdy_server`].
//! - SPDY/3.1 itself (`Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version: portforward.k8s.io`):
//!   kubectl's fallback.
//!
//! Authorisation is `create` on `pods/portforward` for every protocol, a WebSocket GET
//! included (as kube-apiserver 1.35 checks it; older ones asked only `get` of a GET).
//! Every forwarded connection ends when either side closes it, when the client's connection
//! ends, or when the pod goes away ([`EmbeddedApi::remove_pod`], [`EmbeddedApi::restart_pod`]):
//! then its error stream says why and the whole upgraded connection closes, as the kubelet's
//! does when the pod is gone.

mod channel;
mod spdy;
mod spdy_server;
mod tunnel;

use super::authn;
use super::responses::{Failure, fail, json_response, status_body};
use super::{ApiState, EmbeddedApi};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;

/// The subprotocol of SPDY port-forwarding.
const PORT_FORWARD_V1: &str = "portforward.k8s.io";
/// kubectl's WebSocket subprotocol: SPDY tunneled in binary messages.
const SPDY_TUNNEL: &str = "SPDY/3.1+portforward.k8s.io";
/// How long connecting to a forward target may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest chunk read from a target in one go (one frame or message).
const CHUNK: usize = 32 * 1024;

/// The namespace and name of the pod a `…/pods/{name}/portforward` path names.
pub(crate) fn parse_path(path: &str) -> Option<(String, String)> {
    let rest = path.strip_prefix("/api/v1/namespaces/")?;
    match rest.split('/').collect::<Vec<_>>().as_slice() {
        [ns, "pods", name, "portforward"] if !ns.is_empty() && !name.is_empty() => {
            Some((ns.to_string(), name.to_string()))
        }
        _ => None,
    }
}

/// What a request without an upgrade gets, as from kube-apiserver.
pub(crate) fn upgrade_required() -> Failure {
    fail(400, "BadRequest", "Upgrade request required")
}

/// The forward targets, and the lifetime of each pod that connections are open to.
#[derive(Default)]
pub(crate) struct Forwards {
    targets: BTreeMap<(String, String, u16), SocketAddr>,
    /// Dropped when the pod goes away: every receiver then learns it.
    lifetimes: BTreeMap<(String, String), watch::Sender<()>>,
}

impl Forwards {
    pub(crate) fn set(&mut self, namespace: &str, pod: &str, port: u16, target: SocketAddr) {
        self.targets
            .insert((namespace.into(), pod.into(), port), target);
    }

    pub(crate) fn clear(&mut self, namespace: &str, pod: &str, port: u16) -> bool {
        self.targets
            .remove(&(namespace.into(), pod.into(), port))
            .is_some()
    }

    fn target(&self, namespace: &str, pod: &str, port: u16) -> Option<SocketAddr> {
        self.targets
            .get(&(namespace.to_string(), pod.to_string(), port))
            .copied()
    }

    /// A receiver whose `changed()` fails once the pod is gone.
    fn subscribe(&mut self, namespace: &str, pod: &str) -> watch::Receiver<()> {
        self.lifetimes
            .entry((namespace.into(), pod.into()))
            .or_insert_with(|| watch::channel(()).0)
            .subscribe()
    }

    /// The pod is gone: its connections close and its targets are forgotten. Returns the
    /// targets it had, by port.
    pub(crate) fn pod_gone(&mut self, namespace: &str, pod: &str) -> Vec<(u16, SocketAddr)> {
        self.lifetimes
            .remove(&(namespace.to_string(), pod.to_string()));
        let ports: Vec<u16> = self
            .targets
            .keys()
            .filter(|(ns, p, _)| ns == namespace && p == pod)
            .map(|(_, _, port)| *port)
            .collect();
        ports
            .into_iter()
            .filter_map(|port| {
                self.targets
                    .remove(&(namespace.to_string(), pod.to_string(), port))
                    .map(|t| (port, t))
            })
            .collect()
    }
}

/// The pod one upgraded connection forwards to.
#[derive(Clone)]
pub(crate) struct PodForward {
    api: EmbeddedApi,
    namespace: String,
    pod: String,
    uid: String,
    /// `changed()` fails once the pod is gone.
    gone: watch::Receiver<()>,
}

impl PodForward {
    /// An error stream's message, as the kubelet words it.
    fn error_text(&self, port: u16, cause: impl std::fmt::Display) -> String {
        format!(
            "error forwarding port {port} to pod {}, uid {}: {cause}",
            self.pod, self.uid
        )
    }

    /// The message for connections still open when the pod goes away.
    fn gone_text(&self, port: u16) -> String {
        self.error_text(port, format!("pod {:?} was deleted", self.pod))
    }

    /// Connects to what the pod's `port` forwards to, at the time of asking.
    async fn connect(&self, port: u16) -> Result<TcpStream, String> {
        let target = self
            .api
            .lock()
            .forwards
            .target(&self.namespace, &self.pod, port);
        let refused = |cause: &dyn std::fmt::Display| {
            self.error_text(
                port,
                format!("failed to connect to localhost:{port} inside the pod: {cause}"),
            )
        };
        let Some(addr) = target else {
            return Err(refused(&"connect: connection refused"));
        };
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                Ok(stream)
            }
            Ok(Err(e)) => Err(refused(&e)),
            Err(_) => Err(refused(&"connect: timed out")),
        }
    }

    /// Resolves once the pod is gone (never while it lives).
    async fn gone(&mut self) {
        while self.gone.changed().await.is_ok() {}
    }
}

/// Waits up to `linger` for a task to end, then aborts it: nothing outlives its connection.
async fn finish(mut task: tokio::task::JoinHandle<()>, linger: Duration) {
    if tokio::time::timeout(linger, &mut task).await.is_err() {
        task.abort();
    }
}

/// Copies one forwarded connection both ways: bytes from the client arrive on `from_client`
/// (closed: the client is done sending, so the target's write side is shut down); bytes from
/// the target leave as `frame(chunk)` on `out`. With an `eof` message (SPDY, which half-closes)
/// the target's EOF sends it and the copy goes on until both directions have ended; without
/// one (WebSocket channels, which cannot) the first direction to end ends the connection.
/// Returns whether `eof` was sent; an I/O error is the `Err`.
async fn pump<M: Send>(
    stream: TcpStream,
    mut from_client: mpsc::Receiver<Bytes>,
    out: mpsc::Sender<M>,
    frame: impl Fn(Bytes) -> M,
    eof: Option<M>,
) -> (bool, std::io::Result<()>) {
    let half_close = eof.is_some();
    let (mut rd, mut wr) = stream.into_split();
    let eof_sent = std::sync::atomic::AtomicBool::new(false);
    let up = async {
        while let Some(chunk) = from_client.recv().await {
            wr.write_all(&chunk).await?;
        }
        wr.shutdown().await
    };
    let down = async {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = rd.read(&mut buf).await?;
            if n == 0 {
                if let Some(m) = eof
                    && out.send(m).await.is_ok()
                {
                    eof_sent.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                return Ok(());
            }
            if out
                .send(frame(Bytes::copy_from_slice(&buf[..n])))
                .await
                .is_err()
            {
                // The client's side is gone: nothing more to copy.
                return Ok(());
            }
        }
    };
    let res = if half_close {
        tokio::try_join!(up, down).map(|_| ())
    } else {
        tokio::select! {
            r = up => r,
            r = down => r,
        }
    };
    (eof_sent.load(std::sync::atomic::Ordering::Relaxed), res)
}

/// The protocol a port-forward request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
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
    fn negotiate(method: &Method, headers: &HeaderMap) -> Result<Protocol, Failure> {
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
    fn switching(self, headers: &HeaderMap) -> Response<Full<Bytes>> {
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
fn query_ports(query: Option<&str>) -> Result<Vec<u16>, Failure> {
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

impl EmbeddedApi {
    /// Answers a port-forward request: 101 and the forwarding in a task of its own, or a
    /// refusal (400 not an upgrade, 401, 403, 404 no such pod, 400 pod not running).
    pub(crate) fn port_forward<B>(&self, mut req: Request<B>) -> Response<Full<Bytes>> {
        match self.start_port_forward(&mut req) {
            Ok(resp) => resp,
            Err((code, body)) => json_response(code, &body),
        }
    }

    fn start_port_forward<B>(
        &self,
        req: &mut Request<B>,
    ) -> Result<Response<Full<Bytes>>, Failure> {
        let path = req.uri().path().trim_end_matches('/').to_string();
        let (namespace, pod) = parse_path(&path).ok_or_else(super::responses::not_found)?;
        let pod_forward = {
            let mut st = self.lock();
            let who = authn::authenticate(&st.auth, req.headers())?;
            if !st
                .auth
                .allowed(&who, "create", "pods/portforward", Some(&namespace))
            {
                return Err(fail(
                    403,
                    "Forbidden",
                    format!(
                        "pods {pod:?} is forbidden: User {:?} cannot create resource \"pods/portforward\" in API group \"\" in the namespace {namespace:?}",
                        who.user
                    ),
                ));
            }
            let protocol = Protocol::negotiate(req.method(), req.headers())?;
            let uid = running_pod_uid(&st, &namespace, &pod)?;
            let gone = st.forwards.subscribe(&namespace, &pod);
            let ports = match protocol {
                Protocol::Channel { .. } => query_ports(req.uri().query())?,
                _ => Vec::new(),
            };
            (
                protocol,
                ports,
                PodForward {
                    api: self.clone(),
                    namespace,
                    pod,
                    uid,
                    gone,
                },
            )
        };
        let (protocol, ports, pod_forward) = pod_forward;
        let response = protocol.switching(req.headers());
        let on_upgrade = hyper::upgrade::on(req);
        tokio::spawn(async move {
            let io = match on_upgrade.await {
                Ok(upgraded) => TokioIo::new(upgraded),
                Err(e) => {
                    tracing::debug!(error = %e, "port-forward upgrade failed");
                    return;
                }
            };
            match protocol {
                Protocol::Spdy { .. } => spdy_server::serve(io, pod_forward).await,
                Protocol::SpdyTunnel => {
                    let ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
                    let (ours, theirs) = tokio::io::duplex(CHUNK * 2);
                    let bridge = tokio::spawn(tunnel::bridge(ws, theirs));
                    spdy_server::serve(ours, pod_forward).await;
                    finish(bridge, tunnel::LINGER * 2).await;
                }
                Protocol::Channel { base64, .. } => {
                    let ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
                    channel::serve(ws, pod_forward, ports, base64).await;
                }
            }
        });
        Ok(response)
    }
}

/// The uid of a pod that can be forwarded to: 404 when there is none, 400 when it is not
/// running.
fn running_pod_uid(st: &ApiState, namespace: &str, pod: &str) -> Result<String, Failure> {
    let key = ("pods".to_string(), namespace.to_string(), pod.to_string());
    let Some(obj) = st.objects.get(&key) else {
        let details = serde_json::json!({"name": pod, "kind": "pods"});
        return Err((
            404,
            status_body(
                404,
                "NotFound",
                &format!("pods {pod:?} not found"),
                Some(details),
            ),
        ));
    };
    let phase = obj
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("Pending");
    if phase != "Running" {
        return Err(fail(
            400,
            "BadRequest",
            format!("pod {pod} is not running: its phase is {phase}"),
        ));
    }
    Ok(obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::auth::users;
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    /// A WebSocket port-forward to a pod forwarding to an echo server, with `subprotocol`.
    async fn connect(subprotocol: Option<&str>) -> WebSocketStream<tokio::io::DuplexStream> {
        let api = EmbeddedApi::default();
        crate::demo::seed(&api, jiff::Timestamp::now()).expect("seeds");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binds");
        let target = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let mut buf = [0u8; 1024];
            while let Ok(n @ 1..) = s.read(&mut buf).await {
                let _ = s.write_all(&buf[..n]).await;
            }
        });
        let pod = crate::demo::ichor_ui::forward_to(&api, target).expect("a pod");
        let (client, server) = tokio::io::duplex(64 * 1024);
        tokio::spawn(super::super::server::serve_connection(
            api,
            TokioIo::new(server),
            false,
        ));
        let url =
            format!("ws://demo/api/v1/namespaces/ichor-system/pods/{pod}/portforward?ports=8080");
        let mut req = url.into_client_request().expect("a request");
        let bearer = format!("Bearer {}", users::VIEWER_TOKEN);
        req.headers_mut().insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&bearer).expect("a header"),
        );
        if let Some(p) = subprotocol {
            req.headers_mut().insert(
                header::SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_str(p).expect("a header"),
            );
        }
        let (ws, resp) = tokio_tungstenite::client_async(req, client)
            .await
            .expect("upgrades");
        assert_eq!(
            resp.headers()
                .get(header::SEC_WEBSOCKET_PROTOCOL)
                .and_then(|v| v.to_str().ok()),
            subprotocol
        );
        ws
    }

    #[tokio::test]
    async fn base64_channels() {
        let mut ws = connect(Some("v4.base64.channel.k8s.io")).await;
        // Each channel first says the port: 8080 little-endian, base64.
        for ch in ["0", "1"] {
            let msg = ws.next().await.and_then(|m| m.ok());
            assert_eq!(msg, Some(Message::Text(format!("{ch}kB8=").into())));
        }
        ws.send(Message::Text("0aGVsbG8=".into()))
            .await
            .expect("sends");
        let msg = ws.next().await.and_then(|m| m.ok());
        assert_eq!(msg, Some(Message::Text("0aGVsbG8=".into())), "hello echoed");
    }

    #[tokio::test]
    async fn binary_channels_without_a_subprotocol() {
        let mut ws = connect(None).await;
        for ch in [0u8, 1] {
            let msg = ws.next().await.and_then(|m| m.ok());
            assert_eq!(msg, Some(Message::Binary(vec![ch, 0x90, 0x1f].into())));
        }
        ws.send(Message::Binary(b"\0hi".to_vec().into()))
            .await
            .expect("sends");
        let msg = ws.next().await.and_then(|m| m.ok());
        assert_eq!(msg, Some(Message::Binary(b"\0hi".to_vec().into())));
        ws.close(None).await.expect("closes");
    }

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("/api/v1/namespaces/ichor-system/pods/ichor-ui-x/portforward"),
            Some(("ichor-system".into(), "ichor-ui-x".into()))
        );
        assert_eq!(parse_path("/api/v1/namespaces/ns/pods/x"), None);
        assert_eq!(parse_path("/api/v1/namespaces//pods/x/portforward"), None);
    }

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
