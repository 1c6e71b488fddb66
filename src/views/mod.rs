//! Views: pure functions of State. They never await, lock or read the clock.

pub mod clusters;
pub mod new_operation;
pub mod operation;
pub mod operations;
pub mod text;
pub mod widgets;

use crate::app::keymap::{self, Command};
use crate::app::state::{Confirm, Conn, Dialog, Input, Notice, Screen, State, WriteAction};
use crate::app::update::{Avail, availability};
use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use text::{fit, sanitize, truncate, width};
use widgets::{Ctx, duration_text, error_text};

/// Rows of a screen that are not list rows (status bar, banner, header, footer, borders).
pub const CHROME_ROWS: u16 = 6;

/// The rows the screens show in a terminal of `size`, for the app's scrolling and paging.
pub fn viewport(size: (u16, u16)) -> crate::app::state::Viewport {
    let rows = usize::from(size.1.saturating_sub(CHROME_ROWS).max(1));
    crate::app::state::Viewport {
        list_rows: rows,
        page_rows: rows,
    }
}

/// The smallest terminal the screens are laid out for.
pub const MIN_SIZE: (u16, u16) = (40, 12);

/// Draws everything into `buf`.
pub fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    render_frame(state, ctx, area, buf);
    if ctx.theme.ascii {
        asciify(buf, area);
    }
}

fn render_frame(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let line = ctx.texts.tr(
            "too-small",
            &[
                ("w", &MIN_SIZE.0.to_string()),
                ("h", &MIN_SIZE.1.to_string()),
            ],
        );
        // One line when it fits; else wrapped, so even a very narrow terminal says the size
        // it needs.
        let w = usize::from(area.width);
        for (i, l) in wrap(&line, w)
            .iter()
            .enumerate()
            .take(usize::from(area.height))
        {
            let y = area.y + u16::try_from(i).unwrap_or(0);
            buf.set_stringn(area.x, y, truncate(l, w), w, Style::default());
        }
        return;
    }
    let w = usize::from(area.width);
    status_bar(state, ctx, Rect { height: 1, ..area }, buf);
    let banner = banner_lines(state, ctx, w);
    let banner_h = u16::try_from(banner.len()).unwrap_or(1).clamp(1, 3);
    for (i, (line, style)) in banner.iter().take(3).enumerate() {
        buf.set_stringn(area.x, area.y + 1 + i as u16, fit(line, w), w, *style);
    }
    let body = Rect {
        y: area.y + 1 + banner_h,
        height: area.height - 2 - banner_h,
        ..area
    };
    match state.screen {
        Screen::Operations => operations::render(state, ctx, body, buf),
        Screen::Operation => operation::render(state, ctx, body, buf),
        Screen::Clusters => clusters::render_list(state, ctx, body, buf),
        Screen::Cluster => clusters::render_page(state, ctx, body, buf),
    }
    let footer = footer_text(state, ctx);
    buf.set_stringn(
        area.x,
        area.y + area.height - 1,
        fit(&footer, w),
        w,
        ctx.theme.dim().add_modifier(Modifier::empty()),
    );
    match &state.dialog {
        Some(Dialog::Help) => help(state, ctx, area, buf),
        Some(Dialog::Confirm(c)) => confirm(c, ctx, area, buf),
        Some(Dialog::NewOperation(d)) => new_operation::render(d, ctx, area, buf),
        None => {}
    }
}

/// The fallback's words.
fn fallback_text(why: &crate::model::Fallback, t: &crate::i18n::Texts) -> String {
    use crate::model::Fallback;
    match why {
        Fallback::Chosen => t.t("fallback-chosen"),
        Fallback::NotFound => t.t("fallback-not-found"),
        Fallback::NotReady => t.t("fallback-not-ready"),
        Fallback::NoPort => t.t("fallback-no-port"),
        Fallback::NoToken { how } => t.tr("fallback-no-token", &[("how", how)]),
        Fallback::Forbidden { .. } => t.t("fallback-forbidden"),
        Fallback::NotAnswering { .. } => t.t("fallback-not-answering"),
    }
}

