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
mod forward;
mod protocol;
mod spdy;
mod spdy_server;
mod tunnel;

pub(crate) use self::forward::Forwards;
use self::forward::{PodForward, pump};
use self::protocol::{Protocol, query_ports};
use super::authn;
use super::rbac::Attributes;
use super::responses::{Failure, fail, json_response, status_body};
use super::{ApiState, EmbeddedApi};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::time::Duration;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;

/// The subprotocol of SPDY port-forwarding.
const PORT_FORWARD_V1: &str = "portforward.k8s.io";
/// kubectl's WebSocket subprotocol: SPDY tunneled in binary messages.
const SPDY_TUNNEL: &str = "SPDY/3.1+portforward.k8s.io";
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

/// Waits up to `linger` for a task to end, then aborts it: nothing outlives its connection.
async fn finish(mut task: tokio::task::JoinHandle<()>, linger: Duration) {
    if tokio::time::timeout(linger, &mut task).await.is_err() {
        task.abort();
    }
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
            let asked = Attributes::resource(
                "create",
                "",
                "pods/portforward",
                Some(&pod),
                Some(&namespace),
            );
            if !st.auth.allowed(&who, &asked) {
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

/// Ends a WebSocket from our side: a Normal close frame, then the sink closed (errors ignored:
/// the peer may be gone already).
async fn close_normally<S>(sink: &mut S)
where
    S: futures_util::Sink<tokio_tungstenite::tungstenite::Message> + Unpin,
{
    use futures_util::SinkExt as _;
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    let close = CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    };
    let _ = sink
        .send(tokio_tungstenite::tungstenite::Message::Close(Some(close)))
        .await;
    let _ = sink.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::auth::users;
    use futures_util::{SinkExt, StreamExt};
    use http::{HeaderValue, header};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
}
