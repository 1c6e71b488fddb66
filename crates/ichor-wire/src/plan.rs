//! Plans and starts.

use super::basics::{
    bad_answer, effect_from_proto, effect_to_proto, kind_from_proto, kind_to_proto,
    refusal_from_proto, refusal_to_proto, spec_change_from_proto, spec_change_to_proto,
};
use super::operation::{operation_to_proto, required_operation};
use super::proto;
use ichor_model::{ApiError, Created, HeldMachine, Plan, PlanMachine, Warning};

/// The most further refusals read from a peer's plan (there are fewer checks than this).
const MAX_ALSO_BLOCKED: usize = 16;

/// A plan for the wire.
pub fn plan_to_proto(p: &Plan) -> proto::PlanOperationResponse {
    proto::PlanOperationResponse {
        namespace: p.namespace.clone(),
        cluster: p.cluster.clone(),
        kind: kind_to_proto(p.kind) as i32,
        effect: effect_to_proto(p.effect) as i32,
        max_unavailable: p.max_unavailable,
        steps: p
            .steps
            .iter()
            .map(|s| proto::PlanStep {
                machines: s.iter().map(machine_to_proto).collect(),
            })
            .collect(),
        held: p.held.iter().map(held_to_proto).collect(),
        current: p.current.clone(),
        target: p.target.clone(),
        spec_change: p.spec_change.as_ref().map(spec_change_to_proto),
        blocked: p
            .blocked
            .as_ref()
            .map(|r| refusal_to_proto(r.reason, &r.params, &r.message)),
        also_blocked: p
            .also_blocked
            .iter()
            .map(|r| refusal_to_proto(r.reason, &r.params, &r.message))
            .collect(),
        stages: p.stages.clone(),
        replaces_secrets_bundle: p.replaces_secrets_bundle,
        shared_with: p.shared_with.clone(),
        denied: p
            .denied
            .as_ref()
            .map(|r| refusal_to_proto(r.reason, &r.params, &r.message)),
        fingerprint: p.fingerprint.clone(),
        credentials_stop_working: p.credentials_stop_working,
        held_not_skipped: p.held_not_skipped.iter().map(held_to_proto).collect(),
        unapproved: p.unapproved.iter().map(machine_to_proto).collect(),
        shut_down: p.shut_down.as_ref().map(super::cluster::shutdown_to_proto),
        stray_confirmation: p.stray_confirmation,
    }
}

fn machine_to_proto(m: &PlanMachine) -> proto::PlanMachine {
    proto::PlanMachine {
        name: m.name.clone(),
        role: m.role.clone(),
        runs_target: m.runs_target,
    }
}

fn machine_from_proto(m: proto::PlanMachine) -> PlanMachine {
    PlanMachine {
        name: m.name,
        role: m.role,
        runs_target: m.runs_target,
    }
}

fn held_to_proto(h: &HeldMachine) -> proto::HeldMachine {
    proto::HeldMachine {
        name: h.name.clone(),
        reason: h.reason.clone(),
    }
}

fn held_from_proto(h: proto::HeldMachine) -> HeldMachine {
    HeldMachine {
        name: h.name,
        reason: h.reason,
    }
}

/// A plan from the wire.
pub fn plan_from_proto(p: proto::PlanOperationResponse) -> Result<Plan, ApiError> {
    let kind = kind_from_proto(p.kind).ok_or_else(|| bad_answer("unknown operation kind"))?;
    let effect =
        effect_from_proto(p.effect).ok_or_else(|| bad_answer("unknown operation effect"))?;
    Ok(Plan {
        namespace: p.namespace,
        cluster: p.cluster,
        kind,
        effect,
        max_unavailable: p.max_unavailable,
        steps: p
            .steps
            .into_iter()
            .map(|s| s.machines.into_iter().map(machine_from_proto).collect())
            .collect(),
        held: p.held.into_iter().map(held_from_proto).collect(),
        current: p.current,
        target: p.target,
        spec_change: p.spec_change.map(spec_change_from_proto),
        blocked: p.blocked.map(refusal_from_proto),
        // A peer's list, bounded: more reasons than there are checks is not a plan.
        also_blocked: p
            .also_blocked
            .into_iter()
            .take(MAX_ALSO_BLOCKED)
            .map(refusal_from_proto)
            .collect(),
        stages: p.stages,
        replaces_secrets_bundle: p.replaces_secrets_bundle,
        shared_with: p.shared_with,
        denied: p.denied.map(refusal_from_proto),
        fingerprint: p.fingerprint,
        credentials_stop_working: p.credentials_stop_working,
        held_not_skipped: p
            .held_not_skipped
            .into_iter()
            .map(held_from_proto)
            .collect(),
        unapproved: p.unapproved.into_iter().map(machine_from_proto).collect(),
        shut_down: p.shut_down.map(super::cluster::shutdown_from_proto),
        stray_confirmation: p.stray_confirmation,
    })
}

/// A start's answer for the wire.
pub fn created_to_proto(c: &Created) -> proto::CreateOperationResponse {
    proto::CreateOperationResponse {
        operation: Some(operation_to_proto(&c.operation)),
        found: c.found,
        spec_written: c.spec_written.as_ref().map(spec_change_to_proto),
        warnings: c
            .warnings
            .iter()
            .map(|w| refusal_to_proto(w.reason, &w.params, &w.message))
            .collect(),
    }
}

/// A start's answer from the wire.
pub fn created_from_proto(c: proto::CreateOperationResponse) -> Result<Created, ApiError> {
    Ok(Created {
        operation: required_operation(c.operation)?,
        found: c.found,
        spec_written: c.spec_written.map(spec_change_from_proto),
        warnings: c
            .warnings
            .into_iter()
            .map(|w| {
                let r = refusal_from_proto(w);
                Warning {
                    reason: r.reason,
                    params: r.params,
                    message: r.message,
                }
            })
            .collect(),
    })
}
