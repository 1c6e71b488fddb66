//! The Review: the plan in words (`plan_words`: why it is blocked, what it does, to how many
//! machines, what else to know, which machines are held or not approved, the steps in order),
//! the typed name where one is asked, and how to Start. Everything but the last is one text that
//! scrolls; the typed name and how to Start stay under it.

use crate::plan_words::{self, Tone};
use crate::style::Ctx;
use crate::text::sanitize;
use crate::widgets::lines::Lines;
use crate::widgets::table::Window;
use crate::words::error_text;
use ichor_app::state::{NewOpStep, NewOperation, ScrollRoom, State};
use ichor_model::{Plan, Reason};
use jiff::tz::TimeZone;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

/// The Review laid out in an area: the text that scrolls, and the lines pinned under it.
struct Laid {
    doc: Lines,
    bottom: Lines,
    doc_area: Rect,
    bottom_area: Rect,
}

fn lay_out(state: &State, d: &NewOperation, ctx: &Ctx<'_>, area: Rect) -> Laid {
    let t = ctx.texts;
    let w = usize::from(area.width);
    let mut doc = Lines::new(w);
    let mut bottom = Lines::new(w);
    if let Some(e) = &d.start_error {
        doc.wrapped(&format!("✗ {}", error_text(t, e)), ctx.theme.alarm());
    }
    // A server too far from this build refuses writes: said with the plan's own refusals, not
    // only after Start.
    if let Some(skew) = version_skew(state)
        .filter(|_| d.start_error.as_ref().and_then(|e| e.reason) != Some(Reason::VersionSkew))
    {
        doc.wrapped(&format!("✗ {}", error_text(t, &skew)), ctx.theme.alarm());
    }
    match &d.plan.data {
        Some(plan) => {
            plan_lines(plan, &state.tz, ctx, &mut doc);
            start_lines(d, plan, ctx, &mut bottom);
        }
        None => {
            let msg = match &d.plan.error {
                Some(e) => error_text(t, e),
                None => t.t("review-planning"),
            };
            doc.wrapped(&msg, Style::default());
        }
    }
    // The text keeps at least two rows; the lines under it take what they need of the rest.
    let bottom_h = u16::try_from(bottom.len())
        .unwrap_or(u16::MAX)
        .min(area.height.saturating_sub(2));
    let [doc_area, bottom_area] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(bottom_h)]).areas(area);
    Laid {
        doc,
        bottom,
        doc_area,
        bottom_area,
    }
}

/// Draws the Review in `area`; returns the marker of what is scrolled out of sight, for the
/// dialog's bottom border.
pub(super) fn render(
    state: &State,
    d: &NewOperation,
    ctx: &Ctx<'_>,
    area: Rect,
    buf: &mut Buffer,
) -> Option<Line<'static>> {
    let laid = lay_out(state, d, ctx, area);
    let rows = usize::from(laid.doc_area.height);
    let window = Window::new(laid.doc.len(), d.scroll, rows).of_text();
    laid.doc.draw_from(laid.doc_area, buf, window.offset);
    laid.bottom.draw(laid.bottom_area, buf);
    window.marker(ctx.texts)
}

/// The rows the Review takes in `area`'s width: the lines pinned under its text (the typed
/// name, how to Start) and two rows of the text, which scrolls.
pub(super) fn rows_needed(state: &State, d: &NewOperation, ctx: &Ctx<'_>, area: Rect) -> u16 {
    let laid = lay_out(state, d, ctx, area);
    u16::try_from(laid.bottom.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2)
}

/// How long the Review's text is in `area`, and how much of it shows.
pub(super) fn room(state: &State, d: &NewOperation, ctx: &Ctx<'_>, area: Rect) -> ScrollRoom {
    let laid = lay_out(state, d, ctx, area);
    ScrollRoom {
        lines: laid.doc.len(),
        rows: usize::from(laid.doc_area.height),
    }
}

/// The refusal a start would meet from this build itself: the server is more than one minor
/// version away.
fn version_skew(state: &State) -> Option<ichor_model::ApiError> {
    match &state.session.server_version {
        ichor_model::ServerVersion::Known(v) => ichor_model::skew_refusal(
            env!("CARGO_PKG_VERSION"),
            v.as_str(),
            "starting an operation",
        ),
        _ => None,
    }
}

/// The plan in words (`plan_words`, which the CLI prints too), each line in its tone.
fn plan_lines(plan: &Plan, tz: &TimeZone, ctx: &Ctx<'_>, lines: &mut Lines) {
    for said in plan_words::summary(ctx.texts, plan, tz) {
        let style = match said.tone {
            Tone::Plain => Style::default(),
            Tone::Strong => ctx.theme.bold(),
            Tone::Alarm => ctx.theme.alarm(),
            Tone::Refused => ctx.theme.fg(Color::Red),
            Tone::Warn => ctx.theme.fg(Color::Yellow),
            Tone::Urgent => ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Tone::Quiet => ctx.theme.dim(),
        };
        if said.hangs {
            lines.hanging(&said.lead, &said.text, style);
        } else if said.lead.is_empty() && said.text.is_empty() {
            lines.blank();
        } else {
            lines.wrapped(&said.line(), style);
        }
    }
}

/// The lines under the text: that it is starting, or the typed name and how to Start (nothing
/// when Start is not offered: the text says why, first).
fn start_lines(d: &NewOperation, plan: &Plan, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    if d.settling {
        lines.wrapped(&t.t("review-settling"), ctx.theme.alarm());
        return;
    }
    if plan.blocked.is_some() || plan.denied.is_some() {
        lines.wrapped(&t.t("review-not-offered"), ctx.theme.alarm());
        return;
    }
    if matches!(d.step, NewOpStep::Starting { .. }) {
        lines.wrapped(&t.t("review-starting"), ctx.theme.bold());
        return;
    }
    if d.needs_typed_name() && d.start_offered() {
        let ok = d.typed_name == d.cluster.name;
        let field = format!("[{}▏]", sanitize(&d.typed_name));
        let (status, style) = if ok {
            (t.t("review-name-ok"), ctx.theme.fg(Color::Green))
        } else {
            (t.t("review-name-mismatch"), ctx.theme.fg(Color::Yellow))
        };
        if d.production {
            lines.wrapped(&t.t("review-production"), ctx.theme.alarm());
        }
        let ask = t.tr("review-type-name", &[("name", &sanitize(&d.cluster.name))]);
        lines.wrapped(&ask, ctx.theme.bold());
        lines.push(format!("{field} {status}"), style);
    }
    // After a half-success the spec was written: a second Start only creates the operation.
    // After a start whose outcome was not seen, Start is a new one against what is there now.
    let id = match (d.can_start(), d.start_error.as_ref().and_then(|e| e.reason)) {
        (false, _) => "review-start-locked",
        (true, Some(Reason::SpecWrittenCreateFailed)) => "review-start-again",
        (
            true,
            Some(Reason::WriteAbandoned | Reason::WriteNotApplied | Reason::WriteOutcomeUnknown),
        ) => "review-start-new",
        (true, _) => "review-start",
    };
    lines.wrapped(&t.t(id), ctx.theme.bold());
}
