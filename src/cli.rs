//! Command-line arguments and logging set-up.

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

/// A terminal dashboard for TalosOperations: rolling Talos, Kubernetes and ichor upgrades,
/// kube-proxy switches, shutdowns and CA rotations, followed machine by machine.
///
/// Settings come from these flags, then from ~/.config/ichor-tui/config.toml or the --config
/// file (keys as the long flags: namespace, context, lang, color, read-only, …), then the
/// defaults.
#[derive(Debug, Parser)]
#[command(name = "ichor-tui", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use (default: the current context).
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// The namespace to list (default: the context's namespace, else "default").
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// List operations in every namespace (adds the namespace column).
    #[arg(short = 'A', long, global = true)]
    pub all_namespaces: bool,

    /// Reach OperationService over gRPC at this URL (https:// with TLS, http:// as h2c)
    /// instead of running it in-process.
    #[arg(long, global = true, env = "ICHOR_SERVER", value_name = "URL")]
    pub server: Option<String>,

    /// A file holding the bearer token for --server (or set ICHOR_TOKEN). Never logged.
    #[arg(long, global = true, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// Extra CA certificates (PEM) to trust for an https:// --server.
    #[arg(long, global = true, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,

    /// Language of the interface: en or ja (default: LC_ALL, LC_MESSAGES, LANG, else en).
    #[arg(long, global = true, value_name = "LANG")]
    pub lang: Option<String>,

    /// Colour: auto (a terminal, unless NO_COLOR is set), always or never.
    #[arg(long, global = true, value_enum, value_name = "WHEN")]
    pub color: Option<crate::config::ColorMode>,

    /// Draw borders and bars with ASCII only (automatic when the locale is not UTF-8).
    #[arg(long, global = true)]
    pub ascii: bool,

    /// Never write: no pause, resume, delete or start; the clients refuse writes themselves.
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Run against the embedded demo cluster (an in-memory Kubernetes API and a simulated
    /// controller) instead of a real cluster.
    #[arg(long, global = true)]
    pub demo: bool,

    /// How fast the demo controller works, from 0.1 to 1000 (1: a machine step takes 4 s).
    #[arg(long, global = true, default_value_t = 1.0, value_name = "FACTOR", value_parser = demo_speed)]
    pub demo_speed: f64,

    /// The config file to read instead of ~/.config/ichor-tui/config.toml; it must exist.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Write the log here instead of the state directory (~/.local/state/ichor-tui/ichor-tui.log).
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<PathBuf>,

    /// The deadline of each call to --server, in seconds, from 1 to 3600.
    #[arg(
        long,
        global = true,
        default_value_t = 15,
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(CALL_TIMEOUT_SECONDS)
    )]
    pub call_timeout: u64,
}

/// The range of `--call-timeout`.
pub const CALL_TIMEOUT_SECONDS: std::ops::RangeInclusive<u64> = 1..=3600;

/// The range of `--demo-speed`.
pub const DEMO_SPEED: std::ops::RangeInclusive<f64> = 0.1..=1000.0;

/// `--demo-speed`: a finite number in [`DEMO_SPEED`].
fn demo_speed(s: &str) -> Result<f64, String> {
    let (lo, hi) = (DEMO_SPEED.start(), DEMO_SPEED.end());
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("not a number (it must be in {lo}..={hi})"))?;
    if !DEMO_SPEED.contains(&v) {
        return Err(format!("{v} is not in {lo}..={hi}"));
    }
    Ok(v)
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
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .map_err(|e| anyhow::anyhow!("setting up logging: {e}"))?;
    Ok(Some(guard))
}

/// The log filter unless `ICHOR_TUI_LOG` gives one. kube's client logs a whole response body
/// (a list can be hundreds of KB, on one line) at `warn` when it cannot decode it; the service
/// never decodes through that path for lists and gets (see `service::tolerant`) and says what
/// it could not read itself, in a bounded line, so kube's own line is left out.
pub const DEFAULT_LOG_FILTER: &str = "info,kube_client::client=error";

