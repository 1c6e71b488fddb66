//! Every reason a start would be refused, one small check each, in the order a person should
//! hear them: another operation first, then what cannot be read, another start, the shared
//! installation, the versions, GitOps, and no machine to touch. Each says its reason and the
//! parameters; the words are its message in `locales/en/errors.ftl` (`Refusal::said`).

use super::{Claim, ClaimRead, PlanInputs};
use ichor_model::{OperationKind, Plan, Reason, Refusal, Version, check_jump};
use ichor_resources::TalosOperation;

type Check = fn(OperationKind, &PlanInputs<'_>, &Plan) -> Option<Refusal>;

/// Every reason a start would be refused, the first first.
pub(super) fn blocked(kind: OperationKind, inputs: &PlanInputs<'_>, plan: &Plan) -> Vec<Refusal> {
    const CHECKS: [Check; 9] = [
        unfinished,
        unreadable_operation,
        unreadable_machine,
        claimed,
        installation_busy,
        downgrade,
        unsupported_jump,
        tracked,
        no_machines,
    ];
    CHECKS
        .iter()
        .filter_map(|check| check(kind, inputs, plan))
        .collect()
}

fn unfinished(_kind: OperationKind, inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    let cluster = plan.cluster.as_str();
    if let Some(op) = unfinished_on(inputs, cluster).first() {
        let name = op.metadata.name.clone().unwrap_or_default();
        let phase = phase_of(op);
        return Some(Refusal::said(
            Reason::UnfinishedOperation,
            &[
                ("operation", &name),
                ("cluster", cluster),
                ("phase", &phase),
                ("kind", &op.spec.kind),
            ],
        ));
    }
    None
}

fn unreadable_operation(
    _kind: OperationKind,
    inputs: &PlanInputs<'_>,
    plan: &Plan,
) -> Option<Refusal> {
    let cluster = plan.cluster.as_str();
    // An operation or machine of this cluster that cannot be read: what it is doing, or whether
    // it would be touched, is unknown, so nothing starts until it is fixed.
    if let Some(u) = inputs
        .unreadable_operations
        .iter()
        .find(|u| u.may_belong_to(cluster))
    {
        let name = u.name();
        return Some(Refusal::said(
            Reason::OperationUnreadable,
            &[
                ("operation", &name),
                ("cluster", cluster),
                ("detail", &u.why),
            ],
        ));
    }
    None
}

fn unreadable_machine(
    kind: OperationKind,
    inputs: &PlanInputs<'_>,
    plan: &Plan,
) -> Option<Refusal> {
    let cluster = plan.cluster.as_str();
    if kind.touches_machines()
        && let Some(u) = inputs
            .unreadable_machines
            .iter()
            .find(|u| u.may_belong_to(cluster))
    {
        let name = u.name();
        return Some(Refusal::said(
            Reason::MachineUnreadable,
            &[("machine", &name), ("cluster", cluster), ("detail", &u.why)],
        ));
    }
    None
}

fn claimed(_kind: OperationKind, inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    let cluster = plan.cluster.as_str();
    if let Some(ClaimRead::Unreadable { lease, why }) = &inputs.claim {
        let ns = inputs.namespace;
        return Some(Refusal::said(
            Reason::ClaimUnreadable,
            &[
                ("cluster", cluster),
                ("lease", lease),
                ("namespace", ns),
                ("detail", why),
            ],
        ));
    }
    let claim = claimed_by_another(inputs)?;
    let until = claim.expires.to_string();
    let params = [
        ("operation", claim.operation.as_str()),
        ("cluster", cluster),
        ("actor", claim.actor.as_str()),
        ("until", until.as_str()),
    ];
    Some(if claim.settling {
        Refusal::said(Reason::StartSettling, &params)
    } else {
        Refusal::said(Reason::StartInProgress, &params)
    })
}

fn installation_busy(
    _kind: OperationKind,
    inputs: &PlanInputs<'_>,
    plan: &Plan,
) -> Option<Refusal> {
    // The installation serves every cluster of the namespace: upgrading it under a rollout of
    // another cluster would change the controller that runs that rollout.
    for other in &plan.shared_with {
        if let Some(op) = unfinished_on(inputs, other).first() {
            let name = op.metadata.name.clone().unwrap_or_default();
            let phase = phase_of(op);
            return Some(Refusal::said(
                Reason::InstallationBusy,
                &[
                    ("operation", &name),
                    ("cluster", other),
                    ("phase", &phase),
                    ("kind", &op.spec.kind),
                ],
            ));
        }
    }
    None
}

fn downgrade(kind: OperationKind, _inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    if kind != OperationKind::Cni
        && let (Some(cur), Some(tgt)) =
            (Version::parse(&plan.current), Version::parse(&plan.target))
        && tgt < cur
    {
        return Some(Refusal::said(
            Reason::Downgrade,
            &[
                ("kind", kind.as_str()),
                ("current", &plan.current),
                ("target", &plan.target),
            ],
        ));
    }
    None
}

fn unsupported_jump(kind: OperationKind, _inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    if let (Some(cur), Some(tgt)) = (Version::parse(&plan.current), Version::parse(&plan.target))
        && let Some(refusal) = check_jump(kind, &cur, &tgt)
    {
        return Some(refusal);
    }
    None
}

fn tracked(kind: OperationKind, inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    if let (Some(change), Some(t)) = (&plan.spec_change, &inputs.tracking) {
        // The message names what the spec will name by the kind: a version, or (cni) a mode.
        return Some(Refusal::said(
            Reason::TrackedByGitops,
            &[
                ("kind", kind.as_str()),
                ("tool", &t.tool),
                ("object", &t.object),
                ("resource_kind", &change.resource_kind),
                ("resource_name", &change.resource_name),
                ("field", &change.field),
                ("current", &change.from),
                ("target", &change.to),
            ],
        ));
    }
    None
}

fn no_machines(kind: OperationKind, _inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    let cluster = plan.cluster.as_str();
    if kind.touches_machines() && plan.steps.is_empty() {
        let held = plan.held.len().to_string();
        return Some(Refusal::said(
            Reason::NoMachines,
            &[("cluster", cluster), ("held", &held)],
        ));
    }
    None
}

/// The operations not Completed on `cluster`, by name.
fn unfinished_on<'a>(inputs: &'a PlanInputs<'_>, cluster: &str) -> Vec<&'a TalosOperation> {
    let mut unfinished: Vec<&TalosOperation> = inputs
        .operations
        .iter()
        .filter(|o| o.spec.cluster == cluster)
        .filter(|o| o.status.as_ref().is_none_or(|s| s.phase != "Completed"))
        .collect();
    unfinished.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    unfinished
}

/// An operation's phase for a refusal: Pending before the controller saw it.
fn phase_of(op: &TalosOperation) -> String {
    match op.status.as_ref().map(|s| s.phase.as_str()) {
        None | Some("") => "Pending".to_string(),
        Some(p) => p.to_string(),
    }
}

/// A standing start claim by another start whose operation does not exist yet.
fn claimed_by_another<'a>(inputs: &'a PlanInputs<'_>) -> Option<&'a Claim> {
    let Some(ClaimRead::Readable(claim)) = inputs.claim.as_ref() else {
        return None;
    };
    let exists = inputs
        .operations
        .iter()
        .any(|o| o.metadata.name.as_deref() == Some(claim.operation.as_str()));
    let mine = inputs.request_id == Some(claim.holder.as_str());
    (!mine && !exists && claim.expires > inputs.now && !claim.holder.is_empty()).then_some(claim)
}
