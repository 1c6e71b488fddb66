//! `ichor-tui serve`: the server's Kubernetes client, then the server.

use super::{ServeArgs, ServeAuth};
use anyhow::Context as _;
use clap::Args;
use ichor_server::pools;
use std::path::PathBuf;

/// What one person may hold of each pool `serve` shares, and how the callers who wait queue
/// (fair queuing with shuffle sharding, as kube-apiserver's API Priority and Fairness; callers
/// without a token count as one person). docs/limits.md says why each default.
#[derive(Debug, Args)]
pub struct ShareArgs {
    /// The most connections one person's calls hold at once; past it the call is refused
    /// (RESOURCE_EXHAUSTED) and its connection closed. A dashboard holds one.
    #[arg(long, value_name = "N", default_value_t = pools::CONNECTIONS_PER_PERSON, value_parser = super::bound)]
    pub connections_per_person: usize,
    /// The most reads of one person answered at once (of 256); more wait their turn. A
    /// dashboard makes one call at a time.
    #[arg(long, value_name = "N", default_value_t = pools::CALLS_PER_PERSON, value_parser = super::bound)]
    pub calls_per_person: usize,
    /// The most of one person's request bodies being read at once, in each of reads, writes and
    /// subscriptions; a body that does not come holds its slot until its deadline (10 s). A
    /// body comes with its headers, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = pools::BODIES_PER_PERSON, value_parser = super::bound)]
    pub bodies_per_person: usize,
    /// The most of one person's subscriptions set up at once (of 64). A dashboard subscribes
    /// once, and again when its list changes.
    #[arg(long, value_name = "N", default_value_t = pools::SUBSCRIBING_PER_PERSON, value_parser = super::bound)]
    pub subscribing_per_person: usize,
    /// The most distinct lists one person's streams keep up to date in one namespace (of 8),
    /// so another person's list there is served: a dashboard's list and the next it moves to.
    #[arg(long, value_name = "N", default_value_t = pools::LIVE_QUERIES_PER_PERSON, value_parser = super::bound)]
    pub live_queries_per_person: usize,
    /// How many fair queues each pool has for the callers who wait (0: none, a call that finds
    /// no slot is refused at once). kube-apiserver's default.
    #[arg(long, value_name = "N", default_value_t = pools::QUEUES.queues, value_parser = |s: &str| count(s, 0, 1024))]
    pub fair_queues: usize,
    /// How many of those queues one person's hash deals (shuffle sharding: its callers wait in
    /// one of them, so two people rarely share them all). kube-apiserver's default.
    #[arg(long, value_name = "N", default_value_t = pools::QUEUES.hand, value_parser = |s: &str| count(s, 1, 16))]
    pub queue_hand: usize,
    /// How many callers wait in one queue at most; past it a call is refused
    /// (RESOURCE_EXHAUSTED, Retry-After). kube-apiserver's default.
    #[arg(long, value_name = "N", default_value_t = pools::QUEUES.length, value_parser = |s: &str| count(s, 0, 10_000))]
    pub queue_length: usize,
}

/// A number from `min` to `max`.
fn count(s: &str, min: usize, max: usize) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("a number from {min} to {max}")),
    }
}

impl ShareArgs {
    /// The shares the flags say.
    pub fn fairness(&self) -> ichor_server::Fairness {
        ichor_server::Fairness {
            connections_per_person: self.connections_per_person,
            calls_per_person: self.calls_per_person,
            bodies_per_person: self.bodies_per_person,
            subscribing_per_person: self.subscribing_per_person,
            live_queries_per_person: self.live_queries_per_person,
            queues: ichor_server::Queues {
                queues: self.fair_queues,
                hand: self.queue_hand,
                length: self.queue_length,
            },
        }
    }
}

