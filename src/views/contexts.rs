//! What `:ctx` says: the kubeconfig's contexts, and how a switch went.

use super::style::Ctx;
use super::text::{sanitize, truncate};
use ichor_app::state::{Notice, State};
use ratatui::style::{Color, Style};

/// How many context names a notice lists at most.
const MAX_LISTED: usize = 10;
/// How much of a name, or of a typed value, a notice shows.
const MAX_NAME: usize = 40;

fn name(n: &str) -> String {
    truncate(&sanitize(n), MAX_NAME)
}

/// The contexts, as a notice lists them.
fn listed(state: &State) -> String {
    let all = &state.session.contexts;
    let mut names: Vec<String> = all.iter().take(MAX_LISTED).map(|c| name(c)).collect();
    if all.len() > MAX_LISTED {
        names.push(format!("+{}", all.len() - MAX_LISTED));
    }
    names.join(", ")
}

/// The words of a `:ctx` notice.
pub(crate) fn notice_text(n: &Notice, state: &State, ctx: &Ctx<'_>) -> (String, Style) {
    let t = ctx.texts;
    let current = name(state.session.context.as_deref().unwrap_or("-"));
    let warn = ctx.theme.fg(Color::Yellow);
    match n {
        Notice::ContextUsage(None) => (
            t.tr(
                "context-usage",
                &[("current", &current), ("contexts", &listed(state))],
            ),
            warn,
        ),
        Notice::ContextUsage(Some(typed)) => (
            t.tr(
                "context-unknown",
                &[("value", &name(typed)), ("contexts", &listed(state))],
            ),
            warn,
        ),
        Notice::NoContexts => (t.t("context-none"), warn),
        Notice::ContextBusy => (t.t("context-busy"), warn),
        Notice::ContextSwitching(to) => (
            t.tr("context-switching", &[("name", &name(to))]),
            ctx.theme.bold(),
        ),
        Notice::ContextSwitched(to) => (
            t.tr("context-switched", &[("name", &name(to))]),
            ctx.theme.fg(Color::Green),
        ),
        Notice::ContextFailed(to, why) => (
            t.tr(
                "context-failed",
                &[
                    ("name", &name(to)),
                    ("current", &current),
                    ("why", &truncate(&sanitize(why), 300)),
                ],
            ),
            ctx.theme.alarm(),
        ),
        _ => (String::new(), Style::default()),
    }
}
