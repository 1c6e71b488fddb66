//! A cluster's page: the facts of the Clusters list in full, and every machine in executor
//! order with its role, order, approval and hold.

use super::clusters::{active_text, machines_text, tracking_text, version_text};
use super::style::Ctx;
use super::text::{fit, sanitize};
use super::widgets::lines::{Lines, indented, message};
use super::widgets::overlay::titled_block;
use super::widgets::table::{Cell, Column, ListTable, Row, Window};
use super::words::{error_text, role_word, shutdown_text, widest_role};
use ichor_app::state::State;
use ichor_model::{Cluster, ClusterMachine, Component};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::widgets::Widget;

/// The width of the labels before the facts.
const LABEL_WIDTH: usize = 14;

/// "Label         value".
fn field(label: &str, value: String) -> String {
    // A label as wide as the column is said whole, the value after it.
    if super::text::width(label) < LABEL_WIDTH {
        format!("{}{value}", fit(label, LABEL_WIDTH))
    } else {
        format!("{label} {value}")
    }
}

/// Draws a cluster's page.
pub(crate) fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let Some(p) = &state.cluster else { return };
    let mut block = titled_block(
        t.tr("cluster-title", &[("name", &sanitize(&p.name))]),
        area.width,
    );
    let inner = block.inner(area);
    let Some(c) = &p.cluster.data else {
        block.render(area, buf);
        let msg = match &p.cluster.error {
            Some(e) => error_text(t, e),
            None => t.t("loading"),
        };
        message(&msg, Default::default(), inner, buf);
        return;
    };
    let text = indented(inner);
    let mut lines = Lines::new(usize::from(text.width)).margin(1);
    facts(state, ctx, c, &mut lines);
    if let Some(e) = super::words::screen_error(state, p.cluster.error.as_ref()) {
        lines.push(error_text(t, e), ctx.theme.fg(Color::Red));
    }
    lines.blank();
    let used = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .min(inner.height);
    let [_, table] = Layout::vertical([Constraint::Length(used), Constraint::Fill(1)]).areas(inner);
    let rows = usize::from(table.height.saturating_sub(1));
    let window = Window::new(c.machines.len(), p.scroll, rows);
    if let Some(more) = window.marker(t) {
        block = block.title_bottom(more);
    }
    block.render(area, buf);
    lines.draw(text, buf);
    if table.height > 0 {
        machines(ctx, &c.machines, window, indented(table), buf);
    }
}

/// Versions, kube-proxy, machines, tracking and the unfinished operation; of a cluster that
/// cannot be read, why, and the machines it has.
pub(super) fn facts(state: &State, ctx: &Ctx<'_>, c: &Cluster, lines: &mut Lines) {
    let t = ctx.texts;
    let plain = Style::default();
    if let Some(why) = &c.unreadable {
        let text = t.tr("cluster-unreadable", &[("why", &sanitize(why))]);
        lines.wrapped(&text, ctx.theme.alarm());
        lines.push(
            field(&t.t("field-machines"), machines_text(ctx, c, false)),
            plain,
        );
        return;
    }
    let ichor = c
        .ichor_version
        .as_deref()
        .map(sanitize)
        .unwrap_or_else(|| "—".into());
    let tracked = ctx.theme.fg(if c.tracking.is_some() {
        Color::Yellow
    } else {
        Color::Reset
    });
    let (talos, talos_style) = version_text(ctx, c, Component::Talos, false);
    let (k8s, k8s_style) = version_text(ctx, c, Component::Kubernetes, false);
    for (label, value, style) in [
        ("field-talos", talos, talos_style),
        ("field-kubernetes", k8s, k8s_style),
        ("field-kube-proxy", sanitize(&c.kube_proxy), plain),
        ("field-ichor", ichor, plain),
        ("field-machines", machines_text(ctx, c, false), plain),
        ("field-gitops", tracking_text(ctx, c, false), tracked),
        ("field-unfinished", active_text(ctx, c, false), plain),
    ] {
        lines.push(field(&t.t(label), value), style);
    }
    shutdown(state, ctx, c, lines);
    if c.stray_confirmation {
        let said = t.tr(
            "cluster-stray-confirmation",
            &[("cluster", &sanitize(&c.name))],
        );
        lines.hanging("", &said, ctx.theme.fg(Color::Yellow));
    }
    super::pace::stale_bundle(state, ctx, c, lines);
}

/// The cluster's last shutdown: when, by whom; and, when nothing was started since, that its
/// machines are presumably still stopped.
fn shutdown(state: &State, ctx: &Ctx<'_>, c: &Cluster, lines: &mut Lines) {
    let t = ctx.texts;
    let Some(r) = &c.last_shutdown else {
        return;
    };
    let [time, user, operation] = shutdown_text(state, t, r);
    let said = t.tr(
        "cluster-shutdown",
        &[("time", &time), ("user", &user), ("operation", &operation)],
    );
    lines.push(field(&t.t("field-shutdown"), said), Style::default());
    if r.still_down {
        lines.hanging("", &t.t("cluster-still-down"), ctx.theme.fg(Color::Yellow));
    }
}

/// The machines in executor order; held ones in yellow, unapproved ones dim, unreadable ones
/// in red with why.
fn machines(
    ctx: &Ctx<'_>,
    machines: &[ClusterMachine],
    window: Window,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = ctx.texts;
    let columns = vec![
        Column::new("#").min(3).right().shrink(5).hide(4),
        Column::new(t.t("col-machine")).min(12).shrink(1).hide(5),
        Column::new(t.t("col-role"))
            .min(widest_role(t))
            .shrink(3)
            .hide(3),
        Column::new(t.t("col-order"))
            .right()
            .whole()
            .shrink(4)
            .hide(1),
        Column::new(t.t("col-approved")).whole().shrink(2).hide(2),
        Column::new(t.t("col-hold")).min(8).fill().shrink(0).hide(0),
    ];
    let rows = window
        .range()
        .filter_map(|i| machines.get(i).map(|m| (i, m)))
        .map(|(i, m)| {
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
            let style = if m.unreadable.is_some() {
                ctx.theme.fg(Color::Red)
            } else if m.hold.is_some() {
                ctx.theme.fg(Color::Yellow)
            } else if !m.approved {
                ctx.theme.dim()
            } else {
                Style::default()
            };
            Row::new(vec![
                Cell::new((i + 1).to_string()),
                Cell::name(sanitize(&m.name)),
                Cell::new(role_word(t, &m.role)),
                Cell::new(m.order.map_or_else(|| "—".to_string(), |o| o.to_string())),
                Cell::new(approved),
                Cell::new(hold),
            ])
            .style(style)
        })
        .collect();
    ListTable::new(columns, rows, &ctx.theme).render(area, buf);
}
