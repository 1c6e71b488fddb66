//! The Operations screen: name, kind, cluster, state, progress, age and actor of each
//! operation (and its namespace with `-A`).

use super::style::Ctx;
use super::text::sanitize;
use super::widgets::lines::{Lines, indented, message};
use super::widgets::overlay::titled_block;
use super::widgets::table::{Cell, Column, ListTable, Row, Window};
use super::words::{duration_text, error_text, kind_short, kind_text, machine_count, phase_view};
use ichor_app::state::{Input, State};
use ichor_model::{Operation, Order, SortBy, Timing};
use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier};
use ratatui::widgets::Widget;

/// The creation times whose ages are on screen (for the clock).
pub(crate) fn visible_since(state: &State) -> impl Iterator<Item = Timestamp> + '_ {
    state.list_rows_shown().filter_map(|o| o.created_at)
}

/// The columns, and how they give way on a narrow terminal: the actor and the bar narrow first
/// (down to the count alone), then the kind and the target to their short words, the
/// cluster and the namespace, and only then the name (cut in the middle, marked `…`: operations differ at the end
/// of their names); the state and the age are shown whole. Columns are hidden only when even
/// that does not fit (40 columns): the name and the state are the last.
fn columns(ctx: &Ctx<'_>, all_namespaces: bool, order: Order, estimates: bool) -> Vec<Column> {
    let t = ctx.texts;
    // The column the list is ordered by says so, and which way (↑: its own direction, A to
    // Z, newest first, what needs attention first; ↓: the other).
    let head = |id: &str, by: Option<SortBy>| match by {
        Some(b) if b == order.by && order != Order::default() => {
            format!("{}{}", t.t(id), if order.reversed { "↓" } else { "↑" })
        }
        _ => t.t(id),
    };
    let mut cols = Vec::new();
    if all_namespaces {
        cols.push(Column::new(t.t("col-namespace")).min(8).shrink(5).hide(3));
    }
    cols.extend([
        Column::new(head("col-name", Some(SortBy::Name)))
            .min(12)
            .shrink(6)
            .hide(7),
        Column::new(t.t("col-kind")).shrink(2).hide(5),
        // Never narrower than its header: when no row on screen records a target, it stays
        // (empty) rather than give way before the name.
        Column::new(t.t("col-target"))
            .min(super::text::width(&t.t("col-target")))
            .shrink(3)
            .hide(3),
        Column::new(t.t("col-cluster")).min(8).shrink(4).hide(4),
        Column::new(head("col-state", Some(SortBy::State)))
            .whole()
            .shrink(7)
            .hide(6),
        Column::new(t.t("col-progress")).shrink(1).hide(1),
    ]);
    // The estimate, where a row has one and there is room (hidden first).
    if estimates {
        cols.push(
            Column::new(t.t("col-left"))
                .right()
                .whole()
                .spare()
                .shrink(0)
                .hide(0),
        );
    }
    cols.extend([
        Column::new(head("col-age", Some(SortBy::Age)))
            .right()
            .whole()
            .shrink(8)
            .hide(2),
        Column::new(t.t("col-actor"))
            .min(8)
            .fill()
            .shrink(0)
            .hide(0),
    ]);
    cols
}

