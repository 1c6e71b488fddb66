//! `--demo`: the embedded cluster, reached as a cluster is. Its ichor-ui is this program's own
//! server, run on loopback against the demo cluster with the server's identity, and the demo's
//! ichor-ui pod forwards to it; the dashboard then finds it through a port-forward tunnel as it
//! would in a real cluster. `--demo-without-ichor-ui` removes the pod, and the dashboard falls
//! back to the service in-process, saying why.

use super::Cli;
use anyhow::Context as _;
use ichor_demo::apiserver::auth::users;
use ichor_demo::demo::{DemoCluster, ichor_ui};

/// The demo cluster as the dashboard reaches it, with its ichor-ui server.
pub(super) struct Demo {
    cluster: DemoCluster,
    server: Option<UiServer>,
}

/// The demo's ichor-ui: `serve` on loopback, stopped when dropped.
pub(super) struct UiServer {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Drop for UiServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}

/// Starts `serve` against the demo cluster on a loopback port of its own.
async fn start_ui_server(
    cluster: &DemoCluster,
) -> anyhow::Result<(UiServer, std::net::SocketAddr)> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .context("listening on loopback for the demo's ichor-ui")?;
    let addr = listener
        .local_addr()
        .context("reading the demo ichor-ui's address")?;
    let config = ichor_server::ServerConfig::new(cluster.api.client(users::SERVER_TOKEN));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(ichor_server::serve(config, listener, async {
        let _ = stopped.await;
    }));
    Ok((
        UiServer {
            stop: Some(stop),
            task,
        },
        addr,
    ))
}

/// Starts the demo cluster and, unless asked not to, its ichor-ui.
pub(super) async fn start(cli: &Cli) -> anyhow::Result<Demo> {
    let cluster = DemoCluster::start(cli.demo_speed)?;
    if cli.demo_without_ichor_ui {
        ichor_ui::remove(&cluster.api);
        return Ok(Demo {
            cluster,
            server: None,
        });
    }
    let (server, addr) = start_ui_server(&cluster).await?;
    cluster
        .forward_ichor_ui(addr)
        .context("pointing the demo's ichor-ui pod at its server")?;
    tracing::info!(%addr, "the demo's ichor-ui serves on loopback");
    Ok(Demo {
        cluster,
        server: Some(server),
    })
}

impl Demo {
    /// The demo admin's client.
    pub(super) fn kube(&self) -> kube::Client {
        self.cluster.api.client(self.token())
    }

    /// The demo admin's token (forwarded to the demo's ichor-ui).
    pub(super) fn token(&self) -> &'static str {
        users::ADMIN_TOKEN
    }

    /// The cluster and its ichor-ui, kept running while the dashboard runs (and stopped when
    /// dropped, on every way out).
    pub(super) fn into_parts(self) -> (DemoCluster, Option<UiServer>) {
        (self.cluster, self.server)
    }
}
