//! Keys: the dialogs' first, then the text field's, then the screen's key table. Pure.

use super::list::{filter_changed, more_if_near_the_end};
use super::nav::{
    back_to_list, open_cluster, open_selected, page, refilter_clusters, show, step_by,
};
use super::{Avail, ask_permissions, availability, fetch_current, quit};
use crate::action::{Effect, Key, KeyCode};
use crate::keymap::{self, KeyCommand};
use crate::new_operation;
use crate::state::{
    AskedAbout, Confirm, Conn, Dialog, Input, Notice, PendingWrite, RbacWrite, Screen, State, Why,
    WriteAction,
};
use crate::text_field::{self, Edit};
use ichor_model::MAX_FILTER_CHARS;

pub(super) fn on_key(state: &mut State, key: Key) -> Vec<Effect> {
    if key == Key::ctrl('c') {
        return quit(state);
    }
    // A key acts only on what is on screen. While the screen or the open dialog is not drawn
    // (the terminal is too small for it, or it has not been drawn yet), `q` quits, as the
    // screen that says so offers, and nothing else acts: no field takes text, no question is
    // answered, no dialog closes unseen.
    if !state.on_screen() {
        if key == Key::ch('q') {
            return quit(state);
        }
        // Nothing changed on screen.
        state.quiet = true;
        return Vec::new();
    }
    match &state.dialog {
        Some(Dialog::Confirm(c)) => {
            let c = c.clone();
            return on_confirm_key(state, c, key);
        }
        Some(Dialog::Events { scroll }) => {
            let scroll = *scroll;
            return on_events_key(state, scroll, key);
        }
        Some(Dialog::NewOperation(_)) => return new_operation::on_key(state, key),
        Some(Dialog::Read(_)) => return super::reading::on_key(state, key),
        None => {}
    }
    match state.input {
        Input::Command => return super::command::on_key(state, key),
        Input::Filter => {
            on_filter_key(state, key);
            return Vec::new();
        }
        Input::None => {}
    }
    // Esc first stops waiting for a pending write: it runs to its end on its worker (its
    // answer, with the old request number, is dropped), and the screen says it may happen.
    if key.code == KeyCode::Esc
        && let Some(p) = state.pending.take()
    {
        state.notice = Some(Notice::Abandoned(p.action, p.name));
        return fetch_current(state);
    }
    state.notice = None;
    if let Some(effects) = sort_key(state, key) {
        return effects;
    }
    let Some(cmd) = keymap::lookup(&state.keys, state.screen, key) else {
        return Vec::new();
    };
    run(state, cmd)
}

/// A key while the page's events are read (`e`): they scroll (by event, each wrapped whole),
/// load the older ones, show the keys, and close.
fn on_events_key(state: &mut State, scroll: usize, key: Key) -> Vec<Effect> {
    if key == Key::ch('?') {
        state.dialog = Some(Dialog::keys_over(Dialog::Events { scroll }));
        return Vec::new();
    }
    let room = state.viewport.dialog;
    let page = room.rows.max(1);
    let to = match keymap::lookup_in(keymap::EVENTS, key) {
        Some(KeyCommand::Cancel) => {
            state.dialog = None;
            return Vec::new();
        }
        Some(KeyCommand::LoadAllEvents) => return load_all_events(state),
        Some(KeyCommand::Up) => scroll.saturating_sub(1),
        Some(KeyCommand::Down) => scroll + 1,
        Some(KeyCommand::PageUp) => scroll.saturating_sub(page),
        Some(KeyCommand::PageDown) => scroll + page,
        Some(KeyCommand::Top) => 0,
        Some(KeyCommand::Bottom) => usize::MAX,
        _ => scroll,
    };
    state.dialog = Some(Dialog::Events {
        scroll: to.min(room.last_start()),
    });
    Vec::new()
}

/// `a` in the events view: when older events were not loaded, all of them are read (up to
/// [`ichor_model::MAX_EVENTS_ALL`]), and from then on with each refresh of the page. Nothing
/// when all are loaded or already asked for.
fn load_all_events(state: &mut State) -> Vec<Effect> {
    let seq = state.seq;
    let Some(d) = state.detail.as_mut() else {
        return Vec::new();
    };
    if d.events_wanted == ichor_model::EventsWanted::All || !d.events_held().older_not_loaded() {
        state.quiet = true;
        return Vec::new();
    }
    d.events_wanted = ichor_model::EventsWanted::All;
    d.events.loading = true;
    vec![Effect::ListEvents {
        seq,
        namespace: d.namespace.clone(),
        name: d.name.clone(),
        wanted: ichor_model::EventsWanted::All,
    }]
}

