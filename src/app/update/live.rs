//! Live updates: the subscription follows what the dashboard holds; its updates land where the
//! polls' answers land; while it delivers, the lists and the operation's page are not polled.

use super::{list, listed_namespace, loaded, schedule_poll};
use crate::action::{Effect, LiveEvent};
use crate::state::{LiveMode, Screen, State};
use ichor_model::{Code, ListQuery, View, WatchRequest, WatchUpdate};

/// What the dashboard holds, as a subscription asks for it: the list's first pages as the
/// polls ask for them, and the operation whose page is open.
fn interest(state: &State) -> WatchRequest {
    let (page_size, text) = state.ops.paging.asked.clone();
    WatchRequest {
        list: ListQuery {
            namespace: listed_namespace(state),
            view: View::Summary,
            page_size: page_size.max(list::PAGE),
            text,
            cluster: state.ops.cluster.clone(),
            order: state.ops.order,
            ..ListQuery::default()
        },
        follow: match (state.screen, state.detail.as_ref()) {
            (Screen::Operation, Some(d)) => Some((d.namespace.clone(), d.name.clone())),
            _ => None,
        },
        // Pages come whole to the dashboard: a remote client asks serve for deltas on the wire
        // and applies them to the page it holds (ichor-client's stream).
        page_deltas: false,
    }
}

/// Subscribes again when what the dashboard holds changed (one stream per dashboard).
pub(super) fn follow_interest(state: &mut State) -> Vec<Effect> {
    if state.live.mode == LiveMode::Unsupported {
        return Vec::new();
    }
    let request = interest(state);
    if state.live.request.as_ref() == Some(&request) {
        return Vec::new();
    }
    state.live.sub += 1;
    state.live.request = Some(request.clone());
    vec![Effect::Watch {
        sub: state.live.sub,
        request,
    }]
}

/// Live updates are off (broken, not unsupported) and the backend answers again: a new
/// subscription now, which replaces the one waiting out its backoff.
pub(super) fn subscribe_again_if_off(state: &mut State) -> Vec<Effect> {
    if !matches!(state.live.mode, LiveMode::Off { .. }) {
        return Vec::new();
    }
    state.live.request = None;
    follow_interest(state)
}

/// An update of the subscription: its page lands where a polled page lands, its operation
/// where a read of the page's operation lands; no poll is scheduled on this road.
pub(super) fn on_pushed(state: &mut State, sub: u64, update: WatchUpdate) -> Vec<Effect> {
    if sub != state.live.sub {
        state.quiet = true;
        return Vec::new();
    }
    if update.heartbeat {
        // Alive, and the data on screen is still the latest: nothing drawn changes (the
        // followed operation, as pushed last, still exists now).
        state.last_ok = Some(state.now);
        if let Some(d) = state.detail.as_mut().filter(|d| d.op.error.is_none()) {
            d.seen_at = d.op.data.as_ref().map(|_| state.now);
        }
        state.quiet = true;
        return Vec::new();
    }
    let mut effects = Vec::new();
    let mut changed = false;
    if let Some(page) = update.page {
        effects.extend(list::land_page(state, page));
        changed |= !state.quiet;
        state.quiet = false;
    }
    let followed = state.live.request.as_ref().and_then(|r| r.follow.clone());
    if let (Some(op), Some((ns, name))) = (update.followed, followed.as_ref()) {
        effects.extend(loaded::land_operation(state, ns, name, op));
        changed |= !state.quiet;
        state.quiet = false;
    }
    effects.extend(pushed_events(state, update.events, followed, &mut changed));
    state.quiet = !changed;
    // The stream replaces the poll.
    if state.pushed() {
        state.next_poll = None;
    }
    effects
}

/// The newest events a push carries for the followed operation: they land as read ones do;
/// with all of them held, all are read again instead.
fn pushed_events(
    state: &mut State,
    events: Option<Result<ichor_model::OperationEvents, ichor_model::ApiError>>,
    followed: Option<(String, String)>,
    changed: &mut bool,
) -> Vec<Effect> {
    let (Some(events), Some((namespace, name))) = (events, followed) else {
        return Vec::new();
    };
    let all_held = state
        .detail
        .as_ref()
        .is_some_and(|d| d.events_wanted == ichor_model::EventsWanted::All);
    if all_held {
        return vec![Effect::ListEvents {
            seq: state.seq,
            namespace,
            name,
            wanted: ichor_model::EventsWanted::All,
        }];
    }
    let seq = state.seq;
    let effects = loaded::on_events(state, seq, namespace, name, events);
    *changed |= !state.quiet;
    effects
}

/// What became of the subscription.
pub(super) fn on_live(state: &mut State, sub: u64, event: LiveEvent) -> Vec<Effect> {
    if sub != state.live.sub {
        state.quiet = true;
        return Vec::new();
    }
    match event {
        LiveEvent::On => {
            state.live.mode = LiveMode::On;
            if state.pushed() {
                state.next_poll = None;
            }
        }
        LiveEvent::Off(e) if e.code == Code::Unimplemented => return unsupported(state),
        LiveEvent::Off(e) => {
            tracing::info!(error = %e.message, "live updates off: polling until the stream is back");
            if !matches!(state.live.mode, LiveMode::Off { .. }) {
                state.live.mode = LiveMode::Off { since: state.now };
                // What is on screen is not known to be current: read it now.
                if matches!(state.screen, Screen::Operations | Screen::Operation) {
                    return super::fetch_current(state);
                }
            } else {
                state.quiet = true;
            }
            if state.next_poll.is_none() {
                schedule_poll(state);
            }
        }
        LiveEvent::Unsupported => return unsupported(state),
    }
    Vec::new()
}

/// A backend without WatchOperations: polls, as before (said once, in the log).
fn unsupported(state: &mut State) -> Vec<Effect> {
    tracing::info!("the server does not push updates (an older version): polling");
    state.live.mode = LiveMode::Unsupported;
    if state.next_poll.is_none() {
        schedule_poll(state);
    }
    Vec::new()
}
