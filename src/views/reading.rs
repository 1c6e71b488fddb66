//! Texts read in a dialog over the screen: an operation's resource as YAML (`y`), and an
//! operation's or a cluster's page said whole (Enter), with nothing cut: every name, reason and
//! message wrapped to the width. They scroll, with a marker for what is above and below. Every
//! line of cluster text is made inert before it is drawn.

use super::style::Ctx;
use super::text::{sanitize, wrap};
use super::widgets::lines::Lines;
use super::widgets::overlay::{clear, dialog_rects};
use super::widgets::table::Window;
use super::words::{elapsed, error_text, kind_text, machine_phase_view, role_word};
use ichor_app::state::{Reading, ReadingOf, ScrollRoom, SearchRoom, State};
use ichor_model::{Cluster, Operation};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

/// How long the text is over `area`, and how much of it shows.
pub(crate) fn room(state: &State, r: &Reading, ctx: &Ctx<'_>, area: Rect) -> ScrollRoom {
    let (_, inner) = dialog_rects(area);
    let (_, lines) = text(state, r, ctx, usize::from(inner.width));
    ScrollRoom {
        lines: lines.len(),
        rows: usize::from(inner.height),
    }
}

/// Where the text's search finds something, over `area`.
pub(crate) fn search(state: &State, r: &Reading, ctx: &Ctx<'_>, area: Rect) -> SearchRoom {
    if r.search.text.is_empty() {
        return SearchRoom::default();
    }
    let (_, inner) = dialog_rects(area);
    let (_, lines) = text(state, r, ctx, usize::from(inner.width));
    search_room(r, &lines.holding(&r.search.text))
}

/// Where the next and previous matches are, from the current one (or the first line shown).
fn search_room(r: &Reading, holding: &[usize]) -> SearchRoom {
    if r.search.typing && r.search.at.is_none() {
        // Enter finds the first from the first line shown on.
        let next = holding.iter().copied().find(|&l| l >= r.scroll);
        return SearchRoom {
            matches: holding.len(),
            next: next.or_else(|| holding.first().copied()),
            prev: None,
        };
    }
    let (after, before) = match r.search.at {
        Some(at) => (at + 1, at),
        None => (r.scroll, r.scroll),
    };
    SearchRoom {
        matches: holding.len(),
        next: holding
            .iter()
            .copied()
            .find(|&l| l >= after)
            .or_else(|| holding.first().copied()),
        prev: holding
            .iter()
            .copied()
            .rev()
            .find(|&l| l < before)
            .or_else(|| holding.last().copied()),
    }
}

/// Draws the text over `area`.
pub(crate) fn render(state: &State, r: &Reading, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let (rect, inner) = dialog_rects(area);
    clear(rect, buf);
    let (title, mut lines) = text(state, r, ctx, usize::from(inner.width));
    lines.highlight(&r.search.text, r.search.at);
    let window = Window::new(lines.len(), r.scroll, usize::from(inner.height)).of_text();
    let mut block = super::production::dialog_block(state, ctx, title, rect.width);
    if let Some(m) = window.marker(ctx.texts) {
        block = block.title_bottom(m);
    }
    block.render(rect, buf);
    lines.draw_from(inner, buf, window.offset);
}

/// The title and the lines of what is read, at `w` columns.
fn text(state: &State, r: &Reading, ctx: &Ctx<'_>, w: usize) -> (String, Lines) {
    let t = ctx.texts;
    let mut lines = Lines::new(w).whole();
    let title = match &r.what {
        ReadingOf::Manifest { name, yaml, .. } => {
            match (&yaml.data, &yaml.error) {
                (Some(y), _) => manifest(y, &mut lines),
                (None, Some(e)) => lines.wrapped(&error_text(t, e), ctx.theme.alarm()),
                (None, None) => lines.push(t.t("loading"), Style::default()),
            }
            title(ctx, "reading-yaml-title", name, w)
        }
        ReadingOf::Operation => match state.detail.as_ref().and_then(|d| d.op.data.as_ref()) {
            Some(op) => {
                operation(state, ctx, op, &mut lines);
                // Once they were read (or refused): while loading, nothing is said of them.
                if let Some(d) = state
                    .detail
                    .as_ref()
                    .filter(|d| d.events.data.is_some() || d.events.error.is_some())
                {
                    heading(ctx, "events-heading-none", &mut lines);
                    super::events::whole(state, ctx, d, &mut lines);
                }
                title(ctx, "reading-whole-title", &op.name, w)
            }
            None => String::new(),
        },
        ReadingOf::Cluster => match state.cluster.as_ref().and_then(|p| p.cluster.data.as_ref()) {
            Some(c) => {
                cluster(state, ctx, c, &mut lines);
                title(ctx, "reading-whole-title", &c.name, w)
            }
            None => String::new(),
        },
        // The keys are drawn by `help`.
        ReadingOf::Keys => String::new(),
    };
    (title, lines)
}

