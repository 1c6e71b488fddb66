//! `ichor-tui serve`: the server's Kubernetes client, then the server.

use super::ServeArgs;
use anyhow::Context as _;
use std::path::PathBuf;

/// The server's Kubernetes client from the kubeconfig (`--kubeconfig`, `--context`), or, with
/// neither, as kube infers it (`$KUBECONFIG` or `~/.kube/config`, else the in-cluster account).
async fn serve_kube_client(
    kubeconfig: Option<&PathBuf>,
    context: Option<&str>,
) -> anyhow::Result<kube::Client> {
    let local = async {
        let loaded = crate::kubeconfig::read(kubeconfig.map(PathBuf::as_path))?;
        let context = loaded.context(context)?;
        anyhow::Ok(loaded.client(&context).await?.0)
    };
    if kubeconfig.is_some() || context.is_some() {
        return local.await;
    }
    // As kube's Config::infer, but through our kubeconfig reader: the local kubeconfig, else
    // the pod's service account.
    let local_error = match local.await {
        Ok(client) => return Ok(client),
        Err(e) => e,
    };
    let config = kube::Config::incluster().map_err(|in_cluster| {
        anyhow::anyhow!(
            "no Kubernetes credentials: {}; and not in a cluster ({in_cluster})",
            ichor_model::error_text::one_line(&local_error)
        )
    })?;
    kube::Client::try_from(config).context("creating the in-cluster Kubernetes client")
}

/// `ichor-tui serve`: the server's Kubernetes client (the demo cluster's, or from the
/// kubeconfig), then the server.
pub async fn run_serve(args: &ServeArgs) -> anyhow::Result<()> {
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(ichor_server::TlsPem::read(cert, key)?),
        (None, None) => None,
        _ => anyhow::bail!("--tls-cert and --tls-key go together"),
    };
    let addr: std::net::SocketAddr = args.listen.parse().with_context(|| {
        format!(
            "parsing --listen {} (e.g. 127.0.0.1:50051)",
            ichor_model::error_text::quoted(&args.listen)
        )
    })?;
    ichor_server::check_transport(&addr, tls.is_some(), args.insecure_listen)?;
    let opts = ichor_server::ListenOptions {
        addr,
        tls,
        insecure_listen: args.insecure_listen,
        allow_anonymous: args.allow_anonymous,
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
        let kube = demo
            .api
            .client(ichor_demo::apiserver::auth::users::SERVER_TOKEN);
        return ichor_server::run(opts, kube).await;
    }
    let kube =
        serve_kube_client(args.kube.kubeconfig.as_ref(), args.kube.context.as_deref()).await?;
    ichor_server::run(opts, kube).await
}
