//! One operation's page: what it is, where it is, and every machine in executor order.

use super::text::{fit, fit_right, sanitize};
use super::widgets::{
    Ctx, bar, duration_text, error_text, kind_text, machine_phase_view, phase_view,
    progress_fraction,
};
use crate::app::state::State;
use crate::model::{Code, MachinePhase, Operation, Phase};
use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

/// The start times whose elapsed time is on screen (for the clock).
pub fn visible_since(state: &State) -> impl Iterator<Item = Timestamp> + '_ {
    let op = state.detail.as_ref().and_then(|d| d.op.data.as_ref());
    let op_start = op
        .filter(|o| o.finished_at.is_none())
        .and_then(|o| o.started_at.or(o.created_at));
    let machines = op
        .into_iter()
        .flat_map(|o| o.machines.iter())
        .filter(|m| m.phase == MachinePhase::Running && m.finished_at.is_none())
        .filter_map(|m| m.started_at);
    op_start.into_iter().chain(machines)
}

fn elapsed(state: &State, from: Option<Timestamp>, to: Option<Timestamp>, ctx: &Ctx<'_>) -> String {
    match from {
        Some(f) => duration_text(ctx.texts, to.unwrap_or(state.now).duration_since(f)),
        None => String::new(),
    }
}

/// Draws the page into `area`.
pub fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let Some(d) = state.detail.as_ref() else {
        return;
    };
    let title = match &d.op.data {
        Some(op) if op.unreadable.is_some() => {
            format!("{} · {}", t.t("kind-unreadable"), sanitize(&op.name))
        }
        Some(op) => format!(
            "{} · {}",
            kind_text(t, op.kind, &op.kind_raw),
            sanitize(&op.cluster)
        ),
        None => sanitize(&d.name),
    };
    let block = super::body_block(ctx, title);
    let inner = block.inner(area);
    block.render(area, buf);
    let w = usize::from(inner.width);
    let mut lines: Vec<(String, Style)> = Vec::new();
    if let Some(e) = &d.op.error {
        let text = if e.code == Code::NotFound {
            t.tr("operation-gone", &[("name", &sanitize(&d.name))])
        } else {
            error_text(t, e)
        };
        for l in super::wrap(&text, w.saturating_sub(2)) {
            lines.push((l, ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD)));
        }
    }
    let Some(op) = d.op.data.as_ref() else {
        if d.op.error.is_none() {
            lines.push((t.t("loading"), Style::default()));
        }
        draw_lines(&lines, inner, buf);
        return;
    };
    if let Some(why) = &op.unreadable {
        unreadable(ctx, op, why, w, &mut lines);
        draw_lines(&lines, inner, buf);
        return;
    }
    summary(state, ctx, op, w, &mut lines);
    let used = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    draw_lines(&lines, inner, buf);
    let table = Rect {
        y: inner.y + used.min(inner.height),
        height: inner.height.saturating_sub(used),
        ..inner
    };
    machines(state, ctx, op, table, buf);
}

fn draw_lines(lines: &[(String, Style)], area: Rect, buf: &mut Buffer) {
    let w = usize::from(area.width);
    for (i, (l, style)) in lines.iter().enumerate().take(usize::from(area.height)) {
        buf.set_stringn(
            area.x + 1,
            area.y + i as u16,
            fit(l, w.saturating_sub(1)),
            w.saturating_sub(1),
            *style,
        );
    }
}

/// The page of an operation that cannot be read: what is known of it, why, and what to do.
fn unreadable(
    ctx: &Ctx<'_>,
    op: &Operation,
    why: &str,
    w: usize,
    lines: &mut Vec<(String, Style)>,
) {
    let t = ctx.texts;
    let label_w = 12;
    let field = |label: &str, value: String| format!("{}{value}", fit(label, label_w));
    lines.push((
        field(&t.t("field-name"), sanitize(&op.name)),
        Style::default(),
    ));
    let bad = ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD);
    lines.push((
        field(
            &t.t("field-state"),
            format!("⚠ {}", t.t("state-unreadable")),
        ),
        bad,
    ));
    if let Some(actor) = &op.actor {
        lines.push((
            field(&t.t("field-started-by"), sanitize(actor)),
            Style::default(),
        ));
    }
    lines.push((String::new(), Style::default()));
    let why = t.tr("operation-unreadable", &[("why", &sanitize(why))]);
    for l in super::wrap(&why, w.saturating_sub(2)) {
        lines.push((l, bad));
    }
    for l in super::wrap(&t.t("operation-unreadable-advice"), w.saturating_sub(2)) {
        lines.push((l, Style::default()));
    }
}