pub(super) fn on_confirm_key(state: &mut State, c: Confirm, key: Key) -> Vec<Effect> {
    if c.typed.is_some() {
        return super::guard::on_typed_confirm_key(state, c, key);
    }
    match key.code {
        KeyCode::Char('y') | KeyCode::Char('Y') if !key.ctrl => {
            state.dialog = None;
            state.notice = None;
            state.seq += 1;
            state.pending = Some(PendingWrite {
                action: c.action,
                namespace: c.namespace.clone(),
                name: c.name.clone(),
                since: state.now,
                seq: state.seq,
            });
            vec![Effect::Write {
                seq: state.seq,
                action: c.action,
                namespace: c.namespace,
                name: c.name,
                confirmed: c.confirmed,
            }]
        }
        // No is the default: Enter, n, Esc and q all answer it.
        KeyCode::Char('n')
        | KeyCode::Char('N')
        | KeyCode::Char('q')
        | KeyCode::Esc
        | KeyCode::Enter => {
            state.dialog = None;
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// A key in a list's filter: Enter keeps it, Esc clears it, the rest edits it.
pub(super) fn on_filter_key(state: &mut State, key: Key) {
    match key.code {
        KeyCode::Enter => state.input = Input::None,
        KeyCode::Esc => {
            state.input = Input::None;
            clear_filter(state);
        }
        _ => {
            let text = match state.screen {
                Screen::Clusters => &mut state.clusters.filter,
                _ => &mut state.ops.filter,
            };
            if text_field::edit(text, key, |_| true, MAX_FILTER_CHARS) == Edit::Changed {
                list_filter_changed(state);
            }
        }
    }
}

/// The filter of the list on screen changed: the Operations list asks the server once the
/// typing settles; the Clusters list, short and held whole, filters at once.
fn list_filter_changed(state: &mut State) {
    match state.screen {
        Screen::Clusters => refilter_clusters(state),
        _ => filter_changed(state),
    }
}

/// Clears the filter of the list on screen, if it has one.
fn clear_filter(state: &mut State) {
    let text = match state.screen {
        Screen::Clusters => &mut state.clusters.filter,
        _ => &mut state.ops.filter,
    };
    if !text.is_empty() {
        text.clear();
        list_filter_changed(state);
    }
}

pub(super) fn run(state: &mut State, cmd: KeyCommand) -> Vec<Effect> {
    let pg = page(state) as isize;
    let step = match cmd {
        KeyCommand::Up => Some(-1),
        KeyCommand::Down => Some(1),
        KeyCommand::PageUp => Some(-pg),
        KeyCommand::PageDown => Some(pg),
        KeyCommand::Top => Some(isize::MIN / 2),
        KeyCommand::Bottom => Some(isize::MAX / 2),
        _ => None,
    };
    if let Some(delta) = step {
        step_by(state, delta);
        return match state.screen {
            Screen::Operations => more_if_near_the_end(state),
            _ => Vec::new(),
        };
    }
    match cmd {
        KeyCommand::Up
        | KeyCommand::Down
        | KeyCommand::PageUp
        | KeyCommand::PageDown
        | KeyCommand::Top
        | KeyCommand::Bottom => {}
        KeyCommand::Open => match state.screen {
            Screen::Operations => return open_selected(state),
            Screen::Clusters => return open_cluster(state),
            Screen::Operation | Screen::Cluster => super::reading::whole_text(state),
        },
        KeyCommand::Back => match state.screen {
            Screen::Operation => return back_to_list(state),
            Screen::Cluster => return show(state, Screen::Clusters),
            Screen::Operations | Screen::Clusters => clear_filter(state),
        },
        KeyCommand::Manifest => return super::reading::manifest(state),
        KeyCommand::CommandLine => super::command::open(state),
        KeyCommand::ShowOperations => return show(state, Screen::Operations),
        KeyCommand::ShowClusters => return show(state, Screen::Clusters),
        KeyCommand::SwitchScreen => {
            let to = match state.screen {
                Screen::Operations | Screen::Operation => Screen::Clusters,
                Screen::Clusters | Screen::Cluster => Screen::Operations,
            };
            return show(state, to);
        }
        KeyCommand::New => match (
            availability(state, KeyCommand::New, None),
            state.target_cluster().cloned(),
        ) {
            (Avail::Yes, Some(c)) => return new_operation::open(state, c),
            (Avail::No(Why::NotPermitted), Some(c)) => {
                state.notice = Some(Notice::NotPermitted(RbacWrite::Start, c.namespace));
            }
            (Avail::No(why), _) => state.notice = Some(Notice::Unavailable(why)),
            _ => {}
        },
        KeyCommand::NextField
        | KeyCommand::ClearText
        | KeyCommand::DeleteWord
        | KeyCommand::PrevField
        | KeyCommand::Submit
        | KeyCommand::Cancel
        | KeyCommand::LoadAllEvents
        | KeyCommand::BackToForm => {}
        KeyCommand::Filter => state.input = Input::Filter,
        KeyCommand::Pause | KeyCommand::Resume | KeyCommand::Delete => return ask(state, cmd),
        KeyCommand::Refresh => return refresh(state),
        KeyCommand::Help => state.dialog = Some(Dialog::keys()),
        KeyCommand::Events => state.dialog = Some(Dialog::Events { scroll: 0 }),
        KeyCommand::Report => return super::guard::report(state),
        KeyCommand::Quit => return quit(state),
        KeyCommand::Suspend => return vec![Effect::Suspend],
    }
    Vec::new()
}

/// Shift-N, Shift-A, Shift-S on the Operations list: ordered by that column (again: the other
/// way), by the server, so every page is in that order; the rows held were in another.
fn sort_key(state: &mut State, key: Key) -> Option<Vec<Effect>> {
    let KeyCode::Char(c) = key.code else {
        return None;
    };
    if key.ctrl || state.screen != Screen::Operations {
        return None;
    }
    let by = keymap::SORT_KEYS.iter().find(|k| k.key == c)?.by;
    let old = state.ops.order;
    let order = ichor_model::Order {
        by,
        reversed: old.by == by && !old.reversed,
    };
    state.ops = crate::state::OperationsState {
        cluster: state.ops.cluster.take(),
        filter: std::mem::take(&mut state.ops.filter),
        order,
        ..Default::default()
    };
    Some(fetch_current(state))
}

/// `R`: the screen's data and what the caller may do, asked again now.
fn refresh(state: &mut State) -> Vec<Effect> {
    state.conn = Conn::Ok;
    // What the caller may do is asked again too (a role may have been granted).
    state.permissions.clear();
    let mut effects = fetch_current(state);
    // Its answer says "refreshed" (a screen with nothing to read says nothing).
    state.refresh = (!effects.is_empty()).then_some(state.seq);
    effects.extend(ask_permissions(state, shown_namespaces(state)));
    effects
}

/// The namespaces of what the lists hold.
pub(super) fn shown_namespaces(state: &State) -> Vec<String> {
    let ops = state
        .ops
        .all
        .data
        .iter()
        .flatten()
        .map(|o| o.namespace.clone());
    let clusters = state
        .clusters
        .all
        .data
        .iter()
        .flatten()
        .map(|c| c.namespace.clone());
    ops.chain(clusters).collect()
}

pub(super) fn ask(state: &mut State, cmd: KeyCommand) -> Vec<Effect> {
    let op = state.target().cloned();
    match availability(state, cmd, op.as_ref()) {
        Avail::No(Why::ResumeAfterFailure) => {
            state.notice = op.map(|o| Notice::ResumeNotOffered(o.name));
        }
        Avail::No(Why::NotPermitted) => {
            let write = match cmd {
                KeyCommand::Delete => RbacWrite::Delete,
                _ => RbacWrite::Patch,
            };
            state.notice = op.map(|o| Notice::NotPermitted(write, o.namespace));
        }
        Avail::No(why) => state.notice = Some(Notice::Unavailable(why)),
        Avail::Yes => {
            if let Some(op) = op {
                let action = match cmd {
                    KeyCommand::Pause => WriteAction::Pause,
                    KeyCommand::Resume => WriteAction::Resume,
                    _ => WriteAction::Delete,
                };
                state.dialog = Some(Dialog::Confirm(Confirm {
                    action,
                    namespace: op.namespace.clone(),
                    name: op.name.clone(),
                    asked: AskedAbout::of(&op),
                    confirmed: op.confirmed(),
                    cluster: op.cluster.clone(),
                    typed: state.session.production.then(String::new),
                }));
            }
        }
    }
    Vec::new()
}

/// Whether the caller may make `cmd`'s write in `namespace`: `false` only when Kubernetes said
/// no (unknown is allowed: the API server decides).
pub(super) fn permitted(state: &State, cmd: KeyCommand, namespace: &str) -> bool {
    let Some(Some(p)) = state.permissions.get(namespace) else {
        return true;
    };
    match cmd {
        KeyCommand::Pause | KeyCommand::Resume => p.pause,
        KeyCommand::Delete => p.delete,
        KeyCommand::New => p.start,
        _ => true,
    }
}