/// The settings in force: flags over the config file over the defaults.
pub struct Settings {
    pub lang: crate::i18n::Lang,
    pub theme: crate::views::widgets::Theme,
    pub read_only: bool,
    pub namespace: Option<String>,
    pub all_namespaces: bool,
    pub context: Option<String>,
    pub kubeconfig: Option<PathBuf>,
    pub server: Option<String>,
    pub token_file: Option<PathBuf>,
    pub ca_file: Option<PathBuf>,
}

impl Settings {
    /// Resolves the settings from the flags, the config file and the environment.
    pub fn resolve(
        cli: &Cli,
        file: &crate::config::FileConfig,
        env: impl Fn(&str) -> Option<String>,
        is_tty: bool,
    ) -> anyhow::Result<Settings> {
        use crate::config::{ColorMode, locale_is_utf8};
        let color_mode = cli.color.or(file.color).unwrap_or(ColorMode::Auto);
        // The file's lang was checked as it was read.
        if let Some(l) = &cli.lang
            && crate::i18n::Lang::parse(l).is_none()
        {
            anyhow::bail!("--lang must be en or ja, not {}", crate::errors::quoted(l));
        }
        let lang_flag = cli.lang.clone().or_else(|| file.lang.clone());
        Ok(Settings {
            lang: crate::i18n::Lang::choose(lang_flag.as_deref(), &env),
            theme: crate::views::widgets::Theme {
                color: color_mode.resolve(env("NO_COLOR").as_deref(), is_tty),
                ascii: cli.ascii || file.ascii.unwrap_or(false) || !locale_is_utf8(&env),
            },
            read_only: cli.read_only || file.read_only.unwrap_or(false),
            namespace: cli.namespace.clone().or_else(|| file.namespace.clone()),
            all_namespaces: cli.all_namespaces || file.all_namespaces.unwrap_or(false),
            context: cli.context.clone().or_else(|| file.context.clone()),
            kubeconfig: cli.kubeconfig.clone().or_else(|| file.kubeconfig.clone()),
            server: cli.server.clone().or_else(|| file.server.clone()),
            token_file: cli.token_file.clone().or_else(|| file.token_file.clone()),
            ca_file: cli.ca_file.clone().or_else(|| file.ca_file.clone()),
        })
    }
}

/// Where the dashboard's service is, with what local files said: decided before the terminal
/// is checked, so a bad flag or file is said first, and before anything is contacted.
enum Source {
    Demo,
    Remote(crate::client::grpc::GrpcOptions),
    Kubeconfig {
        loaded: crate::kubeconfig::Loaded,
        context: String,
    },
}

impl Source {
    fn choose(cli: &Cli, settings: &Settings) -> anyhow::Result<Source> {
        use crate::client::grpc::{GrpcOptions, TOKEN_ENV, load_token};
        if cli.demo {
            return Ok(Source::Demo);
        }
        if let Some(url) = &settings.server {
            let mut opts = GrpcOptions::new(url.clone());
            opts.token = load_token(
                settings.token_file.as_deref(),
                std::env::var(TOKEN_ENV).ok(),
            )?;
            opts.ca_pem = match &settings.ca_file {
                Some(p) => Some(std::fs::read(p).map_err(|e| {
                    anyhow::anyhow!("cannot read the CA file {}: {e}", p.display())
                })?),
                None => None,
            };
            opts.deadline = std::time::Duration::from_secs(cli.call_timeout);
            opts.read_only = settings.read_only;
            return Ok(Source::Remote(opts));
        }
        let loaded = crate::kubeconfig::read(settings.kubeconfig.as_deref())?;
        let context = loaded.context(settings.context.as_deref())?;
        Ok(Source::Kubeconfig { loaded, context })
    }
}

