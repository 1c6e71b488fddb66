//! The settings in force (flags over the config file over the defaults) and where the
//! dashboard's service is.

use super::Cli;
use std::path::PathBuf;

/// The settings in force: flags over the config file over the defaults.
pub(crate) struct Settings {
    pub lang: ichor_views::i18n::Lang,
    pub(crate) theme: ichor_views::widgets::Theme,
    /// How wide ambiguous characters are, or `auto`: measured once the terminal is taken.
    pub(crate) ambiguous_width: crate::config::AmbiguousWidth,
    pub(crate) read_only: bool,
    /// Say an operation's outcome with the bell and a desktop notification.
    pub(crate) notify: bool,
    pub(crate) namespace: Option<String>,
    pub(crate) all_namespaces: bool,
    pub(crate) context: Option<String>,
    pub(crate) kubeconfig: Option<PathBuf>,
    pub(crate) server: Option<String>,
    pub protocol: ichor_client::remote::Protocol,
    pub(crate) backend: crate::config::RouteChoice,
    /// Where ichor-ui runs.
    pub ichor_ui: ichor_client::tunnel::IchorUi,
    /// It was named (a flag or the config file), not the default looked for.
    pub(crate) ichor_ui_asked: bool,
    pub(crate) token_file: Option<PathBuf>,
    pub(crate) ca_file: Option<PathBuf>,
    /// `--as` and `--as-group`.
    pub(crate) impersonate: Option<crate::kubeconfig::Impersonate>,
    /// When a running machine is slow (`[timing]`).
    pub(crate) slow: ichor_model::SlowRule,
    /// The contexts marked production or read only (`[[contexts]]`).
    pub(crate) contexts: crate::config::contexts::ContextRules,
    /// The keys rebound (`[keys]`).
    pub(crate) keys: ichor_app::rebind::KeyOverrides,
    /// How the client retries a read that met a transient fault (the commands that watch
    /// retry at their poll's pace).
    pub(crate) retry: ichor_client::retry::RetryPolicy,
}

/// The kubeconfig context whose `[[contexts]]` rules hold, the API server it reaches, and what
/// the rules make of it (its own marks and those of its server's other contexts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct InForce {
    /// The context (`demo` for the demo); `None`: no kubeconfig (`--server` without one).
    pub(crate) context: Option<String>,
    /// The API server the context reaches (`None`: the demo's embedded one, or not a URL).
    pub(crate) api_server: Option<ichor_model::ApiServer>,
    pub(crate) marks: crate::config::contexts::Marks,
}

impl Settings {
    /// The rules' marks on `context` of `loaded`, with every context of it that reaches the
    /// same API server.
    pub(crate) fn in_force(
        &self,
        loaded: &crate::kubeconfig::LoadedKubeconfig,
        context: &str,
    ) -> InForce {
        let all = loaded.api_servers();
        let api_server = all
            .iter()
            .find(|(n, _)| n == context)
            .and_then(|(_, s)| s.clone());
        let marks = self.contexts.marks(
            context,
            api_server.as_ref(),
            all.iter().map(|(n, s)| (n.as_str(), s.as_ref())),
        );
        InForce {
            context: Some(context.to_string()),
            api_server,
            marks,
        }
    }

    /// The demo's context, `demo`: marked by its name only (its API server is embedded, with
    /// no URL a rule could name).
    pub(crate) fn demo_in_force(&self) -> InForce {
        let context = super::dashboard::DEMO_CONTEXT;
        InForce {
            context: Some(context.to_string()),
            api_server: None,
            marks: self.contexts.marks(context, None, []),
        }
    }

    /// Whether writes are off: `--read-only`, or the rules mark the context in force read only.
    pub(crate) fn read_only_in(&self, in_force: &InForce) -> bool {
        self.read_only || in_force.marks.read_only
    }
}

