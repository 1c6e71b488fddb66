//! The footer of keys under every screen: the keys of the screen that do something now, from
//! the key table (`?` lists them all), fitted to the width by leaving out whole the keys that
//! matter least; the command line while it is typed; the search of a text read.

use super::style::Ctx;
use super::text::{fit, sanitize, width};
use ichor_app::keymap::{self, KeyCommand};
use ichor_app::state::{Dialog, Input, NewOpStep, ReadingOf, Screen, State, Why};
use ichor_app::update::{Avail, availability};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// The footer: the keys of this screen that do something now, from the key table; or the
/// command line while it is typed.
pub(crate) fn footer(state: &State, ctx: &Ctx<'_>, frame: Rect, area: Rect, buf: &mut Buffer) {
    if state.input == Input::Command {
        command_line(state, ctx, area, buf);
        return;
    }
    if matches!(state.dialog, Some(Dialog::Events { .. })) {
        let text = super::events::footer(state, ctx, frame, usize::from(area.width));
        Line::styled(text, ctx.theme.dim()).render(area, buf);
        return;
    }
    Line::styled(
        fit(
            &footer_fitted(state, ctx, usize::from(area.width)),
            usize::from(area.width),
        ),
        ctx.theme.dim(),
    )
    .render(area, buf);
}

/// The footer's words for a width: on a screen whose keys do not all fit, the keys that matter
/// least are left out whole (`?` lists every one), never cut mid-word.
fn footer_fitted(state: &State, ctx: &Ctx<'_>, w: usize) -> String {
    let text = footer_text(state, ctx);
    if width(&text) <= w || state.input != Input::None || state.dialog.is_some() {
        return text;
    }
    let mut hints = screen_hints_ranked(state, ctx);
    let said = |h: &[(String, u8)]| {
        let words: Vec<&str> = h.iter().map(|(s, _)| s.as_str()).collect();
        format!(" {}", words.join("  "))
    };
    while width(&said(&hints)) > w {
        let Some((i, _)) = hints
            .iter()
            .enumerate()
            .min_by_key(|(i, (_, rank))| (*rank, usize::MAX - i))
        else {
            break;
        };
        if hints.get(i).is_some_and(|(_, rank)| *rank == u8::MAX) {
            break;
        }
        hints.remove(i);
    }
    said(&hints)
}

/// How much a key's hint matters in a narrow footer: `?` (which lists the rest) is never left
/// out; the writes, back and the page's own keys before the global ones and the views.
fn hint_rank(command: KeyCommand) -> u8 {
    match command {
        KeyCommand::Help => u8::MAX,
        KeyCommand::Back | KeyCommand::Pause | KeyCommand::Resume | KeyCommand::Delete => 8,
        KeyCommand::Open | KeyCommand::New | KeyCommand::Filter => 7,
        KeyCommand::Report => 6,
        KeyCommand::Refresh => 5,
        KeyCommand::Quit => 4,
        KeyCommand::Manifest | KeyCommand::Events => 3,
        _ => 2,
    }
}

/// The command line: what is typed, what Tab would complete it to (dim), and the keys.
fn command_line(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let typed = sanitize(&state.command.text);
    let ghost = match state.command.completing {
        Some(_) => String::new(),
        None if typed.is_empty() => String::new(),
        None => ichor_app::commands::completions(&state.command.text)
            .first()
            .and_then(|c| c.strip_prefix(state.command.text.as_str()))
            .unwrap_or("")
            .to_string(),
    };
    let keys = format!("  {}", ctx.texts.t("footer-command"));
    let w = usize::from(area.width);
    let line = Line::from(vec![
        Span::styled(format!(":{typed}▏"), ctx.theme.bold()),
        Span::styled(ghost, ctx.theme.dim()),
        Span::styled(keys, ctx.theme.dim()),
    ]);
    // Cut as one line: the typed text first.
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    if width(&text) > w {
        Line::styled(fit(&format!(":{typed}▏"), w), ctx.theme.bold()).render(area, buf);
        return;
    }
    line.render(area, buf);
}

