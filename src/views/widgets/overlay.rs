//! Blocks and overlays: the frame around a screen's body, a dialog centred over the screen.

use crate::text::width;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// The block around a screen's body or a dialog, with its title.
pub(crate) fn titled_block<'a>(title: String, box_width: u16) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .title(format!(" {} ", fit_title(&title, box_width)))
}

/// A title for a box `box_width` columns wide: cut with `…` when it does not fit between the
/// corners and the spaces around it, never cut silently by the border.
fn fit_title(title: &str, box_width: u16) -> String {
    crate::text::truncate(title, usize::from(box_width.saturating_sub(4)))
}

/// A dialog over the whole of `area` (everything between the status bar and the footer) but
/// a row above and below, and where its text goes: inside the border, a column of margin on
/// each side.
pub(crate) fn dialog_rects(area: Rect) -> (Rect, Rect) {
    let [_, rect, _] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let inner = titled_block(String::new(), rect.width).inner(rect);
    let [_, inner, _] = Layout::horizontal([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    (rect, inner)
}

/// A `w`×`h` rectangle in the middle of `area` (no larger than it); an odd row or column left
/// over goes below and to the right.
pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Clears `rect` for an overlay drawn over the screen.
pub(crate) fn clear(rect: Rect, buf: &mut Buffer) {
    Clear.render(rect, buf);
    mend_wide_edges(buf, rect);
}

/// After clearing `rect` for an overlay, blanks half-covered wide characters on its edges: a
/// wide character just left of the overlay would otherwise spill over its border, and the
/// right half of one cut by the right border would be left without its left half.
pub(crate) fn mend_wide_edges(buf: &mut Buffer, rect: Rect) {
    for y in rect.y..rect.y + rect.height {
        if rect.x > buf.area.x {
            let cell = &mut buf[(rect.x - 1, y)];
            if width(cell.symbol()) > 1 {
                cell.set_symbol(" ");
            }
        }
        let right = rect.x + rect.width;
        if right < buf.area.x + buf.area.width {
            let cell = &mut buf[(right, y)];
            if cell.symbol().is_empty() {
                cell.set_symbol(" ");
            }
        }
    }
}
