//! A production context looks like one: the status bar starts with PRODUCTION and the
//! context's name, and the screen's frame and every dialog's (the new-operation form, the
//! Review, the y/N and typed-name questions, help, the YAML and the Events) are drawn in red with
//! the same words in their top border, so no screen of it can be taken for another context's.
//! Without colour the words say it (reversed, bold).

use super::style::Ctx;
use super::text::{sanitize, truncate, width};
use ichor_app::state::State;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

/// The most columns the context's name takes in the label.
const MAX_CONTEXT: usize = 40;

/// "PRODUCTION prod-eu" (in the person's language), when the context is production.
pub(crate) fn label(state: &State, ctx: &Ctx<'_>) -> Option<String> {
    if !state.session.production {
        return None;
    }
    let context = truncate(
        &sanitize(state.session.context_name().unwrap_or_default()),
        MAX_CONTEXT,
    );
    Some(ctx.texts.tr("badge-production", &[("context", &context)]))
}

/// The label's style: white on red, bold; reversed without colour.
pub(crate) fn style(ctx: &Ctx<'_>) -> Style {
    match ctx.theme.color {
        true => Style::default()
            .fg(Color::White)
            .bg(Color::Red)
            .add_modifier(Modifier::BOLD),
        false => Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
    }
}

/// Draws the body's frame in red and the label at the right of its top border.
pub(crate) fn frame(state: &State, ctx: &Ctx<'_>, body: Rect, buf: &mut Buffer) {
    let Some(label) = label(state, ctx) else {
        return;
    };
    if body.width < 2 || body.height < 2 {
        return;
    }
    let red = ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD);
    let (right, bottom) = (body.right() - 1, body.bottom() - 1);
    for x in body.left()..body.right() {
        buf[(x, body.top())].set_style(red);
        buf[(x, bottom)].set_style(red);
    }
    for y in body.top()..body.bottom() {
        buf[(body.left(), y)].set_style(red);
        buf[(right, y)].set_style(red);
    }
    // At the right of the top border, clear of the title where the border is long enough.
    let text = format!(" {label} ");
    let w = width(&text);
    let room = usize::from(body.width).saturating_sub(2);
    if w + 20 > room {
        return;
    }
    let x = right.saturating_sub(u16::try_from(w).unwrap_or(u16::MAX) + 1);
    buf.set_string(x, body.top(), &text, style(ctx));
}

/// The block of a dialog `box_width` columns wide: its title at the left of the top border and,
/// in production, the border in red and the label at the right, the context's name in it when
/// the title fits whole beside it, else the word alone (the status bar names the context); the
/// title gives way to the word.
pub(crate) fn dialog_block<'a>(
    state: &State,
    ctx: &Ctx<'_>,
    title: String,
    box_width: u16,
) -> Block<'a> {
    use super::widgets::overlay::titled_block;
    let Some(named) = label(state, ctx) else {
        return titled_block(title, box_width);
    };
    // Between the corners: " title ", a column of border, " label " and a column of border
    // (as the screens' frames place it).
    let room = usize::from(box_width).saturating_sub(2);
    let title_w = width(&title) + 2;
    let fits = |label: &str| width(label) + 2 + 2 + title_w <= room;
    let label = match fits(&named) {
        true => named,
        false => ctx.texts.t("badge-production-alone"),
    };
    let title_room = room.saturating_sub(width(&label) + 2 + 2 + 2);
    let red = ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD);
    let right = Line::from(vec![
        Span::styled(format!(" {label} "), style(ctx)),
        Span::raw("─"),
    ]);
    let mut block = Block::bordered()
        .border_style(red)
        .title_top(right.right_aligned());
    if title_room > 0 {
        block = block.title_top(format!(" {} ", truncate(&title, title_room)));
    }
    block
}
