//! `ichor-tui` itself: the dashboard on the backend the settings choose, in the terminal.

use super::Cli;
use super::settings::{Settings, Source};
use anyhow::Context as _;

/// A server URL as the status bar shows it: without any `user:password@` part.
pub(super) fn sanitize_url(url: &str) -> String {
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

/// The client the dashboard reaches its service with, and how the status bar names it.
pub(super) struct Connected {
    pub(super) client: std::sync::Arc<dyn ichor_model::OperationClient>,
    pub(super) route: ichor_app::state::Route,
    /// The Kubernetes client the route was reached through (none for `--server`).
    pub(super) kube: Option<kube::Client>,
    pub(super) namespace: String,
    user: Option<String>,
    /// The embedded cluster and its ichor-ui, kept running while the dashboard runs.
    demo: Option<(ichor_demo::demo::DemoCluster, Option<super::demo::UiServer>)>,
    /// The kubeconfig and the context the service was reached through (`:ctx` switches).
    kubeconfig: Option<(crate::kubeconfig::LoadedKubeconfig, String)>,
}

/// The name the demo's context goes by (in the status bar, and in the config's `[[contexts]]`).
pub(super) const DEMO_CONTEXT: &str = "demo";

/// The service in this process over `kube`, for the dashboard.
/// The list's rows come from a watch of `scope` (`None`: every namespace) made with the same
/// credentials.
async fn in_process(
    kube: kube::Client,
    scope: Option<String>,
) -> (ichor_client::inprocess::InProcessClient, Option<String>) {
    use ichor_service::OperationService;
    use ichor_service::access::{Caller, KubeAccess};
    let (service, user) =
        OperationService::in_process(KubeAccess::new(kube.clone(), "ichor-tui")).await;
    let client = ichor_client::inprocess::InProcessClient::new(service, Caller::in_process())
        .with_watch(kube, scope);
    (client, user)
}

/// ichor-ui through a tunnel, or the service in-process, over `kube` (the kubeconfig's
/// credentials, whose token is forwarded to ichor-ui).
async fn reach(
    settings: &Settings,
    kube: kube::Client,
    token: Result<String, ichor_client::tunnel::Fallback>,
    context: &str,
    namespace: &str,
    kubeconfig_user: Option<String>,
    retry_tx: tokio::sync::mpsc::UnboundedSender<ichor_model::RetryEvent>,
) -> anyhow::Result<Connected> {
    use ichor_client::retry::Retrying;
    use std::sync::Arc;
    let options = super::reach::ReachOptions::of(settings);
    let reached = super::reach::choose(&kube, token, &options, namespace, context).await?;
    Ok(match reached {
        super::reach::Reached::Tunnel(client, route) => Connected {
            client: Arc::new(
                Retrying::with_policy(*client, retry_tx, settings.retry.clone())
                    .read_only(settings.read_only),
            ),
            route,
            kube: Some(kube),
            namespace: namespace.to_string(),
            user: None,
            demo: None,
            kubeconfig: None,
        },
        super::reach::Reached::InProcess(route) => {
            let scope = (!settings.all_namespaces).then(|| namespace.to_string());
            let (mut client, user) = in_process(kube.clone(), scope).await;
            if let Some(u) = kubeconfig_user {
                // Whose credentials a refusal concerns.
                client = client.kubeconfig_user(u);
            }
            Connected {
                client: Arc::new(
                    Retrying::with_policy(client, retry_tx, settings.retry.clone())
                        .read_only(settings.read_only),
                ),
                route,
                kube: Some(kube),
                namespace: namespace.to_string(),
                user,
                demo: None,
                kubeconfig: None,
            }
        }
    })
}

/// Reaches the service through kubeconfig `context`, as at start: the namespace the settings
/// name, else the context's.
async fn through_context(
    settings: &Settings,
    loaded: crate::kubeconfig::LoadedKubeconfig,
    context: String,
    retry_tx: tokio::sync::mpsc::UnboundedSender<ichor_model::RetryEvent>,
) -> anyhow::Result<Connected> {
    let config = loaded.client_config(&context).await?;
    let token = ichor_client::tunnel::bearer_token(&config);
    let (kube, ns) = loaded.client(&context).await?;
    let namespace = settings.namespace.clone().unwrap_or(ns);
    let user = loaded.user_of(&context).unwrap_or_else(|| context.clone());
    let mut connected = reach(
        settings,
        kube,
        token,
        &context,
        &namespace,
        Some(user),
        retry_tx,
    )
    .await?;
    connected.kubeconfig = Some((loaded, context));
    Ok(connected)
}

/// How long `:ctx` waits for a context to be reached.
const REACH_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// `:ctx NAME`: reaches the service through another context of `loaded`, with the same
/// settings and the same retry reports.
fn context_reacher(
    settings: std::sync::Arc<Settings>,
    loaded: crate::kubeconfig::LoadedKubeconfig,
    retry_tx: tokio::sync::mpsc::UnboundedSender<ichor_model::RetryEvent>,
) -> ichor_runtime::ContextReacher {
    Box::new(move |context: &str| {
        let (settings, loaded, retry_tx) = (settings.clone(), loaded.clone(), retry_tx.clone());
        let context = context.to_string();
        Box::pin(async move {
            let reached = tokio::time::timeout(
                REACH_LIMIT,
                through_context(&settings, loaded.clone(), context.clone(), retry_tx),
            )
            .await;
            let c = match reached {
                Ok(Ok(c)) => c,
                Ok(Err(e)) => {
                    let line = ichor_model::error_text::one_line(&e);
                    return Err(ichor_model::inert::truncate(&line, 300));
                }
                Err(_) => {
                    return Err(format!("not reached within {} s", REACH_LIMIT.as_secs()));
                }
            };
            // The rules' marks on the context and on every other that reaches its API server.
            let in_force = settings.in_force(&loaded, &context);
            Ok(ichor_runtime::Reached {
                user: c.user.or_else(|| c.client.user()),
                client: c.client,
                route: c.route,
                namespace: c.namespace,
                all_namespaces: settings.all_namespaces,
                production: in_force.marks.production,
                read_only: settings.read_only_in(&in_force),
                api_server: in_force.api_server,
            })
        })
    })
}

/// Reaches the service the settings chose. Every backend retries transient faults of reads and
/// reports each wait on `retry_tx`.
pub(super) async fn connect(
    cli: &Cli,
    settings: &Settings,
    source: Source,
    retry_tx: tokio::sync::mpsc::UnboundedSender<ichor_model::RetryEvent>,
) -> anyhow::Result<Connected> {
    use ichor_app::state::Route;
    use ichor_client::retry::Retrying;
    use std::sync::Arc;
    match source {
        Source::Demo => {
            let d = super::demo::start(cli).await?;
            let namespace = settings
                .namespace
                .clone()
                .unwrap_or_else(|| ichor_demo::demo::NAMESPACE.to_string());
            let token = Ok(d.token().to_string());
            let mut connected = reach(
                settings,
                d.kube(),
                token,
                DEMO_CONTEXT,
                &namespace,
                None,
                retry_tx,
            )
            .await?;
            connected.demo = Some(d.into_parts());
            Ok(connected)
        }
        Source::Remote { options: opts, .. } => {
            let url = sanitize_url(&opts.url);
            let client = ichor_client::remote::RemoteClient::new(opts)?;
            let namespace = settings
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_string());
            Ok(Connected {
                client: Arc::new(
                    Retrying::with_policy(client, retry_tx, settings.retry.clone())
                        .read_only(settings.read_only),
                ),
                route: Route::Server { url },
                kube: None,
                namespace,
                user: None,
                demo: None,
                kubeconfig: None,
            })
        }
        Source::Kubeconfig { loaded, context } => {
            through_context(settings, *loaded, context, retry_tx).await
        }
    }
}