/// Draws the list into `area`.
pub(crate) fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let ops = &state.ops;
    let mut block = titled_block(title(state, ctx), area.width);
    let inner = block.inner(area);
    let [header, rows_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    let Some(all) = ops.all.data.as_ref() else {
        block.render(area, buf);
        ListTable::new(
            columns(ctx, state.session.all_namespaces, state.ops.order, false),
            Vec::new(),
            &ctx.theme,
        )
        .selected(None)
        .render(header, buf);
        let msg = match &ops.all.error {
            Some(e) => error_text(t, e),
            None => t.t("loading"),
        };
        message(&msg, Default::default(), rows_area, buf);
        return;
    };
    let banner = usize::from(banner(state, ctx, rows_area, buf));
    let height = usize::from(rows_area.height).saturating_sub(banner);
    // The banner may take rows `update` counted as list rows: keep the selection in view.
    let offset = ops
        .list
        .offset
        .max((ops.list.selected + 1).saturating_sub(height));
    let window = Window::new(ops.visible.len(), offset, height).with_unloaded(unloaded(state));
    if let Some(more) = window.marker(t) {
        block = block.title_bottom(more);
    }
    block.render(area, buf);
    let (rows, estimates) = rows(state, ctx, &ops.visible[window.range()], all);
    if rows.is_empty() {
        // With a filter the server filters too: nothing held can mean nothing matched.
        empty(
            state,
            ctx,
            all.is_empty() && ops.filter.is_empty(),
            rows_area,
            buf,
        );
    }
    let table_h = u16::try_from(rows.len()).unwrap_or(0).saturating_add(1);
    let selected = (window.range().contains(&ops.list.selected))
        .then(|| ops.list.selected - window.range().start);
    ListTable::new(
        columns(
            ctx,
            state.session.all_namespaces,
            state.ops.order,
            estimates,
        ),
        rows,
        &ctx.theme,
    )
    .selected(selected)
    .render(
        Rect {
            height: table_h.min(inner.height),
            ..inner
        },
        buf,
    );
}

/// The banner, on the last row of `area`, that says refused credentials and what to do (the
/// error said once; the last data stays on screen). Whether it is shown.
fn banner(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) -> bool {
    let Some(e) = super::words::screen_error(state, state.ops.all.error.as_ref()) else {
        return false;
    };
    let mut line = Lines::new(usize::from(area.width.saturating_sub(1)));
    line.push(
        super::text::fit(&error_text(ctx.texts, e), line.width),
        ctx.theme.fg(Color::Red),
    );
    let [_, last] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(indented(area));
    line.draw(last, buf);
    area.height > 0
}

/// The rows of the operations `visible` (indexes into `all`), with their times; and whether
/// one of them has an estimate (then the list has its column).
fn rows(state: &State, ctx: &Ctx<'_>, visible: &[usize], all: &[Operation]) -> (Vec<Row>, bool) {
    let shown: Vec<(&Operation, Timing)> = visible
        .iter()
        .filter_map(|&i| all.get(i))
        .map(|op| (op, state.pace.timing(op, state.now)))
        .collect();
    let estimates = shown
        .iter()
        .any(|(_, timing)| super::pace::estimate_short(ctx.texts, &timing.estimate).is_some());
    let rows = shown
        .iter()
        .map(|(op, timing)| row(state, ctx, op, timing, estimates))
        .collect();
    (rows, estimates)
}

/// Whether the rows held are the server's answer to the filter as typed now.
fn answered_for_filter(state: &State) -> bool {
    state.ops.paging.asked.1 == state.ops.filter
}

/// The rows the server has after the last one held, for the filter as typed now.
fn unloaded(state: &State) -> usize {
    let ops = &state.ops;
    match (answered_for_filter(state), ops.all.data.as_ref()) {
        (true, Some(all)) => ops.paging.total.saturating_sub(all.len()),
        _ => 0,
    }
}

/// The title: how many operations (on the server, not only the rows held), and the filter
/// when one is typed or kept.
fn title(state: &State, ctx: &Ctx<'_>) -> String {
    let t = ctx.texts;
    let ops = &state.ops;
    let mut title = match ops.all.data.as_ref() {
        Some(all) => t.tn(
            "operations-title",
            &[(
                "n",
                fluent_bundle::FluentValue::from(ops.paging.unfiltered_total.max(all.len())),
            )],
        ),
        None => t.t("operations-title-loading"),
    };
    if let Some(cluster) = &ops.cluster {
        title.push_str(&t.tr("operations-cluster", &[("cluster", &sanitize(cluster))]));
    }
    if !ops.filter.is_empty() || state.input == Input::Filter {
        let cursor = if state.input == Input::Filter {
            "▏"
        } else {
            ""
        };
        title.push_str(&t.tn(
            "operations-filter",
            &[
                (
                    "filter",
                    format!("{}{cursor}", sanitize(&ops.filter)).into(),
                ),
                ("n", (ops.visible.len() + unloaded(state)).into()),
            ],
        ));
    }
    title
}

