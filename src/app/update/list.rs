//! The Operations list against the server: each poll asks for summaries, as many as the rows
//! held (at least a page), with the filter and the version held, so an unchanged list comes
//! back empty; the next page is asked for as the person scrolls towards the end of what is held.

use super::nav::{refilter, reselect};
use super::{ask_permissions, listed_namespace, schedule_poll};
use crate::action::Effect;
use crate::state::{HeldPage, Paging, Screen, State};
use ichor_model::{ApiError, ListQuery, MAX_FILTER_CHARS, MAX_PAGE_SIZE, OperationPage, View};
use jiff::SignedDuration;

/// The rows a page holds.
pub(crate) const PAGE: u32 = 100;
/// How long the filter waits for the next key before the server is asked.
pub(crate) const FILTER_SETTLE: SignedDuration = SignedDuration::from_millis(250);

/// The filter as the server takes it: at most [`MAX_FILTER_CHARS`] characters.
fn filter_text(state: &State) -> String {
    state.ops.filter.chars().take(MAX_FILTER_CHARS).collect()
}

fn rounded_to_pages(rows: usize) -> u32 {
    let rows = u32::try_from(rows).unwrap_or(u32::MAX);
    rows.div_ceil(PAGE)
        .max(1)
        .saturating_mul(PAGE)
        .min(MAX_PAGE_SIZE)
}

/// What a poll asks for: the first pages again, as many rows as are held, with the version
/// held when it is for the same page size and filter.
pub(super) fn poll(state: &mut State, seq: u64) -> Effect {
    state.ops.all.loading = true;
    let rows = state.ops.all.data.as_ref().map_or(0, Vec::len);
    let text = filter_text(state);
    let held = state.ops.paging.held.as_ref();
    let page_size = match held {
        Some(h) if h.text == text && (rows as u64) <= u64::from(h.page_size) => h.page_size,
        _ => rounded_to_pages(rows),
    };
    let known_version = held
        .filter(|h| h.page_size == page_size && h.text == text)
        .map(|h| h.version.clone());
    state.ops.paging.asked = (page_size, text.clone());
    Effect::ListOperations {
        seq,
        query: ListQuery {
            namespace: listed_namespace(state),
            view: View::Summary,
            page_size,
            text,
            known_version,
            cluster: state.ops.cluster.clone(),
            order: state.ops.order,
            ..ListQuery::default()
        },
        more: false,
    }
}

/// Asks for the next page when the selection is within a screen of the last row held.
pub(super) fn more_if_near_the_end(state: &mut State) -> Vec<Effect> {
    let rows = state.viewport.list_rows.max(1);
    let near = state.ops.list.selected + 2 * rows >= state.ops.visible.len();
    let p = &state.ops.paging;
    let Some(token) = p.next_page_token.clone() else {
        return Vec::new();
    };
    if !near || p.loading_more || state.ops.all.loading {
        return Vec::new();
    }
    state.ops.paging.loading_more = true;
    vec![Effect::ListOperations {
        seq: state.seq,
        query: ListQuery {
            namespace: listed_namespace(state),
            view: View::Summary,
            page_size: PAGE,
            page_token: Some(token),
            text: state.ops.paging.asked.1.clone(),
            cluster: state.ops.cluster.clone(),
            order: state.ops.order,
            ..ListQuery::default()
        },
        more: true,
    }]
}

/// The filter changed: the rows held are filtered at once, and the server is asked once the
/// typing settles.
pub(super) fn filter_changed(state: &mut State) {
    refilter(state);
    state.next_poll = Some(state.now + FILTER_SETTLE);
}

