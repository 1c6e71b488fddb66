//! The Clusters screen: each cluster's versions, kube-proxy mode, machines, tracking and the
//! operation it has unfinished.

use super::style::Ctx;
use super::text::sanitize;
use super::widgets::lines::{Lines, indented, message};
use super::widgets::overlay::titled_block;
use super::widgets::table::{Cell, Column, ListTable, Row, Window};
use super::words::{error_text, kind_short};
use ichor_app::state::{Input, State};
use ichor_model::{Cluster, Component, OperationKind, Phase};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::widgets::Widget;

/// The spec's version of `component`, and beside it what the machines run when some run
/// another ("v1.9.3 (3 of 8 run v1.9.2)", or "v1.9.3 (3 differ)" when `compact`): a spec
/// changed by a start names the target before the machines reach it. Yellow when they differ.
pub(crate) fn version_text(
    ctx: &Ctx<'_>,
    c: &Cluster,
    component: Component,
    compact: bool,
) -> (String, ratatui::style::Style) {
    let spec = match component {
        Component::Talos => sanitize(&c.talos_version),
        Component::Kubernetes => sanitize(&c.kubernetes_version),
    };
    let Some(apart) = c.running_apart(component) else {
        return (spec, ratatui::style::Style::default());
    };
    let running: Vec<String> = apart.versions.iter().map(|v| sanitize(v)).collect();
    let (n, total) = (apart.apart.to_string(), apart.reporting.to_string());
    let id = match compact {
        true => "versions-running-other-short",
        false => "versions-running-other",
    };
    let args = [
        ("spec", spec.as_str()),
        ("n", &n),
        ("total", &total),
        ("running", &running.join(", ")),
    ];
    (ctx.texts.tr(id, &args), ctx.theme.fg(Color::Yellow))
}

/// "3 cp, 12 w, 1 held", or "3+12, 1 held" when `compact`.
pub(crate) fn machines_text(ctx: &Ctx<'_>, c: &Cluster, compact: bool) -> String {
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
pub(crate) fn tracking_text(ctx: &Ctx<'_>, c: &Cluster, compact: bool) -> String {
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
pub(crate) fn active_text(ctx: &Ctx<'_>, c: &Cluster, compact: bool) -> String {
    let Some(a) = &c.active_operation else {
        return "—".into();
    };
    let kind = kind_short(ctx.texts, OperationKind::parse(&a.kind), &a.kind);
    // A phase nobody knows is cluster text: shown as it is, made inert (not as a message id).
    let phase = match &a.phase {
        Phase::Other(p) => sanitize(p),
        p if p.as_str().is_empty() => ctx.texts.t("phase-new"),
        p => ctx.texts.t(&format!("phase-{}", p.as_str().to_lowercase())),
    };
    if compact {
        format!("{kind} · {phase}")
    } else {
        let name = sanitize(&a.name);
        ctx.texts.tr(
            "cluster-active",
            &[("kind", &kind), ("phase", &phase), ("name", &name)],
        )
    }
}

/// The columns, and how they give way: the unfinished operation, the tracking and the machines
/// to their short forms first; the name last. Hidden first: the tracking.
fn columns(ctx: &Ctx<'_>) -> Vec<Column> {
    let t = ctx.texts;
    vec![
        Column::new(t.t("col-name")).min(11).shrink(6).hide(6),
        Column::new(t.t("col-talos")).shrink(5).hide(5),
        Column::new(t.t("col-kubernetes"))
            .short_header(t.t("col-kubernetes-short"))
            .shrink(4)
            .hide(3),
        Column::new(t.t("col-kube-proxy"))
            .short_header(t.t("col-kube-proxy-short"))
            .shrink(3)
            .hide(2),
        Column::new(t.t("col-machines")).shrink(2).hide(4),
        // The unfinished operation outlasts the tracking: with the machines' versions beside the
        // spec's, it says why they differ (an upgrade under way or stopped).
        Column::new(t.t("col-gitops")).shrink(1).hide(0),
        Column::new(t.t("col-active"))
            .min(8)
            .fill()
            .shrink(0)
            .hide(1),
    ]
}

/// Draws the Clusters list.
pub(crate) fn render(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let mut title = match &state.clusters.all.data {
        Some(all) => t.tn(
            "clusters-title",
            &[("n", fluent_bundle::FluentValue::from(all.len()))],
        ),
        None => t.t("clusters-title-loading"),
    };
    let filtering = state.input == Input::Filter;
    if !state.clusters.filter.is_empty() || filtering {
        let cursor = if filtering { "▏" } else { "" };
        title.push_str(&t.tr(
            "operations-filter",
            &[
                (
                    "filter",
                    &format!("{}{cursor}", sanitize(&state.clusters.filter)),
                ),
                ("n", &state.clusters.visible.len().to_string()),
            ],
        ));
    }
    let mut block = titled_block(title, area.width);
    let inner = block.inner(area);
    let [_, rows_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    let Some(all) = &state.clusters.all.data else {
        block.render(area, buf);
        ListTable::new(columns(ctx), Vec::new(), &ctx.theme)
            .selected(None)
            .render(inner, buf);
        let msg = match &state.clusters.all.error {
            Some(e) => error_text(t, e),
            None => t.t("loading"),
        };
        message(&msg, Default::default(), rows_area, buf);
        return;
    };
    let height = usize::from(rows_area.height);
    let sel = state.clusters.list.selected;
    let visible = &state.clusters.visible;
    let window = Window::new(visible.len(), (sel + 1).saturating_sub(height), height);
    if let Some(more) = window.marker(t) {
        block = block.title_bottom(more);
    }
    block.render(area, buf);
    if visible.is_empty() {
        let id = if all.is_empty() {
            "clusters-empty"
        } else {
            "clusters-no-match"
        };
        let area = indented(rows_area);
        let mut line = Lines::new(usize::from(area.width));
        line.push(super::text::fit(&t.t(id), line.width), ctx.theme.dim());
        line.draw(area, buf);
    }
    let rows: Vec<Row> = visible[window.range()]
        .iter()
        .filter_map(|&i| all.get(i))
        .map(|c| row(ctx, c))
        .collect();
    let selected = window
        .range()
        .contains(&sel)
        .then(|| sel - window.range().start);
    ListTable::new(columns(ctx), rows, &ctx.theme)
        .selected(selected)
        .render(inner, buf);
}

/// One cluster's row. Of a cluster that cannot be read only the name is known: the rest of the
/// row says so, and why, in words that carry the colour.
fn row(ctx: &Ctx<'_>, c: &Cluster) -> Row {
    let t = ctx.texts;
    if let Some(why) = &c.unreadable {
        let said = t.tr("row-unreadable", &[("why", &sanitize(why))]);
        return Row::new(vec![
            Cell::name(sanitize(&c.name)),
            Cell::new(said).style(ctx.theme.fg(Color::Red)).spanning(),
        ]);
    }
    let version = |component| {
        let (full, style) = version_text(ctx, c, component, false);
        let (short, _) = version_text(ctx, c, component, true);
        Cell::new(full).short(short).style(style)
    };
    Row::new(vec![
        Cell::name(sanitize(&c.name)),
        version(Component::Talos),
        version(Component::Kubernetes),
        Cell::new(sanitize(&c.kube_proxy)),
        Cell::new(machines_text(ctx, c, false)).short(machines_text(ctx, c, true)),
        Cell::new(tracking_text(ctx, c, false)).short(tracking_text(ctx, c, true)),
        Cell::new(active_text(ctx, c, false)).short(active_text(ctx, c, true)),
    ])
}
