//! `update(&mut State, Action) -> Vec<Effect>`: the only place State changes. No I/O, no clock
//! (the runtime sets `state.now`), so a test drives the whole app with a list of Actions.

use super::action::{Action, Effect, Key, KeyCode};
use super::keymap::{self, Command};
use super::new_operation;
use super::state::{
    ClusterPage, Confirm, Conn, DetailState, Dialog, Input, Loaded, NewOpStep, Notice,
    PendingWrite, Screen, State, Why, WriteAction,
};
use crate::client::RetryEvent;
use crate::model::{Operation, Phase};
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

/// Asks what the caller may do in each namespace shown (and the session's) not asked yet.
fn ask_permissions(state: &mut State, shown: Vec<String>) -> Vec<Effect> {
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

/// Applies one action.
pub fn update(state: &mut State, action: Action) -> Vec<Effect> {
    match action {
        Action::Key(key) => on_key(state, key),
        Action::Resize(w, h) => {
            state.size = (w, h);
            keep_selection_visible(state);
            Vec::new()
        }
        Action::Viewport(v) => {
            state.viewport = v;
            keep_selection_visible(state);
            Vec::new()
        }
        Action::Redraw => Vec::new(),
        Action::Terminate => quit(state),
        Action::Tick => match state.next_poll {
            Some(at) if at <= state.now => fetch_current(state),
            _ => Vec::new(),
        },
        Action::Operations { seq, result } => {
            if seq != state.seq {
                return Vec::new();
            }
            state.ops.all.loading = false;
            match result {
                Ok(mut ops) => {
                    let selected = state
                        .ops
                        .selected()
                        .map(|o| (o.namespace.clone(), o.name.clone()));
                    ops.sort_by(|a, b| {
                        b.created_at
                            .cmp(&a.created_at)
                            .then_with(|| a.name.cmp(&b.name))
                    });
                    let shown = ops.iter().map(|o| o.namespace.clone()).collect();
                    state.ops.all.data = Some(ops);
                    state.ops.all.error = None;
                    state.last_ok = Some(state.now);
                    refilter(state);
                    // New data: find the row the user had selected.
                    if let Some((ns, name)) = selected {
                        reselect(state, &ns, &name);
                    }
                    schedule_poll(state);
                    return ask_permissions(state, shown);
                }
                Err(e) => state.ops.all.error = Some(e),
            }
            schedule_poll(state);
            Vec::new()
        }
        Action::Operation {
            seq,
            namespace,
            name,
            result,
        } => {
            if seq != state.seq {
                return Vec::new();
            }
            let Some(d) = state
                .detail
                .as_mut()
                .filter(|d| d.namespace == namespace && d.name == name)
            else {
                return Vec::new();
            };
            d.op.loading = false;
            match result {
                Ok(op) => {
                    d.op.data = Some(op);
                    d.op.error = None;
                    state.last_ok = Some(state.now);
                }
                Err(e) => d.op.error = Some(e),
            }
            schedule_poll(state);
            Vec::new()
        }
        Action::Cluster {
            namespace,
            name,
            result,
        } => {
            if let Some(d) = state.detail.as_mut() {
                let same =
                    d.op.data
                        .as_ref()
                        .is_some_and(|o| o.namespace == namespace && o.cluster == name);
                if same {
                    d.cluster = result.ok();
                }
            }
            Vec::new()
        }
        Action::Written {
            seq,
            action,
            namespace,
            name,
            result,
        } => {
            // The answer of a write the person stopped waiting for is not theirs any more.
            if state.pending.as_ref().is_none_or(|p| p.seq != seq) {
                return Vec::new();
            }
            state.pending = None;
            match result {
                Ok(()) => {
                    state.notice = Some(Notice::Done(action, name.clone()));
                    let on_its_page = state
                        .detail
                        .as_ref()
                        .is_some_and(|d| d.namespace == namespace && d.name == name);
                    if action == WriteAction::Delete && on_its_page {
                        return back_to_list(state);
                    }
                }
                Err(e) => state.notice = Some(Notice::Failed(e)),
            }
            fetch_current(state)
        }
        Action::Permissions { namespace, result } => {
            match result {
                Ok(p) => {
                    state.permissions.insert(namespace, Some(p));
                }
                Err(e) => {
                    tracing::info!(namespace, error = %e.message, "what the caller may do is not known");
                }
            }
            Vec::new()
        }
        Action::Clusters { seq, result } => {
            if seq != state.seq {
                return Vec::new();
            }
            state.clusters.all.loading = false;
            match result {
                Ok(mut clusters) => {
                    let selected = state
                        .clusters
                        .selected()
                        .map(|c| (c.namespace.clone(), c.name.clone()));
                    clusters.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
                    let n = clusters.len();
                    if let Some(pos) = selected.and_then(|(ns, name)| {
                        clusters
                            .iter()
                            .position(|c| c.namespace == ns && c.name == name)
                    }) {
                        state.clusters.list.selected = pos;
                    }
                    state.clusters.list.selected =
                        state.clusters.list.selected.min(n.saturating_sub(1));
                    let shown = clusters.iter().map(|c| c.namespace.clone()).collect();
                    state.clusters.all.data = Some(clusters);
                    state.clusters.all.error = None;
                    state.last_ok = Some(state.now);
                    schedule_poll(state);
                    return ask_permissions(state, shown);
                }
                Err(e) => state.clusters.all.error = Some(e),
            }
            schedule_poll(state);
            Vec::new()
        }
        Action::ClusterPage {
            seq,
            namespace,
            name,
            result,
        } => {
            if seq != state.seq {
                return Vec::new();
            }
            if let Some(p) = state
                .cluster
                .as_mut()
                .filter(|p| p.namespace == namespace && p.name == name)
            {
                p.cluster.loading = false;
                match result {
                    Ok(c) => {
                        p.cluster.data = Some(c);
                        p.cluster.error = None;
                        state.last_ok = Some(state.now);
                    }
                    Err(e) => p.cluster.error = Some(e),
                }
            }
            schedule_poll(state);
            Vec::new()
        }
        Action::Planned { seq, result } => {
            if let Some(Dialog::NewOperation(d)) = state.dialog.as_mut()
                && d.seq == seq
                && d.step == NewOpStep::Review
            {
                d.plan = Loaded {
                    loading: false,
                    error: result.as_ref().err().cloned(),
                    data: result.ok(),
                };
            }
            Vec::new()
        }
        Action::Started { seq, result } => {
            let Some(Dialog::NewOperation(d)) = state.dialog.as_mut() else {
                return Vec::new();
            };
            if d.seq != seq || !matches!(d.step, NewOpStep::Starting { .. }) {
                return Vec::new();
            }
            match result {
                Ok(created) => {
                    state.dialog = None;
                    let op = created.operation.clone();
                    state.notice = Some(Notice::Started(Box::new(created)));
                    open_operation(state, op)
                }
                Err(e) => {
                    // Back on the Review with what happened; the plan is asked for again, so a
                    // half-success shows that a second Start writes no spec, and a changed plan
                    // is reviewed anew.
                    d.start_error = Some(e);
                    new_operation::replan(state)
                }
            }
        }
        Action::Retry(ev) => {
            state.conn = match ev {
                RetryEvent::Retrying {
                    delay,
                    since,
                    attempt,
                    ..
                } => Conn::Retrying {
                    next_at: state.now
                        + SignedDuration::try_from(delay).unwrap_or(SignedDuration::ZERO),
                    since,
                    attempt,
                },
                RetryEvent::Recovered { .. } => Conn::Ok,
                RetryEvent::GaveUp { since, .. } => Conn::GaveUp { since },
            };
            Vec::new()
        }
    }
}

/// The namespace the lists show; `None`: every namespace (`-A`).
fn listed_namespace(state: &State) -> Option<String> {
    (!state.session.all_namespaces).then(|| state.session.namespace.clone())
}

/// Requests the data of the visible screen now.
fn fetch_current(state: &mut State) -> Vec<Effect> {
    state.seq += 1;
    state.next_poll = None;
    let seq = state.seq;
    match state.screen {
        Screen::Operations => {
            state.ops.all.loading = true;
            vec![Effect::ListOperations {
                seq,
                namespace: listed_namespace(state),
            }]
        }
        Screen::Operation => match state.detail.as_mut() {
            Some(d) => {
                d.op.loading = true;
                vec![Effect::GetOperation {
                    seq,
                    namespace: d.namespace.clone(),
                    name: d.name.clone(),
                }]
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
                vec![Effect::LoadCluster {
                    seq,
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
pub fn poll_interval(state: &State) -> Option<SignedDuration> {
    let failed = |e: Option<&crate::model::ApiError>| e.is_some_and(|e| !e.code.is_transient());
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

fn schedule_poll(state: &mut State) {
    state.next_poll = poll_interval(state).map(|i| state.now + i);
}

/// Whether the caller may make `cmd`'s write in `namespace`: `false` only when Kubernetes said
/// no (unknown is allowed: the API server decides).
fn permitted(state: &State, cmd: Command, namespace: &str) -> bool {
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

/// Whether `cmd` is offered for `op`.
pub fn availability(state: &State, cmd: Command, op: Option<&Operation>) -> Avail {
    let write = matches!(
        cmd,
        Command::Pause | Command::Resume | Command::Delete | Command::New
    );
    if write && state.session.read_only {
        return Avail::No(Why::ReadOnly);
    }
    if write && state.pending.is_some() {
        return Avail::No(Why::WritePending);
    }
    if cmd == Command::New {
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
        return if write || cmd == Command::Open {
            Avail::No(Why::NothingSelected)
        } else {
            Avail::Yes
        };
    };
    if write && op.unreadable.is_some() {
        return Avail::No(Why::Unreadable);
    }
    if write && !permitted(state, cmd, &op.namespace) {
        return Avail::No(Why::NotPermitted);
    }
    match cmd {
        Command::Pause if op.phase.is_finished() => Avail::No(Why::Finished),
        Command::Pause if op.paused || op.phase == Phase::Paused => Avail::No(Why::AlreadyPaused),
        Command::Resume if op.paused_by_failure() => Avail::No(Why::ResumeAfterFailure),
        Command::Resume if op.phase.is_finished() => Avail::No(Why::Finished),
        Command::Resume if !op.paused && op.phase != Phase::Paused => Avail::No(Why::NotPaused),
        _ => Avail::Yes,
    }
}

fn on_key(state: &mut State, key: Key) -> Vec<Effect> {
    if key == Key::ctrl('c') {
        return quit(state);
    }
    match state.dialog.clone() {
        Some(Dialog::Confirm(c)) => return on_confirm_key(state, c, key),
        Some(Dialog::NewOperation(_)) => return new_operation::on_key(state, key),
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

fn on_confirm_key(state: &mut State, c: Confirm, key: Key) -> Vec<Effect> {
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

fn on_filter_key(state: &mut State, key: Key) {
    match key.code {
        KeyCode::Enter => state.input = Input::None,
        KeyCode::Esc => {
            state.input = Input::None;
            state.ops.filter.clear();
            refilter(state);
        }
        KeyCode::Backspace => {
            state.ops.filter.pop();
            refilter(state);
        }
        KeyCode::Char(c) if !key.ctrl && !c.is_control() => {
            state.ops.filter.push(c);
            refilter(state);
        }
        _ => {}
    }
}

fn quit(state: &mut State) -> Vec<Effect> {
    state.quit = true;
    vec![Effect::Quit]
}

fn page(state: &State) -> usize {
    match state.screen {
        Screen::Operation => state.viewport.page_rows,
        _ => state.viewport.list_rows,
    }
    .max(1)
}

fn run(state: &mut State, cmd: Command) -> Vec<Effect> {
    let step = |state: &mut State, delta: isize| {
        match state.screen {
            Screen::Operations => {
                let n = state.ops.visible.len();
                let cur = state.ops.list.selected as isize;
                state.ops.list.selected =
                    (cur + delta).clamp(0, n.saturating_sub(1) as isize) as usize;
            }
            Screen::Clusters => {
                let n = state.clusters.all.data.as_ref().map_or(0, Vec::len);
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
                            .map_or(0, |o| super::state::follow_scroll(o, rows))
                    });
                    d.scroll = Some(
                        (from as isize + delta).clamp(0, n.saturating_sub(1) as isize) as usize,
                    );
                }
            }
        }
        keep_selection_visible(state);
    };
    let pg = page(state) as isize;
    match cmd {
        Command::Up => step(state, -1),
        Command::Down => step(state, 1),
        Command::PageUp => step(state, -pg),
        Command::PageDown => step(state, pg),
        Command::Top => step(state, isize::MIN / 2),
        Command::Bottom => step(state, isize::MAX / 2),
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
                    refilter(state);
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
        Command::Quit => return quit(state),
        Command::Suspend => return vec![Effect::Suspend],
    }
    Vec::new()
}

/// The namespaces of what the lists hold.
fn shown_namespaces(state: &State) -> Vec<String> {
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

fn ask(state: &mut State, cmd: Command) -> Vec<Effect> {
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

fn open_selected(state: &mut State) -> Vec<Effect> {
    match state.ops.selected().cloned() {
        Some(op) => open_operation(state, op),
        None => Vec::new(),
    }
}

fn back_to_list(state: &mut State) -> Vec<Effect> {
    show(state, Screen::Operations)
}

/// Switches to a list screen and loads it.
fn show(state: &mut State, screen: Screen) -> Vec<Effect> {
    if state.screen == screen && matches!(screen, Screen::Operations | Screen::Clusters) {
        return Vec::new();
    }
    state.screen = screen;
    state.detail = None;
    state.cluster = None;
    fetch_current(state)
}

fn open_cluster(state: &mut State) -> Vec<Effect> {
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
fn open_operation(state: &mut State, op: crate::model::Operation) -> Vec<Effect> {
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
    });
    let mut effects = fetch_current(state);
    effects.push(Effect::GetCluster {
        namespace,
        name: cluster,
    });
    effects
}

/// Recomputes the filtered rows (on data or filter change, never per frame).
fn refilter(state: &mut State) {
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
        .filter(|(_, o)| {
            needle.is_empty()
                || [
                    o.name.as_str(),
                    o.cluster.as_str(),
                    o.kind_raw.as_str(),
                    o.phase.as_str(),
                    o.namespace.as_str(),
                    o.actor.as_deref().unwrap_or(""),
                ]
                .iter()
                .any(|f| f.to_lowercase().contains(&needle))
        })
        .map(|(i, _)| i)
        .collect();
    let n = state.ops.visible.len();
    state.ops.list.selected = state.ops.list.selected.min(n.saturating_sub(1));
    keep_selection_visible(state);
    if let Some((ns, name)) = selected {
        reselect(state, &ns, &name);
    }
}

fn reselect(state: &mut State, namespace: &str, name: &str) {
    let ops = state.ops.all.data.as_deref().unwrap_or_default();
    if let Some(pos) = state.ops.visible.iter().position(|&i| {
        ops.get(i)
            .is_some_and(|o| o.namespace == namespace && o.name == name)
    }) {
        state.ops.list.selected = pos;
        keep_selection_visible(state);
    }
}

fn keep_selection_visible(state: &mut State) {
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
