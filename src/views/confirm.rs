//! The y/N question before a write: what it does to which operation, No by default.

use super::style::Ctx;
use super::text::{sanitize, truncate};
use super::widgets::lines::Lines;
use super::widgets::overlay::{centered, clear};
use super::words::action_id;
use ichor_app::state::{AskedAbout, Confirm, State, WriteAction};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// The widest the question's text runs.
const TEXT_WIDTH: u16 = 64;

/// The question's text, wrapped to the width it takes over `area`, and that width.
fn body(c: &Confirm, ctx: &Ctx<'_>, area: Rect) -> (Lines, u16) {
    let t = ctx.texts;
    let name = sanitize(&c.name);
    // What a delete does depends on where the operation is: a paused or failed one is not
    // "still running".
    let body_id = match (c.action, c.asked) {
        (WriteAction::Delete, AskedAbout::Running) => "confirm-delete-running",
        (WriteAction::Delete, AskedAbout::Waiting) => "confirm-delete-waiting",
        (WriteAction::Delete, AskedAbout::Paused) => "confirm-delete-paused",
        (WriteAction::Delete, AskedAbout::PausedByFailure) => "confirm-delete-paused-failed",
        (WriteAction::Delete, AskedAbout::Failed) => "confirm-delete-failed",
        (WriteAction::Delete, AskedAbout::Completed) => "confirm-delete-body",
        (WriteAction::Pause, _) => "confirm-pause-body",
        (WriteAction::Resume, _) => "confirm-resume-body",
    };
    let text_w = area.width.saturating_sub(4).min(TEXT_WIDTH);
    // The text between a margin of one column on each side.
    let mut body = Lines::new(usize::from(text_w) + 1).margin(1);
    body.wrapped(&t.tr(body_id, &[("name", &name)]), Default::default());
    if c.typed.is_some() {
        // A production context: the cluster's name typed is the yes.
        body.blank();
        let ask = t.tr("confirm-type-name", &[("cluster", &sanitize(&c.cluster))]);
        body.wrapped(&ask, ctx.theme.alarm());
    }
    (body, text_w)
}

/// The rows the question takes over `area`: its text, a blank line, the prompt, the borders.
/// It does not scroll: in fewer, it is not drawn (the question is never asked cut).
pub(crate) fn rows_needed(c: &Confirm, ctx: &Ctx<'_>, area: Rect) -> u16 {
    let (body, _) = body(c, ctx, area);
    u16::try_from(body.len())
        .unwrap_or(u16::MAX)
        .saturating_add(4)
}

/// Draws the question over `area`.
pub(crate) fn render(state: &State, c: &Confirm, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let id = action_id(c.action);
    let name = sanitize(&c.name);
    let (body, text_w) = body(c, ctx, area);
    // The prompt under a blank line.
    let h = rows_needed(c, ctx, area);
    let rect = centered(area, text_w + 4, h);
    clear(rect, buf);
    let block = super::production::dialog_block(
        state,
        ctx,
        t.tr(&format!("confirm-{id}-title"), &[("name", &name)]),
        rect.width,
    );
    let inner = block.inner(rect);
    block.render(rect, buf);
    let [_, text] = Layout::horizontal([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    body.draw(text, buf);
    let prompt = match &c.typed {
        Some(typed) => {
            let status = match *typed == c.cluster {
                true => t.t("review-name-ok"),
                false => t.t("review-name-mismatch"),
            };
            format!("[{}▏] {status}", sanitize(typed))
        }
        None => t.t(&format!("confirm-{id}-prompt")),
    };
    let [_, last] = Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(text);
    Line::from(Span::styled(
        truncate(&prompt, usize::from(last.width)),
        ctx.theme.bold(),
    ))
    .render(last, buf);
}
