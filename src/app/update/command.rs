//! The command line (`:`), as k9s has it: `:ops`, `:ns`, `:ctx`, `:clusters`, `:help`, `:q`. Enter runs what
//! was typed, Esc leaves it, Tab completes (again: the next command that fits), and it is
//! edited like every text field.

use super::nav::show;
use super::{ask_permissions, quit, start};
use crate::action::{Effect, Key, KeyCode, Reached};
use crate::commands::{self, Verb};
use crate::state::{
    ClustersState, CommandLine, Dialog, Input, LiveMode, Notice, OperationsState, Screen, Session,
    State,
};
use crate::text_field::{self, Edit};

/// The longest command line kept: a short word and a name (a namespace is at most 63
/// characters; a longer cluster name is refused by the service when asked).
const MAX_CHARS: usize = 96;

/// `:` opens an empty command line.
pub(super) fn open(state: &mut State) {
    state.input = Input::Command;
    state.command = CommandLine::default();
}

fn close(state: &mut State) -> String {
    state.input = Input::None;
    std::mem::take(&mut state.command).text
}

/// A key while the command line is open.
pub(super) fn on_key(state: &mut State, key: Key) -> Vec<Effect> {
    match key.code {
        KeyCode::Esc => {
            close(state);
            Vec::new()
        }
        KeyCode::Enter => {
            let text = close(state);
            run(state, &text)
        }
        KeyCode::Tab => {
            complete(&mut state.command, 1);
            Vec::new()
        }
        KeyCode::BackTab => {
            complete(&mut state.command, -1);
            Vec::new()
        }
        _ => {
            if text_field::edit(&mut state.command.text, key, |_| true, MAX_CHARS) == Edit::Changed
            {
                state.command.completing = None;
            }
            Vec::new()
        }
    }
}

/// Tab: the next (or, `step` -1, the previous) command that starts with what was typed before
/// Tab was first pressed.
fn complete(line: &mut CommandLine, step: isize) {
    let (typed, next) = match line.completing.take() {
        Some((typed, i)) => (typed, i as isize + step),
        None => (line.text.clone(), if step > 0 { 0 } else { -1 }),
    };
    let options = commands::completions(&typed);
    if options.is_empty() {
        return;
    }
    let i = next.rem_euclid(options.len() as isize) as usize;
    line.text = options[i].to_string();
    line.completing = Some((typed, i));
}

/// Runs a command line.
fn run(state: &mut State, text: &str) -> Vec<Effect> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    match commands::parse(text) {
        Some((Verb::Operations, cluster)) => operations_of(state, cluster),
        Some((Verb::Namespace, name)) => namespace(state, name),
        Some((Verb::Context, name)) => context(state, name),
        Some((Verb::Clusters, _)) => show(state, Screen::Clusters),
        Some((Verb::Help, _)) => {
            state.dialog = Some(Dialog::keys());
            Vec::new()
        }
        Some((Verb::Quit, _)) => quit(state),
        None => {
            state.notice = Some(Notice::UnknownCommand(text.trim().to_string()));
            Vec::new()
        }
    }
}

/// `:ops [CLUSTER]`: the Operations list, of `cluster` only when one is named (the server
/// filters, so every page is that cluster's). What was held was another list: it goes.
fn operations_of(state: &mut State, cluster: Option<&str>) -> Vec<Effect> {
    let cluster = cluster.map(str::to_string);
    if state.ops.cluster != cluster {
        state.ops = OperationsState {
            cluster,
            filter: std::mem::take(&mut state.ops.filter),
            order: state.ops.order,
            ..OperationsState::default()
        };
        // Shown again from the start, even when the list is already on screen.
        state.screen = Screen::Operation;
    }
    show(state, Screen::Operations)
}

/// The word for every namespace (`:ns all`), as `-A` is on the command line.
const ALL_NAMESPACES: &[&str] = &["all", "-A", "*"];

