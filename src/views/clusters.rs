//! The Clusters screen and a cluster's page.

use super::text::{fit, fit_right, sanitize};
use super::widgets::{Ctx, error_text};
use crate::app::state::State;
use crate::model::Cluster;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::widgets::Widget;

/// "3 cp, 12 w, 1 held", or "3+12, 1 held" when `compact`.
fn machines_text(ctx: &Ctx<'_>, c: &Cluster, compact: bool) -> String {
    let cps = c
        .machines
        .iter()
        .filter(|m| m.role == "controlplane")
        .count();
    let workers = c.machines.len() - cps;
    let held = c.machines.iter().filter(|m| m.hold.is_some()).count();
    let id = if compact {
        "cluster-machines-short"
    } else {
        "cluster-machines"
    };
    let mut s = ctx
        .texts
        .tr(id, &[("cp", &cps.to_string()), ("w", &workers.to_string())]);
    if held > 0 {
        s.push_str(&ctx.texts.tr("cluster-held", &[("n", &held.to_string())]));
    }
    s
}

/// "Argo CD: app", or only the tool when `compact`.
fn tracking_text(ctx: &Ctx<'_>, c: &Cluster, compact: bool) -> String {
    match &c.tracking {
        Some(t) if compact => sanitize(&t.tool),
        Some(t) => ctx.texts.tr(
            "cluster-tracked",
            &[
                ("tool", &sanitize(&t.tool)),
                ("object", &sanitize(&t.object)),
            ],
        ),
        None => ctx.texts.t("cluster-not-tracked"),
    }
}

/// "Talos · Running (name)", without the name when `compact`.
fn active_text(ctx: &Ctx<'_>, c: &Cluster, compact: bool) -> String {
    let Some(a) = &c.active_operation else {
        return "—".into();
    };
    let kind = super::widgets::kind_short(
        ctx.texts,
        crate::model::OperationKind::parse(&a.kind),
        &a.kind,
    );
    // A phase nobody knows is cluster text: shown as it is, made inert (not as a message id).
    let phase = match &a.phase {
        crate::model::Phase::Other(p) => sanitize(p),
        p if p.as_str().is_empty() => ctx.texts.t("phase-new"),
        p => ctx.texts.t(&format!("phase-{}", p.as_str().to_lowercase())),
    };
    if compact {
        format!("{kind} · {phase}")
    } else {
        format!("{kind} · {phase} ({})", sanitize(&a.name))
    }
}

fn loading_or_error(
    state_err: Option<&crate::model::ApiError>,
    ctx: &Ctx<'_>,
    area: Rect,
    buf: &mut Buffer,
) {
    let msg = match state_err {
        Some(e) => error_text(ctx.texts, e),
        None => ctx.texts.t("loading"),
    };
    let w = usize::from(area.width);
    for (i, l) in super::wrap(&msg, w.saturating_sub(2))
        .iter()
        .enumerate()
        .take(usize::from(area.height))
    {
        buf.set_stringn(area.x + 1, area.y + i as u16, l, w, Style::default());
    }
}

