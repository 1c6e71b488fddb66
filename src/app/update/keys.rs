//! Keys: the dialogs' first, then the text field's, then the screen's key table. Pure.

use super::list::{filter_changed, more_if_near_the_end};
use super::nav::{back_to_list, open_cluster, open_selected, page, show, step_by};
use super::{Avail, ask_permissions, availability, fetch_current, quit};
use crate::app::action::{Effect, Key, KeyCode};
use crate::app::keymap::{self, Command};
use crate::app::new_operation;
use crate::app::state::{
    Confirm, Conn, Dialog, Input, Notice, PendingWrite, Screen, State, Why, WriteAction,
};

pub(super) fn on_key(state: &mut State, key: Key) -> Vec<Effect> {
    if key == Key::ctrl('c') {
        return quit(state);
    }
    match state.dialog.clone() {
        Some(Dialog::Confirm(c)) => return on_confirm_key(state, c, key),
        Some(Dialog::NewOperation(_)) => return new_operation::on_key(state, key),
        Some(Dialog::Events { scroll }) => {
            state.dialog = match key.code {
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('e') | KeyCode::Enter => None,
                KeyCode::Up | KeyCode::Char('k') => Some(Dialog::Events {
                    scroll: scroll.saturating_sub(1),
                }),
                KeyCode::Down | KeyCode::Char('j') => Some(Dialog::Events { scroll: scroll + 1 }),
                KeyCode::PageUp => Some(Dialog::Events {
                    scroll: scroll.saturating_sub(page(state)),
                }),
                KeyCode::PageDown => Some(Dialog::Events {
                    scroll: scroll + page(state),
                }),
                KeyCode::Home | KeyCode::Char('g') => Some(Dialog::Events { scroll: 0 }),
                _ => Some(Dialog::Events { scroll }),
            };
            return Vec::new();
        }
        Some(Dialog::Help) => {
            if matches!(
                key.code,
                KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter
            ) {
                state.dialog = None;
            }
            return Vec::new();
        }
        None => {}
    }
    if state.input == Input::Filter {
        on_filter_key(state, key);
        return Vec::new();
    }
    // Esc first stops waiting for a pending write: it may still happen, and the screen says so.
    if key.code == KeyCode::Esc
        && let Some(p) = state.pending.take()
    {
        state.notice = Some(Notice::Abandoned(p.action, p.name));
        let mut effects = vec![Effect::Abandon { seq: p.seq }];
        effects.extend(fetch_current(state));
        return effects;
    }
    state.notice = None;
    let Some(cmd) = keymap::lookup(state.screen, key) else {
        return Vec::new();
    };
    run(state, cmd)
}

pub(super) fn on_confirm_key(state: &mut State, c: Confirm, key: Key) -> Vec<Effect> {
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

pub(super) fn on_filter_key(state: &mut State, key: Key) {
    match key.code {
        KeyCode::Enter => state.input = Input::None,
        KeyCode::Esc => {
            state.input = Input::None;
            state.ops.filter.clear();
            filter_changed(state);
        }
        KeyCode::Backspace => {
            state.ops.filter.pop();
            filter_changed(state);
        }
        KeyCode::Char(c) if !key.ctrl && !c.is_control() => {
            state.ops.filter.push(c);
            filter_changed(state);
        }
        _ => {}
    }
}

pub(super) fn run(state: &mut State, cmd: Command) -> Vec<Effect> {
    let pg = page(state) as isize;
    let step = match cmd {
        Command::Up => Some(-1),
        Command::Down => Some(1),
        Command::PageUp => Some(-pg),
        Command::PageDown => Some(pg),
        Command::Top => Some(isize::MIN / 2),
        Command::Bottom => Some(isize::MAX / 2),
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
        Command::Up
        | Command::Down
        | Command::PageUp
        | Command::PageDown
        | Command::Top
        | Command::Bottom => {}
        Command::Open => match state.screen {
            Screen::Operations => return open_selected(state),
            Screen::Clusters => return open_cluster(state),
            _ => {}
        },
        Command::Back => match state.screen {
            Screen::Operation => return back_to_list(state),
            Screen::Cluster => return show(state, Screen::Clusters),
            Screen::Operations => {
                if !state.ops.filter.is_empty() {
                    state.ops.filter.clear();
                    filter_changed(state);
                }
            }
            Screen::Clusters => {}
        },
        Command::ShowOperations => return show(state, Screen::Operations),
        Command::ShowClusters => return show(state, Screen::Clusters),
        Command::SwitchScreen => {
            let to = match state.screen {
                Screen::Operations | Screen::Operation => Screen::Clusters,
                Screen::Clusters | Screen::Cluster => Screen::Operations,
            };
            return show(state, to);
        }
        Command::New => match (
            availability(state, Command::New, None),
            state.target_cluster().cloned(),
        ) {
            (Avail::Yes, Some(c)) => return new_operation::open(state, c),
            (Avail::No(why), _) => state.notice = Some(Notice::Unavailable(why)),
            _ => {}
        },
        Command::NextField
        | Command::PrevField
        | Command::Submit
        | Command::Cancel
        | Command::BackToForm => {}
        Command::Filter => state.input = Input::Filter,
        Command::Pause | Command::Resume | Command::Delete => return ask(state, cmd),
        Command::Refresh => {
            state.conn = Conn::Ok;
            // What the caller may do is asked again too (a role may have been granted).
            state.permissions.clear();
            let mut effects = fetch_current(state);
            effects.extend(ask_permissions(state, shown_namespaces(state)));
            return effects;
        }
        Command::Help => state.dialog = Some(Dialog::Help),
        Command::Events => state.dialog = Some(Dialog::Events { scroll: 0 }),
        Command::Quit => return quit(state),
        Command::Suspend => return vec![Effect::Suspend],
    }
    Vec::new()
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

pub(super) fn ask(state: &mut State, cmd: Command) -> Vec<Effect> {
    let op = state.target().cloned();
    match availability(state, cmd, op.as_ref()) {
        Avail::No(Why::ResumeAfterFailure) => {
            state.notice = op.map(|o| Notice::ResumeNotOffered(o.name));
        }
        Avail::No(why) => state.notice = Some(Notice::Unavailable(why)),
        Avail::Yes => {
            if let Some(op) = op {
                let action = match cmd {
                    Command::Pause => WriteAction::Pause,
                    Command::Resume => WriteAction::Resume,
                    _ => WriteAction::Delete,
                };
                state.dialog = Some(Dialog::Confirm(Confirm {
                    action,
                    namespace: op.namespace.clone(),
                    name: op.name.clone(),
                    running: !op.phase.is_finished(),
                    confirmed: op.confirmed(),
                }));
            }
        }
    }
    Vec::new()
}

/// Whether the caller may make `cmd`'s write in `namespace`: `false` only when Kubernetes said
/// no (unknown is allowed: the API server decides).
pub(super) fn permitted(state: &State, cmd: Command, namespace: &str) -> bool {
    let Some(Some(p)) = state.permissions.get(namespace) else {
        return true;
    };
    match cmd {
        Command::Pause | Command::Resume => p.pause,
        Command::Delete => p.delete,
        Command::New => p.start,
        _ => true,
    }
}
