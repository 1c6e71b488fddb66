//! From the kube resources to the domain types, as they are.

use crate::cluster::controller::parse_time;
use crate::cluster::resources::{
    self, IchorInstallation, Machine, TalosCluster, TalosOperation, names,
};
use crate::model::{
    CaRotation, Cluster, ClusterMachine, Condition, MachinePhase, MachineProgress, Operation,
    OperationKind, OperationRef, Phase,
};

/// Annotation recording the value before the start (set by CreateOperation).
pub const CURRENT: &str = "ichor.maesh.dev/current";
/// Annotation recording the target of the start (set by CreateOperation).
pub const TARGET: &str = "ichor.maesh.dev/target";

/// A TalosOperation as the dashboard sees it.
pub fn operation(op: &TalosOperation) -> Operation {
    let ann = |k: &str| {
        op.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(k))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    let st = op.status.clone().unwrap_or_default();
    Operation {
        namespace: op.metadata.namespace.clone().unwrap_or_default(),
        name: op.metadata.name.clone().unwrap_or_default(),
        uid: op.metadata.uid.clone().unwrap_or_default(),
        generation: op.metadata.generation.unwrap_or(0),
        request_id: ann(names::REQUEST_ID),
        cluster: op.spec.cluster.clone(),
        kind: OperationKind::parse(&op.spec.kind),
        kind_raw: op.spec.kind.clone(),
        max_unavailable: op.spec.max_unavailable,
        paused: op.spec.paused,
        phase: Phase::parse(&st.phase),
        failure_reason: st.failure_reason.clone(),
        machines: st
            .machines
            .iter()
            .map(|m| MachineProgress {
                name: m.name.clone(),
                phase: MachinePhase::parse(&m.phase),
                message: m.message.clone(),
                started_at: m.started_at.as_deref().and_then(parse_time),
                finished_at: m.finished_at.as_deref().and_then(parse_time),
            })
            .collect(),
        ca_rotation: st.ca_rotation.as_ref().map(|c| CaRotation {
            stage: c.stage.clone(),
            pass: c.pass,
            passes: c.passes,
        }),
        conditions: st
            .conditions
            .iter()
            .map(|c| Condition {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
            })
            .collect(),
        created_at: op.metadata.creation_timestamp.as_ref().map(|t| t.0),
        started_at: st.started_at.as_deref().and_then(parse_time),
        finished_at: st.finished_at.as_deref().and_then(parse_time),
        actor: ann(names::ACTOR),
        paused_by: ann(names::PAUSED_BY),
        paused_at: ann(names::PAUSED_AT).as_deref().and_then(parse_time),
        current: ann(CURRENT),
        target: ann(TARGET),
    }
}

/// A cluster with its machines (in executor order) and its unfinished operation.
pub fn cluster(
    c: &TalosCluster,
    machines: &[Machine],
    installation: Option<&IchorInstallation>,
    operations: &[TalosOperation],
) -> Cluster {
    let name = c.metadata.name.clone().unwrap_or_default();
    let mut mine: Vec<Machine> = machines
        .iter()
        .filter(|m| m.spec.cluster == name)
        .cloned()
        .collect();
    resources::sort_by_order(&mut mine);
    let mut unfinished: Vec<&TalosOperation> = operations
        .iter()
        .filter(|o| o.spec.cluster == name)
        .filter(|o| o.status.as_ref().is_none_or(|s| s.phase != "Completed"))
        .collect();
    unfinished.sort_by(|a, b| {
        a.metadata
            .creation_timestamp
            .cmp(&b.metadata.creation_timestamp)
    });
    Cluster {
        namespace: c.metadata.namespace.clone().unwrap_or_default(),
        name,
        talos_version: c.spec.talos_version.clone(),
        kubernetes_version: c.spec.kubernetes_version.clone(),
        kube_proxy: c.spec.cni.kube_proxy.clone(),
        ichor_version: installation.map(|i| i.spec.version.clone()),
        machines: mine
            .iter()
            .map(|m| ClusterMachine {
                name: m.metadata.name.clone().unwrap_or_default(),
                role: m.spec.role.clone(),
                order: resources::upgrade_order(m),
                approved: m.spec.approved,
                hold: resources::hold_reason(m).map(str::to_string),
            })
            .collect(),
        tracking: crate::service::plan::tracking(&c.metadata),
        active_operation: unfinished.first().map(|o| OperationRef {
            name: o.metadata.name.clone().unwrap_or_default(),
            kind: o.spec.kind.clone(),
            phase: Phase::parse(o.status.as_ref().map(|s| s.phase.as_str()).unwrap_or("")),
        }),
    }
}
