//! Command-line arguments and logging set-up.

pub mod complete;
mod dashboard;
mod demo;
pub mod flags;
pub mod leading;
pub mod logging;
pub mod man;
pub mod reach;
mod serve;
mod settings;
pub mod verbs;
pub mod version;

pub use dashboard::run_dashboard;
pub use leading::{command, parse, try_parse_from};
pub use logging::{LogFormat, LogSetup};
pub use serve::run_serve;
pub use verbs::run_verb;

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// A terminal dashboard for TalosOperations: rolling Talos, Kubernetes and ichor upgrades,
/// kube-proxy switches, shutdowns and CA rotations, followed machine by machine.
///
/// Settings come from these flags, then from ~/.config/ichor-tui/config.toml or the --config
/// file (keys as the long flags: namespace, context, lang, color, read-only, …), then the
/// defaults.
#[derive(Debug, Parser)]
#[command(
    name = "ichor-tui",
    version = version::VERSION,
    about,
    long_about,
    after_help = "The connection flags (--kubeconfig, --context, -n, -A, --server, --protocol, --backend, --token-file, --as, --as-group, …) may come before a command or after it, as kubectl takes them.",
    // The connection flags are global within a command; before it they are the dashboard's own,
    // handed to the command by `leading` (a command that does not act on one refuses it).
    mut_args = |a: clap::Arg| a.global(false)
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The connection flags; before a command, those it acts on are handed to it
    /// (`leading`).
    #[command(flatten)]
    pub reach: flags::Reach,

    /// List operations in every namespace (adds the namespace column).
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,

    /// With --demo: no ichor-ui in the demo cluster, to see the in-process fallback.
    #[arg(long)]
    pub demo_without_ichor_ui: bool,

    /// Colour: auto (a terminal, unless NO_COLOR is set), always or never.
    #[arg(long, value_enum, value_name = "WHEN")]
    pub color: Option<crate::config::ColorMode>,

    /// Draw borders and bars with ASCII only (automatic when the locale is not UTF-8).
    #[arg(long)]
    pub ascii: bool,

    /// How wide the terminal draws East Asian "ambiguous" characters (box drawing, ·, …, ▶):
    /// auto (asked of the terminal at start), narrow, or wide (Tera Term or PuTTY set to
    /// Japanese, mintty under a ja locale, xterm -cjk_width: then none is drawn).
    #[arg(long, value_enum, value_name = "WIDTH")]
    pub ambiguous_width: Option<crate::config::AmbiguousWidth>,

    /// No bell and no desktop notification when an operation shown completes, fails or awaits
    /// credentials (`notify = false` in the config file).
    #[arg(long)]
    pub no_notify: bool,

    /// How fast the demo controller works, from 0.1 to 1000 (1: a machine step takes 4 s).
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR", value_parser = demo_speed)]
    pub demo_speed: f64,
}

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
    /// Serve OperationService and ClusterService over the Connect protocol, gRPC and gRPC-Web on
    /// one port (with health and reflection), acting as each caller whose bearer token
    /// Kubernetes accepts (TokenReview, then impersonation; or, with --auth passthrough, the
    /// caller's own token).
    Serve(ServeArgs),
    /// Start a rolling upgrade: `upgrade talos|kubernetes|ichor VERSION` (the plan, then y/N).
    Upgrade(verbs::args::UpgradeArgs),
    /// Switch kube-proxy: `cni kube-proxy replaced|enabled` (the plan, then y/N).
    Cni(verbs::args::CniArgs),
    /// `cluster shutdown NAME` and `cluster rotate-ca NAME` (the plan, the name typed, y/N).
    Cluster(verbs::args::ClusterArgs),
    /// `operation list|get|pause|resume|delete|report` (alias op).
    #[command(visible_alias = "op")]
    Operation(verbs::args::OperationArgs),
    /// This binary's version, commit and build date, and the server's version and route.
    Version(version::VersionArgs),
    /// Print the shell script that completes commands, flags and names: `source <(ichor-tui
    /// completion bash)`.
    Completion(complete::CompletionArgs),
    /// Print the manual page (roff): `ichor-tui man | man -l -`.
    Man(man::ManArgs),
}