/// `:ns NAME`: lists NAME (every namespace for `all`), from the list screen shown (a page
/// goes back to its list); `:ns` alone or a name Kubernetes would not take says what can be
/// typed. What was held was of another namespace: it goes, and what the caller may do there
/// is asked.
fn namespace(state: &mut State, name: Option<&str>) -> Vec<Effect> {
    let Some(name) = name else {
        state.notice = Some(Notice::NamespaceUsage);
        return Vec::new();
    };
    let all = ALL_NAMESPACES.contains(&name);
    if !all && !ichor_model::is_namespace_name(name) {
        state.notice = Some(Notice::BadNamespace(name.to_string()));
        return Vec::new();
    }
    if all {
        state.session.all_namespaces = true;
    } else {
        state.session.all_namespaces = false;
        state.session.namespace = name.to_string();
    }
    let cluster = state.ops.cluster.take();
    state.ops = OperationsState {
        cluster,
        order: state.ops.order,
        ..OperationsState::default()
    };
    state.clusters = ClustersState::default();
    let list = match state.screen {
        Screen::Clusters | Screen::Cluster => Screen::Clusters,
        Screen::Operations | Screen::Operation => Screen::Operations,
    };
    // Shown again from the start, even when the list is already on screen.
    state.screen = match list {
        Screen::Clusters => Screen::Cluster,
        _ => Screen::Operation,
    };
    let mut effects = show(state, list);
    effects.extend(ask_permissions(state, Vec::new()));
    effects
}

/// `:ctx NAME`: reaches the service again through kubeconfig context NAME; the route, the
/// user and the permissions are asked again, and what was shown goes. `:ctx` alone, or a name
/// the kubeconfig does not have, lists the contexts. Not while a write or a start's outcome
/// is awaited: its answer belongs to the connection in use.
fn context(state: &mut State, name: Option<&str>) -> Vec<Effect> {
    if state.session.contexts.is_empty() {
        state.notice = Some(Notice::NoContexts);
        return Vec::new();
    }
    let known = name.filter(|n| state.session.contexts.iter().any(|c| c == n));
    let Some(name) = known else {
        state.notice = Some(Notice::ContextUsage(name.map(str::to_string)));
        return Vec::new();
    };
    if state.pending.is_some() || state.settling.is_some() || state.switching.is_some() {
        state.notice = Some(Notice::ContextBusy);
        return Vec::new();
    }
    state.switching = Some(name.to_string());
    state.notice = Some(Notice::ContextSwitching(name.to_string()));
    vec![Effect::SwitchContext(name.to_string())]
}

/// The service answers through another context: the dashboard starts again there, on the
/// Operations list, as at start (what was shown, asked and allowed belonged to the other).
pub(super) fn on_context_reached(state: &mut State, reached: Reached) -> Vec<Effect> {
    if state.switching.as_deref() != Some(reached.context.as_str()) {
        return Vec::new();
    }
    let session = Session {
        route: reached.route,
        demo: state.session.demo,
        namespace: reached.namespace,
        all_namespaces: reached.all_namespaces,
        user: reached.user,
        read_only: reached.read_only,
        server_version: Default::default(),
        context: Some(reached.context.clone()),
        contexts: std::mem::take(&mut state.session.contexts),
        production: reached.production,
        api_server: reached.api_server,
    };
    let mut fresh = State::new(session, state.now, state.tz.clone());
    fresh.size = state.size;
    fresh.viewport = state.viewport;
    fresh.seq = state.seq;
    fresh.revision = state.revision;
    fresh.live.sub = state.live.sub;
    if reached.pushes {
        fresh.live.mode = LiveMode::Waiting;
    }
    fresh.notifications = std::mem::take(&mut state.notifications);
    fresh.pace.rule = state.pace.rule;
    fresh.keys = std::mem::take(&mut state.keys);
    fresh.notice = Some(Notice::ContextSwitched(reached.context));
    *state = fresh;
    start(state)
}

/// The context could not be reached: the one in use stays, and the person is told why.
pub(super) fn on_context_failed(
    state: &mut State,
    context: String,
    message: String,
) -> Vec<Effect> {
    if state.switching.as_deref() == Some(context.as_str()) {
        state.switching = None;
        state.notice = Some(Notice::ContextFailed(context, message));
    }
    Vec::new()
}
