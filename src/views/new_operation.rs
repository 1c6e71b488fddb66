//! The new-operation dialog: the form, then the Review (the plan in words), then Start.

use super::text::{fit, sanitize, width};
use super::widgets::{Ctx, error_text, kind_text};
use crate::app::new_operation::{current_value, form_problem, takes_max_unavailable};
use crate::app::state::{FormField, NewOpStep, NewOperation};
use crate::model::{ApiError, OperationEffect, OperationKind, Plan};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Clear, Widget};

type Lines = Vec<(String, Style)>;

fn push_wrapped(lines: &mut Lines, text: &str, w: usize, style: Style) {
    for l in super::wrap(text, w) {
        lines.push((l, style));
    }
}

/// Draws the dialog over `area`.
pub fn render(d: &NewOperation, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    // Everything between the status bar and the footer.
    let rect = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(2),
        ..area
    };
    Clear.render(rect, buf);
    super::mend_wide_edges(buf, rect);
    let t = ctx.texts;
    let cluster = sanitize(&d.cluster.name);
    let title = match d.step {
        NewOpStep::Form => t.tr("new-title", &[("cluster", &cluster)]),
        _ => t.tr(
            "review-title",
            &[
                ("kind", &kind_text(t, Some(d.kind), "")),
                ("cluster", &cluster),
            ],
        ),
    };
    let block = super::body_block(ctx, title);
    let inner = block.inner(rect);
    block.render(rect, buf);
    let inner = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(2),
        ..inner
    };
    match d.step {
        NewOpStep::Form => form(d, ctx, inner, buf),
        NewOpStep::Review | NewOpStep::Starting { .. } => review(d, ctx, inner, buf),
    }
}

fn draw(lines: &[(String, Style)], area: Rect, buf: &mut Buffer) -> u16 {
    let w = usize::from(area.width);
    let mut y = 0;
    for (l, style) in lines.iter().take(usize::from(area.height)) {
        buf.set_stringn(area.x, area.y + y, fit(l, w), w, *style);
        y += 1;
    }
    y
}

fn effect_id(kind: OperationKind) -> &'static str {
    match OperationEffect::of(kind) {
        OperationEffect::Reboot => "effect-reboot",
        OperationEffect::RestartComponents => "effect-restart",
        OperationEffect::Stop => "effect-stop",
        OperationEffect::None => "effect-none",
        OperationEffect::CaRotation => "effect-ca-rotation",
    }
}

fn form(d: &NewOperation, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let w = usize::from(area.width);
    let focus = |f: FormField| {
        if d.field == f {
            ctx.theme.bold().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        }
    };
    let mut lines: Lines = vec![(t.t("form-kind"), ctx.theme.bold())];
    for k in OperationKind::ALL {
        let selected = k == d.kind;
        let marker = if selected { "> " } else { "  " };
        let text = format!("{marker}{}", fit(&kind_text(t, Some(k), ""), 26));
        let effect = t.t(effect_id(k));
        let style = if selected && d.field == FormField::Kind {
            focus(FormField::Kind)
        } else if selected {
            ctx.theme.bold()
        } else {
            Style::default()
        };
        lines.push((fit(&format!("{text} {effect}"), w), style));
    }
    lines.push((String::new(), Style::default()));
    let problem = form_problem(d);
    let cursor = |f: FormField| if d.field == f { "▏" } else { "" };
    if d.kind.takes_target() {
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
            (
                t.t("form-version"),
                format!("[{}{}]", sanitize(&d.target), cursor(FormField::Target)),
            )
        };
        lines.push((
            format!(
                "{} {value}  {}",
                fit(&label, 18),
                t.tr("form-current", &[("value", &current)])
            ),
            focus(FormField::Target),
        ));
        if let Some((FormField::Target, id)) = problem {
            // Nothing typed yet is a hint; something that is not a version is an error.
            let style = if d.target.is_empty() {
                ctx.theme.dim()
            } else {
                ctx.theme.fg(Color::Red)
            };
            let mark = if d.target.is_empty() { " " } else { "✗" };
            lines.push((
                format!("  {mark} {}", t.tr(id, &[("value", &sanitize(&d.target))])),
                style,
            ));
        } else if d.kind == OperationKind::Cni {
            lines.push((
                format!("  {}", t.t("form-kube-proxy-hint")),
                ctx.theme.dim(),
            ));
        }
    }
    if takes_max_unavailable(d.kind) {
        lines.push((
            format!(
                "{} [{}{}]",
                fit(&t.t("form-max-unavailable"), 18),
                d.max_unavailable,
                cursor(FormField::MaxUnavailable)
            ),
            focus(FormField::MaxUnavailable),
        ));
        if let Some((FormField::MaxUnavailable, id)) = problem {
            lines.push((format!("  ✗ {}", t.t(id)), ctx.theme.fg(Color::Red)));
        } else {
            lines.push((
                format!("  {}", t.t("form-max-unavailable-hint")),
                ctx.theme.dim(),
            ));
        }
    }
    if !d.kind.takes_target() && !takes_max_unavailable(d.kind) {
        push_wrapped(
            &mut lines,
            &t.t("form-nothing-to-enter"),
            w,
            ctx.theme.dim(),
        );
    }
    lines.push((String::new(), Style::default()));
    push_wrapped(&mut lines, &t.t("form-nothing-written"), w, ctx.theme.dim());
    draw(&lines, area, buf);
}

