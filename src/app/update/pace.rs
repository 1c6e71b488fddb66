//! The machines' roles the list's rows are read with: asked for when a row of an unfinished
//! operation names a machine whose role is not held (at most once a minute), and learnt from
//! every cluster read for any other reason; and the operations shown looked at as time passes,
//! so one that turns slow is said once.

use super::listed_namespace;
use crate::action::{Effect, PriorKey};
use crate::state::{Screen, State};
use ichor_model::{ApiError, Cluster, Operation};
use jiff::SignedDuration;

/// The least time between two asks for the roles.
const ASK_EVERY: SignedDuration = SignedDuration::from_secs(60);

/// The clusters read for their roles arrived.
pub(super) fn on_roles(state: &mut State, result: Result<Vec<Cluster>, ApiError>) -> Vec<Effect> {
    // Nothing is drawn again unless a role held changed.
    state.quiet = true;
    match result {
        Ok(clusters) => {
            for c in &clusters {
                if state.pace.learn(c) {
                    state.quiet = false;
                }
            }
        }
        Err(e) => tracing::info!(error = %e.message, "the machines' roles could not be read"),
    }
    Vec::new()
}

/// The last runs of a kind on a cluster arrived: the estimate of a run of that kind borrows
/// their paces for its roles that have none yet.
pub(super) fn on_prior_runs(
    state: &mut State,
    key: PriorKey,
    result: Result<Vec<Operation>, ApiError>,
) -> Vec<Effect> {
    match result {
        Ok(runs) => {
            state.quiet = state.pace.prior.get(&key) == Some(&runs);
            state.pace.prior.insert(key, runs);
        }
        Err(e) => {
            state.quiet = true;
            tracing::info!(error = %e.message, "the last runs of the same kind could not be read");
        }
    }
    Vec::new()
}

/// Asks once for the last runs of `op`'s kind on its cluster, when it is unfinished and walks
/// machines: a role none of whose machines has finished yet borrows their pace.
pub(super) fn ask_prior_runs(state: &mut State, op: &Operation) -> Vec<Effect> {
    let walks = op
        .kind
        .is_some_and(ichor_model::OperationKind::touches_machines);
    let Some(key) = PriorKey::of(op).filter(|_| walks && !op.phase.is_finished()) else {
        return Vec::new();
    };
    if !state.pace.prior_asked.insert(key.clone()) {
        return Vec::new();
    }
    vec![Effect::PriorRuns(key)]
}

/// Whether the roles of `op`'s machines are needed and not all held.
fn needs_roles(state: &State, op: &Operation) -> bool {
    let unfinished = !op.phase.is_finished() && op.unreadable.is_none();
    unfinished
        && !op.machines.is_empty()
        && state
            .pace
            .roles(&op.namespace, &op.cluster)
            .is_none_or(|r| !r.knows_all(op.machines.iter().map(|m| m.name.as_str())))
}

/// Asks for the roles when a row held needs them (at most once a minute).
pub(super) fn ask_roles(state: &mut State) -> Vec<Effect> {
    let ops = state.ops.all.data.as_deref().unwrap_or_default();
    if !ops.iter().any(|o| needs_roles(state, o)) {
        return Vec::new();
    }
    let now = state.now;
    if state
        .pace
        .asked_at
        .is_some_and(|at| now.duration_since(at) < ASK_EVERY)
    {
        return Vec::new();
    }
    state.pace.asked_at = Some(now);
    vec![Effect::ListRoles {
        namespace: listed_namespace(state),
    }]
}

/// The operations on screen now: the page's, or the list's rows shown.
pub(super) fn shown(state: &State) -> Vec<Operation> {
    match state.screen {
        Screen::Operation => state
            .detail
            .iter()
            .filter_map(|d| d.op.data.clone())
            .collect(),
        Screen::Operations => state.list_rows_shown().cloned().collect(),
        Screen::Clusters | Screen::Cluster => Vec::new(),
    }
}
