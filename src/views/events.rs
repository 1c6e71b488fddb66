//! What the executor recorded (Kubernetes Events): the latest on the operation page, and all of
//! them in a scrollable overlay (`e`). Their text is the cluster's: made inert before it is drawn.

use super::style::Ctx;
use super::text::{fit, sanitize};
use super::widgets::lines::Lines;
use super::widgets::overlay::{centered, clear};
use super::widgets::table::Window;
use super::words::{duration_text, error_text};
use ichor_app::state::{DetailState, Dialog, ReadingOf, ScrollRoom, State};
use ichor_model::{Code, EventsWanted, MAX_EVENTS_ALL, OperationEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

/// The most event lines the page gives them (the rest are behind `e`).
const ON_PAGE: usize = 3;

/// An event's text whole: its age, a mark for a warning, its reason, the machine it is about,
/// its message and how many times it happened; the part before the reason apart, so that a
/// wrapped event goes on under its reason.
fn text_of(state: &State, ctx: &Ctx<'_>, e: &OperationEvent, ages: usize) -> (String, String) {
    text_at(e, ages, age_of(state, ctx, e))
}

/// [`text_of`] with `when` said before it (its age, or its clock time).
fn text_at(e: &OperationEvent, ages: usize, age: String) -> (String, String) {
    let mark = if e.warning { "!" } else { " " };
    let about = match e.object_kind.as_str() {
        "Machine" => format!("{}: ", sanitize(&e.object_name)),
        _ => String::new(),
    };
    let count = match e.count {
        0 | 1 => String::new(),
        n => format!(" (×{n})"),
    };
    let lead = format!("{} {mark} ", super::text::fit_right(&age, ages));
    let rest = format!(
        "{} {about}{}{count}",
        sanitize(&e.reason),
        sanitize(&e.message),
    );
    (lead, rest)
}

fn style_of(ctx: &Ctx<'_>, e: &OperationEvent) -> Style {
    if e.warning {
        ctx.theme.alarm()
    } else {
        Style::default()
    }
}

/// One event on one line, cut to `width` (the page's summary; `e` has them whole).
fn line(
    state: &State,
    ctx: &Ctx<'_>,
    e: &OperationEvent,
    ages: usize,
    width: usize,
) -> (String, Style) {
    let (lead, rest) = text_of(state, ctx, e, ages);
    (fit(&format!("{lead}{rest}"), width), style_of(ctx, e))
}

/// One event whole, wrapped to the lines' width under its reason.
/// Read whole, an event says when it happened by the clock (its date too when not today's),
/// so a burst of events reads in order and can be matched with a log, where ages all say `1m`.
fn push_whole(state: &State, ctx: &Ctx<'_>, e: &OperationEvent, ages: usize, lines: &mut Lines) {
    let (lead, rest) = text_at(e, ages, clock_of(state, e));
    lines.hanging(&lead, &rest, style_of(ctx, e));
}

/// When the event was last seen, by the clock in the dashboard's time zone.
fn clock_of(state: &State, e: &OperationEvent) -> String {
    let day = state.now.to_zoned(state.tz.clone()).date();
    e.at()
        .map(|at| {
            let z = at.to_zoned(state.tz.clone());
            match z.date() == day {
                true => z.strftime("%H:%M:%S").to_string(),
                false => z.strftime("%Y-%m-%d %H:%M:%S").to_string(),
            }
        })
        .unwrap_or_default()
}

/// The width of the clock column for these events read whole.
fn clocks_width(state: &State, events: &[OperationEvent]) -> usize {
    events
        .iter()
        .map(|e| ichor_model::inert::width(&clock_of(state, e)))
        .max()
        .unwrap_or(0)
}

/// How many events were loaded, and what is known of the rest: the service sends the newest
/// [`ichor_model::MAX_EVENTS`] and says how many there are (a server from before the count does not, so a
/// full answer from it may leave older ones out); `a` loads all, up to [`MAX_EVENTS_ALL`].
/// `id` is the page's heading or the count of the overlay and the reading view.
fn count_text(ctx: &Ctx<'_>, d: &DetailState, id: &str) -> String {
    let held = d.events_held();
    let n = held.events.len().to_string();
    let max = MAX_EVENTS_ALL.to_string();
    let all = d.events_wanted == EventsWanted::All;
    match held.total.filter(|_| held.older_not_loaded()) {
        Some(total) => {
            let total = total.to_string();
            let args = [("n", n.as_str()), ("total", &total), ("max", &max)];
            let which = match (id, all, d.events.is_loading()) {
                ("events-heading", ..) => "events-heading-known",
                (_, true, true) => "events-count-loading-all",
                (_, true, false) => "events-count-all-capped",
                (_, false, _) => "events-count-known",
            };
            ctx.texts.tr(which, &args)
        }
        None if held.older_not_loaded() => ctx.texts.tr(&format!("{id}-capped"), &[("n", &n)]),
        None => ctx.texts.tn(id, &[("n", held.events.len().into())]),
    }
}

/// Every event whole, newest first, with how many there are (the page read whole).
pub(crate) fn whole(state: &State, ctx: &Ctx<'_>, d: &DetailState, lines: &mut Lines) {
    let events = d.events.data.as_deref().unwrap_or_default();
    match why_none(ctx, d).filter(|_| events.is_empty()) {
        Some(why) => lines.wrapped(&why, ctx.theme.dim()),
        None if events.is_empty() => lines.wrapped(&ctx.texts.t("events-none"), ctx.theme.dim()),
        None => {
            lines.wrapped(&count_text(ctx, d, "events-count"), ctx.theme.dim());
            let clocks = clocks_width(state, events);
            for e in events {
                push_whole(state, ctx, e, clocks, lines);
            }
        }
    }
}

/// How long ago the event was last seen, in the clock's words.
fn age_of(state: &State, ctx: &Ctx<'_>, e: &OperationEvent) -> String {
    e.at()
        .map(|at| duration_text(ctx.texts, state.now.duration_since(at)))
        .unwrap_or_default()
}

/// The width of the age column for these events: their widest age, so none is cut.
fn ages_width(state: &State, ctx: &Ctx<'_>, events: &[OperationEvent]) -> usize {
    events
        .iter()
        .map(|e| ichor_model::inert::width(&age_of(state, ctx, e)))
        .max()
        .unwrap_or(0)
}

/// Why there are no events to show, when there is a reason to say.
fn why_none(ctx: &Ctx<'_>, d: &DetailState) -> Option<String> {
    let t = ctx.texts;
    let e = d.events.error.as_ref()?;
    Some(match e.code {
        Code::PermissionDenied => t.t("events-forbidden"),
        Code::Unimplemented => t.t("events-unavailable"),
        _ => t.tr("events-unreadable", &[("why", &error_text(t, e))]),
    })
}

/// The rows the page gives its events: none when there is nothing to say.
pub(crate) fn rows_on_page(ctx: &Ctx<'_>, d: &DetailState) -> u16 {
    let shown = d.events.data.as_ref().map_or(0, |e| e.len().min(ON_PAGE));
    match (shown, why_none(ctx, d)) {
        (0, None) => 0,
        (0, Some(_)) => 2,
        (n, _) => u16::try_from(n + 1).unwrap_or(4),
    }
}

/// The latest events under the page's machine table: a heading and up to three lines, or the
/// line that says why there are none.
pub(crate) fn render_on_page(
    state: &State,
    ctx: &Ctx<'_>,
    d: &DetailState,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = ctx.texts;
    let width = usize::from(area.width);
    let mut lines = Lines::new(width);
    let events = d.events.data.as_deref().unwrap_or_default();
    match why_none(ctx, d).filter(|_| events.is_empty()) {
        Some(why) => {
            lines.push(t.t("events-heading-none"), ctx.theme.dim());
            lines.push(fit(&why, width), ctx.theme.dim());
        }
        None => lines.push(count_text(ctx, d, "events-heading"), ctx.theme.dim()),
    }
    let shown = &events[..events.len().min(ON_PAGE)];
    let ages = ages_width(state, ctx, shown);
    for e in shown {
        let (text, style) = line(state, ctx, e, ages, width);
        lines.push(text, style);
    }
    lines.draw(area, buf);
}

/// Where the overlay of every event goes over `area`: its box, its text's columns, and the
/// rows under the lines that count the events (`counted` of them).
fn dialog_layout(area: Rect, counted: usize) -> (Rect, usize, usize) {
    let w = area.width.saturating_sub(4).min(140);
    let h = area.height.saturating_sub(2);
    let rect = centered(area, w, h);
    let rows = usize::from(h.saturating_sub(2)).saturating_sub(counted);
    // The border either side and a column of margin.
    let width = usize::from(w.saturating_sub(3));
    (rect, rows, width)
}

/// The lines that count the events, wrapped to the overlay's width (`area`'s).
fn count_lines(ctx: &Ctx<'_>, d: &DetailState, area: Rect) -> Lines {
    let (_, _, width) = dialog_layout(area, 0);
    let mut lines = Lines::new(width);
    if d.events.data.as_ref().is_some_and(|e| !e.is_empty()) {
        lines.wrapped(&count_text(ctx, d, "events-count"), ctx.theme.dim());
    }
    lines
}

/// Each event whole at `width`, over all of them (so the age column stays put as it scrolls).
fn each_whole(state: &State, ctx: &Ctx<'_>, events: &[OperationEvent], width: usize) -> Vec<Lines> {
    let clocks = clocks_width(state, events);
    events
        .iter()
        .map(|e| {
            let mut lines = Lines::new(width);
            push_whole(state, ctx, e, clocks, &mut lines);
            lines
        })
        .collect()
}

/// How the overlay scrolls over `area`: by event, as many as there are, and the last start is
/// the first of the events that fit whole at the end.
pub(crate) fn room(state: &State, ctx: &Ctx<'_>, area: Rect) -> ScrollRoom {
    let Some(d) = state.detail.as_ref() else {
        return ScrollRoom::default();
    };
    let events = d.events.data.as_deref().unwrap_or_default();
    let (_, rows, width) = dialog_layout(area, count_lines(ctx, d, area).len());
    let each = each_whole(state, ctx, events, width);
    let mut used = 0;
    let fit_at_end = each
        .iter()
        .rev()
        .take_while(|l| {
            used += l.len();
            used <= rows
        })
        .count()
        .max(1);
    ScrollRoom {
        lines: events.len(),
        rows: fit_at_end,
    }
}

/// Every event of the page, newest first, each whole, in an overlay from event `scroll` down.
pub(crate) fn render_dialog(
    state: &State,
    ctx: &Ctx<'_>,
    scroll: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = ctx.texts;
    let Some(d) = state.detail.as_ref() else {
        return;
    };
    let events = d.events.data.as_deref().unwrap_or_default();
    let mut lines = count_lines(ctx, d, area);
    let (rect, rows, width) = dialog_layout(area, lines.len());
    clear(rect, buf);
    let title = t.tr("events-title", &[("name", &sanitize(&d.name))]);
    let mut block = super::production::dialog_block(state, ctx, title, rect.width);
    match (events.is_empty(), why_none(ctx, d)) {
        (true, Some(why)) => lines.wrapped(&why, ctx.theme.dim()),
        (true, None) => lines.wrapped(&t.t("events-none"), ctx.theme.dim()),
        (false, _) => {
            let each = each_whole(state, ctx, events, width);
            let first = scroll.min(events.len().saturating_sub(1));
            // Those shown whole; the last may be cut by the bottom, and is counted below.
            let mut whole = 0;
            let mut used = 0;
            for e in &each[first..] {
                if used >= rows {
                    break;
                }
                used += e.len();
                whole += usize::from(used <= rows);
                lines.append(e);
            }
            let window = Window::new(events.len(), first, whole);
            if let Some(more) = window.marker(t) {
                block = block.title_bottom(more);
            }
        }
    }
    let inner = block.inner(rect);
    block.render(rect, buf);
    lines.draw(
        Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        },
        buf,
    );
}

