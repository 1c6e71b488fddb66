//! The Operations screen: kind, cluster, state, progress, age and actor of each operation.

use super::text::{fit, fit_right, sanitize};
use super::widgets::{
    Ctx, bar, duration_text, error_text, kind_text, phase_view, progress_fraction,
};
use crate::app::state::{Input, State};
use crate::model::Operation;
use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

struct Columns {
    namespace: usize,
    name: usize,
    kind: usize,
    cluster: usize,
    state: usize,
    bar: usize,
    count: usize,
    age: usize,
    actor: usize,
}

fn columns(inner_w: usize, all_namespaces: bool) -> Columns {
    let mut c = Columns {
        namespace: if all_namespaces { 12 } else { 0 },
        name: 0,
        kind: 18,
        cluster: 12,
        state: 16,
        bar: 8,
        count: 5,
        age: 5,
        actor: 0,
    };
    let fixed = |c: &Columns| {
        2 + [
            c.namespace,
            c.name,
            c.kind,
            c.cluster,
            c.state,
            c.bar + 1 + c.count,
            c.age,
        ]
        .iter()
        .filter(|w| **w > 0)
        .map(|w| w + 1)
        .sum::<usize>()
    };
    if inner_w >= 120 {
        c.name = 28;
        c.cluster = 14;
        c.bar = 16;
    }
    if fixed(&c) + 8 > inner_w {
        c.kind = 14;
        c.state = 16;
        c.cluster = 10;
        c.bar = 4;
    }
    c.actor = inner_w.saturating_sub(fixed(&c));
    c
}

/// The creation times whose ages are on screen (for the clock).
pub fn visible_since(state: &State) -> impl Iterator<Item = Timestamp> + '_ {
    let rows = usize::from(state.size.1.saturating_sub(super::CHROME_ROWS));
    let ops = state.ops.all.data.as_deref().unwrap_or_default();
    state
        .ops
        .visible
        .iter()
        .skip(state.ops.list.offset)
        .take(rows)
        .filter_map(move |&i| ops.get(i).and_then(|o| o.created_at))
}

