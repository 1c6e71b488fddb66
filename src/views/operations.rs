//! The Operations screen: the list [`super::listing`] defines (name, kind, target, cluster,
//! state, progress, estimate, age and actor of each operation, and its namespace with `-A`),
//! drawn with glyphs, colours and bars, windowed and filtered.

use super::listing;
use super::style::Ctx;
use super::text::sanitize;
use super::widgets::lines::{Lines, indented, message};
use super::widgets::overlay::titled_block;
use super::widgets::table::{Cell, Column, ListTable, Row, Window};
use super::words::error_text;
use ichor_app::state::{Input, State};
use ichor_model::{Operation, Order, Timing};
use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::widgets::Widget;

/// The creation times whose ages are on screen (for the clock).
pub(crate) fn visible_since(state: &State) -> impl Iterator<Item = Timestamp> + '_ {
    state.list_rows_shown().filter_map(|o| o.created_at)
}

/// The columns as the dashboard draws them ([`super::listing`] defines them and how they give
/// way): the column the list is ordered by says so, and which way (↑: its own direction, A to
/// Z, newest first, what needs attention first; ↓: the other).
fn columns(ctx: &Ctx<'_>, all_namespaces: bool, order: Order, estimates: bool) -> Vec<Column> {
    let t = ctx.texts;
    listing::columns(all_namespaces, estimates, false)
        .into_iter()
        .map(|c| {
            let mut header = t.t(c.header_id());
            if c.sorts() == Some(order.by) && order != Order::default() {
                header.push_str(if order.reversed { "↓" } else { "↑" });
            }
            let give = c.give();
            let mut min = give.min;
            if give.min_header {
                min = min.max(super::text::width(&header));
            }
            let mut col = Column::new(header)
                .min(min)
                .shrink(give.shrink)
                .hide(give.hide);
            if give.whole {
                col = col.whole();
            }
            if give.right {
                col = col.right();
            }
            if give.fill {
                col = col.fill();
            }
            if let Some(level) = give.yields_to {
                col = col.yields_to(level);
            }
            col
        })
        .collect()
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
    let timings: Vec<&Timing> = shown.iter().map(|(_, timing)| timing).collect();
    let estimates = listing::any_estimate(ctx.texts, &timings);
    let cols = listing::columns(state.session.all_namespaces, estimates, false);
    let rows = shown
        .iter()
        .map(|(op, timing)| {
            let row = listing::RowOf {
                op,
                timing,
                now: state.now,
            };
            let cells = cols
                .iter()
                .map(|c| cell(ctx, listing::cell(ctx.texts, *c, &row)))
                .collect();
            Row::new(cells)
        })
        .collect();
    (rows, estimates)
}

/// A cell of the list as the dashboard draws it: the glyph before the words, a bar beside a
/// count, in its colour.
fn cell(ctx: &Ctx<'_>, c: listing::ListCell) -> Cell {
    let style = c.tone.style(&ctx.theme);
    let text = c.with_glyph();
    let cell = match c.content {
        listing::Content::Name => Cell::name(text),
        listing::Content::Bar(fraction) => Cell::bar(fraction, text),
        listing::Content::Text => Cell::new(text),
        listing::Content::Note => Cell::new(text).spanning(),
    };
    match c.short {
        Some(short) => cell.short(short),
        None => cell,
    }
    .style(style)
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