/// `ichor-tui serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on: localhost:PORT (127.0.0.1 and ::1), an address such as
    /// 127.0.0.1:50051, or [::]:PORT (every address, IPv6 and IPv4; 0.0.0.0 without IPv6).
    /// Port 0 picks a free port; each address is printed as "serving on ADDR".
    #[arg(long, default_value = "localhost:50051", value_name = "ADDR")]
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
    /// How serve acts as each caller: impersonate (a TokenReview says who the token is, then
    /// every request impersonates them with serve's own credentials) or passthrough (the
    /// caller's token goes to the Kubernetes API as their own credentials: for API servers that
    /// accept the same tokens, such as OIDC; no review, no impersonation).
    #[arg(long, value_enum, default_value_t = ServeAuth::Impersonate, value_name = "MODE")]
    pub auth: ServeAuth,
    /// A read-only server: every start, pause, resume and delete is refused PERMISSION_DENIED
    /// (reason READ_ONLY); reads are served as usual.
    #[arg(long, visible_alias = "readonly")]
    pub read_only: bool,
    /// Serve the embedded demo cluster (an in-memory Kubernetes API and a simulated
    /// controller) instead of reaching a real one.
    #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
    pub demo: bool,
    /// How fast the demo controller works, from 0.1 to 1000 (1: a machine step takes 4 s).
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR", value_parser = demo_speed)]
    pub demo_speed: f64,
    /// The server's own kubeconfig and context.
    #[command(flatten)]
    pub kube: flags::Kube,
    /// Write the log to this file instead of stderr (when it cannot be written, serve says so
    /// and logs to stderr).
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// How log lines are written: text, or json (one JSON object a line, for a log collector).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, value_name = "FORMAT")]
    pub log_format: LogFormat,
    /// Serve Prometheus metrics (GET /metrics, plain HTTP) on this address of its own, e.g.
    /// [::]:9090 (every address, IPv6 and IPv4): calls by service, method, protocol and code,
    /// latency, calls in flight, open connections, what a limit refused; and /livez, /readyz
    /// and /healthz for probes.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<ichor_server::ListenAddr>,
    /// At most this many streams of live updates at once, everyone's together; past it a
    /// subscription is refused (RESOURCE_EXHAUSTED) and its dashboard polls. What a dashboard's
    /// stream and connection cost serve: docs/performance.md.
    #[arg(long, value_name = "N", default_value_t = ichor_server::MAX_STREAMS, value_parser = bound)]
    pub max_streams: usize,
    /// At most this many connections open at once (each dashboard holds one); the next waits
    /// until one closes. serve raises its open-files limit (ulimit -n) to fit them, within the
    /// hard limit.
    #[arg(long, value_name = "N", default_value_t = ichor_server::MAX_CONNECTIONS, value_parser = bound)]
    pub max_connections: usize,
    /// A page of this origin (SCHEME://HOST[:PORT]) may call serve from a browser (CORS:
    /// preflights answered, the Connect and gRPC-Web headers allowed and exposed). Repeat it
    /// for each origin; none by default.
    #[arg(long, value_name = "ORIGIN", value_parser = cors_origin)]
    pub cors_origin: Vec<String>,
    #[command(flatten)]
    pub shares: serve::ShareArgs,
}

/// An origin of `serve --cors-origin`, as [`ichor_server::cors::parse_origin`] takes it.
fn cors_origin(s: &str) -> Result<String, String> {
    ichor_server::cors::parse_origin(s).map(|_| s.to_string())
}

/// `serve --auth`: how serve acts as its callers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ServeAuth {
    /// A TokenReview, then impersonation (ADR 0058).
    #[default]
    Impersonate,
    /// The caller's own token, sent as their credentials.
    Passthrough,
}