/// A server URL as the status bar shows it: without any `user:password@` part.
fn sanitize_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if path.is_empty() {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}/{path}")
    }
}

/// Who the kubeconfig's credentials are, for the status bar; unknown if Kubernetes does not say
/// within a few seconds (older clusters have no SelfSubjectReview).
async fn who_am_i(service: &crate::service::OperationService) -> Option<String> {
    let caller = crate::service::access::Caller::in_process();
    match tokio::time::timeout(std::time::Duration::from_secs(3), service.who_am_i(&caller)).await {
        Ok(Ok(user)) => Some(user),
        Ok(Err(e)) => {
            tracing::info!(error = %e, "could not learn who the kubeconfig's user is");
            None
        }
        Err(_) => None,
    }
}

/// Runs the dashboard until the user quits.
pub async fn run_dashboard(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    use crate::app::state::{Session, State};
    use crate::client::inprocess::InProcessClient;
    use crate::client::retry::Retrying;
    use crate::client::{Backend, OperationClient};
    use crate::runtime::{Clock, Runtime};
    use crate::service::OperationService;
    use crate::service::access::{Caller, KubeAccess};
    use std::io::IsTerminal as _;
    use std::sync::Arc;

    let file = match (&cli.config, crate::config::FileConfig::default_path()) {
        (Some(p), _) => crate::config::FileConfig::load(p, true)?,
        (None, Some(p)) => crate::config::FileConfig::load(&p, false)?,
        (None, None) => crate::config::FileConfig::default(),
    };
    let settings = Settings::resolve(
        &cli,
        &file,
        |k| std::env::var(k).ok(),
        std::io::stdout().is_terminal(),
    )?;
    let source = Source::choose(&cli, &settings)?;
    // Nothing below runs without a terminal: crossterm would panic reading keys from a
    // non-terminal, and raw mode means nothing there.
    if let Some(why) = crate::terminal::missing_terminal(
        std::io::stdin().is_terminal(),
        std::io::stdout().is_terminal(),
    ) {
        eprintln!("{why}");
        return Ok(std::process::ExitCode::from(2));
    }
    // Every backend retries transient faults and reports each attempt to the dashboard.
    let (retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut demo = None;
    let mut user = None;
    let (client, backend_label, namespace): (Arc<dyn OperationClient>, String, String) =
        match source {
            Source::Demo => {
                let d = ichor_demo::demo::DemoCluster::start(cli.demo_speed)?;
                let access = KubeAccess::new(
                    d.api
                        .client(ichor_demo::apiserver::auth::users::ADMIN_TOKEN),
                    "ichor-tui",
                );
                let service = OperationService::new(access);
                user = who_am_i(&service).await;
                let client = InProcessClient::new(
                    service,
                    Caller::in_process(),
                    Backend::Demo,
                    settings.read_only,
                );
                demo = Some(d);
                let ns = settings
                    .namespace
                    .clone()
                    .unwrap_or_else(|| ichor_demo::demo::NAMESPACE.to_string());
                (
                    Arc::new(Retrying::new(client, retry_tx)),
                    "demo".to_string(),
                    ns,
                )
            }
            Source::Remote(opts) => {
                let label = sanitize_url(&opts.url);
                let client = crate::client::grpc::GrpcClient::new(opts)?;
                let ns = settings
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".to_string());
                (Arc::new(Retrying::new(client, retry_tx)), label, ns)
            }
            Source::Kubeconfig { loaded, context } => {
                let (kc, ns) = loaded.client(&context).await?;
                let access = KubeAccess::new(kc, "ichor-tui");
                let backend = Backend::InProcess {
                    context: context.clone(),
                };
                let service = OperationService::new(access);
                user = who_am_i(&service).await;
                let client = InProcessClient::new(
                    service,
                    Caller::in_process(),
                    backend,
                    settings.read_only,
                )
                .kubeconfig_user(loaded.user_of(&context).unwrap_or_else(|| context.clone()));
                (
                    Arc::new(Retrying::new(client, retry_tx)),
                    format!("in-process ({context})"),
                    settings.namespace.clone().unwrap_or(ns),
                )
            }
        };
    let session = Session {
        backend: backend_label,
        namespace,
        all_namespaces: settings.all_namespaces,
        user: user.or_else(|| client.user()),
        read_only: settings.read_only,
    };
    let clock = Clock::new(jiff::Timestamp::now());
    let state = State::new(session, clock.now(), jiff::tz::TimeZone::system());
    let runtime = Runtime {
        state,
        client,
        texts: crate::i18n::Texts::new(settings.lang),
        theme: settings.theme,
        clock,
    };
    crate::terminal::install_panic_hook();
    let input = crate::terminal::input().context("reading terminal input")?;
    let mut tty = crate::terminal::enter().context("taking the terminal")?;
    let _guard = crate::terminal::Guard;
    let result = runtime
        .run(&mut tty, input, retry_rx, &mut crate::terminal::TtyHost)
        .await;
    crate::terminal::restore();
    drop(demo);
    result?;
    Ok(std::process::ExitCode::SUCCESS)
}

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
            crate::errors::one_line(&local_error)
        )
    })?;
    kube::Client::try_from(config).context("creating the in-cluster Kubernetes client")
}

