//! How the dashboard reaches OperationService, as the status bar says it: the route, and why it
//! runs in-process when it does (the usual fallback said as what is true there; an ichor-ui
//! asked for by name and not reached, as an alarm).

use super::text::sanitize;

/// The fallback's words (the status bar's; the commands say them on standard error): for an ichor-ui that was asked for by name, what went wrong (an
/// alarm); else what the usual fallback is (ichor-ui is not deployed, or not serving, here).
pub fn fallback_text(why: &ichor_model::Fallback, asked: bool, t: &crate::i18n::Texts) -> String {
    use ichor_model::Fallback;
    if !asked {
        return match why {
            Fallback::Chosen => t.t("fallback-chosen"),
            Fallback::NotFound => t.t("fallback-here-not-found"),
            Fallback::NotReady => t.t("fallback-here-not-ready"),
            Fallback::NoPort => t.t("fallback-here-no-port"),
            Fallback::NoToken { how } => t.tr("fallback-here-no-token", &[("how", how)]),
            Fallback::Forbidden { .. } => t.t("fallback-here-forbidden"),
            Fallback::NotAnswering { .. } => t.t("fallback-here-not-answering"),
        };
    }
    match why {
        Fallback::Chosen => t.t("fallback-chosen"),
        Fallback::NotFound => t.t("fallback-not-found"),
        Fallback::NotReady => t.t("fallback-not-ready"),
        Fallback::NoPort => t.t("fallback-no-port"),
        Fallback::NoToken { how } => t.tr("fallback-no-token", &[("how", how)]),
        Fallback::Forbidden { .. } => t.t("fallback-forbidden"),
        Fallback::NotAnswering { .. } => t.t("fallback-not-answering"),
    }
}

/// How much of the route the status bar says.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Detail {
    /// The route without the server's version or why it fell back.
    Least,
    /// Without the server's version.
    NoVersion,
    All,
}

/// How OperationService is reached, in words: the demo, the route, why not ichor-ui, and the
/// server's version where one answers.
pub(crate) fn route_text(
    s: &ichor_app::state::Session,
    t: &crate::i18n::Texts,
    detail: Detail,
) -> String {
    use ichor_app::state::Route;
    use ichor_model::ServerVersion;
    let route = match &s.route {
        Route::Server { url } => sanitize(url),
        Route::Tunnel { .. } => t.t("route-tunnel"),
        Route::InProcess { why: None, .. } if s.demo => String::new(),
        Route::InProcess {
            context,
            why,
            asked,
        } => {
            // The context is named beside its API server when that is known.
            let base = match s.api_server {
                Some(_) => t.t("route-in-process-here"),
                None => t.tr("route-in-process", &[("context", &sanitize(context))]),
            };
            match why.as_ref().filter(|_| detail > Detail::Least) {
                Some(w) => t.tr(
                    "route-fallback",
                    &[("route", &base), ("why", &fallback_text(w, *asked, t))],
                ),
                None => base,
            }
        }
    };
    let mut text = match (s.demo, route.is_empty()) {
        (true, true) => t.t("route-demo"),
        (true, false) => format!("{} · {route}", t.t("route-demo")),
        (false, _) => route,
    };
    match &s.server_version {
        _ if detail < Detail::All => {}
        ServerVersion::NotYet => {}
        ServerVersion::Unknown => {
            text.push_str(" · ");
            text.push_str(&t.t("server-version-unknown"));
        }
        ServerVersion::Known(v) => {
            text.push_str(" · ");
            text.push_str(&t.tr("server-version", &[("version", &sanitize(v))]));
        }
    }
    text
}

/// How much of the context and its API server the status bar says.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Reaches {
    /// The API server alone, short and cut.
    Least,
    /// The context and the API server, short and cut.
    Cut,
    /// The context and the API server's host, port and path.
    Short,
    /// Both labelled, and the API server's whole URL (normalised, as the config's `server`
    /// rules compare it).
    All,
}

/// The most columns the API server's short form takes; `Cut` and `Least` cut it further.
const SERVER_SHORT: usize = 40;
const SERVER_LEAST: usize = 24;

/// The kubeconfig context and the API server it reaches, in words, when the server is known.
/// In production the status bar's label already names the context: the server alone, then.
pub(crate) fn reaches_text(
    s: &ichor_app::state::Session,
    t: &crate::i18n::Texts,
    detail: Reaches,
) -> Option<String> {
    let server = s.api_server.as_ref()?;
    let context = super::text::truncate(&sanitize(s.context_name().unwrap_or_default()), 40);
    let short = || {
        let port = match server.default_port() {
            true => String::new(),
            false => format!(":{}", server.port()),
        };
        sanitize(&format!("{}{port}{}", server.host(), server.path()))
    };
    let cut = super::text::truncate_middle;
    let (id, server) = match detail {
        Reaches::All => ("status-reaches", sanitize(&server.url())),
        Reaches::Short => ("status-reaches-short", cut(&short(), SERVER_SHORT)),
        Reaches::Cut => ("status-reaches-short", cut(&short(), SERVER_LEAST)),
        Reaches::Least => ("status-api-server", cut(&short(), SERVER_LEAST)),
    };
    let id = match s.production {
        true => "status-api-server",
        false => id,
    };
    Some(t.tr(id, &[("context", &context), ("server", &server)]))
}