fn plan_summary(d: &NewOperation, plan: &Plan, ctx: &Ctx<'_>, w: usize, lines: &mut Lines) {
    let t = ctx.texts;
    push_wrapped(
        lines,
        &t.t(&format!("review-{}", effect_id(plan.kind))),
        w,
        ctx.theme.bold(),
    );
    let count = t.tn(
        "review-count",
        &[
            ("machines", plan.machine_count().into()),
            ("steps", plan.steps.len().into()),
        ],
    );
    let change = (!plan.target.is_empty())
        .then(|| format!("{} → {}", sanitize(&plan.current), sanitize(&plan.target)));
    let line = match (plan.kind.touches_machines(), change) {
        (true, Some(c)) => format!("{count} · {c}"),
        (true, None) => count,
        (false, Some(c)) => c,
        (false, None) => String::new(),
    };
    if !line.is_empty() {
        lines.push((line, Style::default()));
    }
    match (&plan.spec_change, plan.target.is_empty()) {
        (Some(c), _) => push_wrapped(
            lines,
            &t.tr(
                "review-spec-write",
                &[
                    ("field", &sanitize(&c.field)),
                    ("from", &sanitize(&c.from)),
                    ("to", &sanitize(&c.to)),
                    ("kind", &c.resource_kind),
                    ("name", &sanitize(&c.resource_name)),
                ],
            ),
            w,
            Style::default(),
        ),
        (None, false) => push_wrapped(
            lines,
            &t.tr(
                "review-no-spec-write",
                &[("target", &sanitize(&plan.target))],
            ),
            w,
            Style::default(),
        ),
        (None, true) => {}
    }
    if plan.kind == OperationKind::CaRotation {
        for id in ["ca-note-passes", "ca-note-kubelet"] {
            push_wrapped(lines, &format!("• {}", t.t(id)), w, Style::default());
        }
        if plan.replaces_secrets_bundle {
            push_wrapped(
                lines,
                &format!(
                    "• {}",
                    t.tr("ca-note-bundle", &[("name", &sanitize(&d.cluster.name))])
                ),
                w,
                ctx.theme.fg(Color::Yellow),
            );
        }
    }
    if !plan.shared_with.is_empty() {
        let names: Vec<String> = plan.shared_with.iter().map(|c| sanitize(c)).collect();
        push_wrapped(
            lines,
            &t.tn(
                "review-shared",
                &[
                    ("n", plan.shared_with.len().into()),
                    ("clusters", names.join(", ").into()),
                ],
            ),
            w,
            ctx.theme.fg(Color::Yellow),
        );
    }
    if !plan.held.is_empty() {
        lines.push((
            t.tn("review-held", &[("n", plan.held.len().into())]),
            ctx.theme.fg(Color::Yellow),
        ));
        for h in plan.held.iter().take(3) {
            lines.push((
                format!("  – {}: {}", sanitize(&h.name), sanitize(&h.reason)),
                ctx.theme.fg(Color::Yellow),
            ));
        }
        if plan.held.len() > 3 {
            lines.push((
                t.tn("review-held-more", &[("n", (plan.held.len() - 3).into())]),
                ctx.theme.fg(Color::Yellow),
            ));
        }
    }
}

fn role_word(ctx: &Ctx<'_>, role: &str) -> String {
    match role {
        "controlplane" => ctx.texts.t("role-controlplane"),
        "worker" => ctx.texts.t("role-worker"),
        other => sanitize(other),
    }
}

