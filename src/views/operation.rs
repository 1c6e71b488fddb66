//! One operation's page: what it is, where it is, and every machine in executor order.

use super::style::Ctx;
use super::text::{fit, sanitize};
use super::widgets::lines::{Lines, indented};
use super::widgets::overlay::titled_block;
use super::widgets::progress::bar;
use super::widgets::table::{Cell, Column, ListTable, Row, Window};
use super::words::{
    elapsed, error_text, hhmm, kind_text, machine_phase_view, phase_view, role_word,
    widest_machine_phase,
};
use ichor_app::state::{DetailState, State, follow_scroll};
use ichor_model::inert::width;
use ichor_model::{Code, MachinePhase, Operation, OperationKind, Phase};
use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

/// The width of the labels before the facts.
const LABEL_WIDTH: usize = 12;
/// The rows the machine table keeps however much the facts say: its header and three machines.
const TABLE_KEEPS: usize = 4;

/// The start times whose elapsed time is on screen (for the clock).
pub(crate) fn visible_since(state: &State) -> impl Iterator<Item = Timestamp> + '_ {
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
pub(super) fn field(label: &str, value: String) -> String {
    // A label as wide as the column is said whole, the value after it.
    if width(label) < LABEL_WIDTH {
        format!("{}{value}", fit(label, LABEL_WIDTH))
    } else {
        format!("{label} {value}")
    }
}

/// Draws the page into `area`.
/// The page's title: the kind and the cluster, or what is known.
fn title(ctx: &Ctx<'_>, d: &DetailState) -> String {
    let t = ctx.texts;
    match &d.op.data {
        Some(op) if op.unreadable.is_some() => {
            format!("{} · {}", t.t("kind-unreadable"), sanitize(&op.name))
        }
        Some(op) => format!(
            "{} · {}",
            kind_text(t, op.kind, &op.kind_raw),
            sanitize(&op.cluster)
        ),
        None => sanitize(&d.name),
    }
}

