//! Views: pure functions of State. They never await, lock or read the clock.
//!
//! One file per screen or dialog; `chrome` draws the frame around them (status bar, banner,
//! footer); `widgets` holds what several of them draw with (the list table, lines, overlays,
//! the progress bar); `style`, `words` and `text` are the theme, the shared words and the text
//! functions (sanitising, width-aware cutting, the one wrap).

pub(crate) mod ascii;
pub(crate) mod chrome;
pub(crate) mod cluster;
pub(crate) mod clusters;
pub(crate) mod confirm;
pub(crate) mod contexts;
pub(crate) mod events;
pub(crate) mod footer;
pub(crate) mod help;
pub mod history;
pub mod listing;
/// The words, from `locales/` (the ichor-i18n crate, which the service renders its refusals
/// with too).
pub use ichor_i18n as i18n;
pub(crate) mod new_operation;
pub(crate) mod operation;
pub(crate) mod operations;
pub mod pace;
pub mod plan_words;
pub(crate) mod production;
pub(crate) mod reading;
pub mod report;
pub(crate) mod route;
pub(crate) mod style;
pub mod text;
pub mod widgets;
pub mod words;
pub use route::fallback_text;

use ichor_app::state::{Conn, Dialog, Drawn, MIN_SIZE, ReadingOf, Screen, Shown, State, fits};
use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use style::Ctx;
use widgets::lines::Lines;

/// Rows of a screen that are not list rows: the status bar, one banner line, the body's two
/// borders, the list's header and the footer. (A list's "+N more" sits in its bottom border.)
pub(crate) const CHROME_ROWS: u16 = 6;

/// The rows the screens show in a terminal of `size`, how the open dialog's text fits, and
/// whether the screen and the dialog are drawn whole at this size, for the app's scrolling,
/// paging and keys.
pub fn viewport(state: &State, ctx: &Ctx<'_>, size: (u16, u16)) -> ichor_app::state::Viewport {
    let rows = usize::from(size.1.saturating_sub(CHROME_ROWS).max(1));
    let area = Rect::new(0, 0, size.0, size.1);
    let short = short_of(state, ctx, area);
    let dialog = match &state.dialog {
        _ if short.is_some() => Default::default(),
        Some(Dialog::NewOperation(d)) => new_operation::room(state, d, ctx, area),
        Some(Dialog::Read(r)) if r.what == ReadingOf::Keys => help::room(state, r, ctx, area),
        Some(Dialog::Read(r)) => reading::room(state, r, ctx, area),
        Some(Dialog::Events { .. }) => events::room(state, ctx, area),
        _ => Default::default(),
    };
    let search = match &state.dialog {
        Some(Dialog::Read(r)) if short.is_none() && r.what != ReadingOf::Keys => {
            reading::search(state, r, ctx, area)
        }
        _ => Default::default(),
    };
    ichor_app::state::Viewport {
        list_rows: rows,
        page_rows: rows,
        dialog,
        search,
        drawn: Some(Drawn {
            shown: Shown {
                size,
                dialog: state.dialog.as_ref().map(Dialog::shown),
            },
            whole: short.is_none(),
        }),
    }
}

/// The size a frame over `area` needs, when `area` is too small to draw it whole: the screens'
/// [`MIN_SIZE`], or the rows the open dialog needs at this width (the y/N question does not
/// scroll, the new-operation form needs its focused field, and the Review's typed name and
/// Start stay under its text; the other dialogs scroll, so they fit wherever the screens do).
pub(crate) fn short_of(state: &State, ctx: &Ctx<'_>, area: Rect) -> Option<(u16, u16)> {
    if !fits((area.width, area.height)) {
        return Some(MIN_SIZE);
    }
    let rows = match &state.dialog {
        Some(Dialog::Confirm(c)) => confirm::rows_needed(c, ctx, area),
        Some(Dialog::NewOperation(d)) => new_operation::rows_needed(state, d, ctx, area),
        Some(Dialog::Read(_) | Dialog::Events { .. }) | None => return None,
    };
    (rows > area.height).then_some((area.width, rows))
}

