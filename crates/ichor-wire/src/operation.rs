//! Operations.

use super::basics::{
    bad_answer, kind_from_proto, kind_to_proto, non_empty, time_from_proto, time_to_proto,
};
use super::proto;
use ichor_model::{
    ApiError, CaRotation, Condition, HistoryEntry, MAX_HISTORY, MachinePhase, MachineProgress,
    Operation, Phase,
};

/// An operation for the wire.
pub fn operation_to_proto(o: &Operation) -> proto::Operation {
    let ca = o.ca_rotation.as_ref();
    proto::Operation {
        namespace: o.namespace.clone(),
        name: o.name.clone(),
        cluster: o.cluster.clone(),
        kind: o
            .kind
            .map(kind_to_proto)
            .unwrap_or(proto::OperationKind::Unspecified) as i32,
        kind_raw: o.kind_raw.clone(),
        max_unavailable: o.max_unavailable,
        paused: o.paused,
        phase: o.phase.as_str().to_string(),
        failure_reason: o.failure_reason.clone(),
        machines: o
            .machines
            .iter()
            .map(|m| proto::MachineProgress {
                name: m.name.clone(),
                phase: m.phase.as_str().to_string(),
                message: m.message.clone(),
                started_at: time_to_proto(m.started_at),
                finished_at: time_to_proto(m.finished_at),
            })
            .collect(),
        ca_rotation_stage: ca.map(|c| c.stage.clone()).unwrap_or_default(),
        ca_rotation_pass: ca.map(|c| c.pass).unwrap_or_default(),
        ca_rotation_passes: ca.map(|c| c.passes).unwrap_or_default(),
        conditions: o
            .conditions
            .iter()
            .map(|c| proto::Condition {
                r#type: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_transition_time: time_to_proto(c.last_transition_time),
            })
            .collect(),
        created_at: time_to_proto(o.created_at),
        started_at: time_to_proto(o.started_at),
        finished_at: time_to_proto(o.finished_at),
        actor: o.actor.clone().unwrap_or_default(),
        paused_by: o.paused_by.clone().unwrap_or_default(),
        paused_at: time_to_proto(o.paused_at),
        current: o.current.clone().unwrap_or_default(),
        target: o.target.clone().unwrap_or_default(),
        uid: o.uid.clone(),
        generation: o.generation,
        request_id: o.request_id.clone().unwrap_or_default(),
        unreadable: o.unreadable.clone(),
        resource_version: o.resource_version.clone(),
        summary: o.summary.as_ref().map(super::list::progress_to_proto),
        deleting: o.deleting.as_ref().map(|f| proto::Deleting {
            finalizers: f.clone(),
        }),
        history: o
            .history
            .iter()
            .map(|e| proto::HistoryEntry {
                action: e.action.as_str().to_string(),
                actor: e.actor.clone(),
                at: time_to_proto(e.at),
                outcome: e.outcome.as_str().to_string(),
            })
            .collect(),
    }
}

/// An operation from the wire. The proto flattens `status.caRotation`; all three fields empty
/// is no CA rotation status.
pub fn operation_from_proto(o: proto::Operation) -> Operation {
    let ca_rotation =
        if o.ca_rotation_stage.is_empty() && o.ca_rotation_pass == 0 && o.ca_rotation_passes == 0 {
            None
        } else {
            Some(CaRotation {
                stage: o.ca_rotation_stage,
                pass: o.ca_rotation_pass,
                passes: o.ca_rotation_passes,
            })
        };
    Operation {
        kind: kind_from_proto(o.kind),
        namespace: o.namespace,
        name: o.name,
        uid: o.uid,
        generation: o.generation,
        request_id: non_empty(o.request_id),
        cluster: o.cluster,
        kind_raw: o.kind_raw,
        max_unavailable: o.max_unavailable,
        paused: o.paused,
        phase: Phase::parse(&o.phase),
        failure_reason: o.failure_reason,
        machines: o
            .machines
            .into_iter()
            .map(|m| MachineProgress {
                phase: MachinePhase::parse(&m.phase),
                started_at: time_from_proto(&m.started_at),
                finished_at: time_from_proto(&m.finished_at),
                name: m.name,
                message: m.message,
            })
            .collect(),
        ca_rotation,
        conditions: o
            .conditions
            .into_iter()
            .map(|c| Condition {
                type_: c.r#type,
                status: c.status,
                last_transition_time: time_from_proto(&c.last_transition_time),
                reason: c.reason,
                message: c.message,
            })
            .collect(),
        created_at: time_from_proto(&o.created_at),
        started_at: time_from_proto(&o.started_at),
        finished_at: time_from_proto(&o.finished_at),
        actor: non_empty(o.actor),
        paused_by: non_empty(o.paused_by),
        paused_at: time_from_proto(&o.paused_at),
        current: non_empty(o.current),
        target: non_empty(o.target),
        unreadable: o.unreadable,
        resource_version: o.resource_version,
        summary: o.summary.map(super::list::progress_from_proto),
        deleting: o.deleting.map(|d| d.finalizers),
        history: history_from_proto(o.history),
    }
}

/// The history a peer sent, read as the cluster's own: the last [`MAX_HISTORY`] entries,
/// each made inert and bounded.
fn history_from_proto(h: Vec<proto::HistoryEntry>) -> Vec<HistoryEntry> {
    let skip = h.len().saturating_sub(MAX_HISTORY);
    h.iter()
        .skip(skip)
        .map(|e| HistoryEntry::read(&e.action, &e.actor, time_from_proto(&e.at), &e.outcome))
        .collect()
}

/// The operation an answer must carry.
pub fn required_operation(o: Option<proto::Operation>) -> Result<Operation, ApiError> {
    o.map(operation_from_proto)
        .ok_or_else(|| bad_answer("the answer carries no operation"))
}
