//! Reaching the in-cluster ichor-ui through the API server, as the ichor CLI does: find its
//! Service (namespace, name and port name configurable), pick a ready Pod behind it, and open a
//! port-forward to it (kube-rs over WebSocket, as kubectl does since 1.31), with the user's own
//! credentials. Every new connection resolves the Service and its Pods again, so a tunnel that
//! dies is reopened to whichever pod is ready then.

use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::api::{Api, ListParams};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Where ichor-ui runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IchorUi {
    pub namespace: String,
    pub service: String,
    /// The Service port's name.
    pub port: String,
}

impl Default for IchorUi {
    fn default() -> Self {
        IchorUi {
            namespace: "ichor-system".into(),
            service: "ichor-ui".into(),
            port: "api".into(),
        }
    }
}

pub use ichor_model::Fallback;

/// A ready pod and the container port the Service's port leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub(crate) pod: String,
    pub(crate) port: u16,
}

/// How long each question to the API server about ichor-ui (its Service, its pods, a forward to
/// one) may take: it answers in milliseconds, so an API server that accepts and never answers
/// is given up on within seconds, never waited for without end (kube's client has no read
/// timeout of its own).
pub const QUESTION_DEADLINE: Duration = Duration::from_secs(5);

/// `question`'s answer, or NotAnswering past [`QUESTION_DEADLINE`].
async fn asked<T>(
    what: &str,
    question: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, Fallback> {
    match tokio::time::timeout(QUESTION_DEADLINE, question).await {
        Ok(answer) => answer.map_err(refused),
        Err(_) => Err(Fallback::NotAnswering {
            detail: format!(
                "the API server did not answer {what} within {} s",
                QUESTION_DEADLINE.as_secs()
            ),
        }),
    }
}

fn bounded(e: &kube::Error) -> String {
    ichor_model::inert::truncate(&ichor_model::inert::sanitize(&e.to_string()), 200)
}

fn refused(e: kube::Error) -> Fallback {
    match &e {
        kube::Error::Api(s) if s.code == 404 => Fallback::NotFound,
        kube::Error::Api(s) if s.code == 401 || s.code == 403 => Fallback::Forbidden {
            detail: bounded(&e),
        },
        _ => Fallback::NotAnswering {
            detail: bounded(&e),
        },
    }
}

fn is_ready(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    status.and_then(|s| s.phase.as_deref()) == Some("Running")
        && status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
        && pod.metadata.deletion_timestamp.is_none()
}

/// The container port a Service's target port names in `pod`.
fn container_port(
    pod: &Pod,
    target: &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
) -> Option<u16> {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match target {
        IntOrString::Int(n) => u16::try_from(*n).ok(),
        IntOrString::String(name) => pod
            .spec
            .as_ref()?
            .containers
            .iter()
            .flat_map(|c| c.ports.iter().flatten())
            .find(|p| p.name.as_deref() == Some(name.as_str()))
            .and_then(|p| u16::try_from(p.container_port).ok()),
    }
}

/// Finds ichor-ui: its Service, the port by name, a ready pod behind it.
pub async fn find(kube: &kube::Client, ui: &IchorUi) -> Result<Route, Fallback> {
    let services: Api<Service> = Api::namespaced(kube.clone(), &ui.namespace);
    let service = asked("the question for the Service", services.get(&ui.service)).await?;
    let spec = service.spec.unwrap_or_default();
    let port = spec
        .ports
        .iter()
        .flatten()
        .find(|p| p.name.as_deref() == Some(ui.port.as_str()))
        .ok_or(Fallback::NoPort)?;
    let target = port
        .target_port
        .clone()
        .unwrap_or(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(port.port));
    let selector = spec
        .selector
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    if selector.is_empty() {
        return Err(Fallback::NotReady);
    }
    let pods: Api<Pod> = Api::namespaced(kube.clone(), &ui.namespace);
    let list = asked(
        "the list of the Service's pods",
        pods.list(&ListParams::default().labels(&selector)),
    )
    .await?;
    let mut ready: Vec<&Pod> = list.items.iter().filter(|p| is_ready(p)).collect();
    ready.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let pod = ready.first().ok_or(Fallback::NotReady)?;
    Ok(Route {
        pod: pod.metadata.name.clone().unwrap_or_default(),
        port: container_port(pod, &target).ok_or(Fallback::NoPort)?,
    })
}

/// The bearer token of a kubeconfig's user, to forward to ichor-ui (which reviews it as the
/// user's); a user who authenticates otherwise has none to forward.
pub fn bearer_token(config: &kube::Config) -> Result<String, Fallback> {
    use secrecy::ExposeSecret as _;
    let auth = &config.auth_info;
    if let Some(t) = &auth.token {
        return Ok(t.expose_secret().to_string());
    }
    if let Some(file) = &auth.token_file {
        return std::fs::read_to_string(file)
            .map(|t| t.trim().to_string())
            .map_err(|_| Fallback::NoToken { how: "token-file" });
    }
    if auth.exec.is_some() || auth.auth_provider.is_some() {
        return Err(Fallback::NoToken { how: "exec" });
    }
    if auth.client_certificate.is_some() || auth.client_certificate_data.is_some() {
        return Err(Fallback::NoToken { how: "certificate" });
    }
    Err(Fallback::NoToken { how: "none" })
}

/// One forwarded connection, as hyper and tonic connect over it.
pub struct TunnelIo {
    inner: TokioIo<tokio::io::DuplexStream>,
}

impl hyper::rt::Read for TunnelIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for TunnelIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl Connection for TunnelIo {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

/// Opens a forwarded connection to ichor-ui for each connection a client makes.
#[derive(Clone)]
pub struct TunnelConnector {
    kube: kube::Client,
    ui: IchorUi,
}

impl TunnelConnector {
    pub fn new(kube: kube::Client, ui: IchorUi) -> TunnelConnector {
        TunnelConnector { kube, ui }
    }

    /// A new forwarded connection to a ready pod of ichor-ui.
    pub(crate) async fn open(&self) -> std::io::Result<TunnelIo> {
        let route = find(&self.kube, &self.ui)
            .await
            .map_err(|f| std::io::Error::other(format!("ichor-ui: {f}")))?;
        let pods: Api<Pod> = Api::namespaced(self.kube.clone(), &self.ui.namespace);
        let ports = [route.port];
        let forward = tokio::time::timeout(QUESTION_DEADLINE, pods.portforward(&route.pod, &ports));
        let mut forwarder = match forward.await {
            Ok(f) => f.map_err(|e| {
                std::io::Error::other(format!("opening the tunnel: {}", bounded(&e)))
            })?,
            Err(_) => {
                return Err(std::io::Error::other(format!(
                    "opening the tunnel: no answer within {} s",
                    QUESTION_DEADLINE.as_secs()
                )));
            }
        };
        let stream = forwarder
            .take_stream(route.port)
            .ok_or_else(|| std::io::Error::other("the tunnel gave no stream"))?;
        tracing::debug!(pod = %route.pod, port = route.port, "tunnel to ichor-ui opened");
        // The forward lives while its stream does: the task ends when either side closes.
        tokio::spawn(async move {
            if let Err(e) = forwarder.join().await {
                let detail = ichor_model::inert::truncate(&e.to_string(), 200);
                tracing::info!(error = %detail, "the tunnel to ichor-ui closed");
            }
        });
        Ok(TunnelIo {
            inner: TokioIo::new(stream),
        })
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl tower::Service<http::Uri> for TunnelConnector {
    type Response = TunnelIo;
    type Error = std::io::Error;
    type Future = BoxFuture<Result<TunnelIo, std::io::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _uri: http::Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { this.open().await })
    }
}
