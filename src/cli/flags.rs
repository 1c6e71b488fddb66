//! The connection flags, each declared once with one help text and flattened (clap's
//! `#[command(flatten)]`) wherever it is taken: the dashboard's flags ([`crate::cli::Cli`]),
//! each command's after the command ([`Reach`]), and `serve`'s kubeconfig ([`Kube`]). Given
//! before a command, they are the dashboard's, and `crate::cli::leading` hands those the
//! command acts on to its own.

use clap::Args;
use std::path::PathBuf;

/// Which kubeconfig and context: the person's for the dashboard and the commands, the server's
/// own for `serve`.
#[derive(Debug, Args, Clone, Default)]
pub struct Kube {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; for serve, then
    /// the in-cluster service account).
    #[arg(long, value_name = "FILE", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: the current context).
    #[arg(long, value_name = "NAME", global = true,
        add = clap_complete::ArgValueCandidates::new(crate::cli::complete::contexts))]
    pub context: Option<String>,
}

impl Kube {
    /// These flags, each one this one lacks taken from `leading`.
    pub fn under(self, leading: Kube) -> Kube {
        Kube {
            kubeconfig: self.kubeconfig.or(leading.kubeconfig),
            context: self.context.or(leading.context),
        }
    }
}

/// How to reach the service and speak. A command's flags are global within it (`op -n x
/// list` is `op list -n x`); the dashboard's are its own (`crate::cli::Cli` makes them so).
#[derive(Debug, Args, Clone, Default)]
pub struct Reach {
    #[command(flatten)]
    pub kube: Kube,
    /// The namespace (default: the context's namespace, else "default").
    #[arg(short = 'n', long, value_name = "NAMESPACE", global = true,
        add = clap_complete::ArgValueCandidates::new(crate::cli::complete::namespaces))]
    pub namespace: Option<String>,
    /// Reach OperationService at this URL (ichor-ui, or `ichor-tui serve`; https:// with TLS)
    /// instead of running it in-process.
    #[arg(long, env = "ICHOR_SERVER", value_name = "URL", global = true)]
    pub server: Option<String>,
    /// The protocol to the server: the Connect protocol (HTTP/1.1 or HTTP/2; passes HTTP/1.1-only
    /// proxies; the default) or gRPC (HTTP/2).
    #[arg(long, value_enum, value_name = "PROTOCOL", global = true)]
    pub protocol: Option<crate::config::ProtocolChoice>,
    /// How to reach OperationService without --server: auto (ichor-ui in the cluster through a
    /// port-forward when it answers, else the service in-process, saying why), remote (ichor-ui
    /// or nothing) or in-process.
    #[arg(long, value_enum, value_name = "BACKEND", global = true)]
    pub backend: Option<crate::config::RouteChoice>,
    /// Where ichor-ui runs in the cluster: NAMESPACE/SERVICE (default ichor-system/ichor-ui).
    #[arg(long, value_name = "NAMESPACE/SERVICE", global = true)]
    pub ichor_ui: Option<String>,
    /// The name of ichor-ui's Service port (default api).
    #[arg(long, value_name = "NAME", global = true)]
    pub ichor_ui_port: Option<String>,
    /// A file holding the bearer token for --server (or set ICHOR_TOKEN). Never logged.
    #[arg(long, value_name = "FILE", global = true)]
    pub token_file: Option<PathBuf>,
    /// Send the bearer token over plain http:// to a --server that is not loopback all the same
    /// (by default it is refused: use https://).
    #[arg(long, global = true)]
    pub insecure_send_token_over_http: bool,
    /// Extra CA certificates (PEM) to trust for an https:// --server.
    #[arg(long, value_name = "FILE", global = true)]
    pub ca_file: Option<PathBuf>,
    /// Language of the interface: en or ja (default: LC_ALL, LC_MESSAGES, LANG, else en).
    #[arg(long, value_name = "LANG", global = true)]
    pub lang: Option<String>,
    /// Never write: no pause, resume, delete or start; the clients refuse writes themselves.
    /// (`--readonly`, as k9s spells it, is the same flag.)
    #[arg(long, visible_alias = "readonly", global = true)]
    pub read_only: bool,
    /// Run against the embedded demo cluster (an in-memory Kubernetes API and a simulated
    /// controller) instead of a real cluster.
    #[arg(long, global = true)]
    pub demo: bool,
    /// The config file to read instead of ~/.config/ichor-tui/config.toml; it must exist.
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Write the log here instead of the state directory (~/.local/state/ichor-tui/ichor-tui.log).
    #[arg(long, value_name = "FILE", global = true)]
    pub log_file: Option<PathBuf>,
    /// The deadline of each call to --server, in seconds, from 1 to 3600 (default 15).
    #[arg(
        long,
        value_name = "SECONDS",
        global = true,
        value_parser = clap::value_parser!(u64).range(CALL_TIMEOUT_SECONDS)
    )]
    pub call_timeout: Option<u64>,
    /// Act as this user, as kubectl's --as (Kubernetes impersonation; the service then runs
    /// in-process: ichor-ui and --server act as the caller their token names).
    #[arg(long = "as", value_name = "USER", global = true)]
    pub as_user: Option<String>,
    /// Act as a member of this group too, with --as (repeat it for more groups).
    #[arg(long = "as-group", value_name = "GROUP", global = true)]
    pub as_group: Vec<String>,
}

/// The range of `--call-timeout`.
pub const CALL_TIMEOUT_SECONDS: std::ops::RangeInclusive<u64> = 1..=3600;

/// `--call-timeout` when it is not given, in seconds.
pub const CALL_TIMEOUT_DEFAULT: u64 = 15;

impl Reach {
    /// These flags, each one this one lacks taken from `leading` (the flags given before the
    /// command).
    pub fn under(self, leading: Reach) -> Reach {
        Reach {
            kube: self.kube.under(leading.kube),
            namespace: self.namespace.or(leading.namespace),
            server: self.server.or(leading.server),
            protocol: self.protocol.or(leading.protocol),
            backend: self.backend.or(leading.backend),
            ichor_ui: self.ichor_ui.or(leading.ichor_ui),
            ichor_ui_port: self.ichor_ui_port.or(leading.ichor_ui_port),
            token_file: self.token_file.or(leading.token_file),
            insecure_send_token_over_http: self.insecure_send_token_over_http
                || leading.insecure_send_token_over_http,
            ca_file: self.ca_file.or(leading.ca_file),
            lang: self.lang.or(leading.lang),
            read_only: self.read_only || leading.read_only,
            demo: self.demo || leading.demo,
            config: self.config.or(leading.config),
            log_file: self.log_file.or(leading.log_file),
            call_timeout: self.call_timeout.or(leading.call_timeout),
            as_user: self.as_user.or(leading.as_user),
            as_group: match self.as_group.is_empty() {
                true => leading.as_group,
                false => self.as_group,
            },
        }
    }

    /// The deadline of each call to --server.
    pub fn call_deadline(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.call_timeout.unwrap_or(CALL_TIMEOUT_DEFAULT))
    }
}