/// How OperationService is reached, in words: the demo, the route, why not ichor-ui, and the
/// server's version where one answers.
fn route_text(s: &crate::app::state::Session, t: &crate::i18n::Texts) -> String {
    use crate::app::state::Route;
    use crate::model::ServerVersion;
    let route = match &s.route {
        Route::Server { url } => sanitize(url),
        Route::Tunnel { .. } => t.t("route-tunnel"),
        Route::InProcess { why: None, .. } if s.demo => String::new(),
        Route::InProcess { context, why } => {
            let base = t.tr("route-in-process", &[("context", &sanitize(context))]);
            match why {
                Some(w) => format!("{base}: {}", fallback_text(w, t)),
                None => base,
            }
        }
    };
    let mut text = match (s.demo, route.is_empty()) {
        (true, true) => t.t("route-demo"),
        (true, false) => format!("{} · {route}", t.t("route-demo")),
        (false, _) => route,
    };
    match &s.server_version {
        ServerVersion::NotYet => {}
        ServerVersion::Unknown => {
            text.push_str(" · ");
            text.push_str(&t.t("server-version-unknown"));
        }
        ServerVersion::Known(v) => {
            text.push_str(" · ");
            text.push_str(&t.tr("server-version", &[("version", &sanitize(v))]));
        }
    }
    text
}

fn status_bar(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let s = &state.session;
    let ns = if s.all_namespaces {
        t.t("status-all-namespaces")
    } else {
        t.tr("status-namespace", &[("ns", &sanitize(&s.namespace))])
    };
    let mut parts = vec![format!(" ichor-tui · {}", route_text(s, t)), ns];
    if let Some(u) = &s.user {
        parts.push(t.tr("status-user", &[("user", &sanitize(u))]));
    }
    // After a failed load the age would read as fresh ("just now"): say the clock time the
    // data on screen arrived instead.
    parts.push(match state.last_ok {
        Some(at) if state.load_failed() => t.tr("status-data-from", &[("time", &hhmm(state, at))]),
        Some(at) => t.tr("status-updated", &[("age", &refresh_age(state, at, ctx))]),
        None => t.t("status-never-updated"),
    });
    let mut line = parts.join(" │ ");
    let mut badges = Vec::new();
    if s.read_only {
        badges.push(t.t("badge-read-only"));
    }
    if state.stale() {
        badges.push(t.t("badge-stale"));
    }
    let badge = badges
        .iter()
        .map(|b| format!("[{b}]"))
        .collect::<Vec<_>>()
        .join(" ");
    let w = usize::from(area.width);
    let room = w.saturating_sub(width(&badge) + 1);
    line = fit(&line, room);
    let style = if ctx.theme.color {
        Style::default().fg(Color::Black).bg(Color::Cyan)
    } else {
        Style::default().add_modifier(Modifier::REVERSED)
    };
    buf.set_stringn(area.x, area.y, format!("{line} {badge}"), w, style);
    if !badge.is_empty() {
        let x = area.x + u16::try_from(room + 1).unwrap_or(0);
        let bstyle = if ctx.theme.color {
            Style::default()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        };
        buf.set_stringn(x, area.y, &badge, w.saturating_sub(room + 1), bstyle);
    }
}

/// "just now" for the first minute (no per-second repaint for it), then minutes and up.
fn refresh_age(state: &State, at: Timestamp, ctx: &Ctx<'_>) -> String {
    let d = state.now.duration_since(at);
    if d.as_secs() < 60 {
        ctx.texts.t("age-just-now")
    } else {
        duration_text(ctx.texts, d)
    }
}

/// A clock time as HH:MM in the user's time zone.
pub fn hhmm(state: &State, t: Timestamp) -> String {
    t.to_zoned(state.tz.clone()).strftime("%H:%M").to_string()
}

/// The line(s) under the status bar: the connection banner, else the latest notice, wrapped
/// to at most three lines.
fn banner_lines(state: &State, ctx: &Ctx<'_>, w: usize) -> Vec<(String, Style)> {
    let t = ctx.texts;
    let (text, style) = match &state.conn {
        Conn::Retrying { next_at, since, .. } => {
            let secs = next_at.duration_since(state.now).as_secs().max(0);
            (
                t.tn(
                    "banner-retrying",
                    &[
                        ("n", fluent_bundle::FluentValue::from(secs)),
                        (
                            "since",
                            fluent_bundle::FluentValue::from(hhmm(state, *since)),
                        ),
                    ],
                ),
                ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            )
        }
        Conn::GaveUp { since } => (
            t.tr("banner-gave-up", &[("since", &hhmm(state, *since))]),
            ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        Conn::Ok => match (&state.pending, &state.notice) {
            (Some(p), _) => pending_text(p, ctx),
            (None, Some(n)) => notice_text(n, ctx),
            (None, None) => return Vec::new(),
        },
    };
    wrap(&text, w.saturating_sub(2))
        .into_iter()
        .map(|l| (format!(" {l}"), style))
        .collect()
}

/// A write waiting for its answer, and how to stop waiting.
fn pending_text(p: &crate::app::state::PendingWrite, ctx: &Ctx<'_>) -> (String, Style) {
    (
        ctx.texts.tr(
            &format!("pending-{}", action_id(p.action)),
            &[("name", &sanitize(&p.name))],
        ),
        ctx.theme.bold(),
    )
}

fn action_id(a: WriteAction) -> &'static str {
    match a {
        WriteAction::Pause => "pause",
        WriteAction::Resume => "resume",
        WriteAction::Delete => "delete",
    }
}