/// Draws the Clusters list.
pub fn render_list(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let title = match &state.clusters.all.data {
        Some(all) => t.tn(
            "clusters-title",
            &[("n", fluent_bundle::FluentValue::from(all.len()))],
        ),
        None => t.t("clusters-title-loading"),
    };
    let block = super::body_block(ctx, title);
    let inner = block.inner(area);
    block.render(area, buf);
    let w = usize::from(inner.width);
    let wide = w >= 120;
    let narrow = w < 96;
    let (name_w, v_w, kp_w, m_w) = if wide {
        (18, 10, 10, 24)
    } else if !narrow {
        (12, 10, 10, 18)
    } else {
        (11, 8, 8, 12)
    };
    // Two columns of marker and six separators besides the fixed columns.
    let rest = w.saturating_sub(2 + 6 + name_w + 2 * v_w + kp_w + m_w);
    let (track_w, active_w) = (rest / 2, rest - rest / 2);
    let row = |cells: [&str; 7]| {
        [
            fit(cells[0], name_w),
            fit(cells[1], v_w),
            fit(cells[2], v_w),
            fit(cells[3], kp_w),
            fit(cells[4], m_w),
            fit(cells[5], track_w),
            fit(cells[6], active_w),
        ]
        .join(" ")
    };
    let header = row([
        &t.t("col-name"),
        &t.t("col-talos"),
        &t.t(if narrow {
            "col-kubernetes-short"
        } else {
            "col-kubernetes"
        }),
        &t.t(if narrow {
            "col-kube-proxy-short"
        } else {
            "col-kube-proxy"
        }),
        &t.t("col-machines"),
        &t.t("col-gitops"),
        &t.t("col-active"),
    ]);
    let rows_area = super::list_header(ctx, &header, inner, buf);
    let Some(all) = &state.clusters.all.data else {
        loading_or_error(state.clusters.all.error.as_ref(), ctx, rows_area, buf);
        return;
    };
    if all.is_empty() {
        buf.set_stringn(
            rows_area.x + 1,
            rows_area.y,
            fit(&t.t("clusters-empty"), w.saturating_sub(1)),
            w,
            ctx.theme.dim(),
        );
    }
    let height = usize::from(rows_area.height);
    let sel = state.clusters.list.selected;
    let offset = (sel + 1).saturating_sub(height);
    for (i, c) in all.iter().enumerate().skip(offset).take(height) {
        let y = rows_area.y + u16::try_from(i - offset).unwrap_or(0);
        if let Some(why) = &c.unreadable {
            // Only the name is known: the rest of the row says so, and why.
            let said = format!("⚠ {}: {}", t.t("state-unreadable"), sanitize(why));
            let rest_w = w.saturating_sub(2 + name_w + 1);
            let line = format!("{} {}", fit(&sanitize(&c.name), name_w), fit(&said, rest_w));
            let style = super::list_row(ctx, i == sel, &line, rows_area.x, y, w, buf);
            // The words carry the colour; the row stays readable without it.
            let x = rows_area.x + 2 + u16::try_from(name_w + 1).unwrap_or(0);
            buf.set_stringn(
                x,
                y,
                fit(&said, rest_w),
                rest_w,
                style.patch(ctx.theme.fg(Color::Red)),
            );
            continue;
        }
        let line = row([
            &sanitize(&c.name),
            &sanitize(&c.talos_version),
            &sanitize(&c.kubernetes_version),
            &sanitize(&c.kube_proxy),
            &machines_text(ctx, c, narrow),
            &tracking_text(ctx, c, narrow),
            &active_text(ctx, c, narrow),
        ]);
        super::list_row(ctx, i == sel, &line, rows_area.x, y, w, buf);
    }
}

