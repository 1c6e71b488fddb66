//! `--demo`: the embedded cluster, reached as a cluster is: the dashboard looks for its ichor-ui
//! and falls back to the service in-process when there is none.

use super::Cli;

/// The demo cluster as the dashboard reaches it.
pub(super) struct Demo {
    cluster: ichor_demo::demo::DemoCluster,
}

/// Starts the demo cluster.
pub(super) fn start(cli: &Cli) -> anyhow::Result<Demo> {
    let cluster = ichor_demo::demo::DemoCluster::start(cli.demo_speed)?;
    Ok(Demo { cluster })
}

impl Demo {
    /// The demo admin's client.
    pub(super) fn kube(&self) -> kube::Client {
        self.cluster.api.client(self.token())
    }

    /// The demo admin's token (forwarded to the demo's ichor-ui).
    pub(super) fn token(&self) -> &'static str {
        ichor_demo::apiserver::auth::users::ADMIN_TOKEN
    }

    /// The cluster, kept running while the dashboard runs.
    pub(super) fn into_cluster(self) -> ichor_demo::demo::DemoCluster {
        self.cluster
    }
}
