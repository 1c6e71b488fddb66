//! The Review: the plan in words (what it does, to how many machines, what else to know, which
//! machines are held or not approved, the steps in order), why it is blocked, the typed name
//! where one is asked, and how to Start. Everything but the last is one text that scrolls; the
//! typed name and how to Start stay under it.

use super::effect_id;
use crate::style::Ctx;
use crate::text::{sanitize, width, wrap};
use crate::widgets::lines::Lines;
use crate::widgets::table::Window;
use crate::words::{error_text, role_word, shutdown_text};
use ichor_app::state::{NewOpStep, NewOperation, ScrollRoom, State};
use ichor_model::{ApiError, OperationKind, Plan, Reason};
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
    match &d.plan.data {
        Some(plan) => {
            blocked(plan, ctx, &mut doc);
            plan_effect(plan, ctx, &mut doc);
            plan_notes(state, d, plan, ctx, &mut doc);
            machines_aside(plan, ctx, &mut doc);
            steps(plan, ctx, &mut doc);
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

/// Why Start is not offered, first: the reason the plan is blocked, or that the caller may not.
fn blocked(plan: &Plan, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    if let Some((id, b)) = plan
        .blocked
        .as_ref()
        .map(|b| ("review-blocked", b))
        .or_else(|| plan.denied.as_ref().map(|b| ("review-denied", b)))
    {
        let e = ApiError::from_refusal(b.clone());
        lines.wrapped(&format!("✗ {}", t.t(id)), ctx.theme.alarm());
        lines.wrapped(&error_text(t, &e), ctx.theme.fg(Color::Red));
        lines.blank();
    }
}

/// What the plan does, to how many machines, from which version to which, and the spec field
/// it writes first.
fn plan_effect(plan: &Plan, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    lines.wrapped(
        &t.t(&format!("review-{}", effect_id(plan.kind))),
        ctx.theme.bold(),
    );
    let count = t.tn(
        "review-count",
        &[
            ("machines", plan.machine_count().into()),
            ("steps", plan.steps.len().into()),
        ],
    );
    let change = (!plan.target.is_empty())
        .then(|| format!("{} → {}", sanitize(&plan.current), sanitize(&plan.target)));
    let line = match (plan.kind.touches_machines(), change) {
        (true, Some(c)) => format!("{count} · {c}"),
        (true, None) => count,
        (false, Some(c)) => c,
        (false, None) => String::new(),
    };
    if !line.is_empty() {
        lines.wrapped(&line, Style::default());
    }
    match (&plan.spec_change, plan.target.is_empty()) {
        (Some(c), _) => lines.wrapped(
            &t.tr(
                "review-spec-write",
                &[
                    ("field", &sanitize(&c.field)),
                    ("from", &sanitize(&c.from)),
                    ("to", &sanitize(&c.to)),
                    ("kind", &c.resource_kind),
                    ("name", &sanitize(&c.resource_name)),
                ],
            ),
            Style::default(),
        ),
        (None, false) => lines.wrapped(
            &t.tr(
                "review-no-spec-write",
                &[("target", &sanitize(&plan.target))],
            ),
            Style::default(),
        ),
        (None, true) => {}
    }
}

/// What else to know: a CA rotation's passes, the credentials and the secrets bundle, and
/// clusters that share the change.
fn plan_notes(state: &State, d: &NewOperation, plan: &Plan, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    let warn = ctx.theme.fg(Color::Yellow);
    let name = sanitize(&d.cluster.name);
    if plan.kind == OperationKind::CaRotation {
        for id in ["ca-note-passes", "ca-note-kubelet"] {
            lines.hanging("• ", &t.t(id), Style::default());
        }
    }
    if let Some(r) = &plan.shut_down {
        let [time, user, operation] = shutdown_text(state, t, r);
        let said = t.tr(
            "review-shut-down",
            &[
                ("cluster", &name),
                ("time", &time),
                ("user", &user),
                ("operation", &operation),
            ],
        );
        lines.hanging(
            "⚠ ",
            &said,
            ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        );
    }
    if plan.stray_confirmation {
        let said = t.tr("review-stray-confirmation", &[("cluster", &name)]);
        lines.hanging("", &said, warn);
    }
    if plan.credentials_stop_working {
        let note = t.tr("ca-note-credentials", &[("name", &name)]);
        lines.hanging("• ", &note, warn);
    }
    if plan.replaces_secrets_bundle {
        let note = t.tr("ca-note-bundle", &[("name", &name)]);
        lines.hanging("• ", &note, warn);
    }
    if !plan.shared_with.is_empty() {
        let names: Vec<String> = plan.shared_with.iter().map(|c| sanitize(c)).collect();
        let shared = t.tn(
            "review-shared",
            &[
                ("n", plan.shared_with.len().into()),
                ("clusters", names.join(&t.t("list-separator")).into()),
            ],
        );
        lines.wrapped(&shared, warn);
    }
}

/// The machines of the steps that already report the target, named, and what is done with
/// them (from the plan).
fn already_at_target(plan: &Plan, ctx: &Ctx<'_>, lines: &mut Lines) {
    if let Some(said) = crate::words::runs_target_text(ctx.texts, plan) {
        lines.wrapped(&said, ctx.theme.fg(Color::Yellow));
    }
}

/// The machines besides the plain steps: held and skipped, held but handled anyway (and why),
/// and not approved (not touched), each named.
fn machines_aside(plan: &Plan, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    let warn = ctx.theme.fg(Color::Yellow);
    let n = |v: usize| fluent_bundle::FluentValue::from(v);
    already_at_target(plan, ctx, lines);
    if !plan.held.is_empty() {
        lines.wrapped(&t.tn("review-held", &[("n", n(plan.held.len()))]), warn);
        for h in &plan.held {
            let held = format!("  – {}: {}", sanitize(&h.name), sanitize(&h.reason));
            lines.wrapped(&held, warn);
        }
    }
    if !plan.held_not_skipped.is_empty() {
        let said = t.tn(
            "review-held-not-skipped",
            &[
                ("n", n(plan.held_not_skipped.len())),
                ("kind", plan.kind.as_str().into()),
            ],
        );
        lines.wrapped(&said, warn);
        for h in &plan.held_not_skipped {
            let held = format!("  – {}: {}", sanitize(&h.name), sanitize(&h.reason));
            lines.wrapped(&held, warn);
        }
    }
    if !plan.unapproved.is_empty() {
        let said = t.tn("review-unapproved", &[("n", n(plan.unapproved.len()))]);
        lines.wrapped(&said, ctx.theme.dim());
        for m in &plan.unapproved {
            let role = role_word(t, &m.role);
            let said = t.tr(
                "review-step",
                &[("machines", &sanitize(&m.name)), ("role", &role)],
            );
            lines.wrapped(&format!("  – {said}"), ctx.theme.dim());
        }
    }
}

/// The steps in order. A step with many machines (a shutdown's workers) wraps onto indented
/// lines.
fn steps(plan: &Plan, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    if plan.steps.is_empty() {
        return;
    }
    lines.push(t.t("review-steps"), ctx.theme.bold());
    let num_w = width(&plan.steps.len().to_string());
    let indent = " ".repeat(num_w + 3);
    let text_w = lines.wrap_width.saturating_sub(num_w + 3);
    for (i, step) in plan.steps.iter().enumerate() {
        let names: Vec<String> = step.iter().map(|m| sanitize(&m.name)).collect();
        let role = step
            .first()
            .map(|m| role_word(t, &m.role))
            .unwrap_or_default();
        let text = t.tr(
            "review-step",
            &[("machines", &names.join(", ")), ("role", &role)],
        );
        for (j, l) in wrap(&text, text_w).into_iter().enumerate() {
            let l = if j == 0 {
                format!(" {:>num_w$}. {l}", i + 1)
            } else {
                format!("{indent}{l}")
            };
            lines.push(l, Style::default());
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