/// The footer of a text read: its search as it stands, or how to start one.
fn search_footer(state: &State, r: &ichor_app::state::Reading, ctx: &Ctx<'_>) -> String {
    let t = ctx.texts;
    let s = &r.search;
    let text = sanitize(&s.text);
    if s.typing {
        return t.tr("footer-search-typing", &[("text", &text)]);
    }
    if s.text.is_empty() {
        return t.t("footer-reading");
    }
    match state.viewport.search.matches {
        0 => t.tr("footer-search-none", &[("text", &text)]),
        n => t.tn("footer-search", &[("text", text.into()), ("n", n.into())]),
    }
}

/// The footer's words.
pub(crate) fn footer_text(state: &State, ctx: &Ctx<'_>) -> String {
    let t = ctx.texts;
    if state.input == Input::Filter {
        return format!(" {}", t.t("footer-filter"));
    }
    match &state.dialog {
        Some(Dialog::Confirm(c)) if c.typed.is_some() => {
            return format!(" {}", t.t("footer-typed-confirm"));
        }
        Some(Dialog::Confirm(_)) => return format!(" {}", t.t("footer-confirm")),
        Some(Dialog::Read(r)) if r.what != ReadingOf::Keys => {
            return format!(" {}", search_footer(state, r, ctx));
        }
        Some(Dialog::Read(_)) => return format!(" {}", t.t("footer-help")),
        Some(Dialog::NewOperation(d)) => {
            let table = match d.step {
                NewOpStep::Form => keymap::FORM,
                NewOpStep::Review => keymap::review(d.takes_text()),
                NewOpStep::Starting { .. } => return format!(" {}", t.t("footer-stop-waiting")),
            };
            let hints: Vec<String> = table
                .iter()
                .filter(|b| b.footer)
                .filter(|b| {
                    !(b.command == KeyCommand::Submit
                        && d.step == NewOpStep::Review
                        && !d.can_start())
                })
                .map(|b| format!("{} {}", b.label, t.t(b.hint)))
                .collect();
            return format!(" {}", hints.join("  "));
        }
        // The events overlay's footer is drawn by `footer` (it needs the frame).
        Some(Dialog::Events { .. }) | None => {}
    }
    format!(" {}", screen_hints(state, ctx).join("  "))
}

/// The keys of the screen, those that do something now, and resume's reason when it does not.
fn screen_hints(state: &State, ctx: &Ctx<'_>) -> Vec<String> {
    screen_hints_ranked(state, ctx)
        .into_iter()
        .map(|(h, _)| h)
        .collect()
}

/// [`screen_hints`], each with how much it matters ([`hint_rank`]).
fn screen_hints_ranked(state: &State, ctx: &Ctx<'_>) -> Vec<(String, u8)> {
    let t = ctx.texts;
    let target = state.target();
    let mut hints = Vec::new();
    if state.pending.is_some() {
        hints.push((t.t("footer-stop-waiting"), u8::MAX));
    }
    for bd in keymap::bindings(&state.keys, state.screen).filter(|b| b.footer) {
        let label = state.keys.label(bd);
        // While a write is pending, Esc stops waiting for it.
        if bd.command == KeyCommand::Back && state.pending.is_some() {
            continue;
        }
        if bd.command == KeyCommand::Back
            && state.screen == Screen::Operations
            && state.ops.filter.is_empty()
        {
            continue;
        }
        let rank = hint_rank(bd.command);
        match availability(state, bd.command, target) {
            Avail::Yes => hints.push((format!("{label} {}", t.t(bd.hint)), rank)),
            Avail::No(Why::ResumeAfterFailure) => hints.push((
                format!("{label} ✗ {}", t.t("footer-resume-after-failure")),
                rank,
            )),
            Avail::No(_) => {}
        }
    }
    // New operations start from a cluster: the Operations list says how to get there (last,
    // and the first left out of a narrow footer).
    if state.screen == Screen::Operations {
        hints.push((t.t("footer-to-clusters"), 0));
    }
    hints
}
