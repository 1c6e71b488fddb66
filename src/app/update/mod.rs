//! `update(&mut State, Action) -> Vec<Effect>`: the only place State changes. No I/O, no clock
//! (the runtime sets `state.now`), so a test drives the whole app with a list of Actions.

mod command;
mod guard;
mod keys;
mod list;
mod live;
mod loaded;
mod nav;
mod notify;
mod pace;
mod reading;

use keys::permitted;

use super::action::{Action, ClusterFor, Effect};
use super::keymap::KeyCommand;
use super::state::{Notice, Screen, State, Why};
use ichor_model::{Operation, Phase};
use jiff::SignedDuration;

/// Poll interval while something shown is unfinished (running).
pub const POLL_ACTIVE: SignedDuration = SignedDuration::from_secs(3);
/// Poll interval otherwise (idle list, paused operation).
pub const POLL_IDLE: SignedDuration = SignedDuration::from_secs(10);

/// Whether a command is offered for the current target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Avail {
    Yes,
    /// Not offered, and why.
    No(Why),
}

/// The first effects: load the Operations list and ask what the caller may do.
pub fn start(state: &mut State) -> Vec<Effect> {
    let mut effects = fetch_current(state);
    effects.extend(ask_permissions(state, Vec::new()));
    effects
}

/// Applies one action: a dispatcher over small handlers. An update that may change what is
/// drawn moves `state.revision`; a tick (time passing, a poll starting) and a handler that
/// says it changed nothing do not.
pub fn update(state: &mut State, action: Action) -> Vec<Effect> {
    state.quiet = matches!(action, Action::Tick);
    let refreshed = refresh_answered(state, &action);
    let effects = dispatch(state, action);
    if let Some(ok) = refreshed {
        state.refresh = None;
        if ok && state.notice.is_none() {
            state.notice = Some(Notice::Refreshed);
            state.quiet = false;
        }
    }
    if !state.quiet {
        state.revision += 1;
    }
    state.quiet = false;
    effects
}

/// Whether `action` answers the read `R` asked for (or a later one of the same screen), and
/// whether it read: `None` when it is no such answer.
fn refresh_answered(state: &State, action: &Action) -> Option<bool> {
    let asked = state.refresh?;
    let (seq, ok) = match (state.screen, action) {
        (
            Screen::Operations,
            Action::OperationsPage {
                seq,
                more: false,
                result,
            },
        ) => (*seq, result.is_ok()),
        (Screen::Operations, Action::Operations { seq, result }) => (*seq, result.is_ok()),
        (Screen::Operation, Action::Operation { seq, result, .. }) => (*seq, result.is_ok()),
        (Screen::Clusters, Action::Clusters { seq, result }) => (*seq, result.is_ok()),
        (
            Screen::Cluster,
            Action::Cluster {
                seq,
                purpose: ClusterFor::ClusterPage,
                result,
                ..
            },
        ) => (*seq, result.is_ok()),
        _ => return None,
    };
    (seq >= asked).then_some(ok)
}

fn dispatch(state: &mut State, action: Action) -> Vec<Effect> {
    match action {
        Action::Key(key) => keys::on_key(state, key),
        Action::Resize(w, h) => nav::on_resize(state, w, h),
        Action::Viewport(v) => nav::on_viewport(state, v),
        Action::Redraw => Vec::new(),
        Action::Terminate => quit(state),
        Action::Tick => on_tick(state),
        Action::Pushed { sub, update } => live::on_pushed(state, sub, *update),
        Action::Live { sub, event } => live::on_live(state, sub, event),
        Action::Operations { seq, result } => {
            list::on_polled_page(state, seq, false, result.map(list::whole))
        }
        Action::OperationsPage { seq, more, result } => {
            list::on_polled_page(state, seq, more, result)
        }
        Action::Events {
            seq,
            namespace,
            name,
            result,
        } => loaded::on_events(state, seq, namespace, name, result),
        Action::Operation {
            seq,
            namespace,
            name,
            result,
        } => loaded::on_operation(state, seq, namespace, name, result),
        Action::Cluster {
            seq,
            purpose,
            namespace,
            name,
            result,
        } => loaded::on_cluster(state, seq, purpose, namespace, name, result),
        Action::Written {
            seq,
            action,
            namespace,
            name,
            result,
        } => loaded::on_written(state, seq, action, namespace, name, result),
        Action::Permissions { namespace, result } => {
            loaded::on_permissions(state, namespace, result)
        }
        Action::Clusters { seq, result } => loaded::on_clusters(state, seq, result),
        Action::Planned { seq, result } => loaded::on_planned(state, seq, result),
        Action::Started { seq, result } => loaded::on_started(state, seq, result),
        Action::StartFound { request_id, result } => {
            loaded::on_start_found(state, &request_id, result)
        }
        Action::TaskFailed { what, message } => loaded::on_task_failed(state, &what, &message),
        Action::Manifest {
            namespace,
            name,
            result,
        } => reading::on_manifest(state, &namespace, &name, result),
        Action::Retry(ev) => loaded::on_retry(state, ev),
        Action::ServerVersion(v) => {
            state.session.server_version = v;
            Vec::new()
        }
        Action::User(user) => {
            state.session.user = Some(user);
            Vec::new()
        }
        Action::ContextReached(reached) => command::on_context_reached(state, *reached),
        Action::ContextFailed { context, message } => {
            command::on_context_failed(state, context, message)
        }
        Action::Roles(result) => pace::on_roles(state, result),
        Action::PriorRuns { key, result } => pace::on_prior_runs(state, key, result),
        Action::ReportSaved { name, result } => guard::on_report_saved(state, name, result),
    }
}