/// A page a poll asked for arrived: the first pages replace the rows held (unless unchanged),
/// the next page is appended; then the next poll is set.
pub(super) fn on_polled_page(
    state: &mut State,
    seq: u64,
    more: bool,
    result: Result<OperationPage, ApiError>,
) -> Vec<Effect> {
    if seq != state.seq {
        state.quiet = true;
        return Vec::new();
    }
    if more {
        state.ops.paging.loading_more = false;
        return match result {
            Ok(page) => {
                answered(state);
                append(state, page)
            }
            Err(e) => {
                state.ops.all.error = Some(e);
                Vec::new()
            }
        };
    }
    let effects = match result {
        Ok(page) => land_page(state, page),
        Err(e) => {
            state.ops.all.loading = false;
            state.ops.all.error = Some(e);
            Vec::new()
        }
    };
    schedule_poll(state);
    effects
}

/// The list's first pages, polled or pushed: they replace the rows held unless the server said
/// they are unchanged (then nothing drawn changes: "updated just now" still is, and the clock's
/// own changes are drawn when they come).
pub(super) fn land_page(state: &mut State, page: OperationPage) -> Vec<Effect> {
    // Whichever first page was awaited, this one is newer.
    state.ops.all.loading = false;
    let was_ok = answered(state);
    if page.unchanged && was_ok {
        state.quiet = true;
        return more_after_a_poll(state);
    }
    let mut effects = Vec::new();
    if !page.unchanged {
        effects.extend(super::notify::look(state, &page.operations));
        replace(state, page);
    }
    refilter(state);
    effects.extend(ask_permissions(state, shown_namespaces(state)));
    effects.extend(super::pace::ask_roles(state));
    effects.extend(more_after_a_poll(state));
    effects
}

/// The list answered: its error goes and the data's time is now. Whether it had no error.
fn answered(state: &mut State) -> bool {
    let was_ok = state.ops.all.error.is_none();
    state.ops.all.error = None;
    state.last_ok = Some(state.now);
    was_ok
}

/// A selection that reached the end while the poll was out asks for the next page now.
fn more_after_a_poll(state: &mut State) -> Vec<Effect> {
    match state.screen {
        Screen::Operations => more_if_near_the_end(state),
        _ => Vec::new(),
    }
}

/// The namespaces of the rows held.
fn shown_namespaces(state: &State) -> Vec<String> {
    let ops = state.ops.all.data.as_deref().unwrap_or_default();
    let mut ns: Vec<String> = ops.iter().map(|o| o.namespace.clone()).collect();
    ns.sort();
    ns.dedup();
    ns
}

fn replace(state: &mut State, page: OperationPage) {
    let selected = state
        .ops
        .selected()
        .map(|o| (o.namespace.clone(), o.name.clone()));
    let (page_size, text) = state.ops.paging.asked.clone();
    let unfiltered_total = match text.is_empty() {
        true => page.total,
        false => state.ops.paging.unfiltered_total,
    };
    state.ops.paging = Paging {
        unfiltered_total,
        held: (!page.version.is_empty()).then(|| HeldPage {
            page_size,
            text: text.clone(),
            version: page.version,
        }),
        asked: (page_size, text),
        next_page_token: page.next_page_token,
        total: page.total,
        loading_more: false,
    };
    state.ops.all.data = Some(page.operations);
    refilter(state);
    if let Some((ns, name)) = selected {
        reselect(state, &ns, &name);
    }
}

fn append(state: &mut State, page: OperationPage) -> Vec<Effect> {
    let rows = state.ops.all.data.get_or_insert_with(Vec::new);
    for op in page.operations {
        if !rows
            .iter()
            .any(|o| o.namespace == op.namespace && o.name == op.name)
        {
            rows.push(op);
        }
    }
    let p = &mut state.ops.paging;
    p.next_page_token = page.next_page_token;
    p.total = page.total;
    if p.asked.1.is_empty() {
        p.unfiltered_total = page.total;
    }
    // The rows held are no longer one page of the size the version was for.
    p.held = None;
    refilter(state);
    ask_permissions(state, shown_namespaces(state))
}

/// A whole list as one page (a list read all at once).
pub(super) fn whole(mut ops: Vec<ichor_model::Operation>) -> OperationPage {
    ops.sort_by(ichor_model::list_order);
    OperationPage {
        total: ops.len(),
        operations: ops,
        ..OperationPage::default()
    }
}
