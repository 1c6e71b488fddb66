//! What the executor recorded (Kubernetes Events): the latest on the operation page, and all of
//! them in a scrollable overlay (`e`). Their text is the cluster's: made inert before it is drawn.

use super::style::Ctx;
use super::text::{fit, sanitize};
use super::widgets::lines::Lines;
use super::widgets::overlay::{centered, clear, titled_block};
use super::widgets::table::Window;
use super::words::{duration_text, error_text};
use ichor_app::state::{DetailState, State};
use ichor_model::{Code, OperationEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

/// The most event lines the page gives them (the rest are behind `e`).
const ON_PAGE: usize = 3;

/// One event on one line: its age, a mark for a warning, its reason, the machine it is about
/// and its message.
fn line(
    state: &State,
    ctx: &Ctx<'_>,
    e: &OperationEvent,
    ages: usize,
    width: usize,
) -> (String, Style) {
    let age = age_of(state, ctx, e);
    let mark = if e.warning { "!" } else { " " };
    let about = match e.object_kind.as_str() {
        "Machine" => format!("{}: ", sanitize(&e.object_name)),
        _ => String::new(),
    };
    let count = match e.count {
        0 | 1 => String::new(),
        n => format!(" (×{n})"),
    };
    let text = format!(
        "{} {mark} {} {about}{}{count}",
        super::text::fit_right(&age, ages),
        sanitize(&e.reason),
        sanitize(&e.message),
    );
    let style = if e.warning {
        ctx.theme.alarm()
    } else {
        Style::default()
    };
    (fit(&text, width), style)
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
        None => lines.push(
            t.tr("events-heading", &[("n", &events.len().to_string())]),
            ctx.theme.dim(),
        ),
    }
    let shown = &events[..events.len().min(ON_PAGE)];
    let ages = ages_width(state, ctx, shown);
    for e in shown {
        let (text, style) = line(state, ctx, e, ages, width);
        lines.push(text, style);
    }
    lines.draw(area, buf);
}

/// Every event of the page, newest first, in an overlay scrolled to `scroll`.
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
    let w = area.width.saturating_sub(4).min(140);
    let h = area.height.saturating_sub(2);
    let rect = centered(area, w, h);
    clear(rect, buf);
    let rows = usize::from(h.saturating_sub(2));
    let window = Window::new(events.len(), scroll, rows);
    let mut block = titled_block(t.tr("events-title", &[("name", &sanitize(&d.name))]));
    if let Some(more) = window.marker(t) {
        block = block.title_bottom(more);
    }
    let inner = block.inner(rect);
    block.render(rect, buf);
    let width = usize::from(inner.width.saturating_sub(1));
    let mut lines = Lines::new(width);
    match (events.is_empty(), why_none(ctx, d)) {
        (true, Some(why)) => lines.wrapped(&why, ctx.theme.dim()),
        (true, None) => lines.push(t.t("events-none"), ctx.theme.dim()),
        (false, _) => {
            // Over all of them, so the column stays put as it scrolls.
            let ages = ages_width(state, ctx, events);
            for e in &events[window.range()] {
                let (text, style) = line(state, ctx, e, ages, width);
                lines.push(text, style);
            }
        }
    }
    lines.draw(
        Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        },
        buf,
    );
}