fn summary(
    state: &State,
    ctx: &Ctx<'_>,
    op: &Operation,
    w: usize,
    lines: &mut Vec<(String, Style)>,
) {
    let t = ctx.texts;
    let label_w = 12;
    let field = |label: &str, value: String| format!("{}{value}", fit(label, label_w));
    lines.push((
        field(&t.t("field-name"), sanitize(&op.name)),
        Style::default(),
    ));
    let (state_text, state_style) = phase_view(t, &ctx.theme, op);
    lines.push((field(&t.t("field-state"), state_text), state_style));
    if let (Some(cur), Some(tgt)) = (&op.current, &op.target) {
        lines.push((
            field(
                &t.t("field-target"),
                format!("{} → {}", sanitize(cur), sanitize(tgt)),
            ),
            Style::default(),
        ));
    }
    let actor = op
        .actor
        .as_deref()
        .map(sanitize)
        .unwrap_or_else(|| t.t("unknown"));
    lines.push((field(&t.t("field-started-by"), actor), Style::default()));
    if let Some(by) = &op.paused_by {
        let when = op
            .paused_at
            .map(|at| super::hhmm(state, at))
            .unwrap_or_default();
        let id = if op.paused { "paused-by" } else { "resumed-by" };
        lines.push((
            field("", t.tr(id, &[("user", &sanitize(by)), ("time", &when)])),
            ctx.theme.dim(),
        ));
    }
    lines.push((
        field(
            &t.t("field-elapsed"),
            elapsed(state, op.started_at.or(op.created_at), op.finished_at, ctx),
        ),
        Style::default(),
    ));
    let (done, total) = op.progress();
    let count = if total == 0 {
        "—".to_string()
    } else {
        t.tn(
            "machines-done",
            &[("done", done.into()), ("total", total.into())],
        )
    };
    let bar_w = w.saturating_sub(label_w + 16).clamp(5, 40);
    lines.push((
        field(
            &t.t("field-progress"),
            format!("{} {count}", bar(progress_fraction(op), bar_w)),
        ),
        Style::default(),
    ));
    if let Some(ca) = &op.ca_rotation {
        let stage_id = format!("ca-stage-{}", ca.stage.to_lowercase());
        let stage = if t.has(&stage_id) {
            t.t(&stage_id)
        } else {
            sanitize(&ca.stage)
        };
        lines.push((
            field(
                &t.t("field-ca-pass"),
                t.tn(
                    "ca-pass",
                    &[
                        ("pass", ca.pass.into()),
                        ("passes", ca.passes.into()),
                        ("stage", stage.into()),
                    ],
                ),
            ),
            ctx.theme.fg(Color::Cyan),
        ));
    }
    if let Some(holder) = op.lock_holder() {
        lines.push((
            t.tr("waiting-for-lock", &[("holder", &sanitize(holder))]),
            ctx.theme.fg(Color::Yellow),
        ));
    }
    if op.paused_by_failure() || op.phase == Phase::Failed {
        let machine = op
            .failed_machine()
            .map(|m| sanitize(&m.name))
            .unwrap_or_else(|| t.t("unknown"));
        let reason = sanitize(op.failure_reason.as_deref().unwrap_or(""));
        let style = ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD);
        let text = format!(
            "✗ {}\n  {}\n  {}",
            t.tr("failure-machine", &[("machine", &machine)]),
            t.tr("failure-reason", &[("reason", &reason)]),
            t.t("failure-advice")
        );
        for l in super::wrap(&text, w.saturating_sub(2)).into_iter().take(6) {
            lines.push((l, style));
        }
    }
    lines.push((String::new(), Style::default()));
}

fn machines(state: &State, ctx: &Ctx<'_>, op: &Operation, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    if area.height == 0 {
        return;
    }
    let w = usize::from(area.width);
    let (num_w, name_w, role_w, phase_w, el_w) = (3, if w >= 120 { 24 } else { 16 }, 8, 12, 6);
    let msg_w = w.saturating_sub(1 + num_w + 1 + name_w + 1 + role_w + 1 + phase_w + 1 + el_w + 1);
    let header = format!(
        " {} {} {} {} {} {}",
        fit_right("#", num_w),
        fit(&t.t("col-machine"), name_w),
        fit(&t.t("col-role"), role_w),
        fit(&t.t("col-phase"), phase_w),
        fit_right(&t.t("col-elapsed"), el_w),
        fit(&t.t("col-message"), msg_w)
    );
    buf.set_stringn(area.x, area.y, fit(&header, w), w, ctx.theme.bold());
    if op.machines.is_empty() {
        let id = if op.kind == Some(crate::model::OperationKind::Ichor) {
            "no-machine-steps"
        } else {
            "no-machine-started"
        };
        buf.set_stringn(
            area.x + 1,
            area.y + 1,
            fit(&t.t(id), w.saturating_sub(1)),
            w,
            ctx.theme.dim(),
        );
        return;
    }
    let rows = usize::from(area.height.saturating_sub(1));
    let scroll = state
        .detail
        .as_ref()
        .and_then(|d| d.scroll)
        .unwrap_or_else(|| crate::app::state::follow_scroll(op, rows));
    let scroll = scroll.min(op.machines.len().saturating_sub(rows));
    let role_of = |name: &str| {
        state
            .detail
            .as_ref()
            .and_then(|d| d.cluster.as_ref())
            .and_then(|c| c.machines.iter().find(|m| m.name == name))
            .map(|m| match m.role.as_str() {
                "controlplane" => t.t("role-controlplane"),
                "worker" => t.t("role-worker"),
                other => sanitize(other),
            })
            .unwrap_or_default()
    };
    for (i, m) in op.machines.iter().enumerate().skip(scroll).take(rows) {
        let y = area.y + 1 + u16::try_from(i - scroll).unwrap_or(0);
        let (phase_text, phase_style) = machine_phase_view(t, &ctx.theme, &m.phase);
        let el = elapsed(state, m.started_at, m.finished_at, ctx);
        let mut x = area.x;
        let mut put = |s: String, width: usize, style: Style| {
            buf.set_stringn(x, y, &s, width, style);
            x += u16::try_from(width + 1).unwrap_or(0);
        };
        put(
            format!(" {}", fit_right(&(i + 1).to_string(), num_w)),
            num_w + 1,
            Style::default(),
        );
        put(fit(&sanitize(&m.name), name_w), name_w, Style::default());
        put(fit(&role_of(&m.name), role_w), role_w, ctx.theme.dim());
        put(fit(&phase_text, phase_w), phase_w, phase_style);
        put(fit_right(&el, el_w), el_w, Style::default());
        put(fit(&sanitize(&m.message), msg_w), msg_w, Style::default());
    }
}