/// `ichor-tui serve`: the server's Kubernetes client (the demo cluster's, or from the
/// kubeconfig), then the server.
pub async fn run_serve(cli: &Cli, args: &ServeArgs) -> anyhow::Result<()> {
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(crate::server::TlsPem::read(cert, key)?),
        (None, None) => None,
        _ => anyhow::bail!("--tls-cert and --tls-key go together"),
    };
    let addr: std::net::SocketAddr = args.listen.parse().with_context(|| {
        format!(
            "parsing --listen {} (e.g. 127.0.0.1:50051)",
            crate::errors::quoted(&args.listen)
        )
    })?;
    crate::server::check_transport(&addr, tls.is_some(), args.insecure_listen)?;
    let opts = crate::server::ListenOptions {
        addr,
        tls,
        insecure_listen: args.insecure_listen,
        allow_anonymous: args.allow_anonymous,
    };
    if cli.demo {
        let demo = ichor_demo::demo::DemoCluster::start(cli.demo_speed)?;
        let kube = demo
            .api
            .client(ichor_demo::apiserver::auth::users::SERVER_TOKEN);
        return crate::server::run(opts, kube).await;
    }
    let kube = serve_kube_client(cli.kubeconfig.as_ref(), cli.context.as_deref()).await?;
    crate::server::run(opts, kube).await
}

#[cfg(test)]
mod tests {
    use super::{Cli, Settings};
    use crate::config::FileConfig;
    use crate::i18n::Lang;
    use clap::Parser;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn flags_win_over_the_config_file_which_wins_over_defaults() {
        let file: FileConfig = toml::from_str(
            "namespace = \"from-file\"\nlang = \"ja\"\ncolor = \"never\"\nread-only = true\n",
        )
        .unwrap();
        let cli = Cli::parse_from(["ichor-tui", "-n", "from-flag", "--lang", "en"]);
        let s = Settings::resolve(&cli, &file, env(&[("LANG", "en_US.UTF-8")]), true).unwrap();
        assert_eq!(s.namespace.as_deref(), Some("from-flag"));
        assert_eq!(s.lang, Lang::En);
        assert!(
            !s.theme.color,
            "the file's colour setting applies when no flag is given"
        );
        assert!(s.read_only);
        let cli = Cli::parse_from(["ichor-tui", "--color", "always"]);
        let s = Settings::resolve(&cli, &file, env(&[("LANG", "en_US.UTF-8")]), false).unwrap();
        assert_eq!(s.namespace.as_deref(), Some("from-file"));
        assert_eq!(s.lang, Lang::Ja);
        assert!(s.theme.color);
        assert!(!s.theme.ascii);
        let none = Settings::resolve(
            &Cli::parse_from(["ichor-tui"]),
            &FileConfig::default(),
            env(&[("NO_COLOR", "1")]),
            true,
        )
        .unwrap();
        assert!(!none.theme.color, "NO_COLOR");
        assert!(none.theme.ascii, "no UTF-8 locale: ASCII");
        assert_eq!(none.lang, Lang::En);
        let bad = Settings::resolve(
            &Cli::parse_from(["ichor-tui", "--lang", "fr"]),
            &FileConfig::default(),
            env(&[]),
            true,
        );
        assert!(bad.is_err());
    }

