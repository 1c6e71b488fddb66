//! The form: the kind, the target (a version, or kube-proxy's mode), how many machines at once.

use crate::plan_words::effect_ids;
use crate::style::Ctx;
use crate::text::{fit, sanitize};
use crate::widgets::lines::Lines;
use crate::widgets::table::Window;
use crate::words::kind_text;
use ichor_app::new_operation::{current_value, form_problem, takes_max_unavailable};
use ichor_app::state::{FormField, NewOperation};
use ichor_model::OperationKind;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

/// The width of the kinds' words, and of the fields' labels.
const KIND_WIDTH: usize = 26;
const LABEL_WIDTH: usize = 18;

/// Draws the form into `area`, scrolled so that the focused field (and the line under it)
/// is on screen; returns the marker of what is above and below, when something is hidden.
pub(super) fn render(
    d: &NewOperation,
    ctx: &Ctx<'_>,
    area: Rect,
    buf: &mut Buffer,
) -> Option<Line<'static>> {
    let (lines, focus) = lines(d, ctx, area.width);
    let rows = usize::from(area.height);
    let total = lines.len();
    // The focused line and the one under it (its hint or what is wrong with it).
    let offset = (focus + 2)
        .saturating_sub(rows)
        .min(total.saturating_sub(rows));
    lines.draw_from(area, buf, offset);
    Window::new(total, offset, rows).of_text().marker(ctx.texts)
}

/// The rows the form needs at `width` columns: the focused field and the line under it; the
/// rest scrolls, with a marker that says what is hidden.
pub(super) fn rows_needed(d: &NewOperation, ctx: &Ctx<'_>, width: u16) -> u16 {
    let (lines, _) = lines(d, ctx, width);
    u16::try_from(lines.len().min(2)).unwrap_or(2)
}

/// The form's lines at `width` columns, and the line of the focused field.
fn lines(d: &NewOperation, ctx: &Ctx<'_>, width: u16) -> (Lines, usize) {
    let t = ctx.texts;
    let mut lines = Lines::new(usize::from(width));
    let chosen = OperationKind::ALL
        .iter()
        .position(|k| *k == d.kind)
        .unwrap_or(0);
    // The heading, then the kinds.
    let mut focus = 1 + chosen;
    kinds(d, ctx, &mut lines);
    lines.blank();
    if d.kind.takes_target() {
        if d.field == FormField::Target {
            focus = lines.len();
        }
        target(d, ctx, &mut lines);
    }
    if takes_max_unavailable(d.kind) {
        if d.field == FormField::MaxUnavailable {
            focus = lines.len();
        }
        max_unavailable(d, ctx, &mut lines);
    }
    if !d.kind.takes_target() && !takes_max_unavailable(d.kind) {
        lines.wrapped(&t.t("form-nothing-to-enter"), ctx.theme.dim());
    }
    lines.blank();
    lines.wrapped(&t.t("form-nothing-written"), ctx.theme.dim());
    (lines, focus)
}

/// The style of a field: bold and reversed while it has the focus.
fn focus(d: &NewOperation, ctx: &Ctx<'_>, f: FormField) -> Style {
    if d.field == f {
        ctx.theme.bold().add_modifier(Modifier::REVERSED)
    } else {
        Style::default()
    }
}

/// The text cursor, in the field that has the focus.
fn cursor(d: &NewOperation, f: FormField) -> &'static str {
    if d.field == f { "▏" } else { "" }
}

/// Every kind, with what it does to the machines; the chosen one marked.
fn kinds(d: &NewOperation, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    lines.push(t.t("form-kind"), ctx.theme.bold());
    for k in OperationKind::ALL {
        let selected = k == d.kind;
        let marker = if selected { "> " } else { "  " };
        let text = format!("{marker}{}", fit(&kind_text(t, Some(k), ""), KIND_WIDTH));
        let effect = t.t(effect_ids(k).0);
        let style = if selected && d.field == FormField::Kind {
            focus(d, ctx, FormField::Kind)
        } else if selected {
            ctx.theme.bold()
        } else {
            Style::default()
        };
        lines.push(fit(&format!("{text} {effect}"), lines.width), style);
    }
}

/// The target: a version typed, or kube-proxy's mode chosen; what the cluster has now, and
/// what is wrong with what was typed.
fn target(d: &NewOperation, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    let current = current_value(&d.cluster, d.kind)
        .map(|c| sanitize(&c))
        .unwrap_or_else(|| "—".into());
    let (label, value) = if d.kind == OperationKind::Cni {
        let choice = |m: &str| {
            if d.target == m {
                format!("[{m}]")
            } else {
                format!(" {m} ")
            }
        };
        (
            t.t("form-kube-proxy"),
            format!("{} {}", choice("replaced"), choice("enabled")),
        )
    } else {
        let typed = format!("[{}{}]", sanitize(&d.target), cursor(d, FormField::Target));
        (t.t("form-version"), typed)
    };
    lines.push(
        format!(
            "{} {value}  {}",
            fit(&label, LABEL_WIDTH),
            t.tr("form-current", &[("value", &current)])
        ),
        focus(d, ctx, FormField::Target),
    );
    if let Some((FormField::Target, id)) = form_problem(d) {
        // Nothing typed yet is a hint; something that is not a version is an error.
        let (style, mark) = if d.target.is_empty() {
            (ctx.theme.dim(), " ")
        } else {
            (ctx.theme.fg(Color::Red), "✗")
        };
        let said = t.tr(
            id,
            &[("value", &sanitize(&d.target)), ("kind", d.kind.as_str())],
        );
        lines.push(format!("  {mark} {said}"), style);
    } else if d.kind == OperationKind::Cni {
        lines.push(
            format!("  {}", t.t("form-kube-proxy-hint")),
            ctx.theme.dim(),
        );
    }
}

/// How many machines may be down at once, and its hint or what is wrong with it.
fn max_unavailable(d: &NewOperation, ctx: &Ctx<'_>, lines: &mut Lines) {
    let t = ctx.texts;
    lines.push(
        format!(
            "{} [{}{}]",
            fit(&t.t("form-max-unavailable"), LABEL_WIDTH),
            d.max_unavailable,
            cursor(d, FormField::MaxUnavailable)
        ),
        focus(d, ctx, FormField::MaxUnavailable),
    );
    if let Some((FormField::MaxUnavailable, id)) = form_problem(d) {
        lines.push(format!("  ✗ {}", t.t(id)), ctx.theme.fg(Color::Red));
    } else {
        lines.push(
            format!("  {}", t.t("form-max-unavailable-hint")),
            ctx.theme.dim(),
        );
    }
}