impl Settings {
    /// Resolves the settings from the flags, the config file and the environment.
    pub(crate) fn resolve(
        cli: &Cli,
        file: &crate::config::FileConfig,
        env: impl Fn(&str) -> Option<String>,
        is_tty: bool,
    ) -> anyhow::Result<Settings> {
        use crate::config::{ColorMode, locale_is_utf8};
        let color_mode = cli.color.or(file.color).unwrap_or(ColorMode::Auto);
        let lang_flag = lang(cli, file)?;
        let impersonate = impersonation(cli)?;
        let mut backend = cli.reach.backend.or(file.backend).unwrap_or_default();
        if impersonate.is_some() {
            backend = impersonating_backend(backend)?;
        }
        Ok(Settings {
            lang: ichor_views::i18n::Lang::choose(lang_flag.as_deref(), &env),
            theme: ichor_views::widgets::Theme {
                color: color_mode.resolve(env("NO_COLOR").as_deref(), is_tty),
                ascii: cli.ascii || file.ascii.unwrap_or(false) || !locale_is_utf8(&env),
                wide_ambiguous: false,
            },
            ambiguous_width: cli
                .ambiguous_width
                .or(file.ambiguous_width)
                .unwrap_or_default(),
            read_only: cli.reach.read_only || file.read_only.unwrap_or(false),
            notify: !cli.no_notify && file.notify.unwrap_or(true),
            // The demo cluster has its own namespace: the file's (set for a real cluster) would
            // show an empty demo; a flag given for this run still applies.
            namespace: cli
                .reach
                .namespace
                .clone()
                .or_else(|| file.namespace.clone().filter(|_| !cli.reach.demo)),
            all_namespaces: cli.all_namespaces || file.all_namespaces.unwrap_or(false),
            context: cli
                .reach
                .kube
                .context
                .clone()
                .or_else(|| file.context.clone()),
            kubeconfig: cli
                .reach
                .kube
                .kubeconfig
                .clone()
                .or_else(|| file.kubeconfig.clone()),
            server: cli.reach.server.clone().or_else(|| file.server.clone()),
            protocol: cli
                .reach
                .protocol
                .or(file.protocol)
                .unwrap_or_default()
                .into(),
            backend,
            ichor_ui: ichor_ui(
                cli.reach.ichor_ui.as_deref().or(file.ichor_ui.as_deref()),
                cli.reach
                    .ichor_ui_port
                    .as_deref()
                    .or(file.ichor_ui_port.as_deref()),
            )?,
            ichor_ui_asked: ichor_ui_asked(cli, file),
            token_file: cli
                .reach
                .token_file
                .clone()
                .or_else(|| file.token_file.clone()),
            ca_file: cli.reach.ca_file.clone().or_else(|| file.ca_file.clone()),
            impersonate,
            slow: file.timing.rule(),
            contexts: file.context_rules(),
            keys: file.key_overrides.clone(),
            retry: Default::default(),
        })
    }
}

/// The language asked for: `--lang`, checked here (the file's was checked as it was read),
/// else the file's.
fn lang(cli: &Cli, file: &crate::config::FileConfig) -> anyhow::Result<Option<String>> {
    if let Some(l) = &cli.reach.lang
        && ichor_views::i18n::Lang::parse(l).is_none()
    {
        anyhow::bail!(
            "--lang must be en or ja, not {}",
            ichor_model::error_text::quoted(l)
        );
    }
    Ok(cli.reach.lang.clone().or_else(|| file.lang.clone()))
}

/// Whether the flags or the file name ichor-ui's Service or port.
fn ichor_ui_asked(cli: &Cli, file: &crate::config::FileConfig) -> bool {
    [
        &cli.reach.ichor_ui,
        &file.ichor_ui,
        &cli.reach.ichor_ui_port,
        &file.ichor_ui_port,
    ]
    .iter()
    .any(|named| named.is_some())
}

/// `--as` and `--as-group`, as kubectl takes them: groups only with a user.
fn impersonation(cli: &Cli) -> anyhow::Result<Option<crate::kubeconfig::Impersonate>> {
    let quoted = ichor_model::error_text::quoted;
    match (&cli.reach.as_user, cli.reach.as_group.as_slice()) {
        (None, []) => Ok(None),
        (None, [group, ..]) => anyhow::bail!(
            "--as-group {} needs --as USER: Kubernetes impersonates groups only with a user",
            quoted(group)
        ),
        (Some(user), _) if user.trim().is_empty() => anyhow::bail!("--as names no user"),
        (Some(user), groups) => Ok(Some(crate::kubeconfig::Impersonate {
            user: user.clone(),
            groups: groups.to_vec(),
        })),
    }
}

/// The route with `--as`: impersonation is the Kubernetes API's, so the service runs in this
/// process with the kubeconfig's credentials; ichor-ui acts as the caller its token names.
fn impersonating_backend(
    backend: crate::config::RouteChoice,
) -> anyhow::Result<crate::config::RouteChoice> {
    use crate::config::RouteChoice;
    match backend {
        RouteChoice::Remote => anyhow::bail!(
            "--as impersonates through the Kubernetes API, so the service runs in-process: --backend remote (ichor-ui acts as the caller its token names) cannot take it"
        ),
        RouteChoice::Auto | RouteChoice::InProcess => Ok(RouteChoice::InProcess),
    }
}

