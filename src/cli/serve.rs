//! `ichor-tui serve`: the server's Kubernetes client, then the server.

use super::{ServeArgs, ServeAuth};
use anyhow::Context as _;
use std::path::PathBuf;

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
        args.kubeconfig.as_ref(),
        args.context.as_deref(),
        passthrough,
    )
    .await?;
    if let Some(bare) = bare {
        opts.auth = ichor_server::AuthMode::Passthrough { bare };
    }
    ichor_server::run(opts, kube).await
}
