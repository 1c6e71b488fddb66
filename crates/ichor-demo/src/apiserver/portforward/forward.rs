//! Where forwarded connections go: each pod port's target, the pods' lifetimes, and the
//! copy of one forwarded connection both ways.

use super::CHUNK;
use crate::apiserver::EmbeddedApi;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

/// How long connecting to a forward target may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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

    pub(super) fn target(&self, namespace: &str, pod: &str, port: u16) -> Option<SocketAddr> {
        self.targets
            .get(&(namespace.to_string(), pod.to_string(), port))
            .copied()
    }

    /// A receiver whose `changed()` fails once the pod is gone.
    pub(super) fn subscribe(&mut self, namespace: &str, pod: &str) -> watch::Receiver<()> {
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
    pub(super) api: EmbeddedApi,
    pub(super) namespace: String,
    pub(super) pod: String,
    pub(super) uid: String,
    /// `changed()` fails once the pod is gone.
    pub(super) gone: watch::Receiver<()>,
}

impl PodForward {
    /// An error stream's message, as the kubelet words it.
    pub(super) fn error_text(&self, port: u16, cause: impl std::fmt::Display) -> String {
        format!(
            "error forwarding port {port} to pod {}, uid {}: {cause}",
            self.pod, self.uid
        )
    }

    /// The message for connections still open when the pod goes away.
    pub(super) fn gone_text(&self, port: u16) -> String {
        self.error_text(port, format!("pod {:?} was deleted", self.pod))
    }

    /// Connects to what the pod's `port` forwards to, at the time of asking.
    pub(super) async fn connect(&self, port: u16) -> Result<TcpStream, String> {
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
    pub(super) async fn gone(&mut self) {
        while self.gone.changed().await.is_ok() {}
    }
}

/// Copies one forwarded connection both ways: bytes from the client arrive on `from_client`
/// (closed: the client is done sending, so the target's write side is shut down); bytes from
/// the target leave as `frame(chunk)` on `out`. With an `eof` message (SPDY, which half-closes)
/// the target's EOF sends it and the copy goes on until both directions have ended; without
/// one (WebSocket channels, which cannot) the first direction to end ends the connection.
/// Returns whether `eof` was sent; an I/O error is the `Err`.
pub(super) async fn pump<M: Send>(
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
