//! `?`: every key of the screen, from the key table, in one column or two; on a terminal too
//! short even for two, one column that scrolls, with a marker for what is above and below.

use super::style::Ctx;
use super::text::{fit, width, wrap};
use super::widgets::lines::Lines;
use super::widgets::overlay::{centered, clear};
use super::widgets::table::Window;
use ichor_app::keymap::{self, Binding, KeyCommand};
use ichor_app::state::{Dialog, NewOpStep, Reading, ReadingOf, Screen, ScrollRoom, State};
use ichor_app::update::may_write;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Widget;

/// The keys and what they do: those of the dialog the keys were asked for over, or of the
/// screen; write keys the caller may not use (read-only, or refused by Kubernetes) left out.
fn rows(state: &State, r: &Reading, ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let t = ctx.texts;
    let row = |b: &Binding| (b.label.to_string(), t.t(b.hint));
    let dialog: Vec<&Binding> = match r.over.as_deref() {
        Some(Dialog::NewOperation(d)) => {
            let (table, text) = match d.step {
                NewOpStep::Form => (keymap::FORM, true),
                _ => (keymap::review(d.takes_text()), d.takes_text()),
            };
            let text = if text { keymap::TEXT } else { &[] };
            table.iter().chain(text).collect()
        }
        Some(Dialog::Events { .. }) => keymap::EVENTS.iter().collect(),
        // A text searched: `/`, `n`, `N`, and the search typed is a text field.
        Some(Dialog::Read(read)) if read.what != ReadingOf::Keys => keymap::READING
            .iter()
            .chain(keymap::SEARCH)
            .chain(keymap::TEXT)
            .collect(),
        Some(_) => keymap::READING.iter().collect(),
        None => return screen_rows(state, ctx),
    };
    dialog
        .into_iter()
        .chain(keymap::HELP)
        .chain(keymap::QUIT_ANYWHERE)
        .map(row)
        .collect()
}

/// The keys of the screen: its table (the writes the caller may make), the sort keys on the
/// Operations list, the command line's commands under `:`, the keys of its text fields (the
/// filter, the command line), and the y/N question when a write is offered.
fn screen_rows(state: &State, ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let t = ctx.texts;
    let row = |b: &Binding| (state.keys.label(b).into_owned(), t.t(b.hint));
    let mut rows = Vec::new();
    if state.session.production {
        let context = super::text::sanitize(state.session.context_name().unwrap_or_default());
        rows.push((
            "⚠".to_string(),
            t.tr("help-production", &[("context", &context)]),
        ));
    }
    for b in keymap::bindings(&state.keys, state.screen).filter(|b| may_write(state, b.command)) {
        // The sort keys after the list's own, before the keys of every screen.
        if b.command == KeyCommand::SwitchScreen && state.screen == Screen::Operations {
            let sorts = keymap::SORT_KEYS.iter();
            rows.extend(sorts.map(|k| (k.label.to_string(), t.t(k.hint))));
        }
        rows.push(row(b));
        if b.command == KeyCommand::CommandLine {
            let commands = ichor_app::commands::HELP.iter();
            rows.extend(commands.map(|(_, typed, hint)| (typed.to_string(), t.t(hint))));
        }
    }
    let text_row = |b: &Binding| (b.label.to_string(), t.t(b.hint));
    rows.extend(
        keymap::COMMAND_LINE
            .iter()
            .chain(keymap::TEXT)
            .map(text_row),
    );
    let writes =
        keymap::all(state.screen).any(|b| is_write(b.command) && may_write(state, b.command));
    if writes && !state.session.production {
        rows.push(("y / N".to_string(), t.t("help-confirm")));
    }
    // Where the times come from, after every key: the estimate's basis and what "for" counts
    // from, on the screens that show them.
    if matches!(state.screen, Screen::Operation | Screen::Operations) {
        rows.push(("~".to_string(), t.t("help-estimate")));
        rows.push(("‖".to_string(), t.t("help-since")));
    }
    rows
}

fn is_write(cmd: KeyCommand) -> bool {
    matches!(
        cmd,
        KeyCommand::Pause | KeyCommand::Resume | KeyCommand::Delete | KeyCommand::New
    )
}

/// How the keys are laid out over `area`: the box, the columns, the lines a column shows,
/// and the lines (a key and what it does; in one column, wrapped under itself).
struct Laid {
    rect: Rect,
    columns: u16,
    per_column: usize,
    lines: Vec<String>,
}

/// Each key and what it does on one line, the key padded to `key_w`.
fn one_line_each(rows: &[(String, String)], key_w: usize) -> Vec<String> {
    rows.iter()
        .map(|(k, v)| format!("{}  {v}", fit(k, key_w)))
        .collect()
}

/// The narrowest the descriptions are wrapped to before the key column gives way: a key wider
/// than the rest (`:ops CLUSTER`) then takes a line of its own, its description under it.
const MIN_TEXT_W: usize = 22;

