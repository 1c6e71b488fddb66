//! What came back from the workers: data, answers to writes, plans, retry reports. Each a small
//! handler over State; none performs I/O.

use super::nav::{back_to_list, open_operation};
use super::{ask_permissions, fetch_current, schedule_poll};
use crate::action::{ClusterFor, Effect};
use crate::new_operation;
use crate::state::{Conn, Dialog, Loaded, NewOpStep, Notice, SettlingStart, State, WriteAction};
use ichor_model::RetryEvent;
use ichor_model::{ApiError, Cluster, Created, Operation, Permissions, Plan, Reason};
use jiff::{SignedDuration, Timestamp};

/// An operation page's events arrived: kept, or the reason they cannot be read (the page is
/// drawn without them, saying why). The same events as on screen change nothing drawn.
pub(super) fn on_events(
    state: &mut State,
    seq: u64,
    namespace: String,
    name: String,
    result: Result<ichor_model::OperationEvents, ApiError>,
) -> Vec<Effect> {
    let Some(d) = state
        .detail
        .as_mut()
        .filter(|d| seq == state.seq && d.namespace == namespace && d.name == name)
    else {
        state.quiet = true;
        return Vec::new();
    };
    d.events.loading = false;
    match result {
        Ok(answer) => {
            state.quiet = d.events.error.is_none()
                && d.events.data.as_ref() == Some(&answer.events)
                && d.events_total == answer.total;
            d.events.data = Some(answer.events);
            d.events_total = answer.total;
            d.events.error = None;
        }
        Err(e) => {
            // Events say what happened; they are not the page: on a refusal keep none, on a
            // passing fault keep the last ones. The same refusal again changes nothing drawn.
            let keep = e.code.is_transient();
            state.quiet = d.events.error.as_ref() == Some(&e) && (keep || d.events.data.is_none());
            if !keep {
                d.events.data = None;
            }
            d.events.error = Some(e);
        }
    }
    Vec::new()
}

/// An operation's page data a read asked for arrived; then its next poll is set.
pub(super) fn on_operation(
    state: &mut State,
    seq: u64,
    namespace: String,
    name: String,
    result: Result<Operation, ApiError>,
) -> Vec<Effect> {
    let shown = state
        .detail
        .as_ref()
        .is_some_and(|d| d.is(&namespace, &name));
    if seq != state.seq || !shown {
        return Vec::new();
    }
    let effects = land_operation(state, &namespace, &name, result);
    schedule_poll(state);
    effects
}

/// The operation whose page is open, read or pushed. The same operation as on screen, with no
/// error to clear, changes nothing drawn.
pub(super) fn land_operation(
    state: &mut State,
    namespace: &str,
    name: &str,
    result: Result<Operation, ApiError>,
) -> Vec<Effect> {
    let Some(d) = state.detail.as_mut().filter(|d| d.is(namespace, name)) else {
        return Vec::new();
    };
    d.op.loading = false;
    let op = match result {
        Ok(op) => op,
        Err(e) => {
            // "No longer exists" is an answer: the page is as current as it can be.
            if e.code == ichor_model::Code::NotFound {
                state.last_ok = Some(state.now);
            }
            d.op.error = Some(e);
            return Vec::new();
        }
    };
    state.quiet = d.op.error.is_none() && d.op.data.as_ref() == Some(&op);
    // A CA rotation that completed changed its cluster (its bundle's backup is stale now):
    // the page reads the cluster again.
    let rotated = op.kind == Some(ichor_model::OperationKind::CaRotation)
        && op.phase == ichor_model::Phase::Completed
        && d.op.data.as_ref().is_some_and(|o| !o.phase.is_finished());
    d.op.data = Some(op.clone());
    d.op.error = None;
    d.seen_at = Some(state.now);
    state.last_ok = Some(state.now);
    let mut effects = super::notify::look(state, std::slice::from_ref(&op));
    effects.extend(super::pace::ask_prior_runs(state, &op));
    if rotated {
        effects.push(Effect::GetCluster {
            seq: state.seq,
            purpose: ClusterFor::OperationPage,
            namespace: op.namespace,
            name: op.cluster,
        });
    }
    effects
}