/// A bound of `serve`: from 1 to 1,000,000.
pub(crate) fn bound(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n @ 1..=1_000_000) => Ok(n),
        _ => Err("a number from 1 to 1000000".to_string()),
    }
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
    /// Port-forwards to ichor-ui's pod (Service ichor-ui in ichor-system, port api) reach
    /// this TCP address, e.g. an `ichor-tui serve` (without it they are refused, as by a pod
    /// whose port nothing listens on).
    #[arg(long, value_name = "ADDR")]
    pub ichor_ui_forward: Option<SocketAddr>,
    /// How fast the demo controller works, from 0.1 to 1000 (1: a machine step takes 4 s).
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR", value_parser = demo_speed)]
    pub demo_speed: f64,
    /// Write the log to this file instead of stderr (when it cannot be written, the demo
    /// cluster says so and logs to stderr).
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// How log lines are written: text, or json (one JSON object a line).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, value_name = "FORMAT")]
    pub log_format: LogFormat,
}

impl Cli {
    /// Where the log goes: the flag of the command that runs.
    pub fn log_file(&self) -> Option<&Path> {
        match &self.command {
            Some(Command::Serve(a)) => a.log_file.as_deref(),
            Some(Command::DemoCluster(a)) => a.log_file.as_deref(),
            Some(Command::Version(a)) => a.reach.log_file.as_deref(),
            Some(Command::Completion(_) | Command::Man(_)) => None,
            Some(_) => verbs::entry_log_file(self),
            None => self.reach.log_file.as_deref(),
        }
    }

    /// Where the log goes and how it is written: a server's to stderr unless `--log-file`.
    pub fn log_setup(&self) -> LogSetup<'_> {
        let (server, format) = match &self.command {
            Some(Command::Serve(a)) => (true, a.log_format),
            Some(Command::DemoCluster(a)) => (true, a.log_format),
            _ => (false, LogFormat::Text),
        };
        let only_if_named = matches!(
            &self.command,
            Some(Command::Version(_) | Command::Completion(_) | Command::Man(_))
        );
        LogSetup {
            file: self.log_file(),
            server,
            format,
            only_if_named,
        }
    }

    /// Whether this run serves (a subcommand, or the dashboard with its embedded demo cluster),
    /// rather than being the dashboard alone.
    pub fn serves(&self) -> bool {
        match (verbs::verb_of(self), &self.command) {
            (Some((_, reach)), _) => reach.demo,
            (None, Some(Command::Version(a))) => a.reach.demo,
            (None, Some(Command::Completion(_) | Command::Man(_))) => false,
            (None, command) => command.is_some() || self.reach.demo,
        }
    }
}

/// How many log lines wait for the writer thread before more are dropped. tracing-appender's
/// default of 128,000 is a channel allocated whole at the start, megabytes resident in every
/// process (heaptrack shows it on the dashboard), for a log that writes a few lines a minute.
const LOG_LINES_BUFFERED: usize = 4096;

/// The log, once set up: the guard that flushes it, and whether it goes to stderr.
pub struct Logging {
    pub guard: tracing_appender::non_blocking::WorkerGuard,
    /// The log is on stderr: an error said in it is said to whoever reads stderr.
    pub on_stderr: bool,
}

/// Sends tracing where `setup` says ([`logging`]): a file for the dashboard (never the
/// terminal it draws on), stderr for a server unless it names a file.
pub fn init_logging(setup: LogSetup<'_>) -> anyhow::Result<Logging> {
    let sink = logging::sink(&setup)?;
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_LINES_BUFFERED)
        .lossy(true)
        .finish(sink.writer);
    let filter = tracing_subscriber::EnvFilter::try_from_env("ICHOR_TUI_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    logging::install(writer, filter, setup.format, sink.ansi)?;
    Ok(Logging {
        guard,
        on_stderr: sink.stderr,
    })
}

/// The log filter unless `ICHOR_TUI_LOG` (else `RUST_LOG`) gives one. kube's client logs a whole response body
/// (a list can be hundreds of KB, on one line) at `warn` when it cannot decode it; the service
/// never decodes through that path for lists and gets (see `service::tolerant`) and says what
/// it could not read itself, in a bounded line, so kube's own line is left out. And kube's
/// client says every request that failed (no answer, or a 5xx) at ERROR
/// (`kube_client::client::builder`), the same error its caller gets and says in its own line:
/// during an API outage that was an ERROR at every readiness check, where serve logs the
/// outage once, with kube's error in it (a health check fails … reason). So those are off.
pub const DEFAULT_LOG_FILTER: &str =
    "info,kube_client::client=error,kube_client::client::builder=off";

