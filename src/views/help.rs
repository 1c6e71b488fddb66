//! `?`: every key of the screen, from the key table, in one column or two.

use super::style::Ctx;
use super::text::{fit, width};
use super::widgets::lines::Lines;
use super::widgets::overlay::{centered, clear, titled_block};
use super::widgets::table::Window;
use crate::app::keymap;
use crate::app::state::State;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Widget;

/// Draws the keys over `area`.
pub fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let rows: Vec<(String, String)> = keymap::all(state.screen)
        .map(|b| (b.label.to_string(), t.t(b.hint)))
        .chain([("y / N".to_string(), t.t("help-confirm"))])
        .collect();
    let key_w = rows.iter().map(|(k, _)| width(k)).max().unwrap_or(4);
    // One column when it fits between the status bar and the footer, else two.
    let fits = rows.len() + 2 <= usize::from(area.height.saturating_sub(2));
    let columns: u16 = if fits { 1 } else { 2 };
    let per_column = rows.len().div_ceil(usize::from(columns));
    let w = area
        .width
        .saturating_sub(2)
        .min(if fits { 64 } else { 120 });
    let h = (u16::try_from(per_column).unwrap_or(20) + 2).min(area.height.saturating_sub(2));
    let rect = centered(area, w, h);
    clear(rect, buf);
    // Keys that do not fit even in two columns: each column is filled to the height, and the
    // keys left over are counted, not dropped in silence.
    let per_column = per_column.min(usize::from(h.saturating_sub(2)));
    let shown = Window::new(rows.len(), 0, per_column * usize::from(columns));
    let mut block = titled_block(t.t("help-title"));
    if let Some(more) = shown.marker(t) {
        block = block.title_bottom(more);
    }
    let inner = block.inner(rect);
    block.render(rect, buf);
    let [_, keys] = Layout::horizontal([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    let col_w = keys.width / columns;
    let areas =
        Layout::horizontal(vec![Constraint::Length(col_w); usize::from(columns)]).split(keys);
    for (area, chunk) in areas.iter().zip(rows.chunks(per_column.max(1))) {
        let mut lines = Lines::new(usize::from(col_w.saturating_sub(1)));
        for (k, v) in chunk {
            lines.push(format!("{}  {v}", fit(k, key_w)), Default::default());
        }
        lines.draw(*area, buf);
    }
}