    /// The first line clap prints for `args`.
    fn refusal(args: &[&str]) -> String {
        let e = Cli::try_parse_from(std::iter::once("ichor-tui").chain(args.iter().copied()))
            .unwrap_err();
        assert_eq!(e.exit_code(), 2, "{args:?}");
        e.to_string().lines().next().unwrap_or_default().to_string()
    }

    #[test]
    fn numeric_flags_out_of_range_are_refused_with_the_range() {
        assert_eq!(
            refusal(&["--demo-speed", "0"]),
            "error: invalid value '0' for '--demo-speed <FACTOR>': 0 is not in 0.1..=1000"
        );
        assert_eq!(
            refusal(&["--demo-speed", "NaN"]),
            "error: invalid value 'NaN' for '--demo-speed <FACTOR>': NaN is not in 0.1..=1000"
        );
        assert_eq!(
            refusal(&["--demo-speed", "fast"]),
            "error: invalid value 'fast' for '--demo-speed <FACTOR>': not a number (it must be in 0.1..=1000)"
        );
        assert_eq!(
            refusal(&["--call-timeout", "0"]),
            "error: invalid value '0' for '--call-timeout <SECONDS>': 0 is not in 1..=3600"
        );
        assert_eq!(
            refusal(&["serve", "--call-timeout", "86400"]),
            "error: invalid value '86400' for '--call-timeout <SECONDS>': 86400 is not in 1..=3600"
        );
        let ok = Cli::parse_from(["ichor-tui", "--demo-speed", "0.1", "--call-timeout", "3600"]);
        assert_eq!((ok.demo_speed, ok.call_timeout), (0.1, 3600));
        let default = Cli::parse_from(["ichor-tui"]);
        assert_eq!((default.demo_speed, default.call_timeout), (1.0, 15));
    }

    #[test]
    fn the_config_file_fills_what_the_flags_leave() {
        let file: FileConfig = toml::from_str("token-file = \"/t\"\nca-file = \"/ca\"\n").unwrap();
        let s = Settings::resolve(&Cli::parse_from(["ichor-tui"]), &file, env(&[]), true).unwrap();
        assert_eq!(
            (s.token_file.unwrap(), s.ca_file.unwrap()),
            ("/t".into(), "/ca".into())
        );
        let cli = Cli::parse_from(["ichor-tui", "--token-file", "/flag"]);
        let s = Settings::resolve(&cli, &file, env(&[]), true).unwrap();
        assert_eq!(s.token_file.unwrap(), std::path::PathBuf::from("/flag"));
        let e = Settings::resolve(
            &Cli::parse_from(["ichor-tui", "--lang", &"x".repeat(500)]),
            &file,
            env(&[]),
            true,
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.starts_with("--lang must be en or ja, not \"xxx"), "{e}");
        assert!(e.len() < 100, "the input is not echoed whole: {e}");
    }

    #[test]
    fn urls_lose_their_credentials() {
        assert_eq!(
            super::sanitize_url("https://u:p@ichor.example:443/x"),
            "https://ichor.example:443/x"
        );
        assert_eq!(
            super::sanitize_url("http://127.0.0.1:7443"),
            "http://127.0.0.1:7443"
        );
    }
}
