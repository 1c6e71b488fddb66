//! Command-line arguments and logging set-up.

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

/// A terminal dashboard for TalosOperations: rolling Talos, Kubernetes and ichor upgrades,
/// kube-proxy switches, shutdowns and CA rotations, followed machine by machine.
#[derive(Debug, Parser)]
#[command(name = "ichor-tui", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Run against the embedded demo cluster (an in-memory Kubernetes API and a simulated
    /// controller) instead of a real cluster.
    #[arg(long, global = true)]
    pub demo: bool,

    /// How fast the demo controller works (1: a machine step takes 4 s).
    #[arg(long, global = true, default_value_t = 1.0, value_name = "FACTOR")]
    pub demo_speed: f64,

    /// Write the log here instead of the state directory (~/.local/state/ichor-tui/ichor-tui.log).
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<PathBuf>,

    /// The kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use (default: the current context).
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// Reach OperationService over gRPC at this URL (https://host:port, or http://host:port
    /// for HTTP/2 without TLS) instead of in-process.
    #[arg(long, global = true, env = "ICHOR_SERVER", value_name = "URL")]
    pub server: Option<String>,

    /// Read the bearer token for --server from this file (default: $ICHOR_TOKEN). Never logged.
    #[arg(long, global = true, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// Trust this PEM CA certificate for --server, in addition to the system roots.
    #[arg(long, global = true, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,

    /// The deadline of each call to --server, in seconds.
    #[arg(long, global = true, default_value_t = 15, value_name = "SECONDS")]
    pub call_timeout: u64,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the demo cluster's Kubernetes API over HTTP for kubectl (loopback only by default).
    DemoCluster(DemoClusterArgs),
    /// Serve OperationService and ClusterService over gRPC (with health and reflection), acting
    /// as each caller whose bearer token Kubernetes accepts (TokenReview, then impersonation).
    Serve(ServeArgs),
}

/// `ichor-tui serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on, e.g. 0.0.0.0:50051 (port 0 picks a free port; the address is
    /// printed as "serving on ADDR").
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub listen: String,
    /// TLS certificate chain (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Allow plaintext HTTP/2 on a non-loopback address (e.g. behind a TLS-terminating proxy).
    #[arg(long)]
    pub insecure_listen: bool,
    /// Calls without a bearer token act as the server's own identity (actor "ichor-tui-server").
    #[arg(long)]
    pub allow_anonymous: bool,
}

/// `ichor-tui demo-cluster`.
#[derive(Debug, Args)]
pub struct DemoClusterArgs {
    /// Address to listen on, e.g. 127.0.0.1:6443 (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: String,
    /// Write a kubeconfig for the demo admin user to this file.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Allow a non-loopback listen address (the demo tokens are public).
    #[arg(long)]
    pub allow_remote: bool,
}

/// Sends tracing to a file (never the terminal). Returns the guard that flushes it.
pub fn init_logging(
    file: Option<&Path>,
) -> anyhow::Result<Option<tracing_appender::non_blocking::WorkerGuard>> {
    let path = match file {
        Some(p) => p.to_path_buf(),
        None => dirs::state_dir()
            .or_else(dirs::data_local_dir)
            .unwrap_or_else(std::env::temp_dir)
            .join("ichor-tui")
            .join("ichor-tui.log"),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating log directory {}", dir.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening log file {}", path.display()))?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("ICHOR_TUI_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .map_err(|e| anyhow::anyhow!("setting up logging: {e}"))?;
    Ok(Some(guard))
}

/// Runs the dashboard (for now: prints the demo cluster's operations).
pub async fn run_dashboard(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    use crate::cluster::resources::TalosOperation;
    use kube::api::{Api, ListParams};
    if !cli.demo {
        anyhow::bail!("only --demo is available in this build");
    }
    let demo = crate::cluster::demo::DemoCluster::start(cli.demo_speed)?;
    let client = demo
        .api
        .client(crate::cluster::apiserver::auth::users::ADMIN_TOKEN);
    let ops: Api<TalosOperation> = Api::all(client);
    for op in ops.list(&ListParams::default()).await?.items {
        let phase = op.status.as_ref().map(|s| s.phase.as_str()).unwrap_or("");
        println!(
            "{:<28} {:<12} {:<12} {}",
            op.metadata.name.unwrap_or_default(),
            op.spec.cluster,
            op.spec.kind,
            phase
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}