/// Each key and what it does, wrapped to `w` columns under the description's own start.
fn wrapped(rows: &[(String, String)], key_w: usize, w: usize) -> Vec<String> {
    let key_w = if w.saturating_sub(key_w + 2) >= MIN_TEXT_W {
        key_w
    } else {
        // The widest key that leaves the descriptions their room.
        let room = w.saturating_sub(MIN_TEXT_W + 2);
        let keys = rows.iter().map(|(k, _)| width(k)).filter(|&k| k <= room);
        keys.max().unwrap_or(room)
    };
    let text_w = w.saturating_sub(key_w + 2).max(8);
    let pad = " ".repeat(key_w);
    rows.iter()
        .flat_map(|(k, v)| {
            let own_line = width(k) > key_w;
            let key = own_line.then(|| k.clone());
            let text = wrap(v, text_w)
                .into_iter()
                .enumerate()
                .map(|(i, l)| match i {
                    0 if !own_line => format!("{}  {l}", fit(k, key_w)),
                    _ => format!("{pad}  {l}"),
                });
            key.into_iter().chain(text).collect::<Vec<_>>()
        })
        .collect()
}

/// The keys over `area`: in two columns when they fit whole side by side and the screen is
/// too short for one, else in one column, wrapped to its width, that scrolls when it must.
fn lay_out(rows: &[(String, String)], area: Rect, border_row: u16) -> Laid {
    let (key_w, line_w) = widths(rows);
    let n = rows.len();
    // Between the status bar and the footer, with the box's two borders.
    let room = usize::from(area.height.saturating_sub(4)).max(1);
    let two_wide = 2 * (line_w + 2) <= usize::from(area.width.saturating_sub(4)).min(118);
    let (columns, lines) = if n > room && n.div_ceil(2) <= room && two_wide {
        (2, one_line_each(rows, key_w))
    } else {
        // The box's borders, the margin and the column's last cell.
        let w = usize::from(area.width.saturating_sub(2).min(64)).saturating_sub(4);
        (1, wrapped(rows, key_w, w))
    };
    let per_column = match columns {
        2 => n.div_ceil(2),
        _ => lines.len().min(room),
    };
    let w = area
        .width
        .saturating_sub(2)
        .min(if columns == 1 { 64 } else { 120 });
    let h = u16::try_from(per_column + 2)
        .unwrap_or(u16::MAX)
        .min(area.height.saturating_sub(2));
    let mut rect = centered(area, w, h);
    // Not on the frame's top border (two top borders on one row read as one box).
    if rect.y == border_row && h > 0 {
        rect.y = if rect.bottom() + 1 < area.bottom() {
            rect.y + 1
        } else {
            rect.y.saturating_sub(1)
        };
    }
    Laid {
        rect,
        columns,
        per_column,
        lines,
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

/// The row of the frame's top border over `area`: under the status bar and the banner.
fn border_row(state: &State, ctx: &Ctx<'_>, area: Rect) -> u16 {
    let banner = super::chrome::banner(state, ctx, usize::from(area.width)).len();
    let banner = u16::try_from(banner.clamp(1, super::chrome::BANNER_MAX)).unwrap_or(1);
    area.y + 1 + banner
}

/// How many lines of keys there are and how many show, over `area`.
pub(crate) fn room(state: &State, r: &Reading, ctx: &Ctx<'_>, area: Rect) -> ScrollRoom {
    let laid = lay_out(&rows(state, r, ctx), area, border_row(state, ctx, area));
    ScrollRoom {
        lines: laid.lines.len(),
        rows: laid.per_column * usize::from(laid.columns),
    }
}

/// Draws the keys over `area`, scrolled as `r` says.
pub(crate) fn render(state: &State, r: &Reading, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let rows = rows(state, r, ctx);
    let laid = lay_out(&rows, area, border_row(state, ctx, area));
    clear(laid.rect, buf);
    let mut shown = Window::new(
        laid.lines.len(),
        r.scroll,
        laid.per_column * usize::from(laid.columns),
    );
    if laid.lines.len() > rows.len() {
        // Some keys take two lines: the marker counts lines.
        shown = shown.of_text();
    }
    let mut block = super::production::dialog_block(state, ctx, t.t("help-title"), laid.rect.width);
    if let Some(more) = shown.marker(t) {
        block = block.title_bottom(more);
    }
    let inner = block.inner(laid.rect);
    block.render(laid.rect, buf);
    let [_, keys] = Layout::horizontal([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    let col_w = keys.width / laid.columns;
    let areas =
        Layout::horizontal(vec![Constraint::Length(col_w); usize::from(laid.columns)]).split(keys);
    let visible = &laid.lines[shown.range()];
    for (area, chunk) in areas.iter().zip(visible.chunks(laid.per_column.max(1))) {
        let mut lines = Lines::new(usize::from(col_w.saturating_sub(1)));
        for l in chunk {
            lines.push(
                fit(l, usize::from(col_w.saturating_sub(1))),
                Default::default(),
            );
        }
        lines.draw(*area, buf);
    }
}