/// The clock moved: a start settling, an operation shown turning slow, a poll due.
fn on_tick(state: &mut State) -> Vec<Effect> {
    let mut effects = loaded::look_for_settling_start(state);
    effects.extend(notify::look_shown(state));
    if !state.pushed() && state.next_poll.is_some_and(|at| at <= state.now) {
        effects.extend(fetch_current(state));
    }
    effects
}

/// Asks what the caller may do in each namespace shown (and the session's) not asked yet.
pub(super) fn ask_permissions(state: &mut State, shown: Vec<String>) -> Vec<Effect> {
    let mut namespaces = shown;
    if !state.session.all_namespaces {
        namespaces.push(state.session.namespace.clone());
    }
    namespaces.sort();
    namespaces.dedup();
    let mut effects = Vec::new();
    for namespace in namespaces {
        if state.session.read_only || state.permissions.contains_key(&namespace) {
            continue;
        }
        state.permissions.insert(namespace.clone(), None);
        effects.push(Effect::Permissions { namespace });
    }
    effects
}

/// The namespace the lists show; `None`: every namespace (`-A`).
pub(super) fn listed_namespace(state: &State) -> Option<String> {
    (!state.session.all_namespaces).then(|| state.session.namespace.clone())
}

/// Requests the data of the visible screen now.
pub(super) fn fetch_current(state: &mut State) -> Vec<Effect> {
    // A refresh is answered on the screen it was asked on (`R` sets it again after this).
    state.refresh = None;
    let mut effects = fetch_screen(state);
    effects.extend(live::follow_interest(state));
    effects
}

/// The reads of the visible screen.
fn fetch_screen(state: &mut State) -> Vec<Effect> {
    state.seq += 1;
    state.next_poll = None;
    let seq = state.seq;
    match state.screen {
        Screen::Operations => vec![list::poll(state, seq)],
        Screen::Operation => match state.detail.as_mut() {
            Some(d) => {
                d.op.loading = true;
                d.events.loading = true;
                vec![
                    Effect::GetOperation {
                        seq,
                        namespace: d.namespace.clone(),
                        name: d.name.clone(),
                    },
                    Effect::ListEvents {
                        seq,
                        namespace: d.namespace.clone(),
                        name: d.name.clone(),
                        wanted: d.events_wanted,
                    },
                ]
            }
            None => Vec::new(),
        },
        Screen::Clusters => {
            state.clusters.all.loading = true;
            vec![Effect::ListClusters {
                seq,
                namespace: listed_namespace(state),
            }]
        }
        Screen::Cluster => match state.cluster.as_mut() {
            Some(p) => {
                p.cluster.loading = true;
                vec![Effect::GetCluster {
                    seq,
                    purpose: ClusterFor::ClusterPage,
                    namespace: p.namespace.clone(),
                    name: p.name.clone(),
                }]
            }
            None => Vec::new(),
        },
    }
}