/// A write was answered.
pub(super) fn on_written(
    state: &mut State,
    seq: u64,
    action: WriteAction,
    namespace: String,
    name: String,
    result: Result<(), ApiError>,
) -> Vec<Effect> {
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

/// What the caller may do in a namespace.
pub(super) fn on_permissions(
    state: &mut State,
    namespace: String,
    result: Result<Permissions, ApiError>,
) -> Vec<Effect> {
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

/// The Clusters list arrived.
pub(super) fn on_clusters(
    state: &mut State,
    seq: u64,
    result: Result<Vec<Cluster>, ApiError>,
) -> Vec<Effect> {
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
            for c in &clusters {
                state.pace.learn(c);
            }
            let shown = clusters.iter().map(|c| c.namespace.clone()).collect();
            state.clusters.all.data = Some(clusters);
            // The selection follows its cluster (refilter keeps it by name).
            state.clusters.visible = Vec::new();
            if let Some((ns, name)) = selected {
                let all = state.clusters.all.data.as_deref().unwrap_or_default();
                state.clusters.visible = (0..all.len()).collect();
                state.clusters.list.selected = all
                    .iter()
                    .position(|c| c.namespace == ns && c.name == name)
                    .unwrap_or(state.clusters.list.selected);
            }
            super::nav::refilter_clusters(state);
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

/// The plan for the Review arrived.
pub(super) fn on_planned(
    state: &mut State,
    seq: u64,
    result: Result<Plan, ApiError>,
) -> Vec<Effect> {
    if let Some(Dialog::NewOperation(d)) = state.working_dialog()
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

/// A start was answered.
pub(super) fn on_started(
    state: &mut State,
    seq: u64,
    result: Result<Created, ApiError>,
) -> Vec<Effect> {
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
            // is reviewed anew. A start whose outcome is not known yet is looked for until
            // it is.
            let settling = (e.reason == Some(Reason::StartOutcomeUnknown))
                .then(|| settling_start(state.now, &d.namespace, &e))
                .flatten();
            d.start_error = Some(e);
            if settling.is_some() {
                d.settling = true;
                state.settling = settling;
            }
            new_operation::replan(state)
        }
    }
}

/// How often a start whose outcome is being settled is looked for.
const SETTLING_LOOK_EVERY: SignedDuration = SignedDuration::from_secs(3);

/// What START_OUTCOME_UNKNOWN says to look for, and until when.
fn settling_start(now: Timestamp, namespace: &str, e: &ApiError) -> Option<SettlingStart> {
    let request_id = e.param("request_id").filter(|id| !id.is_empty())?;
    let until = e
        .param("until")
        .and_then(|u| u.parse::<Timestamp>().ok())
        .unwrap_or(now);
    Some(SettlingStart {
        namespace: namespace.to_string(),
        cluster: e.param("cluster").unwrap_or_default().to_string(),
        request_id: request_id.to_string(),
        until,
        next_check: now,
        looking_since: None,
    })
}

/// A tick: the settling start is looked for when it is due.
pub(super) fn look_for_settling_start(state: &mut State) -> Vec<Effect> {
    let Some(s) = state.settling.as_mut() else {
        return Vec::new();
    };
    if s.looking_since.is_some() || s.next_check > state.now {
        return Vec::new();
    }
    s.looking_since = Some(state.now);
    vec![Effect::FindStart {
        namespace: s.namespace.clone(),
        request_id: s.request_id.clone(),
    }]
}

/// A look for the settling start came back: found, it started (the Review that sent it, if
/// still open, gives way to the operation); not found once the create can no longer land, it
/// did not; otherwise it is looked for again.
pub(super) fn on_start_found(
    state: &mut State,
    request_id: &str,
    result: Result<Option<Operation>, ApiError>,
) -> Vec<Effect> {
    // The Review that sent the start, if it is still open.
    let sent_it = matches!(&state.dialog, Some(Dialog::NewOperation(d))
        if d.start_error.as_ref().and_then(|e| e.param("request_id")) == Some(request_id));
    let Some(s) = state
        .settling
        .as_mut()
        .filter(|s| s.request_id == request_id)
    else {
        return Vec::new();
    };
    let began = s.looking_since.take().unwrap_or(state.now);
    match result {
        Ok(Some(op)) => {
            state.settling = None;
            state.notice = Some(Notice::Started(Box::new(Created {
                operation: op.clone(),
                found: true,
                spec_written: None,
                warnings: Vec::new(),
            })));
            if sent_it {
                state.dialog = None;
                return open_operation(state, op);
            }
        }
        // Not found by a look begun after the create could land: a look that began before
        // that may have missed a late create.
        Ok(None) if began > s.until => {
            let cluster = s.cluster.clone();
            state.settling = None;
            state.notice = Some(Notice::StartNotCreated(cluster.clone()));
            if sent_it && let Some(Dialog::NewOperation(d)) = state.dialog.as_mut() {
                // The Review says it too, and is read again: Start is offered anew.
                d.settling = false;
                d.start_error = Some(ApiError::said(
                    ichor_model::Code::Aborted,
                    Reason::WriteNotApplied,
                    &[("action", "start"), ("operation", &cluster), ("late", "no")],
                ));
                return new_operation::replan(state);
            }
        }
        Ok(None) | Err(_) => {
            let next = state.now + SETTLING_LOOK_EVERY;
            // The last look comes just after the create can no longer land.
            s.next_check = if next > s.until && began <= s.until {
                s.until + SignedDuration::from_secs(1)
            } else {
                next
            };
        }
    }
    Vec::new()
}

/// A worker task failed inside: said on screen; the dashboard goes on and still quits.
pub(super) fn on_task_failed(state: &mut State, what: &str, message: &str) -> Vec<Effect> {
    tracing::error!(what, message, "a task of the dashboard failed");
    state.notice = Some(Notice::Failed(ApiError::said(
        ichor_model::Code::Internal,
        Reason::TaskFailed,
        &[("what", what), ("detail", message)],
    )));
    // Whatever waited for that task's answer waits no more.
    state.pending = None;
    if let Some(Dialog::NewOperation(d)) = state.working_dialog() {
        d.plan.loading = false;
        if matches!(d.step, NewOpStep::Starting { .. }) {
            d.step = NewOpStep::Review;
        }
    }
    Vec::new()
}

/// The retrying client reports on its waits. A read answered again ends the outage: live
/// updates that broke with it are asked for again at once, not after the subscription's
/// backoff (the runtime's `reopen_waits`).
pub(super) fn on_retry(state: &mut State, ev: RetryEvent) -> Vec<Effect> {
    let was_ok = state.conn == Conn::Ok;
    state.conn = state.conn.after(ev, state.now);
    if was_ok == (state.conn == Conn::Ok) {
        return Vec::new();
    }
    drop_key_answers(state);
    match state.conn {
        Conn::Ok => super::live::subscribe_again_if_off(state),
        _ => Vec::new(),
    }
}

/// An outage began or ended: what the dashboard said to a key pressed before (why a command
/// is not offered, an unknown command) belongs to the state before it and is not said again
/// after it. Outcomes of writes stay.
fn drop_key_answers(state: &mut State) {
    if matches!(
        state.notice,
        Some(Notice::Unavailable(_) | Notice::ResumeNotOffered(_) | Notice::UnknownCommand(_))
    ) {
        state.notice = None;
    }
}

/// A cluster arrived: for an operation's page (its machines' roles) or for the cluster's page.
pub(super) fn on_cluster(
    state: &mut State,
    seq: u64,
    purpose: ClusterFor,
    namespace: String,
    name: String,
    result: Result<Cluster, ApiError>,
) -> Vec<Effect> {
    if let Ok(c) = &result {
        state.pace.learn(c);
    }
    match purpose {
        ClusterFor::OperationPage => {
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
        ClusterFor::ClusterPage => {
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
    }
}