pub(crate) fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let Some(d) = state.detail.as_ref() else {
        return;
    };
    let mut block = titled_block(title(ctx, d), area.width);
    let inner = block.inner(area);
    let text = indented(inner);
    let mut lines = Lines::new(usize::from(text.width)).margin(1);
    // Refused credentials are the banner's to say.
    if let Some(e) = super::words::screen_error(state, d.op.error.as_ref()) {
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
            facts(state, ctx, op, false, &mut lines);
            notes(state, ctx, op, false, &mut lines);
            Some(op)
        }
        None => None,
    };
    // On a short terminal the facts leave the machines a few rows: what does not fit is
    // counted, and Enter shows it all.
    // (No more than the table needs: its header and a row a machine, or the line that says
    // none has started.)
    let table_rows = op.map_or(0, |op| TABLE_KEEPS.min(1 + op.machines.len().max(1)));
    let facts_rows = usize::from(inner.height).saturating_sub(table_rows).max(2);
    let more = |n: usize| t.tn("page-more", &[("n", n.into())]);
    lines.cut_to(facts_rows, more, ctx.theme.dim());
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
pub(super) fn unreadable(ctx: &Ctx<'_>, op: &Operation, lines: &mut Lines) {
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

/// The page's state: gone (and when it was last seen) once a read says it no longer exists;
/// else its phase, and the time of the data beside it while that may be out of date (nothing
/// counts on then); else its phase with the time in it.
fn state_view(
    state: &State,
    ctx: &Ctx<'_>,
    op: &Operation,
    timing: &ichor_model::Timing,
) -> (String, Style) {
    let t = ctx.texts;
    if let Some(seen) = state.detail.as_ref().and_then(|d| d.gone()) {
        let text = match seen {
            Some(at) => t.tr("state-gone", &[("time", &hhmm(state, at))]),
            None => t.t("state-gone-unseen"),
        };
        return (format!("✗ {text}"), ctx.theme.alarm());
    }
    let (text, style) = phase_view(t, &ctx.theme, op);
    match state.data_time() {
        Some(at) => {
            let stale = t.tr("state-data-from", &[("time", &hhmm(state, at))]);
            (format!("{text}{stale}"), style)
        }
        None => (super::pace::state_with_time(state, t, text, timing), style),
    }
}

/// What the operation is: name, state, versions, who started (and paused) it, how long it has
/// run and how far it is.
pub(super) fn facts(state: &State, ctx: &Ctx<'_>, op: &Operation, whole: bool, lines: &mut Lines) {
    let t = ctx.texts;
    lines.push(
        field(&t.t("field-name"), sanitize(&op.name)),
        Style::default(),
    );
    let timing = state.pace.timing(op, super::pace::as_of(state));
    let (state_text, state_style) = state_view(state, ctx, op, &timing);
    lines.hanging(
        &fit(&t.t("field-state"), LABEL_WIDTH),
        &state_text,
        state_style,
    );
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
    history_field(state, ctx, op, whole, lines);
    let took = elapsed(state, t, op.started_at.or(op.created_at), op.finished_at);
    lines.push(field(&t.t("field-elapsed"), took), Style::default());
    let advance = op.advance();
    let id = match advance.rotation {
        Some(_) => "machine-passes-done",
        None => "machines-done",
    };
    let count = if advance.total == 0 {
        "—".to_string()
    } else {
        t.tn(
            id,
            &[
                ("done", advance.done.into()),
                ("total", advance.total.into()),
            ],
        )
    };
    // The page's width less its margin: the bar takes what the label and the count leave.
    let bar_w = (lines.width + 1)
        .saturating_sub(LABEL_WIDTH + 16)
        .clamp(5, 40);
    let progress = format!("{} {count}", bar(op.fraction(), bar_w));
    lines.push(field(&t.t("field-progress"), progress), Style::default());
    // An estimate counts on from the data: only while it is fresh and the operation is there.
    let gone = state.detail.as_ref().and_then(|d| d.gone());
    let fresh = state.data_time().is_none() && gone.is_none();
    let said = super::pace::estimate_text(t, &timing.estimate);
    if let Some(e) = said.filter(|_| fresh) {
        let label = fit(&t.t("field-estimate"), LABEL_WIDTH);
        lines.hanging(&label, &e, ctx.theme.dim());
    }
}

/// Who paused, resumed or asked for a delete, and when (the last few on the page, every one
/// when read whole); an operation paused before the history was kept says who last paused or
/// resumed it.
fn history_field(state: &State, ctx: &Ctx<'_>, op: &Operation, whole: bool, lines: &mut Lines) {
    let t = ctx.texts;
    let max = if whole {
        usize::MAX
    } else {
        super::history::ON_PAGE
    };
    let (shown, earlier) = super::history::shown(&op.history, max);
    if shown.is_empty() {
        if let (Some(by), true) = (&op.paused_by, op.history.is_empty()) {
            let when = op.paused_at.map(|at| hhmm(state, at)).unwrap_or_default();
            let id = if op.paused { "paused-by" } else { "resumed-by" };
            let said = t.tr(id, &[("user", &sanitize(by)), ("time", &when)]);
            lines.push(field("", said), ctx.theme.dim());
        }
        return;
    }
    let clock = super::history::clock_in(&state.tz, state.now);
    let mut said: Vec<String> = shown
        .iter()
        .map(|e| super::history::entry_at(t, e, &clock))
        .collect();
    if earlier > 0 {
        said.insert(0, t.tn("history-earlier", &[("n", earlier.into())]));
    }
    for (i, s) in said.iter().enumerate() {
        let label = if i == 0 {
            t.t("field-history")
        } else {
            String::new()
        };
        lines.hanging(&fit(&label, LABEL_WIDTH), s, Style::default());
    }
}

/// What needs saying besides: the CA pass, the slow machines, the lock waited for (and since
/// when), the failure and what to do.
pub(super) fn notes(state: &State, ctx: &Ctx<'_>, op: &Operation, whole: bool, lines: &mut Lines) {
    let t = ctx.texts;
    if let Some(ca) = &op.ca_rotation {
        let said = match ca.pass_view() {
            Some(r) => t.tn(
                "ca-pass",
                &[
                    ("pass", r.pass.into()),
                    ("passes", r.passes.into()),
                    ("stage", stage_text(t, &r.stage).into()),
                ],
            ),
            None => t.t("ca-preparing"),
        };
        lines.push(
            field(&t.t("field-ca-pass"), said),
            ctx.theme.fg(Color::Cyan),
        );
    }
    let d = state.detail.as_ref();
    let events = d.and_then(|d| d.events.data.as_deref()).unwrap_or_default();
    super::pace::slow_notes(
        state,
        ctx,
        &state.pace.timing(op, super::pace::as_of(state)),
        events,
        lines,
    );
    if let Some(holder) = op.lock_holder() {
        let holder = sanitize(holder);
        let said = match op.lock_condition().and_then(|c| c.last_transition_time) {
            Some(at) => t.tr(
                "waiting-for-lock-since",
                &[("holder", &holder), ("time", &hhmm(state, at))],
            ),
            None => t.tr("waiting-for-lock", &[("holder", &holder)]),
        };
        lines.hanging("", &said, ctx.theme.fg(Color::Yellow));
    }
    rotation_notes(ctx, op, lines);
    // A completed rotation's page says what the cluster says of its bundle's backup.
    let cluster = d.and_then(|d| d.cluster.as_ref());
    if op.kind == Some(OperationKind::CaRotation)
        && op.phase == Phase::Completed
        && let Some(c) = cluster
    {
        super::pace::stale_bundle(state, ctx, c, lines);
    }
    if op.paused_by_failure() || op.phase == Phase::Failed {
        let gone = d.and_then(|d| d.gone()).is_some();
        for (i, part) in failure_text(t, op, whole, gone).iter().enumerate() {
            let mark = if i == 0 { "✗ " } else { "  " };
            lines.hanging(mark, part, ctx.theme.alarm());
        }
    }
    lines.blank();
}

/// What the failure was, once: the failed machine and what it said (the operation's reason
/// too, unless it only repeats it), or that the operation itself failed and why; then that
/// nothing retries and nothing is rolled back.
fn failure_text(t: &crate::i18n::Texts, op: &Operation, whole: bool, gone: bool) -> Vec<String> {
    let reason = op
        .failure_reason
        .as_deref()
        .map(sanitize)
        .filter(|r| !r.trim().is_empty());
    let mut parts = Vec::new();
    match op.failed_machine() {
        Some(m) => {
            let machine = sanitize(&m.name);
            let said = sanitize(&m.message);
            if said.trim().is_empty() {
                parts.push(t.tr("failure-machine", &[("machine", &machine)]));
            } else {
                parts.push(t.tr(
                    "failure-machine-said",
                    &[("machine", &machine), ("message", &said)],
                ));
            }
            let adds = |r: &String| whole || said.trim().is_empty() || !r.contains(&said);
            if let Some(r) = reason.filter(adds) {
                parts.push(t.tr("failure-reason", &[("reason", &r)]));
            }
        }
        None => parts.push(match reason {
            Some(r) => t.tr("failure-operation", &[("reason", &r)]),
            None => t.t("failure-operation-no-reason"),
        }),
    }
    // Once it is gone there is nothing to delete: a new start is all there is to do.
    parts.push(t.t(match gone {
        true => "failure-advice-gone",
        false => "failure-advice",
    }));
    parts
}

/// A CA rotation's word to the operator: when the new credentials await them, what to run to
/// fetch them; when it completed, that their copy of the secrets bundle is stale.
fn rotation_notes(ctx: &Ctx<'_>, op: &Operation, lines: &mut Lines) {
    let t = ctx.texts;
    if op.kind != Some(OperationKind::CaRotation) {
        return;
    }
    let name = sanitize(&op.cluster);
    let awaiting = op
        .ca_rotation
        .as_ref()
        .is_some_and(ichor_model::CaRotation::awaits_credentials);
    let id = match &op.phase {
        Phase::Completed => "ca-completed-bundle",
        p if awaiting && !p.is_finished() => "ca-awaiting-credentials",
        _ => return,
    };
    let style = ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD);
    lines.hanging("⚠ ", &t.tr(id, &[("name", &name)]), style);
}