/// Where ichor-ui runs: `NAMESPACE/SERVICE` and a port name, each defaulted.
fn ichor_ui(at: Option<&str>, port: Option<&str>) -> anyhow::Result<ichor_client::tunnel::IchorUi> {
    let mut ui = ichor_client::tunnel::IchorUi::default();
    if let Some(at) = at {
        let (ns, svc) = at.split_once('/').ok_or_else(|| {
            anyhow::anyhow!(
                "--ichor-ui must be NAMESPACE/SERVICE, not {}",
                ichor_model::error_text::quoted(at)
            )
        })?;
        ui.namespace = ns.to_string();
        ui.service = svc.to_string();
    }
    if let Some(p) = port {
        ui.port = p.to_string();
    }
    Ok(ui)
}

/// Where the dashboard's service is, with what local files said: decided before the terminal
/// is checked, so a bad flag or file is said first, and before anything is contacted.
pub(super) enum Source {
    Demo,
    Remote {
        options: ichor_client::remote::RemoteOptions,
        /// The kubeconfig context whose `[[contexts]]` rules hold: the server named is
        /// OperationService, not the API server, so the context `kubectl` would use decides.
        rules_from: Option<(Box<crate::kubeconfig::LoadedKubeconfig>, String)>,
    },
    Kubeconfig {
        loaded: Box<crate::kubeconfig::LoadedKubeconfig>,
        context: String,
    },
}

impl Source {
    /// The context whose rules hold, and what they make of it.
    pub(super) fn in_force(&self, settings: &Settings) -> InForce {
        match self {
            Source::Demo => settings.demo_in_force(),
            Source::Remote {
                rules_from: Some((loaded, context)),
                ..
            }
            | Source::Kubeconfig { loaded, context } => settings.in_force(loaded, context),
            Source::Remote {
                rules_from: None, ..
            } => InForce::default(),
        }
    }

    pub(super) fn choose(cli: &Cli, settings: &Settings) -> anyhow::Result<Source> {
        use ichor_client::remote::{RemoteOptions, TOKEN_ENV, load_token};
        if settings.impersonate.is_some() {
            if cli.reach.demo {
                anyhow::bail!(
                    "--as needs a kubeconfig: the embedded demo of --demo has none (`ichor-tui demo-cluster --kubeconfig-out FILE` serves one to impersonate on)"
                );
            }
            if settings.server.is_some() {
                anyhow::bail!(
                    "--as cannot be used with --server: the server acts as the caller its token names (it impersonates that caller itself); leave out --server to act as another user in-process"
                );
            }
        }
        if cli.reach.demo {
            return Ok(Source::Demo);
        }
        if let Some(url) = &settings.server {
            let mut opts = RemoteOptions::new(url.clone()).with_protocol(settings.protocol);
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
            opts.deadline = cli.reach.call_deadline();
            opts.insecure_send_token_over_http = cli.reach.insecure_send_token_over_http;
            opts.check_token_transport()?;
            return Ok(Source::Remote {
                options: opts,
                rules_from: rules_context(settings)?,
            });
        }
        let mut loaded = crate::kubeconfig::read(settings.kubeconfig.as_deref())?;
        loaded.impersonate = settings.impersonate.clone();
        let context = loaded.context(settings.context.as_deref())?;
        Ok(Source::Kubeconfig {
            loaded: Box::new(loaded),
            context,
        })
    }
}

/// With `--server`, the kubeconfig context whose `[[contexts]]` rules hold: `--context` (which
/// must exist), else the current context, of the kubeconfig `--kubeconfig`, `$KUBECONFIG` or
/// `~/.kube/config` names. None when no kubeconfig is found, or it names no current context,
/// and none was asked for by name (said in the log): a remote server needs no kubeconfig.
fn rules_context(
    settings: &Settings,
) -> anyhow::Result<Option<(Box<crate::kubeconfig::LoadedKubeconfig>, String)>> {
    let named = settings.kubeconfig.is_some() || settings.context.is_some();
    let found = crate::kubeconfig::read(settings.kubeconfig.as_deref()).and_then(|loaded| {
        let context = loaded.context(settings.context.as_deref())?;
        Ok((Box::new(loaded), context))
    });
    match found {
        Ok(found) => Ok(Some(found)),
        Err(e) if named => Err(e),
        Err(e) => {
            let why = ichor_model::error_text::one_line(&e);
            tracing::info!(%why, "--server: no kubeconfig context for the [[contexts]] rules");
            Ok(None)
        }
    }
}