/// Draws a cluster's page: the same facts, and every machine in executor order.
pub fn render_page(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let Some(p) = &state.cluster else { return };
    let block = super::body_block(ctx, t.tr("cluster-title", &[("name", &sanitize(&p.name))]));
    let inner = block.inner(area);
    block.render(area, buf);
    let Some(c) = &p.cluster.data else {
        loading_or_error(p.cluster.error.as_ref(), ctx, inner, buf);
        return;
    };
    let w = usize::from(inner.width);
    let label_w = 14;
    let field = |label: &str, value: String| format!("{}{value}", fit(label, label_w));
    let mut lines = Vec::new();
    if let Some(why) = &c.unreadable {
        let bad = ctx
            .theme
            .fg(Color::Red)
            .add_modifier(ratatui::style::Modifier::BOLD);
        let text = t.tr("cluster-unreadable", &[("why", &sanitize(why))]);
        for l in super::wrap(&text, w.saturating_sub(2)) {
            lines.push((l, bad));
        }
        lines.push((
            field(&t.t("field-machines"), machines_text(ctx, c, false)),
            Style::default(),
        ));
    }
    let readable = c.unreadable.is_none();
    lines.extend(
        [
            (
                field(&t.t("field-talos"), sanitize(&c.talos_version)),
                Style::default(),
            ),
            (
                field(&t.t("field-kubernetes"), sanitize(&c.kubernetes_version)),
                Style::default(),
            ),
            (
                field(&t.t("field-kube-proxy"), sanitize(&c.kube_proxy)),
                Style::default(),
            ),
            (
                field(
                    &t.t("field-ichor"),
                    c.ichor_version
                        .as_deref()
                        .map(sanitize)
                        .unwrap_or_else(|| "—".into()),
                ),
                Style::default(),
            ),
            (
                field(&t.t("field-machines"), machines_text(ctx, c, false)),
                Style::default(),
            ),
            (
                field(&t.t("field-gitops"), tracking_text(ctx, c, false)),
                ctx.theme.fg(if c.tracking.is_some() {
                    Color::Yellow
                } else {
                    Color::Reset
                }),
            ),
            (
                field(&t.t("field-unfinished"), active_text(ctx, c, false)),
                Style::default(),
            ),
        ]
        .into_iter()
        .filter(|_| readable),
    );
    if let Some(e) = &p.cluster.error {
        lines.push((error_text(t, e), ctx.theme.fg(Color::Red)));
    }
    lines.push((String::new(), Style::default()));
    for (i, (l, style)) in lines.iter().enumerate().take(usize::from(inner.height)) {
        buf.set_stringn(
            inner.x + 1,
            inner.y + i as u16,
            fit(l, w.saturating_sub(1)),
            w.saturating_sub(1),
            *style,
        );
    }
    let top = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .min(inner.height);
    let table = Rect {
        y: inner.y + top,
        height: inner.height - top,
        ..inner
    };
    if table.height == 0 {
        return;
    }
    let (name_w, role_w, order_w, ok_w) = (if w >= 120 { 24 } else { 16 }, 8, 5, 8);
    let hold_w = w.saturating_sub(1 + 3 + 1 + name_w + 1 + role_w + 1 + order_w + 1 + ok_w + 1);
    let header = format!(
        " {} {} {} {} {} {}",
        fit_right("#", 3),
        fit(&t.t("col-machine"), name_w),
        fit(&t.t("col-role"), role_w),
        fit_right(&t.t("col-order"), order_w),
        fit(&t.t("col-approved"), ok_w),
        fit(&t.t("col-hold"), hold_w)
    );
    buf.set_stringn(table.x, table.y, fit(&header, w), w, ctx.theme.bold());
    let rows = usize::from(table.height - 1);
    let scroll = p.scroll.min(c.machines.len().saturating_sub(rows));
    for (i, m) in c.machines.iter().enumerate().skip(scroll).take(rows) {
        let y = table.y + 1 + u16::try_from(i - scroll).unwrap_or(0);
        let role = match m.role.as_str() {
            "controlplane" => t.t("role-controlplane"),
            "worker" => t.t("role-worker"),
            other => sanitize(other),
        };
        let approved = if m.unreadable.is_some() {
            "—".to_string()
        } else if m.approved {
            t.t("approved-yes")
        } else {
            t.t("approved-no")
        };
        let hold = match &m.unreadable {
            Some(why) => t.tr("machine-unreadable", &[("why", &sanitize(why))]),
            None => m.hold.as_deref().map(sanitize).unwrap_or_default(),
        };
        let line = format!(
            " {} {} {} {} {} {}",
            fit_right(&(i + 1).to_string(), 3),
            fit(&sanitize(&m.name), name_w),
            fit(&role, role_w),
            fit_right(
                &m.order.map_or_else(|| "—".to_string(), |o| o.to_string()),
                order_w
            ),
            fit(&approved, ok_w),
            fit(&hold, hold_w)
        );
        let style = if m.unreadable.is_some() {
            ctx.theme.fg(Color::Red)
        } else if m.hold.is_some() {
            ctx.theme.fg(Color::Yellow)
        } else if !m.approved {
            ctx.theme.dim()
        } else {
            Style::default()
        };
        buf.set_stringn(table.x, y, fit(&line, w), w, style);
    }
}
