//! Every reason a start would be refused, one small check each, in the order a person should
//! hear them: another operation first, then what cannot be read, another start, the shared
//! installation, the versions, GitOps, and no machine to touch.

use super::{Claim, ClaimRead, PlanInputs};
use ichor_model::{OperationKind, Plan, Reason, Refusal, Version, check_jump};
use ichor_resources::TalosOperation;

type Check = fn(OperationKind, &PlanInputs<'_>, &Plan) -> Option<Refusal>;

/// The first reason a start would be refused, if any.
pub(super) fn blocked(
    kind: OperationKind,
    inputs: &PlanInputs<'_>,
    plan: &Plan,
) -> Option<Refusal> {
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
    CHECKS.iter().find_map(|check| check(kind, inputs, plan))
}

fn unfinished(_kind: OperationKind, inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    let cluster = plan.cluster.as_str();
    if let Some(op) = unfinished_on(inputs, cluster).first() {
        let name = op.metadata.name.clone().unwrap_or_default();
        let phase = phase_of(op);
        return Some(Refusal::new(
            Reason::UnfinishedOperation,
            &[
                ("operation", &name),
                ("cluster", cluster),
                ("phase", &phase),
                ("kind", &op.spec.kind),
            ],
            format!(
                "operation {name} on cluster {cluster} has not completed (it is {phase}): wait for it to complete, or delete it, before starting another"
            ),
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
        return Some(Refusal::new(
            Reason::OperationUnreadable,
            &[
                ("operation", &name),
                ("cluster", cluster),
                ("detail", &u.why),
            ],
            format!(
                "operation {name} on cluster {cluster} cannot be read ({}): fix or delete it before starting another",
                u.why
            ),
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
        return Some(Refusal::new(
            Reason::MachineUnreadable,
            &[("machine", &name), ("cluster", cluster), ("detail", &u.why)],
            format!(
                "machine {name} of cluster {cluster} cannot be read ({}): fix it before starting, so the plan shows every machine",
                u.why
            ),
        ));
    }
    None
}

fn claimed(_kind: OperationKind, inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    let cluster = plan.cluster.as_str();
    if let Some(ClaimRead::Unreadable { lease, why }) = &inputs.claim {
        let ns = inputs.namespace;
        return Some(Refusal::new(
            Reason::ClaimUnreadable,
            &[
                ("cluster", cluster),
                ("lease", lease),
                ("namespace", ns),
                ("detail", why),
            ],
            format!(
                "the start claim of cluster {cluster} (Lease {lease}) cannot be read ({why}): if no start is under way, delete it: kubectl delete lease {lease} -n {ns}"
            ),
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
        Refusal::new(
            Reason::StartSettling,
            &params,
            format!(
                "a start on cluster {cluster} (by {}) got no answer to its create of operation {}: its outcome is being settled until {until}, and the cluster takes no other start until then",
                claim.actor, claim.operation
            ),
        )
    } else {
        Refusal::new(
            Reason::StartInProgress,
            &params,
            format!(
                "another start on cluster {cluster} is under way (by {}): it is creating operation {}",
                claim.actor, claim.operation
            ),
        )
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
            return Some(Refusal::new(
                Reason::InstallationBusy,
                &[
                    ("operation", &name),
                    ("cluster", other),
                    ("phase", &phase),
                    ("kind", &op.spec.kind),
                ],
                format!(
                    "the ichor installation also serves cluster {other}, where operation {name} has not completed (it is {phase}): an ichor upgrade waits until no cluster it serves has an unfinished operation"
                ),
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
        return Some(Refusal::new(
            Reason::Downgrade,
            &[
                ("kind", kind.as_str()),
                ("current", &plan.current),
                ("target", &plan.target),
            ],
            format!(
                "{} is older than the current {}: a {} downgrade is refused",
                plan.target,
                plan.current,
                kind.as_str()
            ),
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
        // What the spec will name: a version, or (kube-proxy) a mode.
        let setting = match kind {
            OperationKind::Cni => "kube-proxy mode",
            _ => "version",
        };
        return Some(Refusal::new(
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
            format!(
                "{} {} is tracked by {} ({}): merge the change {}: {} → {} in the repository, then start the operation with the {setting} the spec then names",
                change.resource_kind,
                change.resource_name,
                t.tool,
                t.object,
                change.field,
                change.from,
                change.to
            ),
        ));
    }
    None
}

fn no_machines(kind: OperationKind, _inputs: &PlanInputs<'_>, plan: &Plan) -> Option<Refusal> {
    let cluster = plan.cluster.as_str();
    if kind.touches_machines() && plan.steps.is_empty() {
        let held = plan.held.len().to_string();
        return Some(Refusal::new(
            Reason::NoMachines,
            &[("cluster", cluster), ("held", &held)],
            format!("no approved machine of cluster {cluster} would be touched ({held} held)"),
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