fn review(d: &NewOperation, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let w = usize::from(area.width);
    let mut top: Lines = Vec::new();
    let mut bottom: Lines = Vec::new();
    if let Some(e) = &d.start_error {
        push_wrapped(
            &mut top,
            &format!("✗ {}", error_text(t, e)),
            w,
            ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD),
        );
    }
    let Some(plan) = &d.plan.data else {
        let msg = match &d.plan.error {
            Some(e) => error_text(t, e),
            None => t.t("review-planning"),
        };
        push_wrapped(&mut top, &msg, w, Style::default());
        draw(&top, area, buf);
        return;
    };
    plan_summary(d, plan, ctx, w, &mut top);
    if let Some((id, b)) = plan
        .blocked
        .as_ref()
        .map(|b| ("review-blocked", b))
        .or_else(|| plan.denied.as_ref().map(|b| ("review-denied", b)))
    {
        let e = ApiError::from_refusal(b.clone());
        push_wrapped(
            &mut bottom,
            &format!("✗ {}", t.t(id)),
            w,
            ctx.theme.fg(Color::Red).add_modifier(Modifier::BOLD),
        );
        push_wrapped(&mut bottom, &error_text(t, &e), w, ctx.theme.fg(Color::Red));
    } else if matches!(d.step, NewOpStep::Starting { .. }) {
        push_wrapped(&mut bottom, &t.t("review-starting"), w, ctx.theme.bold());
    } else {
        if d.needs_typed_name() && d.start_offered() {
            let ok = d.typed_name == d.cluster.name;
            let field = format!("[{}▏]", sanitize(&d.typed_name));
            let status = if ok {
                t.t("review-name-ok")
            } else {
                t.t("review-name-mismatch")
            };
            push_wrapped(
                &mut bottom,
                &t.tr("review-type-name", &[("name", &sanitize(&d.cluster.name))]),
                w,
                ctx.theme.bold(),
            );
            bottom.push((
                format!("{field} {status}"),
                if ok {
                    ctx.theme.fg(Color::Green)
                } else {
                    ctx.theme.fg(Color::Yellow)
                },
            ));
        }
        // After a half-success the spec was written: a second Start only creates the operation.
        // After a start whose outcome was not seen, Start is a new one against what is there now.
        use crate::model::Reason;
        let id = match (d.can_start(), d.start_error.as_ref().and_then(|e| e.reason)) {
            (false, _) => "review-start-locked",
            (true, Some(Reason::SpecWrittenCreateFailed)) => "review-start-again",
            (
                true,
                Some(
                    Reason::WriteAbandoned | Reason::WriteNotApplied | Reason::WriteOutcomeUnknown,
                ),
            ) => "review-start-new",
            (true, _) => "review-start",
        };
        push_wrapped(&mut bottom, &t.t(id), w, ctx.theme.bold());
    }
    let used_top = draw(&top, area, buf);
    let bottom_h = u16::try_from(bottom.len())
        .unwrap_or(0)
        .min(area.height.saturating_sub(used_top));
    let bottom_area = Rect {
        y: area.y + area.height - bottom_h,
        height: bottom_h,
        ..area
    };
    draw(&bottom, bottom_area, buf);
    // The steps, in order, in the space between (scrollable).
    let mid = Rect {
        y: area.y + used_top,
        height: area.height.saturating_sub(used_top + bottom_h),
        ..area
    };
    if mid.height < 2 || plan.steps.is_empty() {
        return;
    }
    let rows = usize::from(mid.height - 1);
    let scroll = d.scroll.min(plan.steps.len().saturating_sub(rows));
    let more = if plan.steps.len() > rows {
        t.tr(
            "review-steps-range",
            &[
                ("from", &(scroll + 1).to_string()),
                ("to", &(scroll + rows).min(plan.steps.len()).to_string()),
                ("n", &plan.steps.len().to_string()),
            ],
        )
    } else {
        String::new()
    };
    buf.set_stringn(
        mid.x,
        mid.y,
        fit(&format!("{} {more}", t.t("review-steps")), w),
        w,
        ctx.theme.bold(),
    );
    let num_w = width(&plan.steps.len().to_string());
    // A step with many machines (a shutdown's workers) wraps onto indented lines.
    let mut y = mid.y + 1;
    for (i, step) in plan.steps.iter().enumerate().skip(scroll) {
        let names: Vec<String> = step.iter().map(|m| sanitize(&m.name)).collect();
        let role = step
            .first()
            .map(|m| role_word(ctx, &m.role))
            .unwrap_or_default();
        let indent = " ".repeat(num_w + 2);
        let text = format!("{:>num_w$}. {} ({role})", i + 1, names.join(", "));
        for (j, l) in super::wrap(&text, w.saturating_sub(1 + num_w + 2))
            .iter()
            .enumerate()
        {
            if y >= mid.y + mid.height {
                return;
            }
            let line = if j == 0 {
                l.clone()
            } else {
                format!("{indent}{l}")
            };
            buf.set_stringn(
                mid.x + 1,
                y,
                fit(&line, w.saturating_sub(1)),
                w,
                Style::default(),
            );
            y += 1;
        }
    }
}
