//! The new-operation dialog: the form, then the Review (the plan in words), then Start.

mod form;
mod review;

use super::style::Ctx;
use super::text::sanitize;
use super::widgets::overlay::{clear, dialog_rects};
use super::words::kind_text;
use ichor_app::state::{NewOpStep, NewOperation, ScrollRoom, State};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

/// How long the dialog's text that scrolls (the Review's) is over `area`, and how much shows.
pub(crate) fn room(state: &State, d: &NewOperation, ctx: &Ctx<'_>, area: Rect) -> ScrollRoom {
    match d.step {
        NewOpStep::Form => ScrollRoom::default(),
        NewOpStep::Review | NewOpStep::Starting { .. } => {
            review::room(state, d, ctx, dialog_rects(area).1)
        }
    }
}

/// The rows the dialog needs over `area` (at its width) to be drawn whole: a row above and
/// below it, its borders, and the form, or what the Review cannot scroll.
pub(crate) fn rows_needed(state: &State, d: &NewOperation, ctx: &Ctx<'_>, area: Rect) -> u16 {
    let (_, inner) = dialog_rects(area);
    let around = area.height.saturating_sub(inner.height);
    let rows = match d.step {
        NewOpStep::Form => form::rows_needed(d, ctx, inner.width),
        NewOpStep::Review | NewOpStep::Starting { .. } => review::rows_needed(state, d, ctx, inner),
    };
    rows.saturating_add(around)
}

/// Draws the dialog over `area`: everything between the status bar and the footer.
pub(crate) fn render(state: &State, d: &NewOperation, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let (rect, inner) = dialog_rects(area);
    clear(rect, buf);
    let t = ctx.texts;
    let cluster = sanitize(&d.cluster.name);
    let title = match d.step {
        NewOpStep::Form => t.tr("new-title", &[("cluster", &cluster)]),
        _ => t.tr(
            "review-title",
            &[
                ("kind", &kind_text(t, Some(d.kind), "")),
                ("cluster", &cluster),
            ],
        ),
    };
    let mut block = super::production::dialog_block(state, ctx, title, rect.width);
    let marker = match d.step {
        NewOpStep::Form => form::render(d, ctx, inner, buf),
        NewOpStep::Review | NewOpStep::Starting { .. } => review::render(state, d, ctx, inner, buf),
    };
    if let Some(m) = marker {
        block = block.title_bottom(m);
    }
    block.render(rect, buf);
}