/// Draws everything into `buf`.
pub fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    render_frame(state, ctx, area, buf);
    if ctx.theme.wide_ambiguous {
        ascii::unambiguous(buf, area);
    } else if ctx.theme.ascii {
        ascii::asciify(buf, area);
    }
}

fn render_frame(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    if let Some(need) = short_of(state, ctx, area) {
        too_small(ctx, need, area, buf);
        return;
    }
    let banner = chrome::banner(state, ctx, usize::from(area.width));
    let banner_h = u16::try_from(banner.len().clamp(1, chrome::BANNER_MAX)).unwrap_or(1);
    let [status, banner_area, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(banner_h),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    chrome::status_bar(state, ctx, status, buf);
    banner.draw(banner_area, buf);
    match state.screen {
        Screen::Operations => operations::render(state, ctx, body, buf),
        Screen::Operation => operation::render(state, ctx, body, buf),
        Screen::Clusters => clusters::render(state, ctx, body, buf),
        Screen::Cluster => cluster::render(state, ctx, body, buf),
    }
    production::frame(state, ctx, body, buf);
    footer::footer(state, ctx, area, footer, buf);
    if let Some(d) = &state.dialog {
        render_dialog(state, d, ctx, area, buf);
    }
}

/// Draws a dialog over the screen.
fn render_dialog(state: &State, dialog: &Dialog, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    match dialog {
        // Over the screen alone: the dialog they were asked in is open again when they close.
        Dialog::Read(r) if r.what == ReadingOf::Keys => help::render(state, r, ctx, area, buf),
        Dialog::Read(r) => reading::render(state, r, ctx, area, buf),
        Dialog::Confirm(c) => confirm::render(state, c, ctx, area, buf),
        Dialog::NewOperation(d) => new_operation::render(state, d, ctx, area, buf),
        Dialog::Events { scroll } => events::render_dialog(state, ctx, *scroll, area, buf),
    }
}

/// A terminal too small for the screens (or for the open dialog) says the size it needs, and
/// that keys do nothing until it is larger but `q`, which quits: on one line each when they
/// fit, else wrapped, so even a very narrow terminal says it.
fn too_small(ctx: &Ctx<'_>, need: (u16, u16), area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let size = t.tr(
        "too-small",
        &[("w", &need.0.to_string()), ("h", &need.1.to_string())],
    );
    let mut lines = Lines::new(usize::from(area.width));
    lines.wrapped(&size, Default::default());
    lines.wrapped(&t.t("too-small-keys"), ctx.theme.dim());
    lines.draw(area, buf);
}

/// When the text on screen next changes by itself (an age or a countdown), if ever.
pub fn next_clock_change(state: &State) -> Option<Timestamp> {
    let now = state.now;
    let mut times: Vec<Timestamp> = Vec::new();
    if let (Conn::Retrying { next_at, .. }, Some(left)) =
        (&state.conn, state.conn.seconds_left(now))
        && left > 0
    {
        // The countdown changes each time a whole second fewer is left, then says the try.
        times.push(*next_at - jiff::SignedDuration::from_secs(left - 1));
    }
    if let Some(at) = state.last_ok.filter(|_| !state.stale() && !state.pushed()) {
        let d = now.duration_since(at).as_secs();
        times.push(if d < 60 {
            at + jiff::SignedDuration::from_secs(60)
        } else {
            words::next_duration_change(at, now)
        });
    }
    let change = |s| words::next_duration_change(s, now);
    // Data that may be out of date counts nothing on, nor does an operation that is gone.
    if state.stale() || state.gone_page().is_some() {
        return times.into_iter().filter(|t| *t > now).min();
    }
    match state.screen {
        Screen::Operations => {
            times.extend(operations::visible_since(state).map(change));
            times.extend(
                state
                    .list_rows_shown()
                    .filter_map(|o| pace::next_list_change(state, o)),
            );
        }
        Screen::Operation => {
            times.extend(operation::visible_since(state).map(change));
            times.extend(events::visible_at(state).map(change));
            let op = state.detail.as_ref().and_then(|d| d.op.data.as_ref());
            times.extend(op.and_then(|o| pace::next_change(state, o)));
        }
        Screen::Clusters | Screen::Cluster => {}
    }
    times.into_iter().filter(|t| *t > now).min()
}