/// A CA rotation's stage in words; a stage nobody knows is cluster text, made inert.
fn stage_text(t: &crate::i18n::Texts, stage: &str) -> String {
    let id = format!("ca-stage-{}", stage.to_lowercase());
    if t.has(&id) {
        t.t(&id)
    } else {
        sanitize(stage)
    }
}

/// The machine rows on screen: where the person scrolled, else following the machine that
/// matters.
fn machine_window(d: &DetailState, op: &Operation, table: Rect) -> Window {
    let rows = usize::from(table.height.saturating_sub(1));
    let scroll = d.scroll.unwrap_or_else(|| follow_scroll(op, rows));
    Window::new(op.machines.len(), scroll, rows)
}

/// A running machine past its bound: "⚠ Slow", in yellow.
fn slow_phase(t: &crate::i18n::Texts, theme: &super::style::Theme) -> (String, Style) {
    let style = theme.fg(Color::Yellow).add_modifier(Modifier::BOLD);
    (format!("⚠ {}", t.t("mphase-slow")), style)
}

/// A machine's role as the cluster says it; nothing while the cluster is not read.
fn role_of(state: &State, t: &crate::i18n::Texts, name: &str) -> String {
    state
        .detail
        .as_ref()
        .and_then(|d| d.cluster.as_ref())
        .and_then(|c| c.machines.iter().find(|m| m.name == name))
        .map(|m| role_word(t, &m.role))
        .unwrap_or_default()
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
    let role_of = |name: &str| role_of(state, t, name);
    // As wide as the roles shown need (a cluster not read yet shows none).
    let roles = window
        .range()
        .filter_map(|i| op.machines.get(i))
        .map(|m| width(&role_of(&m.name)))
        .max()
        .unwrap_or(0);
    // While it runs, the time column keeps the width of a time against a pace.
    let time_w = match op.phase {
        Phase::Running => super::pace::paced_time_width(state, t, op).max(6),
        _ => 6,
    };
    let columns = machine_columns(t, roles, time_w);
    let timing = state.pace.timing(op, super::pace::as_of(state));
    let rows: Vec<Row> = window
        .range()
        .filter_map(|i| op.machines.get(i).map(|m| (i, m)))
        .map(|(i, m)| {
            let running = timing.running.iter().find(|r| r.name == m.name);
            let (phase, phase_style) = match running {
                Some(r) if r.slow => slow_phase(t, &ctx.theme),
                _ => machine_phase_view(t, &ctx.theme, &m.phase),
            };
            let time = match running {
                Some(r) => super::pace::machine_time(state, t, r),
                None => elapsed(state, t, m.started_at, m.finished_at),
            };
            Row::new(vec![
                Cell::new((i + 1).to_string()),
                Cell::name(sanitize(&m.name)),
                Cell::new(role_of(&m.name)).style(ctx.theme.dim()),
                Cell::new(phase).style(phase_style),
                Cell::new(time),
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

/// The machines' columns; the roles' as wide as `roles` (the widest shown), the times' at
/// least `time_w`.
fn machine_columns(t: &crate::i18n::Texts, roles: usize, time_w: usize) -> Vec<Column> {
    vec![
        Column::new("#").min(3).right().shrink(5).hide(3),
        Column::new(t.t("col-machine")).min(12).shrink(1).hide(5),
        Column::new(t.t("col-role"))
            .min(roles.max(width(&t.t("col-role"))))
            .shrink(2)
            .hide(0),
        Column::new(t.t("col-phase"))
            .min(widest_machine_phase(t))
            .whole()
            .shrink(3)
            .hide(4),
        Column::new(t.t("col-elapsed"))
            .min(time_w)
            .right()
            .whole()
            .shrink(4)
            .hide(2),
        Column::new(t.t("col-message"))
            .min(10)
            .fill()
            .shrink(0)
            .hide(1),
    ]
}
