//! `?`: every key of the screen, from the key table, in one column or two; on a terminal too
//! short even for two, one column that scrolls, with a marker for what is above and below.

use super::style::Ctx;
use super::text::{fit, width};
use super::widgets::lines::Lines;
use super::widgets::overlay::{centered, clear, titled_block};
use super::widgets::table::Window;
use crate::app::keymap;
use crate::app::state::{Reading, ScrollRoom, State};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Widget;

/// The keys and what they do.
fn rows(state: &State, ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let t = ctx.texts;
    keymap::all(state.screen)
        .map(|b| (b.label.to_string(), t.t(b.hint)))
        .chain([("y / N".to_string(), t.t("help-confirm"))])
        .collect()
}

/// How the keys are laid out over `area`: the box, the columns, and the keys a column shows.
struct Laid {
    rect: Rect,
    columns: u16,
    per_column: usize,
}

/// `n` keys whose widest line is `line_w` columns, over `area`: one column when they fit, two
/// when they fit whole side by side, else one column that scrolls.
fn lay_out(n: usize, line_w: usize, area: Rect) -> Laid {
    // Between the status bar and the footer, with the box's two borders.
    let room = usize::from(area.height.saturating_sub(4)).max(1);
    let two_wide = 2 * (line_w + 2) <= usize::from(area.width.saturating_sub(4)).min(118);
    let two_fit = n.div_ceil(2) <= room && two_wide;
    let (columns, per_column) = if n <= room {
        (1, n)
    } else if two_fit {
        (2, n.div_ceil(2))
    } else {
        (1, room)
    };
    let w = area
        .width
        .saturating_sub(2)
        .min(if columns == 1 { 64 } else { 120 });
    let h = u16::try_from(per_column + 2)
        .unwrap_or(u16::MAX)
        .min(area.height.saturating_sub(2));
    Laid {
        rect: centered(area, w, h),
        columns,
        per_column,
    }
}

/// The widest key, and the widest line of a key and what it does.
fn widths(rows: &[(String, String)]) -> (usize, usize) {
    let key_w = rows.iter().map(|(k, _)| width(k)).max().unwrap_or(4);
    let line_w = rows
        .iter()
        .map(|(_, v)| key_w + 2 + width(v))
        .max()
        .unwrap_or(0);
    (key_w, line_w)
}

/// How many keys there are and how many show, over `area`.
pub fn room(state: &State, ctx: &Ctx<'_>, area: Rect) -> ScrollRoom {
    let rows = rows(state, ctx);
    let n = rows.len();
    let laid = lay_out(n, widths(&rows).1, area);
    ScrollRoom {
        lines: n,
        rows: laid.per_column * usize::from(laid.columns),
    }
}

/// Draws the keys over `area`, scrolled as `r` says.
pub fn render(state: &State, r: &Reading, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let rows = rows(state, ctx);
    let (key_w, line_w) = widths(&rows);
    let laid = lay_out(rows.len(), line_w, area);
    clear(laid.rect, buf);
    let shown = Window::new(
        rows.len(),
        r.scroll,
        laid.per_column * usize::from(laid.columns),
    );
    let mut block = titled_block(t.t("help-title"));
    if let Some(more) = shown.marker(t) {
        block = block.title_bottom(more);
    }
    let inner = block.inner(laid.rect);
    block.render(laid.rect, buf);
    let [_, keys] = Layout::horizontal([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    let col_w = keys.width / laid.columns;
    let areas =
        Layout::horizontal(vec![Constraint::Length(col_w); usize::from(laid.columns)]).split(keys);
    let visible = &rows[shown.range()];
    for (area, chunk) in areas.iter().zip(visible.chunks(laid.per_column.max(1))) {
        let mut lines = Lines::new(usize::from(col_w.saturating_sub(1)));
        for (k, v) in chunk {
            lines.push(format!("{}  {v}", fit(k, key_w)), Default::default());
        }
        lines.draw(*area, buf);
    }
}
