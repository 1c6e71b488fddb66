//! Remote first, in-process as the fallback: with a kubeconfig and no server URL, the dashboard
//! looks for the ichor-ui Service in the cluster, opens a port-forward to one of its ready pods
//! with the user's own credentials and asks it a first question within a short deadline; when
//! there is no ichor-ui, it is not ready, there is no token to forward, or it does not answer,
//! the same service runs in this process, and the status bar says why.

use super::settings::Settings;
use crate::config::RouteChoice;
use ichor_app::state::Route;
use ichor_client::remote::{Protocol, RemoteClient, RemoteOptions};
use ichor_client::tunnel::{Fallback, IchorUi, QUESTION_DEADLINE, TunnelConnector, find};
use ichor_model::OperationClient;
use std::time::Duration;

/// What the choice between ichor-ui and the service in-process depends on.
#[derive(Clone, Debug)]
pub struct ReachOptions {
    pub backend: RouteChoice,
    pub ichor_ui: IchorUi,
    pub protocol: Protocol,
    /// ichor-ui was named (`--ichor-ui`, `--ichor-ui-port`, the config file): not reaching it
    /// is said as an alarm, not as the usual fallback.
    pub asked: bool,
}

impl ReachOptions {
    pub(crate) fn of(settings: &Settings) -> ReachOptions {
        ReachOptions {
            backend: settings.backend,
            ichor_ui: settings.ichor_ui.clone(),
            protocol: settings.protocol,
            asked: settings.ichor_ui_asked,
        }
    }
}

/// How long the first question to ichor-ui may take before the dashboard falls back.
pub(crate) const PROBE_DEADLINE: Duration = Duration::from_secs(3);

/// The client through a tunnel to ichor-ui, checked to answer; or why not.
pub(crate) async fn tunnel(
    kube: &kube::Client,
    token: Result<String, Fallback>,
    settings: &ReachOptions,
    namespace: &str,
) -> Result<RemoteClient, Fallback> {
    let token = token?;
    let ui: &IchorUi = &settings.ichor_ui;
    find(kube, ui).await?;
    let mut opts = RemoteOptions::new(format!("http://{}.{}", ui.service, ui.namespace))
        .with_protocol(settings.protocol);
    opts.token = Some(token);
    let client = RemoteClient::through(opts, TunnelConnector::new(kube.clone(), ui.clone()))
        .map_err(|e| Fallback::NotAnswering {
            detail: ichor_model::error_text::one_line(&e),
        })?;
    // A first question: any answer of the service's own (even a refusal) means it is there.
    match tokio::time::timeout(PROBE_DEADLINE, client.permissions(namespace)).await {
        Ok(Ok(_)) => Ok(client),
        Ok(Err(e)) if !e.code.is_transient() => Ok(client),
        Ok(Err(e)) => Err(Fallback::NotAnswering {
            detail: ichor_model::inert::truncate(&e.message, 200),
        }),
        Err(_) => Err(Fallback::NotAnswering {
            detail: format!("no answer within {} s", PROBE_DEADLINE.as_secs()),
        }),
    }
}

/// What the choice comes to: ichor-ui through a tunnel, or the service in-process and why.
pub enum Reached {
    Tunnel(Box<RemoteClient>, Route),
    InProcess(Route),
}

/// Chooses between ichor-ui and the service in-process, as `--backend` says.
pub async fn choose(
    kube: &kube::Client,
    token: Result<String, Fallback>,
    settings: &ReachOptions,
    namespace: &str,
    context: &str,
) -> anyhow::Result<Reached> {
    let in_process = |why: Fallback| Route::InProcess {
        context: context.to_string(),
        asked: settings.asked && why != Fallback::Chosen,
        why: Some(why),
    };
    if settings.backend == RouteChoice::InProcess {
        return Ok(Reached::InProcess(in_process(Fallback::Chosen)));
    }
    match tunnel(kube, token, settings, namespace).await {
        Ok(client) => {
            let ui = &settings.ichor_ui;
            let route = Route::Tunnel {
                service: format!("{}/{}", ui.namespace, ui.service),
            };
            tracing::info!(service = %format!("{}/{}", ui.namespace, ui.service), "reaching ichor-ui through a tunnel");
            Ok(Reached::Tunnel(Box::new(client), route))
        }
        Err(why) if settings.backend == RouteChoice::Remote => anyhow::bail!(
            "--backend remote: ichor-ui ({}/{}) cannot be reached: {why}",
            settings.ichor_ui.namespace,
            settings.ichor_ui.service
        ),
        Err(why) => {
            tracing::info!(reason = %why, "ichor-ui not reached: the service runs in-process");
            Ok(Reached::InProcess(in_process(why)))
        }
    }
}

/// What `--backend auto` is about to ask, said on standard error by the commands (the
/// dashboard's status bar names the route): where ichor-ui is looked for, through which API
/// server (`server`, from the kubeconfig: shown without credentials or control characters), and
/// how long each question may take. `None` when ichor-ui is not looked for.
pub(crate) fn asking_line(
    texts: &ichor_views::i18n::Texts,
    settings: &ReachOptions,
    server: &str,
) -> Option<String> {
    if settings.backend == RouteChoice::InProcess {
        return None;
    }
    let ui = &settings.ichor_ui;
    let server = ichor_model::inert::truncate(
        &ichor_model::inert::sanitize(&super::dashboard::sanitize_url(server)),
        200,
    );
    Some(texts.tr(
        "cli-asking-ichor-ui",
        &[
            ("service", &format!("{}/{}", ui.namespace, ui.service)),
            ("server", &server),
            ("seconds", &QUESTION_DEADLINE.as_secs().to_string()),
        ],
    ))
}

/// Why a command reads the cluster directly after it looked for ichor-ui; `None` when it
/// reached ichor-ui or never looked.
pub(crate) fn fallback_line(texts: &ichor_views::i18n::Texts, route: &Route) -> Option<String> {
    match route {
        Route::InProcess {
            why: Some(why),
            asked,
            ..
        } if *why != Fallback::Chosen => Some(texts.tr(
            "cli-reading-directly",
            &[("why", &ichor_views::fallback_text(why, *asked, texts))],
        )),
        _ => None,
    }
}