fn notice_text(n: &Notice, ctx: &Ctx<'_>) -> (String, Style) {
    let t = ctx.texts;
    match n {
        Notice::Abandoned(a, name) => (
            t.tr(
                &format!("abandoned-{}", action_id(*a)),
                &[("name", &sanitize(name))],
            ),
            ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ),
        Notice::Done(a, name) => (
            t.tr(
                &format!("done-{}", action_id(*a)),
                &[("name", &sanitize(name))],
            ),
            ctx.theme.fg(Color::Green),
        ),
        Notice::Failed(e) => (
            error_text(t, e),
            ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        Notice::ResumeNotOffered(name) => (
            t.tr("resume-not-offered", &[("name", &sanitize(name))]),
            ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        Notice::Unavailable(why) => (t.t(why.message_id()), ctx.theme.fg(Color::Yellow)),
        Notice::Started(created) => {
            let mut text = t.tr("started", &[("name", &sanitize(&created.operation.name))]);
            if let Some(c) = &created.spec_written {
                text.push(' ');
                text.push_str(&t.tr(
                    "started-spec-written",
                    &[
                        ("field", &sanitize(&c.field)),
                        ("from", &sanitize(&c.from)),
                        ("to", &sanitize(&c.to)),
                    ],
                ));
            }
            if created.warnings.is_empty() {
                return (text, ctx.theme.fg(Color::Green));
            }
            // A warning must not be missed: it comes first, in bold red.
            let warnings: Vec<String> = created
                .warnings
                .iter()
                .map(|w| {
                    let e = crate::model::ApiError {
                        code: crate::model::Code::Internal,
                        reason: Some(w.reason),
                        params: w.params.clone(),
                        message: w.message.clone(),
                    };
                    format!("⚠ {}", error_text(t, &e))
                })
                .collect();
            (
                format!("{} {text}", warnings.join(" ")),
                ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD),
            )
        }
    }
}

/// The footer: the keys of this screen that do something now, from the key table.
pub fn footer_text(state: &State, ctx: &Ctx<'_>) -> String {
    let t = ctx.texts;
    if state.input == Input::Filter {
        return format!(" {}", t.t("footer-filter"));
    }
    if let Some(Dialog::Confirm(_)) = state.dialog {
        return format!(" {}", t.t("footer-confirm"));
    }
    if let Some(Dialog::Help) = state.dialog {
        return format!(" {}", t.t("footer-help"));
    }
    if let Some(Dialog::NewOperation(d)) = &state.dialog {
        use crate::app::state::NewOpStep;
        let table = match d.step {
            NewOpStep::Form => keymap::FORM,
            NewOpStep::Review => keymap::REVIEW,
            NewOpStep::Starting { .. } => return format!(" {}", t.t("footer-stop-waiting")),
        };
        let hints: Vec<String> = table
            .iter()
            .filter(|b| b.footer)
            .filter(|b| {
                !(b.command == Command::Submit && d.step == NewOpStep::Review && !d.can_start())
            })
            .map(|b| format!("{} {}", b.label, t.t(b.hint)))
            .collect();
        return format!(" {}", hints.join("  "));
    }
    let target = state.target();
    let mut hints = Vec::new();
    if state.pending.is_some() {
        hints.push(t.t("footer-stop-waiting"));
    }
    for bd in keymap::all(state.screen).filter(|b| b.footer) {
        // While a write is pending, Esc stops waiting for it.
        if bd.command == Command::Back && state.pending.is_some() {
            continue;
        }
        if bd.command == Command::Back
            && state.screen == Screen::Operations
            && state.ops.filter.is_empty()
        {
            continue;
        }
        match availability(state, bd.command, target) {
            Avail::Yes => hints.push(format!("{} {}", bd.label, t.t(bd.hint))),
            Avail::No(crate::app::state::Why::ResumeAfterFailure) => hints.push(format!(
                "{} ✗ {}",
                bd.label,
                t.t("footer-resume-after-failure")
            )),
            Avail::No(_) => {}
        }
    }
    format!(" {}", hints.join("  "))
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn dialog_block<'a>(_ctx: &Ctx<'_>, title: String) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .title(format!(" {title} "))
}

