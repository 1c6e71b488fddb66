//! Where the person is: screens, pages, selections, scrolling. Pure.

use super::fetch_current;
use crate::action::{ClusterFor, Effect};
use crate::state::{ClusterPage, DetailState, Dialog, Loaded, Screen, State};

pub(super) fn page(state: &State) -> usize {
    match state.screen {
        Screen::Operation => state.viewport.page_rows,
        _ => state.viewport.list_rows,
    }
    .max(1)
}

pub(super) fn open_selected(state: &mut State) -> Vec<Effect> {
    match state.ops.selected().cloned() {
        Some(op) => open_operation(state, op),
        None => Vec::new(),
    }
}

pub(super) fn back_to_list(state: &mut State) -> Vec<Effect> {
    show(state, Screen::Operations)
}

/// Switches to a list screen and loads it.
pub(super) fn show(state: &mut State, screen: Screen) -> Vec<Effect> {
    if state.screen == screen && matches!(screen, Screen::Operations | Screen::Clusters) {
        return Vec::new();
    }
    state.screen = screen;
    state.detail = None;
    state.cluster = None;
    fetch_current(state)
}

pub(super) fn open_cluster(state: &mut State) -> Vec<Effect> {
    let Some(c) = state.clusters.selected().cloned() else {
        return Vec::new();
    };
    state.screen = Screen::Cluster;
    state.cluster = Some(ClusterPage {
        namespace: c.namespace.clone(),
        name: c.name.clone(),
        cluster: Loaded {
            data: Some(c),
            error: None,
            loading: false,
        },
        scroll: 0,
    });
    fetch_current(state)
}

/// Opens an operation's page (after a start: the new operation, followed live).
pub(super) fn open_operation(state: &mut State, op: ichor_model::Operation) -> Vec<Effect> {
    state.screen = Screen::Operation;
    state.cluster = None;
    let (namespace, cluster) = (op.namespace.clone(), op.cluster.clone());
    state.detail = Some(DetailState {
        namespace: op.namespace.clone(),
        name: op.name.clone(),
        op: Loaded {
            data: Some(op),
            error: None,
            loading: false,
        },
        cluster: None,
        scroll: None,
        events: Loaded::default(),
        events_total: None,
        events_wanted: Default::default(),
        seen_at: state.last_ok,
    });
    let mut effects = fetch_current(state);
    let seq = state.seq;
    effects.push(Effect::GetCluster {
        seq,
        purpose: ClusterFor::OperationPage,
        namespace,
        name: cluster,
    });
    effects
}

/// Recomputes the filtered rows (on data or filter change, never per frame).
pub(super) fn refilter(state: &mut State) {
    // The selection follows its operation, not its row number.
    let selected = state
        .ops
        .selected()
        .map(|o| (o.namespace.clone(), o.name.clone()));
    let needle = state.ops.filter.to_lowercase();
    let ops = state.ops.all.data.as_deref().unwrap_or_default();
    state.ops.visible = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.matches(&needle))
        .map(|(i, _)| i)
        .collect();
    let n = state.ops.visible.len();
    state.ops.list.selected = state.ops.list.selected.min(n.saturating_sub(1));
    keep_selection_visible(state);
    if let Some((ns, name)) = selected {
        reselect(state, &ns, &name);
    }
}

/// Recomputes the clusters the filter lets through; the selection follows its cluster.
pub(super) fn refilter_clusters(state: &mut State) {
    let selected = state
        .clusters
        .selected()
        .map(|c| (c.namespace.clone(), c.name.clone()));
    let needle = state.clusters.filter.to_lowercase();
    let all = state.clusters.all.data.as_deref().unwrap_or_default();
    state.clusters.visible = all
        .iter()
        .enumerate()
        .filter(|(_, c)| c.matches(&needle))
        .map(|(i, _)| i)
        .collect();
    let found = selected.and_then(|(ns, name)| {
        state.clusters.visible.iter().position(|&i| {
            all.get(i)
                .is_some_and(|c| c.namespace == ns && c.name == name)
        })
    });
    let n = state.clusters.visible.len();
    state.clusters.list.selected = found
        .unwrap_or(state.clusters.list.selected)
        .min(n.saturating_sub(1));
}

pub(super) fn reselect(state: &mut State, namespace: &str, name: &str) {
    let ops = state.ops.all.data.as_deref().unwrap_or_default();
    if let Some(pos) = state.ops.visible.iter().position(|&i| {
        ops.get(i)
            .is_some_and(|o| o.namespace == namespace && o.name == name)
    }) {
        state.ops.list.selected = pos;
        keep_selection_visible(state);
    }
}

pub(super) fn keep_selection_visible(state: &mut State) {
    let rows = page(state);
    let l = &mut state.ops.list;
    if l.selected < l.offset {
        l.offset = l.selected;
    } else if l.selected >= l.offset + rows {
        l.offset = l.selected + 1 - rows;
    }
    let n = state.ops.visible.len();
    l.offset = l.offset.min(n.saturating_sub(rows));
}

/// Moves the selection (lists) or the scroll (pages) by `delta` rows, within bounds.
pub(super) fn step_by(state: &mut State, delta: isize) {
    match state.screen {
        Screen::Operations => {
            let n = state.ops.visible.len();
            let cur = state.ops.list.selected as isize;
            state.ops.list.selected = (cur + delta).clamp(0, n.saturating_sub(1) as isize) as usize;
        }
        Screen::Clusters => {
            let n = state.clusters.visible.len();
            let cur = state.clusters.list.selected as isize;
            state.clusters.list.selected =
                (cur + delta).clamp(0, n.saturating_sub(1) as isize) as usize;
        }
        Screen::Cluster => {
            if let Some(p) = state.cluster.as_mut() {
                let n = p.cluster.data.as_ref().map_or(0, |c| c.machines.len());
                p.scroll =
                    (p.scroll as isize + delta).clamp(0, n.saturating_sub(1) as isize) as usize;
            }
        }
        Screen::Operation => {
            let rows = page(state);
            if let Some(d) = state.detail.as_mut() {
                let n = d.op.data.as_ref().map_or(0, |o| o.machines.len());
                let from = d.scroll.unwrap_or_else(|| {
                    d.op.data
                        .as_ref()
                        .map_or(0, |o| crate::state::follow_scroll(o, rows))
                });
                d.scroll =
                    Some((from as isize + delta).clamp(0, n.saturating_sub(1) as isize) as usize);
            }
        }
    }
    keep_selection_visible(state);
}

/// The open dialog's text stays scrolled within what it holds at this size (after a resize, or
/// a Review whose plan changed).
pub(super) fn keep_dialog_scroll_in_range(state: &mut State) {
    let last = state.viewport.dialog.last_start();
    match state.dialog.as_mut() {
        Some(Dialog::NewOperation(d)) => d.scroll = d.scroll.min(last),
        Some(Dialog::Read(r)) => r.scroll = r.scroll.min(last),
        Some(Dialog::Events { scroll }) => *scroll = (*scroll).min(last),
        _ => {}
    }
}

/// The terminal changed size: the selection stays in view.
pub(super) fn on_resize(state: &mut State, w: u16, h: u16) -> Vec<Effect> {
    state.size = (w, h);
    keep_selection_visible(state);
    Vec::new()
}

/// The views show another number of rows: the selection and a dialog's scroll stay in range.
pub(super) fn on_viewport(state: &mut State, v: crate::state::Viewport) -> Vec<Effect> {
    state.viewport = v;
    keep_selection_visible(state);
    keep_dialog_scroll_in_range(state);
    Vec::new()
}
