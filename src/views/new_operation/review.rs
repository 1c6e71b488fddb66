//! The Review: the plan in words (what it does, to how many machines, in which steps, what is
//! held back), why it is blocked, the typed name where one is asked, and how to Start.

use super::effect_id;
use crate::app::state::{NewOpStep, NewOperation};
use crate::model::{ApiError, OperationKind, Plan, Reason};
use crate::views::style::Ctx;
use crate::views::text::{sanitize, width, wrap};
use crate::views::widgets::lines::Lines;
use crate::views::words::{error_text, role_word};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};

/// How many held machines are named before "… and N more".
const HELD_NAMED: usize = 3;

pub(super) fn render(d: &NewOperation, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let w = usize::from(area.width);
    let mut top = Lines::new(w);
    if let Some(e) = &d.start_error {
        top.wrapped(&format!("✗ {}", error_text(t, e)), ctx.theme.alarm());
    }
    let Some(plan) = &d.plan.data else {
        let msg = match &d.plan.error {
            Some(e) => error_text(t, e),
            None => t.t("review-planning"),
        };
        top.wrapped(&msg, Style::default());
        top.draw(area, buf);
        return;
    };
    plan_effect(plan, ctx, &mut top);
    plan_notes(d, plan, ctx, &mut top);
    let bottom = start_lines(d, plan, ctx, w);
    let used_top = top.draw(area, buf);
    let bottom_h = u16::try_from(bottom.len())
        .unwrap_or(0)
        .min(area.height.saturating_sub(used_top));
    let [_, mid, bottom_area] = Layout::vertical([
        Constraint::Length(used_top),
        Constraint::Fill(1),
        Constraint::Length(bottom_h),
    ])
    .areas(area);
    bottom.draw(bottom_area, buf);
    steps(d, plan, ctx, mid, buf);
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
        lines.push(line, Style::default());
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

/// What else to know: a CA rotation's passes and the secrets bundle, clusters that share the
/// change, and the machines held back.
fn plan_notes(d: &NewOperation, plan: &Plan, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    let warn = ctx.theme.fg(Color::Yellow);
    if plan.kind == OperationKind::CaRotation {
        for id in ["ca-note-passes", "ca-note-kubelet"] {
            lines.wrapped(&format!("• {}", t.t(id)), Style::default());
        }
        if plan.replaces_secrets_bundle {
            let name = sanitize(&d.cluster.name);
            let note = t.tr("ca-note-bundle", &[("name", &name)]);
            lines.wrapped(&format!("• {note}"), warn);
        }
    }
    if !plan.shared_with.is_empty() {
        let names: Vec<String> = plan.shared_with.iter().map(|c| sanitize(c)).collect();
        let shared = t.tn(
            "review-shared",
            &[
                ("n", plan.shared_with.len().into()),
                ("clusters", names.join(", ").into()),
            ],
        );
        lines.wrapped(&shared, warn);
    }
    if !plan.held.is_empty() {
        lines.push(t.tn("review-held", &[("n", plan.held.len().into())]), warn);
        for h in plan.held.iter().take(HELD_NAMED) {
            let held = format!("  – {}: {}", sanitize(&h.name), sanitize(&h.reason));
            lines.push(held, warn);
        }
        if plan.held.len() > HELD_NAMED {
            let more = plan.held.len() - HELD_NAMED;
            lines.push(t.tn("review-held-more", &[("n", more.into())]), warn);
        }
    }
}

/// The lines under the steps: why the plan is blocked, or that it is starting, or the typed
/// name and how to Start.
fn start_lines(d: &NewOperation, plan: &Plan, ctx: &Ctx<'_>, w: usize) -> Lines {
    let t = ctx.texts;
    let mut lines = Lines::new(w);
    if let Some((id, b)) = plan
        .blocked
        .as_ref()
        .map(|b| ("review-blocked", b))
        .or_else(|| plan.denied.as_ref().map(|b| ("review-denied", b)))
    {
        let e = ApiError::from_refusal(b.clone());
        lines.wrapped(&format!("✗ {}", t.t(id)), ctx.theme.alarm());
        lines.wrapped(&error_text(t, &e), ctx.theme.fg(Color::Red));
        return lines;
    }
    if matches!(d.step, NewOpStep::Starting { .. }) {
        lines.wrapped(&t.t("review-starting"), ctx.theme.bold());
        return lines;
    }
    if d.needs_typed_name() && d.start_offered() {
        let ok = d.typed_name == d.cluster.name;
        let field = format!("[{}▏]", sanitize(&d.typed_name));
        let (status, style) = if ok {
            (t.t("review-name-ok"), ctx.theme.fg(Color::Green))
        } else {
            (t.t("review-name-mismatch"), ctx.theme.fg(Color::Yellow))
        };
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
    lines
}

/// The steps in order, in the room between (scrolled by the person). A step with many machines
/// (a shutdown's workers) wraps onto indented lines. When not every step is shown, the heading
/// says which are.
fn steps(d: &NewOperation, plan: &Plan, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    if area.height < 2 || plan.steps.is_empty() {
        return;
    }
    let w = usize::from(area.width);
    let rows = usize::from(area.height - 1);
    let scroll = d.scroll.min(plan.steps.len().saturating_sub(rows));
    let num_w = width(&plan.steps.len().to_string());
    let indent = " ".repeat(num_w + 2);
    let mut body = Lines::new(w.saturating_sub(1));
    let mut last_shown = scroll;
    for (i, step) in plan.steps.iter().enumerate().skip(scroll) {
        if body.len() >= rows {
            break;
        }
        let names: Vec<String> = step.iter().map(|m| sanitize(&m.name)).collect();
        let role = step
            .first()
            .map(|m| role_word(t, &m.role))
            .unwrap_or_default();
        let text = format!("{:>num_w$}. {} ({role})", i + 1, names.join(", "));
        for (j, l) in wrap(&text, w.saturating_sub(1 + num_w + 2))
            .into_iter()
            .enumerate()
        {
            let l = if j == 0 { l } else { format!("{indent}{l}") };
            body.push(l, Style::default());
        }
        last_shown = i + 1;
    }
    let all_shown = scroll == 0 && last_shown == plan.steps.len() && body.len() <= rows;
    let range = if all_shown {
        String::new()
    } else {
        t.tr(
            "review-steps-range",
            &[
                ("from", &(scroll + 1).to_string()),
                ("to", &last_shown.to_string()),
                ("n", &plan.steps.len().to_string()),
            ],
        )
    };
    let mut heading = Lines::new(w);
    heading.push(format!("{} {range}", t.t("review-steps")), ctx.theme.bold());
    let [head, list] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    heading.draw(head, buf);
    let [_, list] = Layout::horizontal([Constraint::Length(1), Constraint::Fill(1)]).areas(list);
    body.draw(list, buf);
}