/// The ASCII stand-in for a drawing character, if it has one.
fn ascii_of(symbol: &str) -> Option<&'static str> {
    Some(match symbol {
        "─" | "━" | "═" | "–" | "—" | "░" => "-",
        "│" | "┃" | "║" => "|",
        "┌" | "┐" | "└" | "┘" | "├" | "┤" | "┬" | "┴" | "┼" | "╭" | "╮" | "╰" | "╯" => {
            "+"
        }
        "█" => "#",
        "…" => "~",
        "·" | "•" => "*",
        "▶" | "→" => ">",
        "←" => "<",
        "↑" => "^",
        "↓" => "v",
        "‖" => "=",
        "✓" => "+",
        "✗" => "x",
        "○" => "o",
        "⚠" => "!",
        "▏" => "_",
        "×" => "x",
        "“" | "”" => "\"",
        "‘" | "’" => "'",
        "\u{FFFD}" => "?",
        _ => return None,
    })
}

/// `--ascii`: one pass over the finished frame replaces every drawing character (borders,
/// bars, glyphs, arrows, the ellipsis) with ASCII, so no widget needs its own ASCII variant.
fn asciify(buf: &mut Buffer, area: Rect) {
    for y in area.y..area.y + area.height {
        for x in area.x..area.x + area.width {
            let cell = &mut buf[(x, y)];
            if let Some(a) = ascii_of(cell.symbol()) {
                cell.set_symbol(a);
            }
        }
    }
}

/// Wraps text to `w` columns by display width. Runs of narrow characters (words, commands,
/// names) break only at spaces; wide (CJK) characters may break anywhere, as Japanese text does;
/// a run wider than a line is cut where it must be. Continuation lines keep the paragraph's
/// indent.
pub fn wrap(s: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut lines = Vec::new();
    for para in s.split('\n') {
        let indent: String = para.chars().take_while(|c| *c == ' ').collect();
        let indent = if width(&indent) * 2 < w {
            indent
        } else {
            String::new()
        };
        let mut line = String::new();
        let mut lw = 0;
        let new_line = |line: &mut String, lw: &mut usize, lines: &mut Vec<String>| {
            lines.push(std::mem::take(line).trim_end().to_string());
            line.push_str(&indent);
            *lw = width(&indent);
        };
        for token in tokens(para) {
            let tw = width(token.trim_end());
            if lw + tw > w && !line.trim().is_empty() {
                new_line(&mut line, &mut lw, &mut lines);
                if token.trim().is_empty() {
                    continue;
                }
            }
            for c in token.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if lw + cw > w {
                    if c == ' ' {
                        continue;
                    }
                    new_line(&mut line, &mut lw, &mut lines);
                }
                line.push(c);
                lw += cw;
            }
        }
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// Splits text into break opportunities: a run of narrow characters with its trailing spaces,
/// or a single wide character.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_spaces = false;
    for (i, c) in s.char_indices() {
        let wide = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) > 1;
        if wide {
            if start < i {
                out.push(&s[start..i]);
            }
            out.push(&s[i..i + c.len_utf8()]);
            start = i + c.len_utf8();
            in_spaces = false;
        } else if c == ' ' {
            in_spaces = true;
        } else if in_spaces {
            out.push(&s[start..i]);
            start = i;
            in_spaces = false;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// After drawing an overlay over `rect`, blanks half-covered wide characters on its edges: a
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

fn confirm(c: &Confirm, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let id = action_id(c.action);
    let name = sanitize(&c.name);
    let body_id = match (c.action, c.running) {
        (WriteAction::Delete, true) => "confirm-delete-running".to_string(),
        _ => format!("confirm-{id}-body"),
    };
    let body = t.tr(&body_id, &[("name", &name)]);
    let inner_w = area.width.saturating_sub(4).min(64);
    let lines = wrap(&body, usize::from(inner_w));
    let h = u16::try_from(lines.len()).unwrap_or(8) + 4;
    let rect = centered(area, inner_w + 4, h);
    Clear.render(rect, buf);
    mend_wide_edges(buf, rect);
    let block = dialog_block(
        ctx,
        t.tr(&format!("confirm-{id}-title"), &[("name", &name)]),
    );
    let inner = block.inner(rect);
    block.render(rect, buf);
    for (i, l) in lines.iter().enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(0);
        if y < inner.y + inner.height {
            buf.set_stringn(
                inner.x + 1,
                y,
                l,
                usize::from(inner.width.saturating_sub(1)),
                Style::default(),
            );
        }
    }
    let prompt = t.t(&format!("confirm-{id}-prompt"));
    let y = inner.y + inner.height.saturating_sub(1);
    buf.set_stringn(
        inner.x + 1,
        y,
        prompt,
        usize::from(inner.width.saturating_sub(1)),
        ctx.theme.bold(),
    );
}

fn help(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
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
    Clear.render(rect, buf);
    mend_wide_edges(buf, rect);
    let block = dialog_block(ctx, t.t("help-title"));
    let inner = block.inner(rect);
    block.render(rect, buf);
    let col_w = inner.width.saturating_sub(1) / columns;
    for (i, (k, v)) in rows.iter().enumerate() {
        let (col, row) = (i / per_column, i % per_column);
        let Ok(row) = u16::try_from(row) else { break };
        if row >= inner.height {
            continue;
        }
        let x = inner.x + 1 + col_w * u16::try_from(col).unwrap_or(0);
        let line = format!("{}  {v}", fit(k, key_w));
        let cw = usize::from(col_w.saturating_sub(1));
        buf.set_stringn(x, inner.y + row, fit(&line, cw), cw, Style::default());
    }
}

/// Draws a list's header row at the top of `inner`; returns the area for the rows.
pub fn list_header(ctx: &Ctx<'_>, header: &str, inner: Rect, buf: &mut Buffer) -> Rect {
    let w = usize::from(inner.width);
    buf.set_stringn(
        inner.x,
        inner.y,
        fit(&format!("  {header}"), w),
        w,
        ctx.theme.bold(),
    );
    Rect {
        y: inner.y + 1,
        height: inner.height.saturating_sub(1),
        ..inner
    }
}

/// Draws one list row: marked with `>` and bold, reversed when selected (readable without
/// colour). Returns the row's style, for cells drawn over it.
pub fn list_row(
    ctx: &Ctx<'_>,
    selected: bool,
    line: &str,
    x: u16,
    y: u16,
    w: usize,
    buf: &mut Buffer,
) -> Style {
    let marker = if selected { "> " } else { "  " };
    let style = if selected {
        ctx.theme.selected()
    } else {
        Style::default()
    };
    buf.set_stringn(x, y, fit(&format!("{marker}{line}"), w), w, style);
    style
}

/// The block around a screen's body, with its title.
pub fn body_block<'a>(ctx: &Ctx<'_>, title: String) -> Block<'a> {
    dialog_block(ctx, title)
}