/// The server's Kubernetes clients from the kubeconfig (`--kubeconfig`, `--context`), or, with
/// neither, as kube infers them (`$KUBECONFIG` or `~/.kube/config`, else the in-cluster
/// account): its own, and with `bare` one to the same API server with no credentials of its
/// own (for `--auth passthrough`).
async fn serve_kube_clients(
    kubeconfig: Option<&PathBuf>,
    context: Option<&str>,
    bare: bool,
) -> anyhow::Result<(kube::Client, Option<kube::Client>)> {
    let local = async {
        let loaded = crate::kubeconfig::read(kubeconfig.map(PathBuf::as_path))?;
        let context = loaded.context(context)?;
        let own = loaded.client(&context).await?.0;
        let bare = match bare {
            true => Some(without_credentials(loaded.client_config(&context).await?)?),
            false => None,
        };
        anyhow::Ok((own, bare))
    };
    if kubeconfig.is_some() || context.is_some() {
        return local.await;
    }
    // As kube's Config::infer, but through our kubeconfig reader: the local kubeconfig, else
    // the pod's service account.
    let local_error = match local.await {
        Ok(clients) => return Ok(clients),
        Err(e) => e,
    };
    let config = kube::Config::incluster().map_err(|in_cluster| {
        anyhow::anyhow!(
            "no Kubernetes credentials: {}; and not in a cluster ({in_cluster})",
            ichor_model::error_text::one_line(&local_error)
        )
    })?;
    let bare = match bare {
        true => Some(without_credentials(config.clone())?),
        false => None,
    };
    let own =
        kube::Client::try_from(config).context("creating the in-cluster Kubernetes client")?;
    Ok((own, bare))
}

/// A client to `config`'s API server (its address, its CA) that sends no credentials of its
/// own: no token, no client certificate, no exec plugin, no impersonation. Each request carries
/// the caller's token instead (`--auth passthrough`).
fn without_credentials(mut config: kube::Config) -> anyhow::Result<kube::Client> {
    config.auth_info = kube::config::AuthInfo::default();
    kube::Client::try_from(config).context("creating the Kubernetes client for callers' tokens")
}

/// `ichor-tui serve`: the server's Kubernetes client (the demo cluster's, or from the
/// kubeconfig), then the server.
pub async fn run_serve(args: &ServeArgs) -> anyhow::Result<()> {
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(ichor_server::TlsPem::read(cert, key)?),
        (None, None) => None,
        _ => anyhow::bail!("--tls-cert and --tls-key go together"),
    };
    let addr: ichor_server::ListenAddr = args.listen.parse().map_err(|e| {
        anyhow::anyhow!(
            "parsing --listen {}: {e}",
            ichor_model::error_text::quoted(&args.listen)
        )
    })?;
    ichor_server::check_transport(&addr, tls.is_some(), args.insecure_listen)?;
    let passthrough = args.auth == ServeAuth::Passthrough;
    let mut opts = ichor_server::ListenOptions {
        addr,
        tls,
        insecure_listen: args.insecure_listen,
        allow_anonymous: args.allow_anonymous,
        auth: ichor_server::AuthMode::Impersonate,
        read_only: args.read_only,
        metrics: args.metrics_listen,
        bounds: ichor_server::Bounds {
            streams: args.max_streams,
            connections: args.max_connections,
            fairness: args.shares.fairness(),
        },
        cors_origins: args.cors_origin.clone(),
    };
    if args.demo {
        let demo = ichor_demo::demo::DemoCluster::start(args.demo_speed)?;
        if args.allow_anonymous {
            // Calls without a token act as the server: in the demo, it may do what they do.
            demo.api.grant_anonymous_callers_to_the_server();
        }
        if passthrough {
            // serve's identity has the passthrough component's role, as a cluster installed
            // from deploy/overlays/passthrough gives it.
            demo.api.deploy_passthrough();
            opts.auth = ichor_server::AuthMode::Passthrough {
                bare: demo.api.bare_client(),
            };
        }
        let kube = demo
            .api
            .client(ichor_demo::apiserver::auth::users::SERVER_TOKEN);
        return ichor_server::run(opts, kube).await;
    }
    let (kube, bare) = serve_kube_clients(
        args.kube.kubeconfig.as_ref(),
        args.kube.context.as_deref(),
        passthrough,
    )
    .await?;
    if let Some(bare) = bare {
        opts.auth = ichor_server::AuthMode::Passthrough { bare };
    }
    ichor_server::run(opts, kube).await
}
