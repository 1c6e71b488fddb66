//! One operation's page: what it is, where it is, and every machine in executor order.

use super::style::Ctx;
use super::text::{fit, sanitize};
use super::widgets::lines::{Lines, indented};
use super::widgets::overlay::titled_block;
use super::widgets::progress::{bar, fraction};
use super::widgets::table::{Cell, Column, ListTable, Row, Window};
use super::words::{
    elapsed, error_text, hhmm, kind_text, machine_phase_view, phase_view, role_word,
    widest_machine_phase, widest_role,
};
use crate::app::state::{DetailState, State, follow_scroll};
use crate::model::{Code, MachinePhase, Operation, OperationKind, Phase};
use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::widgets::Widget;

/// The width of the labels before the facts.
const LABEL_WIDTH: usize = 12;

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

/// "Label       value".
fn field(label: &str, value: String) -> String {
    format!("{}{value}", fit(label, LABEL_WIDTH))
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
    let mut block = titled_block(title);
    let inner = block.inner(area);
    let text = indented(inner);
    let mut lines = Lines::new(usize::from(text.width)).margin(1);
    if let Some(e) = &d.op.error {
        let said = if e.code == Code::NotFound {
            t.tr("operation-gone", &[("name", &sanitize(&d.name))])
        } else {
            error_text(t, e)
        };
        lines.wrapped(&said, ctx.theme.alarm());
    }
    let op = match d.op.data.as_ref() {
        None if d.op.error.is_none() => {
            lines.push(t.t("loading"), Style::default());
            None
        }
        Some(op) if op.unreadable.is_some() => {
            unreadable(ctx, op, &mut lines);
            None
        }
        Some(op) => {
            facts(state, ctx, op, &mut lines);
            notes(ctx, op, &mut lines);
            Some(op)
        }
        None => None,
    };
    let used = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .min(inner.height);
    // The latest events go under the machines, when there is anything to say of them and
    // room for both.
    let events_h = match inner.height.saturating_sub(used) >= 8 && op.is_some() {
        true => super::events::rows_on_page(ctx, d),
        false => 0,
    };
    let [_, table, events] = Layout::vertical([
        Constraint::Length(used),
        Constraint::Fill(1),
        Constraint::Length(events_h),
    ])
    .areas(inner);
    let window = op.map(|op| machine_window(d, op, table));
    if let Some(more) = window.and_then(|w| w.marker(t)) {
        block = block.title_bottom(more);
    }
    block.render(area, buf);
    lines.draw(text, buf);
    if let (Some(op), Some(window)) = (op, window) {
        machines(state, ctx, op, window, table, buf);
    }
    if events_h > 0 {
        super::events::render_on_page(state, ctx, d, indented(events), buf);
    }
}

/// The page of an operation that cannot be read: what is known of it, why, and what to do.
fn unreadable(ctx: &Ctx<'_>, op: &Operation, lines: &mut Lines) {
    let t = ctx.texts;
    let why = op.unreadable.as_deref().unwrap_or_default();
    lines.push(
        field(&t.t("field-name"), sanitize(&op.name)),
        Style::default(),
    );
    lines.push(
        field(
            &t.t("field-state"),
            format!("⚠ {}", t.t("state-unreadable")),
        ),
        ctx.theme.alarm(),
    );
    if let Some(actor) = &op.actor {
        lines.push(
            field(&t.t("field-started-by"), sanitize(actor)),
            Style::default(),
        );
    }
    lines.blank();
    let why = t.tr("operation-unreadable", &[("why", &sanitize(why))]);
    lines.wrapped(&why, ctx.theme.alarm());
    lines.wrapped(&t.t("operation-unreadable-advice"), Style::default());
}

/// What the operation is: name, state, versions, who started (and paused) it, how long it has
/// run and how far it is.
fn facts(state: &State, ctx: &Ctx<'_>, op: &Operation, lines: &mut Lines) {
    let t = ctx.texts;
    lines.push(
        field(&t.t("field-name"), sanitize(&op.name)),
        Style::default(),
    );
    let (state_text, state_style) = phase_view(t, &ctx.theme, op);
    lines.push(field(&t.t("field-state"), state_text), state_style);
    if let (Some(cur), Some(tgt)) = (&op.current, &op.target) {
        let change = format!("{} → {}", sanitize(cur), sanitize(tgt));
        lines.push(field(&t.t("field-target"), change), Style::default());
    }
    let actor = op
        .actor
        .as_deref()
        .map(sanitize)
        .unwrap_or_else(|| t.t("unknown"));
    lines.push(field(&t.t("field-started-by"), actor), Style::default());
    if let Some(by) = &op.paused_by {
        let when = op.paused_at.map(|at| hhmm(state, at)).unwrap_or_default();
        let id = if op.paused { "paused-by" } else { "resumed-by" };
        let said = t.tr(id, &[("user", &sanitize(by)), ("time", &when)]);
        lines.push(field("", said), ctx.theme.dim());
    }
    let took = elapsed(state, t, op.started_at.or(op.created_at), op.finished_at);
    lines.push(field(&t.t("field-elapsed"), took), Style::default());
    let (done, total) = op.progress();
    let count = if total == 0 {
        "—".to_string()
    } else {
        t.tn(
            "machines-done",
            &[("done", done.into()), ("total", total.into())],
        )
    };
    // The page's width less its margin: the bar takes what the label and the count leave.
    let bar_w = (lines.width + 1)
        .saturating_sub(LABEL_WIDTH + 16)
        .clamp(5, 40);
    let progress = format!("{} {count}", bar(fraction(op), bar_w));
    lines.push(field(&t.t("field-progress"), progress), Style::default());
}