/// The times of the events on screen whose age is drawn: the page's latest, or those in the
/// overlay from its first row on (newest first, so the first is the youngest shown).
pub(crate) fn visible_at(state: &State) -> impl Iterator<Item = jiff::Timestamp> + '_ {
    let events = state
        .detail
        .as_ref()
        .and_then(|d| d.events.data.as_deref())
        .unwrap_or_default();
    let shown = match &state.dialog {
        Some(Dialog::Events { scroll }) => {
            let first = (*scroll).min(events.len());
            let rows = usize::from(state.size.1);
            &events[first..(first + rows).min(events.len())]
        }
        Some(Dialog::Read(r)) if r.what == ReadingOf::Operation => events,
        _ => &events[..events.len().min(ON_PAGE)],
    };
    shown.iter().filter_map(OperationEvent::at)
}

/// The overlay's footer: the keys that do something now over `frame` (scrolling while the
/// events do not all fit, `a` while older ones are not loaded, `?`), in `width` columns; the
/// ones that matter least are left out when they do not fit (`?` lists them all), and what is
/// still too long is cut with `…`.
pub(crate) fn footer(state: &State, ctx: &Ctx<'_>, frame: Rect, width: usize) -> String {
    let t = ctx.texts;
    let scrolls = room(state, ctx, frame).last_start() > 0;
    let older = state.detail.as_ref().is_some_and(|d| {
        d.events_wanted != EventsWanted::All && d.events_held().older_not_loaded()
    });
    // Each part, and the order they give way in (the highest first; Esc never).
    let mut parts: Vec<(String, u8)> = [
        (scrolls, "footer-events-scroll", 3),
        (scrolls, "footer-events-ends", 4),
        (older, "footer-events-load-all", 2),
        (true, "footer-events-close", 0),
    ]
    .into_iter()
    .filter(|(now, ..)| *now)
    .map(|(_, id, rank)| (t.t(id), rank))
    .collect();
    parts.push((format!("? {}", t.t("key-help")), 6));
    let joined = |parts: &[(String, u8)]| {
        let words: Vec<&str> = parts.iter().map(|(p, _)| p.as_str()).collect();
        format!(" {}", words.join(" · "))
    };
    while super::text::width(&joined(&parts)) > width {
        let Some(i) = (0..parts.len())
            .filter(|&i| parts[i].1 > 0)
            .max_by_key(|&i| parts[i].1)
        else {
            break;
        };
        parts.remove(i);
    }
    fit(&joined(&parts), width)
}
