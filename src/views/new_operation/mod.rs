//! The new-operation dialog: the form, then the Review (the plan in words), then Start.

mod form;
mod review;

use super::style::Ctx;
use super::text::sanitize;
use super::widgets::overlay::{clear, titled_block};
use super::words::kind_text;
use crate::app::state::{NewOpStep, NewOperation};
use crate::model::{OperationEffect, OperationKind};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Widget;

/// Draws the dialog over `area`: everything between the status bar and the footer.
pub fn render(d: &NewOperation, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let [_, rect, _] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
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
    let block = titled_block(title);
    let inner = block.inner(rect);
    block.render(rect, buf);
    // A column of margin on each side.
    let [_, inner, _] = Layout::horizontal([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    match d.step {
        NewOpStep::Form => form::render(d, ctx, inner, buf),
        NewOpStep::Review | NewOpStep::Starting { .. } => review::render(d, ctx, inner, buf),
    }
}

/// The message id of what a kind does to the machines.
fn effect_id(kind: OperationKind) -> &'static str {
    match OperationEffect::of(kind) {
        OperationEffect::Reboot => "effect-reboot",
        OperationEffect::RestartComponents => "effect-restart",
        OperationEffect::Stop => "effect-stop",
        OperationEffect::None => "effect-none",
        OperationEffect::CaRotation => "effect-ca-rotation",
    }
}