/// What needs saying besides: the CA pass, the lock waited for, the failure and what to do.
fn notes(ctx: &Ctx<'_>, op: &Operation, lines: &mut Lines) {
    let t = ctx.texts;
    if let Some(ca) = &op.ca_rotation {
        let stage_id = format!("ca-stage-{}", ca.stage.to_lowercase());
        let stage = if t.has(&stage_id) {
            t.t(&stage_id)
        } else {
            sanitize(&ca.stage)
        };
        let pass = t.tn(
            "ca-pass",
            &[
                ("pass", ca.pass.into()),
                ("passes", ca.passes.into()),
                ("stage", stage.into()),
            ],
        );
        lines.push(
            field(&t.t("field-ca-pass"), pass),
            ctx.theme.fg(Color::Cyan),
        );
    }
    if let Some(holder) = op.lock_holder() {
        lines.push(
            t.tr("waiting-for-lock", &[("holder", &sanitize(holder))]),
            ctx.theme.fg(Color::Yellow),
        );
    }
    if op.paused_by_failure() || op.phase == Phase::Failed {
        let machine = op
            .failed_machine()
            .map(|m| sanitize(&m.name))
            .unwrap_or_else(|| t.t("unknown"));
        let reason = sanitize(op.failure_reason.as_deref().unwrap_or(""));
        let text = format!(
            "✗ {}\n  {}\n  {}",
            t.tr("failure-machine", &[("machine", &machine)]),
            t.tr("failure-reason", &[("reason", &reason)]),
            t.t("failure-advice")
        );
        lines.wrapped_max(&text, ctx.theme.alarm(), 6);
    }
    lines.blank();
}

/// The machine rows on screen: where the person scrolled, else following the machine that
/// matters.
fn machine_window(d: &DetailState, op: &Operation, table: Rect) -> Window {
    let rows = usize::from(table.height.saturating_sub(1));
    let scroll = d.scroll.unwrap_or_else(|| follow_scroll(op, rows));
    Window::new(op.machines.len(), scroll, rows)
}

/// The machines in executor order: number, name, role, phase, time and message.
fn machines(
    state: &State,
    ctx: &Ctx<'_>,
    op: &Operation,
    window: Window,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = ctx.texts;
    if area.height == 0 {
        return;
    }
    let columns = vec![
        Column::new("#").min(3).right().shrink(5).hide(3),
        Column::new(t.t("col-machine")).min(12).shrink(1).hide(5),
        Column::new(t.t("col-role"))
            .min(widest_role(t))
            .shrink(2)
            .hide(0),
        Column::new(t.t("col-phase"))
            .min(widest_machine_phase(t))
            .whole()
            .shrink(3)
            .hide(4),
        Column::new(t.t("col-elapsed"))
            .min(6)
            .right()
            .whole()
            .shrink(4)
            .hide(2),
        Column::new(t.t("col-message"))
            .min(10)
            .fill()
            .shrink(0)
            .hide(1),
    ];
    let role_of = |name: &str| {
        state
            .detail
            .as_ref()
            .and_then(|d| d.cluster.as_ref())
            .and_then(|c| c.machines.iter().find(|m| m.name == name))
            .map(|m| role_word(t, &m.role))
            .unwrap_or_default()
    };
    let rows: Vec<Row> = window
        .range()
        .filter_map(|i| op.machines.get(i).map(|m| (i, m)))
        .map(|(i, m)| {
            let (phase, phase_style) = machine_phase_view(t, &ctx.theme, &m.phase);
            Row::new(vec![
                Cell::new((i + 1).to_string()),
                Cell::name(sanitize(&m.name)),
                Cell::new(role_of(&m.name)).style(ctx.theme.dim()),
                Cell::new(phase).style(phase_style),
                Cell::new(elapsed(state, t, m.started_at, m.finished_at)),
                Cell::new(sanitize(&m.message)),
            ])
        })
        .collect();
    let table = indented(area);
    if rows.is_empty() {
        let id = if op.kind == Some(OperationKind::Ichor) {
            "no-machine-steps"
        } else {
            "no-machine-started"
        };
        let [_, rest] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(table);
        let mut line = Lines::new(usize::from(rest.width));
        line.push(fit(&t.t(id), line.width), ctx.theme.dim());
        line.draw(rest, buf);
    }
    ListTable::new(columns, rows, &ctx.theme).render(table, buf);
}
