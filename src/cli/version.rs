//! `ichor-tui version` (and `--version`): this binary's version, commit and build date (build.rs:
//! "unknown" outside a git checkout; the date from `SOURCE_DATE_EPOCH` when set), and, unless
//! `--client`, the route the connection flags reach, the server's version there and the
//! Kubernetes API's. A remote server (`--server`, or ichor-ui through the tunnel) names its
//! version in the `ichor-version` header of every answer (the dashboard shows the same), so one
//! read of its permissions learns it; in-process the service is this binary. The Kubernetes
//! version is the API's `/version`. `-o json|yaml` in a shape of its own, like kubectl's.

use super::Cli;
use super::verbs::args::Reach;
use clap::{Args, ValueEnum};
use ichor_app::state::Route;
use serde_json::{Value, json};

/// This build's commit (12 hex digits), or "unknown".
pub const COMMIT: &str = env!("ICHOR_COMMIT");
/// When this build was made (RFC 3339, UTC), or "unknown".
pub const BUILD_DATE: &str = env!("ICHOR_BUILD_DATE");
/// What `--version` says after the name.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ICHOR_COMMIT"),
    ", built ",
    env!("ICHOR_BUILD_DATE"),
    ")"
);

/// `ichor-tui version`.
#[derive(Debug, Args)]
pub struct VersionArgs {
    /// This binary's version alone: nothing is contacted.
    #[arg(long)]
    pub client: bool,
    /// text (default), json or yaml.
    #[arg(short = 'o', long, value_enum, default_value_t)]
    pub output: VersionOutput,
    #[command(flatten)]
    pub reach: Reach,
}

/// How `version` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum VersionOutput {
    #[default]
    Text,
    Json,
    Yaml,
}

/// What the route said of itself.
struct Server {
    route: Route,
    /// The service's version: this binary's in-process; `None` when a server named none.
    version: Option<String>,
    kubernetes: Option<String>,
}

/// The route the flags reach, and the versions there, within the call deadline
/// (`--call-timeout`): the reads are retried while they fail, and the last failure is what is
/// said when the deadline passes.
async fn ask_server(cli: &Cli, reach: &Reach) -> anyhow::Result<Server> {
    let dash = super::verbs::as_dashboard(cli, reach, false)?;
    let settings = super::dashboard::settings_of(&dash, false)?;
    let source = super::settings::Source::choose(&dash, &settings)?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let deadline = dash.reach.call_deadline();
    match tokio::time::timeout(deadline, versions(&dash, &settings, source, tx)).await {
        Ok(reached) => reached,
        Err(_) => {
            let mut last = None;
            while let Ok(event) = rx.try_recv() {
                if let ichor_model::RetryEvent::Retrying { error, .. } = event {
                    last = Some(error.message);
                }
            }
            Err(match last {
                Some(why) => anyhow::anyhow!("{why}"),
                None => anyhow::anyhow!("no answer within {} s", deadline.as_secs()),
            })
        }
    }
}

/// Reaches the route and asks for the versions there.
async fn versions(
    dash: &Cli,
    settings: &super::settings::Settings,
    source: super::settings::Source,
    tx: tokio::sync::mpsc::UnboundedSender<ichor_model::RetryEvent>,
) -> anyhow::Result<Server> {
    let connected = super::dashboard::connect(dash, settings, source, tx).await?;
    let version = match &connected.route {
        Route::InProcess { .. } => Some(env!("CARGO_PKG_VERSION").to_string()),
        Route::Server { .. } | Route::Tunnel { .. } => {
            connected
                .client
                .permissions(&connected.namespace)
                .await
                .map_err(|e| anyhow::anyhow!("{}", e.message))?;
            match connected.client.server_version() {
                ichor_model::ServerVersion::Known(v) => Some(v),
                _ => None,
            }
        }
    };
    let kubernetes = match &connected.kube {
        Some(kube) => Some(kube.apiserver_version().await?.git_version),
        None => None,
    };
    let route = connected.route.clone();
    drop(connected);
    Ok(Server {
        route,
        version,
        kubernetes: kubernetes
            .map(|v| ichor_model::inert::truncate(&ichor_model::inert::sanitize(&v), 64)),
    })
}

/// The route in the JSON shape.
fn route_json(route: &Route) -> Value {
    match route {
        Route::Server { url } => json!({"kind": "server", "url": url}),
        Route::Tunnel { service } => json!({"kind": "tunnel", "service": service}),
        Route::InProcess { context, .. } => json!({"kind": "in-process", "context": context}),
    }
}

/// The route in words.
fn route_words(t: &ichor_views::i18n::Texts, route: &Route) -> String {
    match route {
        Route::Server { url } => t.tr("version-route-server", &[("url", url)]),
        Route::Tunnel { service } => t.tr("version-route-tunnel", &[("service", service)]),
        Route::InProcess { context, .. } => {
            t.tr("version-route-in-process", &[("context", context)])
        }
    }
}

/// The client's part.
fn client_json() -> Value {
    json!({"version": env!("CARGO_PKG_VERSION"), "commit": COMMIT, "buildDate": BUILD_DATE})
}

fn server_json(s: &Server) -> Value {
    json!({"version": s.version, "route": route_json(&s.route), "kubernetesVersion": s.kubernetes})
}

/// The text lines.
fn text(t: &ichor_views::i18n::Texts, server: Option<&Server>) -> Vec<String> {
    let mut lines = vec![
        t.tr("version-client", &[("version", env!("CARGO_PKG_VERSION"))]),
        t.tr("version-commit", &[("commit", COMMIT)]),
        t.tr("version-built", &[("date", BUILD_DATE)]),
    ];
    if let Some(s) = server {
        lines.push(t.tr("version-route", &[("route", &route_words(t, &s.route))]));
        lines.push(match (&s.version, &s.route) {
            (Some(v), Route::InProcess { .. }) => {
                t.tr("version-server-in-process", &[("version", v)])
            }
            (Some(v), _) => t.tr("version-server", &[("version", v)]),
            (None, _) => t.t("version-server-unnamed"),
        });
        if let Some(k) = &s.kubernetes {
            lines.push(t.tr("version-kubernetes", &[("version", k)]));
        }
    }
    lines
}

/// Runs `ichor-tui version`.
pub async fn run(cli: &Cli) -> anyhow::Result<std::process::ExitCode> {
    let Some(super::Command::Version(args)) = &cli.command else {
        anyhow::bail!("not `version`");
    };
    let dash = super::verbs::as_dashboard(cli, &args.reach, false)?;
    let settings = super::dashboard::settings_of(&dash, false)?;
    let texts = ichor_views::i18n::Texts::new(settings.lang);
    let server = match args.client {
        true => None,
        false => Some(ask_server(cli, &args.reach).await),
    };
    let reached = server.as_ref().and_then(|s| s.as_ref().ok());
    let out = match args.output {
        VersionOutput::Text => text(&texts, reached).join("\n"),
        shape => {
            let mut v = json!({"clientVersion": client_json()});
            if let (Some(s), Value::Object(m)) = (reached, &mut v) {
                m.insert("serverVersion".into(), server_json(s));
            }
            match shape {
                VersionOutput::Yaml => serde_saphyr::to_string(&v)?.trim_end().to_string(),
                _ => serde_json::to_string_pretty(&v)?,
            }
        }
    };
    println!("{out}");
    match server {
        // Said after what is known, as kubectl does: the client's part is still printed.
        Some(Err(e)) => Err(e.context(texts.t("version-server-unreached"))),
        _ => Ok(std::process::ExitCode::SUCCESS),
    }
}