/// No operation to list: none at all, or none that the filter lets through.
fn empty(state: &State, ctx: &Ctx<'_>, none_at_all: bool, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let msg = if !none_at_all {
        t.t("operations-no-match")
    } else if let Some(cluster) = &state.ops.cluster {
        t.tr(
            "operations-empty-cluster",
            &[("cluster", &sanitize(cluster))],
        )
    } else if state.session.all_namespaces {
        t.t("operations-empty-all")
    } else {
        t.tr(
            "operations-empty",
            &[("ns", &sanitize(&state.session.namespace))],
        )
    };
    let area = indented(area);
    let mut line = Lines::new(usize::from(area.width));
    line.push(super::text::fit(&msg, line.width), ctx.theme.dim());
    line.draw(area, buf);
}

/// One operation's row. An object that cannot be read: its kind and state say so, and the last
/// column why. A running operation with a slow machine says so in its state, in yellow; its
/// estimate has a column when one row has one.
fn row(state: &State, ctx: &Ctx<'_>, op: &Operation, timing: &Timing, estimates: bool) -> Row {
    let t = ctx.texts;
    let age = op
        .created_at
        .map(|at| duration_text(t, state.now.duration_since(at)))
        .unwrap_or_default();
    let mut cells = Vec::with_capacity(8);
    if state.session.all_namespaces {
        cells.push(Cell::new(sanitize(&op.namespace)));
    }
    cells.push(Cell::name(sanitize(&op.name)));
    if let Some(why) = &op.unreadable {
        cells.extend([
            Cell::new(t.t("kind-unreadable")),
            Cell::new(""),
            Cell::new(sanitize(&op.cluster)),
            Cell::new(format!("⚠ {}", t.t("state-unreadable"))).style(ctx.theme.alarm()),
            Cell::new(""),
        ]);
        if estimates {
            cells.push(Cell::new(""));
        }
        cells.extend([Cell::new(age), Cell::new(sanitize(why))]);
    } else {
        let (state_text, state_style) = match timing.slow() {
            true => (
                format!("⚠ {}", t.t("state-slow")),
                ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            ),
            false => phase_view(t, &ctx.theme, op),
        };
        cells.extend([
            Cell::new(kind_text(t, op.kind, &op.kind_raw)).short(kind_short(
                t,
                op.kind,
                &op.kind_raw,
            )),
            target_cell(op),
            Cell::new(sanitize(&op.cluster)),
            Cell::new(state_text).style(state_style),
            Cell::bar(op.fraction(), machine_count(op)),
        ]);
        if estimates {
            let e = super::pace::estimate_short(t, &timing.estimate).unwrap_or_default();
            cells.push(Cell::new(e).style(ctx.theme.dim()));
        }
        cells.extend([
            Cell::new(age),
            Cell::new(sanitize(op.actor.as_deref().unwrap_or(""))),
        ]);
    }
    Row::new(cells)
}

/// Where the operation goes, as its start recorded it: the value before and the target, or
/// only the target (under the TARGET header) when the column is narrow; nothing when none was
/// recorded.
fn target_cell(op: &Operation) -> Cell {
    match (&op.current, &op.target) {
        (Some(cur), Some(tgt)) => {
            Cell::new(format!("{} → {}", sanitize(cur), sanitize(tgt))).short(sanitize(tgt))
        }
        (None, Some(tgt)) => Cell::new(sanitize(tgt)),
        _ => Cell::new(""),
    }
}