fn cells(c: &Columns, cells: [&str; 9]) -> String {
    let widths = [
        c.namespace,
        c.name,
        c.kind,
        c.cluster,
        c.state,
        c.bar,
        c.count,
        c.age,
        c.actor,
    ];
    widths
        .iter()
        .zip(cells)
        .enumerate()
        .filter(|(_, (w, _))| **w > 0)
        .map(|(i, (w, s))| {
            if i == 6 || i == 7 {
                fit_right(s, *w)
            } else {
                fit(s, *w)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The header row: the progress title spans the bar and the count.
fn header(c: &Columns, t: &crate::i18n::Texts) -> String {
    let progress = fit(&t.t("col-progress"), c.bar + 1 + c.count);
    let mut parts = Vec::new();
    for (w, id) in [
        (c.namespace, "col-namespace"),
        (c.name, "col-name"),
        (c.kind, "col-kind"),
        (c.cluster, "col-cluster"),
        (c.state, "col-state"),
    ] {
        if w > 0 {
            parts.push(fit(&t.t(id), w));
        }
    }
    parts.push(progress);
    parts.push(fit_right(&t.t("col-age"), c.age));
    parts.push(fit(&t.t("col-actor"), c.actor));
    parts.join(" ")
}

/// Draws the list into `area`.
pub fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let ops = &state.ops;
    let mut title = match ops.all.data.as_ref() {
        Some(all) => t.tn(
            "operations-title",
            &[("n", fluent_bundle::FluentValue::from(all.len()))],
        ),
        None => t.t("operations-title-loading"),
    };
    if !ops.filter.is_empty() || state.input == Input::Filter {
        let cursor = if state.input == Input::Filter {
            "▏"
        } else {
            ""
        };
        title.push_str(&t.tr(
            "operations-filter",
            &[
                ("filter", &format!("{}{cursor}", sanitize(&ops.filter))),
                ("n", &ops.visible.len().to_string()),
            ],
        ));
    }
    let block = super::body_block(ctx, title);
    let inner = block.inner(area);
    block.render(area, buf);
    let w = usize::from(inner.width);
    let c = columns(w, state.session.all_namespaces);
    let rows_area = super::list_header(ctx, &header(&c, t), inner, buf);
    let Some(all) = ops.all.data.as_ref() else {
        let msg = match &ops.all.error {
            Some(e) => error_text(t, e),
            None => t.t("loading"),
        };
        for (i, l) in super::wrap(&msg, w.saturating_sub(2))
            .iter()
            .enumerate()
            .take(usize::from(rows_area.height))
        {
            buf.set_stringn(
                rows_area.x + 1,
                rows_area.y + i as u16,
                l,
                w,
                Style::default(),
            );
        }
        return;
    };
    if ops.visible.is_empty() {
        let msg = if all.is_empty() {
            if state.session.all_namespaces {
                t.t("operations-empty-all")
            } else {
                t.tr(
                    "operations-empty",
                    &[("ns", &sanitize(&state.session.namespace))],
                )
            }
        } else {
            t.t("operations-no-match")
        };
        buf.set_stringn(
            rows_area.x + 1,
            rows_area.y,
            fit(&msg, w.saturating_sub(1)),
            w,
            ctx.theme.dim(),
        );
    }
    let mut height = usize::from(rows_area.height);
    if let Some(e) = &ops.all.error {
        // Keep the last data on screen and say why it is not fresher.
        height = height.saturating_sub(1);
        let y = rows_area.y + rows_area.height.saturating_sub(1);
        buf.set_stringn(
            rows_area.x + 1,
            y,
            fit(&error_text(t, e), w.saturating_sub(1)),
            w,
            ctx.theme.fg(ratatui::style::Color::Red),
        );
    }
    // The banner may take rows `update` counted as list rows: keep the selection in view.
    let offset = ops
        .list
        .offset
        .max((ops.list.selected + 1).saturating_sub(height));
    for (row, &idx) in ops.visible.iter().enumerate().skip(offset).take(height) {
        let Some(op) = all.get(idx) else { continue };
        let y = rows_area.y + u16::try_from(row - offset).unwrap_or(0);
        let selected = row == ops.list.selected;
        draw_row(state, ctx, &c, op, selected, rows_area.x, y, w, buf);
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_row(
    state: &State,
    ctx: &Ctx<'_>,
    c: &Columns,
    op: &Operation,
    selected: bool,
    x: u16,
    y: u16,
    w: usize,
    buf: &mut Buffer,
) {
    let t = ctx.texts;
    let age = op
        .created_at
        .map(|at| duration_text(t, state.now.duration_since(at)))
        .unwrap_or_default();
    // An object that cannot be read: its kind and state say so, and the last column why.
    let (state_text, state_style, line) = if let Some(why) = &op.unreadable {
        let state_text = format!("⚠ {}", t.t("state-unreadable"));
        let line = cells(
            c,
            [
                &sanitize(&op.namespace),
                &sanitize(&op.name),
                &t.t("kind-unreadable"),
                &sanitize(&op.cluster),
                &state_text,
                "",
                "",
                &age,
                &sanitize(why),
            ],
        );
        let style = ctx
            .theme
            .fg(ratatui::style::Color::Red)
            .add_modifier(ratatui::style::Modifier::BOLD);
        (state_text, style, line)
    } else {
        let (state_text, state_style) = phase_view(t, &ctx.theme, op);
        let (done, total) = op.progress();
        let count = if total == 0 {
            "—".to_string()
        } else {
            format!("{done}/{total}")
        };
        let kind = if c.name > 0 {
            kind_text(t, op.kind, &op.kind_raw)
        } else {
            super::widgets::kind_short(t, op.kind, &op.kind_raw)
        };
        let line = cells(
            c,
            [
                &sanitize(&op.namespace),
                &sanitize(&op.name),
                &kind,
                &sanitize(&op.cluster),
                &state_text,
                &bar(progress_fraction(op), c.bar),
                &count,
                &age,
                &sanitize(op.actor.as_deref().unwrap_or("")),
            ],
        );
        (state_text, state_style, line)
    };
    let row_style = super::list_row(ctx, selected, &line, x, y, w, buf);
    // The state cell carries its colour (and stays bold/reversed when selected).
    let state_x = 2 + [c.namespace, c.name, c.kind, c.cluster]
        .iter()
        .filter(|v| **v > 0)
        .map(|v| v + 1)
        .sum::<usize>();
    if state_x + c.state <= w {
        let sx = x + u16::try_from(state_x).unwrap_or(0);
        buf.set_stringn(
            sx,
            y,
            fit(&state_text, c.state),
            c.state,
            row_style.patch(state_style),
        );
    }
}