#[cfg(test)]
mod tests {
    use super::Cli;
    use super::settings::Settings;
    use crate::config::FileConfig;
    use clap::Parser;
    use ichor_views::i18n::Lang;

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

    #[test]
    fn the_demo_does_not_take_the_config_files_namespace() {
        // The README's sample config sets a namespace the demo cluster does not have.
        let file: FileConfig = toml::from_str("namespace = \"platform\"\n").unwrap();
        let demo = Cli::parse_from(["ichor-tui", "--demo"]);
        let s = Settings::resolve(&demo, &file, env(&[]), true).unwrap();
        assert_eq!(s.namespace, None, "the demo's own namespace applies");
        let flagged = Cli::parse_from(["ichor-tui", "--demo", "-n", "other"]);
        let s = Settings::resolve(&flagged, &file, env(&[]), true).unwrap();
        assert_eq!(s.namespace.as_deref(), Some("other"), "a flag still wins");
        let cluster = Cli::parse_from(["ichor-tui"]);
        let s = Settings::resolve(&cluster, &file, env(&[]), true).unwrap();
        assert_eq!(s.namespace.as_deref(), Some("platform"));
    }

    #[test]
    fn an_explicit_colour_flag_wins_over_no_color() {
        let no_color = env(&[("NO_COLOR", "1")]);
        let always = Cli::parse_from(["ichor-tui", "--color", "always"]);
        let s = Settings::resolve(&always, &FileConfig::default(), &no_color, false).unwrap();
        assert!(s.theme.color);
        let auto = Cli::parse_from(["ichor-tui"]);
        let s = Settings::resolve(&auto, &FileConfig::default(), &no_color, true).unwrap();
        assert!(!s.theme.color);
    }

    #[test]
    fn readonly_is_the_read_only_flag() {
        for flag in ["--read-only", "--readonly"] {
            let cli = Cli::parse_from(["ichor-tui", flag]);
            assert!(cli.reach.read_only, "{flag}");
            let s = Settings::resolve(&cli, &FileConfig::default(), env(&[]), true).unwrap();
            assert!(s.read_only, "{flag}");
        }
        assert!(!Cli::parse_from(["ichor-tui"]).reach.read_only);
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
            refusal(&["serve", "--demo-speed", "0"]),
            "error: invalid value '0' for '--demo-speed <FACTOR>': 0 is not in 0.1..=1000"
        );
        let ok = Cli::parse_from(["ichor-tui", "--demo-speed", "0.1", "--call-timeout", "3600"]);
        assert_eq!((ok.demo_speed, ok.reach.call_timeout), (0.1, Some(3600)));
        let default = Cli::parse_from(["ichor-tui"]);
        assert_eq!(
            (default.demo_speed, default.reach.call_deadline().as_secs()),
            (1.0, 15)
        );
    }

    #[test]
    fn ambiguous_width_comes_from_the_flag_then_the_file_then_auto() {
        use crate::config::AmbiguousWidth;
        let file: FileConfig = toml::from_str("ambiguous-width = \"wide\"\n").unwrap();
        let resolve = |args: &[&str], file: &FileConfig| {
            let cli = Cli::parse_from(std::iter::once("ichor-tui").chain(args.iter().copied()));
            Settings::resolve(&cli, file, env(&[]), true)
                .unwrap()
                .ambiguous_width
        };
        assert_eq!(resolve(&[], &file), AmbiguousWidth::Wide);
        assert_eq!(
            resolve(&["--ambiguous-width", "narrow"], &file),
            AmbiguousWidth::Narrow
        );
        assert_eq!(resolve(&[], &FileConfig::default()), AmbiguousWidth::Auto);
        assert!(toml::from_str::<FileConfig>("ambiguous-width = \"double\"").is_err());
        assert_eq!(
            refusal(&["--ambiguous-width", "double"]),
            "error: invalid value 'double' for '--ambiguous-width <WIDTH>'"
        );
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
            super::dashboard::sanitize_url("https://u:p@ichor.example:443/x"),
            "https://ichor.example:443/x"
        );
        assert_eq!(
            super::dashboard::sanitize_url("http://127.0.0.1:7443"),
            "http://127.0.0.1:7443"
        );
    }
}