/// When the text on screen next changes by itself (an age or a countdown), if ever.
pub fn next_clock_change(state: &State) -> Option<Timestamp> {
    let now = state.now;
    let mut times: Vec<Timestamp> = Vec::new();
    if let Conn::Retrying { next_at, .. } = &state.conn
        && *next_at > now
    {
        // The countdown changes every second until the next attempt.
        times.push(now + jiff::SignedDuration::from_secs(1));
    }
    if let Some(at) = state.last_ok.filter(|_| !state.load_failed()) {
        let d = now.duration_since(at).as_secs();
        times.push(if d < 60 {
            at + jiff::SignedDuration::from_secs(60)
        } else {
            widgets::next_duration_change(at, now)
        });
    }
    match state.screen {
        Screen::Operations => times.extend(
            operations::visible_since(state).map(|s| widgets::next_duration_change(s, now)),
        ),
        Screen::Operation => times
            .extend(operation::visible_since(state).map(|s| widgets::next_duration_change(s, now))),
        Screen::Clusters | Screen::Cluster => {}
    }
    times.into_iter().filter(|t| *t > now).min()
}

#[cfg(test)]
mod wrap_tests {
    use super::wrap;

    #[test]
    fn latin_breaks_at_spaces_and_cjk_anywhere() {
        assert_eq!(wrap("the quick brown fox", 10), ["the quick", "brown fox"]);
        assert_eq!(
            wrap("各マシンのコンポーネントを 1 ステップずつ", 20),
            ["各マシンのコンポーネ", "ントを 1 ステップず", "つ"]
        );
        assert_eq!(
            wrap("古くなります。ichor cluster bundle-export", 20),
            ["古くなります。ichor", "cluster", "bundle-export"]
        );
        assert_eq!(
            wrap("  indented text that wraps", 14),
            ["  indented", "  text that", "  wraps"]
        );
        assert_eq!(
            wrap("averyveryverylongword", 8),
            ["averyver", "yverylon", "gword"]
        );
    }
}