/// The settings `cli` gives over the config file (`--config`, else the default one if it exists)
/// and the environment.
pub(super) fn settings_of(cli: &Cli, is_tty: bool) -> anyhow::Result<Settings> {
    let file = match (&cli.reach.config, crate::config::FileConfig::default_path()) {
        (Some(p), _) => crate::config::FileConfig::load(p, true)?,
        (None, Some(p)) => crate::config::FileConfig::load(&p, false)?,
        (None, None) => crate::config::FileConfig::default(),
    };
    Settings::resolve(cli, &file, |k| std::env::var(k).ok(), is_tty)
}

/// Runs the dashboard until the user quits.
pub async fn run_dashboard(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    use ichor_app::state::{Session, State};
    use ichor_runtime::{Clock, Runtime};
    use std::io::IsTerminal as _;

    let settings = settings_of(&cli, std::io::stdout().is_terminal())?;
    let source = Source::choose(&cli, &settings)?;
    let in_force = source.in_force(&settings);
    // Nothing below runs without a terminal: crossterm would panic reading keys from a
    // non-terminal, and raw mode means nothing there.
    if let Some(why) = ichor_runtime::terminal::missing_terminal(
        std::io::stdin().is_terminal(),
        std::io::stdout().is_terminal(),
    ) {
        eprintln!("{why}");
        return Ok(std::process::ExitCode::from(2));
    }
    let (retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    let connected = connect(&cli, &settings, source, retry_tx.clone()).await?;
    let settings = std::sync::Arc::new(settings);
    let mut host = ichor_runtime::terminal::TtyHost::new();
    let contexts = match &connected.kubeconfig {
        Some((loaded, _)) => {
            let reacher = context_reacher(settings.clone(), loaded.clone(), retry_tx);
            host = host.reaching_contexts(reacher);
            loaded.context_names()
        }
        None => Vec::new(),
    };
    // The config's rules for the context in force (the demo's is `demo`; with `--server`, the
    // kubeconfig's, which the status bar then names with its API server).
    let session = Session {
        route: connected.route,
        demo: cli.reach.demo,
        namespace: connected.namespace,
        all_namespaces: settings.all_namespaces,
        user: connected.user.or_else(|| connected.client.user()),
        read_only: settings.read_only_in(&in_force),
        server_version: Default::default(),
        context: in_force.context.filter(|_| !cli.reach.demo),
        contexts,
        production: in_force.marks.production,
        api_server: in_force.api_server,
    };
    let clock = Clock::new(jiff::Timestamp::now());
    let mut state = State::new(session, clock.now(), jiff::tz::TimeZone::system());
    state.notifications.on = settings.notify;
    state.pace.rule = settings.slow;
    state.keys = settings.keys.clone();
    let mut runtime = Runtime {
        state,
        client: connected.client,
        texts: ichor_views::i18n::Texts::new(settings.lang),
        theme: settings.theme,
        clock,
    };
    ichor_runtime::terminal::colour(settings.theme.color);
    ichor_runtime::terminal::install_panic_hook();
    let input = ichor_runtime::terminal::input().context("reading terminal input")?;
    let (mut tty, wide) = ichor_runtime::terminal::enter(settings.ambiguous_width.known())
        .context("taking the terminal")?;
    let _guard = ichor_runtime::terminal::Guard;
    tracing::info!(setting = ?settings.ambiguous_width, wide, "East Asian ambiguous width");
    runtime.theme.wide_ambiguous = wide;
    let result = runtime.run(&mut tty, input, retry_rx, &mut host).await;
    ichor_runtime::terminal::restore();
    drop(connected.demo);
    result?;
    Ok(std::process::ExitCode::SUCCESS)
}