/// The title `id` with `name` in it, in `w` columns (the room between the corners, less a
/// space either side): a long name is cut in the middle so that what is read stays said.
fn title(ctx: &Ctx<'_>, id: &str, name: &str, w: usize) -> String {
    let t = ctx.texts;
    let rest = super::text::width(&t.tr(id, &[("name", "")]));
    let name = super::text::truncate_middle(&sanitize(name), w.saturating_sub(rest));
    t.tr(id, &[("name", &name)])
}

/// YAML as the service wrote it, a line at a time, made inert; a long line wraps under itself.
fn manifest(yaml: &str, lines: &mut Lines) {
    for line in yaml.lines() {
        lines.wrapped(&sanitize(line), Style::default());
    }
}

/// A heading over a part of the text.
fn heading(ctx: &Ctx<'_>, id: &str, lines: &mut Lines) {
    lines.blank();
    lines.push(ctx.texts.t(id), ctx.theme.bold());
}

/// Text under a point of a list, wrapped under its start.
fn indented(text: &str, indent: usize, style: Style, lines: &mut Lines) {
    let pad = " ".repeat(indent);
    for l in wrap(text, lines.wrap_width.saturating_sub(indent)) {
        lines.push(format!("{pad}{l}"), style);
    }
}

/// The operation's page whole: the facts and notes as the page says them (uncut), the
/// operation's own failure reason and conditions as they are, every machine with its message.
fn operation(state: &State, ctx: &Ctx<'_>, op: &Operation, lines: &mut Lines) {
    let t = ctx.texts;
    if op.unreadable.is_some() {
        super::operation::unreadable(ctx, op, lines);
        return;
    }
    let field = super::operation::field;
    lines.push(
        field(&t.t("field-namespace"), sanitize(&op.namespace)),
        Style::default(),
    );
    lines.push(
        field(&t.t("field-kind"), kind_text(t, op.kind, &op.kind_raw)),
        Style::default(),
    );
    lines.push(
        field(&t.t("field-cluster"), sanitize(&op.cluster)),
        Style::default(),
    );
    super::operation::facts(state, ctx, op, true, lines);
    // The failure with the controller's reason whole, even where it repeats the machine's.
    super::operation::notes(state, ctx, op, true, lines);
    if !op.conditions.is_empty() {
        heading(ctx, "reading-conditions", lines);
        for c in &op.conditions {
            let head = format!("{} ({}) {}", c.type_, c.status, c.reason);
            indented(&sanitize(&head), 2, Style::default(), lines);
            if !c.message.is_empty() {
                indented(&sanitize(&c.message), 4, ctx.theme.dim(), lines);
            }
        }
    }
    if !op.machines.is_empty() {
        heading(ctx, "reading-machines", lines);
    }
    for (i, m) in op.machines.iter().enumerate() {
        let (phase, style) = machine_phase_view(t, &ctx.theme, &m.phase);
        let took = elapsed(state, t, m.started_at, m.finished_at);
        let head = format!("{:>2}. {} · {phase} {took}", i + 1, sanitize(&m.name));
        indented(head.trim_end(), 1, style, lines);
        if !m.message.is_empty() {
            indented(&sanitize(&m.message), 5, Style::default(), lines);
        }
    }
}

/// The cluster's page whole: its facts, then every machine with its role, order, approval
/// and the whole hold reason.
fn cluster(state: &State, ctx: &Ctx<'_>, c: &Cluster, lines: &mut Lines) {
    let t = ctx.texts;
    super::cluster::facts(state, ctx, c, lines);
    if c.machines.is_empty() {
        return;
    }
    heading(ctx, "reading-machines", lines);
    for (i, m) in c.machines.iter().enumerate() {
        let order = m.order.map_or_else(|| "—".to_string(), |o| o.to_string());
        let approved = if m.approved {
            t.t("approved-yes")
        } else {
            t.t("approved-no")
        };
        let head = format!(
            "{:>2}. {} · {} · {} {order} · {} {approved}",
            i + 1,
            sanitize(&m.name),
            role_word(t, &m.role),
            t.t("col-order"),
            t.t("col-approved"),
        );
        indented(&head, 1, Style::default(), lines);
        if let Some(why) = &m.unreadable {
            let said = t.tr("machine-unreadable", &[("why", &sanitize(why))]);
            indented(&said, 5, ctx.theme.alarm(), lines);
        }
        if let Some(hold) = &m.hold {
            let said = t.tr("reading-hold", &[("reason", &sanitize(hold))]);
            indented(&said, 5, ctx.theme.dim(), lines);
        }
    }
}