/// The poll interval of what is shown; `None`: no more polls (R still refreshes). A load that
/// failed for a reason other than a transient fault (which the client retries itself) is tried
/// again at the idle cadence, with the error on screen, so the screen mends by itself when the
/// cause is fixed.
pub(crate) fn poll_interval(state: &State) -> Option<SignedDuration> {
    let failed = |e: Option<&ichor_model::ApiError>| e.is_some_and(|e| !e.code.is_transient());
    match state.screen {
        Screen::Operations => {
            let l = &state.ops.all;
            if failed(l.error.as_ref()) {
                return Some(POLL_IDLE);
            }
            // An operation that cannot be read is not known to be doing anything.
            let busy = l.data.as_ref().is_some_and(|ops| {
                ops.iter()
                    .any(|o| o.unreadable.is_none() && !o.phase.is_finished())
            });
            Some(if busy { POLL_ACTIVE } else { POLL_IDLE })
        }
        Screen::Operation => {
            let d = state.detail.as_ref()?;
            if failed(d.op.error.as_ref()) {
                return Some(POLL_IDLE);
            }
            match d.op.data.as_ref() {
                Some(o) if o.unreadable.is_some() => Some(POLL_IDLE),
                Some(o) if o.phase.is_finished() => None,
                // Until the controller acts on a pause or resume, follow it closely.
                Some(o) if o.settling() => Some(POLL_ACTIVE),
                Some(o) if o.phase == Phase::Paused => Some(POLL_IDLE),
                _ => Some(POLL_ACTIVE),
            }
        }
        Screen::Clusters | Screen::Cluster => Some(POLL_IDLE),
    }
}

/// The next poll of the visible screen; none while its data is pushed.
pub(super) fn schedule_poll(state: &mut State) {
    state.next_poll = match state.pushed() {
        true => None,
        false => poll_interval(state).map(|i| state.now + i),
    };
}

/// Whether `cmd` is offered for `op`.
pub fn availability(state: &State, cmd: KeyCommand, op: Option<&Operation>) -> Avail {
    let write = matches!(
        cmd,
        KeyCommand::Pause | KeyCommand::Resume | KeyCommand::Delete | KeyCommand::New
    );
    if write && state.session.read_only {
        return Avail::No(Why::ReadOnly);
    }
    if write && state.pending.is_some() {
        return Avail::No(Why::WritePending);
    }
    if cmd == KeyCommand::New {
        return match state.target_cluster() {
            None => Avail::No(Why::NoCluster),
            Some(c) if c.unreadable.is_some() => Avail::No(Why::Unreadable),
            Some(c) if !permitted(state, cmd, &c.namespace) => Avail::No(Why::NotPermitted),
            Some(_) => Avail::Yes,
        };
    }
    if matches!(state.screen, Screen::Clusters | Screen::Cluster) {
        return Avail::Yes;
    }
    let Some(op) = op else {
        return if write || cmd == KeyCommand::Open {
            Avail::No(Why::NothingSelected)
        } else {
            Avail::Yes
        };
    };
    if write && op.unreadable.is_some() {
        return Avail::No(Why::Unreadable);
    }
    let gone = state.screen == Screen::Operation
        && state.detail.as_ref().is_some_and(|d| d.gone().is_some());
    if write && gone {
        return Avail::No(Why::Gone);
    }
    if write && !permitted(state, cmd, &op.namespace) {
        return Avail::No(Why::NotPermitted);
    }
    match cmd {
        KeyCommand::Pause if op.phase.is_finished() => Avail::No(Why::Finished),
        KeyCommand::Pause if op.paused || op.phase == Phase::Paused => {
            Avail::No(Why::AlreadyPaused)
        }
        KeyCommand::Resume if op.paused_by_failure() => Avail::No(Why::ResumeAfterFailure),
        KeyCommand::Resume if op.phase.is_finished() => Avail::No(Why::Finished),
        KeyCommand::Resume if !op.paused && op.phase != Phase::Paused => Avail::No(Why::NotPaused),
        _ => Avail::Yes,
    }
}

/// Whether `cmd`'s write is the caller's to make on this screen at all: not in read-only mode,
/// nor where Kubernetes said no (`?` leaves such keys out). Other commands always are.
pub fn may_write(state: &State, cmd: KeyCommand) -> bool {
    let write = matches!(
        cmd,
        KeyCommand::Pause | KeyCommand::Resume | KeyCommand::Delete | KeyCommand::New
    );
    if !write {
        return true;
    }
    if state.session.read_only {
        return false;
    }
    let namespace = match state.screen {
        Screen::Operations | Screen::Operation => state.target().map(|o| o.namespace.as_str()),
        Screen::Clusters | Screen::Cluster => state.target_cluster().map(|c| c.namespace.as_str()),
    };
    permitted(
        state,
        cmd,
        namespace.unwrap_or(state.session.namespace.as_str()),
    )
}

pub(super) fn quit(state: &mut State) -> Vec<Effect> {
    state.quit = true;
    vec![Effect::Quit]
}
