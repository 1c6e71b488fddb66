//! From the kube resources to the domain types, as they are.

use crate::tolerant::Unreadable;
use ichor_model::{
    CaRotation, Cluster, ClusterMachine, Condition, MachinePhase, MachineProgress, Operation,
    OperationKind, OperationRef, Phase, ShutdownRecord,
};
use ichor_resources::parse_time;
use ichor_resources::{IchorInstallation, Machine, TalosCluster, TalosOperation, names};
use kube::api::ObjectMeta;

/// Annotation recording the value before the start (set by CreateOperation).
pub(crate) const CURRENT: &str = names::CURRENT;
/// Annotation recording the target of the start (set by CreateOperation).
pub(crate) const TARGET: &str = names::TARGET;

/// A non-empty annotation.
fn annotation(meta: &ObjectMeta, key: &str) -> Option<String> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .filter(|v| !v.is_empty())
        .cloned()
}

/// A TalosOperation that could not be read, as a row that says so: its metadata, what can be
/// read of its spec, and why.
pub(crate) fn unreadable_operation(u: &Unreadable) -> Operation {
    let meta = &u.meta;
    let ann = |k: &str| annotation(meta, k);
    let kind_raw = u.str_at("/spec/kind").unwrap_or_default().to_string();
    Operation {
        namespace: u.namespace(),
        name: u.name(),
        uid: meta.uid.clone().unwrap_or_default(),
        generation: meta.generation.unwrap_or(0),
        request_id: ann(names::REQUEST_ID),
        cluster: u.str_at("/spec/cluster").unwrap_or_default().to_string(),
        kind: OperationKind::parse(&kind_raw),
        kind_raw,
        max_unavailable: 0,
        paused: false,
        phase: Phase::Unknown,
        failure_reason: None,
        machines: Vec::new(),
        ca_rotation: None,
        conditions: Vec::new(),
        created_at: meta.creation_timestamp.as_ref().map(|t| t.0),
        started_at: None,
        finished_at: None,
        actor: ann(names::ACTOR),
        paused_by: None,
        paused_at: None,
        history: Vec::new(),
        current: None,
        target: None,
        unreadable: Some(u.why.clone()),
        resource_version: meta.resource_version.clone().unwrap_or_default(),
        summary: None,
        deleting: deleting(meta),
    }
}

/// A TalosOperation as the dashboard sees it.
pub(crate) fn operation(op: &TalosOperation) -> Operation {
    let ann = |k: &str| annotation(&op.metadata, k);
    let st = op.status.clone().unwrap_or_default();
    let history = ann(names::HISTORY)
        .map(|v| ichor_resources::history::decode(&v))
        .unwrap_or_default();
    let (paused_by, paused_at) = match ichor_model::last_pause_or_resume(&history) {
        Some(e) => (Some(e.actor.clone()), e.at),
        // Paused or resumed before the history was kept.
        None => (
            ann(names::PAUSED_BY),
            ann(names::PAUSED_AT).as_deref().and_then(parse_time),
        ),
    };
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
                last_transition_time: c.last_transition_time.as_deref().and_then(parse_time),
            })
            .collect(),
        created_at: op.metadata.creation_timestamp.as_ref().map(|t| t.0),
        started_at: st.started_at.as_deref().and_then(parse_time),
        finished_at: st.finished_at.as_deref().and_then(parse_time),
        actor: ann(names::ACTOR),
        paused_by,
        paused_at,
        history,
        current: ann(CURRENT),
        target: ann(TARGET),
        unreadable: None,
        resource_version: op.metadata.resource_version.clone().unwrap_or_default(),
        summary: None,
        deleting: deleting(&op.metadata),
    }
}

/// What a delete held by finalizers waits for: `None` unless a delete was asked for.
fn deleting(meta: &kube::api::ObjectMeta) -> Option<Vec<String>> {
    meta.deletion_timestamp
        .as_ref()
        .map(|_| meta.finalizers.clone().unwrap_or_default())
}

/// The machines of `cluster` that could not be read (or whose cluster cannot be read), after
/// the readable ones.
fn unreadable_machines(cluster: &str, unreadable: &[Unreadable]) -> Vec<ClusterMachine> {
    unreadable
        .iter()
        .filter(|u| u.may_belong_to(cluster))
        .map(|u| ClusterMachine {
            name: u.name(),
            role: u.str_at("/spec/role").unwrap_or_default().to_string(),
            order: None,
            approved: false,
            hold: None,
            unreadable: Some(u.why.clone()),
            talos_version: None,
            kubernetes_version: None,
        })
        .collect()
}

/// A TalosCluster that could not be read: its name, the machines that name it, and why.
pub(crate) fn unreadable_cluster(
    u: &Unreadable,
    machines: &[Machine],
    bad: &[Unreadable],
) -> Cluster {
    let name = u.name();
    let mut mine: Vec<Machine> = machines
        .iter()
        .filter(|m| m.spec.cluster == name)
        .cloned()
        .collect();
    ichor_resources::sort_by_order(&mut mine);
    let mut listed: Vec<ClusterMachine> = mine.iter().map(cluster_machine).collect();
    listed.extend(unreadable_machines(&name, bad));
    Cluster {
        namespace: u.namespace(),
        name,
        talos_version: String::new(),
        kubernetes_version: String::new(),
        kube_proxy: String::new(),
        ichor_version: None,
        machines: listed,
        tracking: None,
        active_operation: None,
        unreadable: Some(u.why.clone()),
        last_shutdown: None,
        stray_confirmation: false,
        bundle_backup_stale: None,
    }
}

fn cluster_machine(m: &Machine) -> ClusterMachine {
    ClusterMachine {
        name: m.metadata.name.clone().unwrap_or_default(),
        role: m.spec.role.clone(),
        order: ichor_resources::upgrade_order(m),
        approved: m.spec.approved,
        hold: ichor_resources::hold_reason(m).map(str::to_string),
        unreadable: None,
        talos_version: reported(m.status.as_ref().and_then(|s| s.talos_version.as_deref())),
        kubernetes_version: reported(
            m.status
                .as_ref()
                .and_then(|s| s.kubernetes_version.as_deref()),
        ),
    }
}

/// A version a machine reports: cluster text, so made inert and short; empty is not reported.
fn reported(v: Option<&str>) -> Option<String> {
    v.filter(|v| !v.is_empty())
        .map(|v| ichor_model::inert::truncate(&ichor_model::inert::sanitize(v), 64))
}

/// The last shutdown of `cluster` that completed, from the namespace's operations: who
/// started it and when it finished, and whether nothing was started on the cluster since (its
/// machines are then presumably still stopped).
pub(crate) fn last_shutdown(
    cluster: &str,
    operations: &[TalosOperation],
) -> Option<ShutdownRecord> {
    let mine: Vec<&TalosOperation> = operations
        .iter()
        .filter(|o| o.spec.cluster == cluster)
        .collect();
    let created = |o: &TalosOperation| o.metadata.creation_timestamp.clone();
    let finished = |o: &TalosOperation| {
        o.status
            .as_ref()
            .and_then(|s| s.finished_at.as_deref())
            .and_then(parse_time)
    };
    let last = mine
        .iter()
        .filter(|o| {
            o.spec.kind == OperationKind::Shutdown.as_str()
                && o.status.as_ref().is_some_and(|s| s.phase == "Completed")
        })
        .max_by_key(|o| (finished(o), created(o)))?;
    let newest = mine.iter().max_by_key(|o| created(o))?;
    Some(ShutdownRecord {
        operation: last.metadata.name.clone().unwrap_or_default(),
        actor: annotation(&last.metadata, names::ACTOR),
        finished_at: finished(last),
        still_down: newest.metadata.name == last.metadata.name,
    })
}

/// A cluster with its machines (in executor order, then those that could not be read) and its
/// unfinished operation.
pub(crate) fn cluster(
    c: &TalosCluster,
    machines: &[Machine],
    unreadable: &[Unreadable],
    installation: Option<&IchorInstallation>,
    operations: &[TalosOperation],
) -> Cluster {
    let name = c.metadata.name.clone().unwrap_or_default();
    let mut mine: Vec<Machine> = machines
        .iter()
        .filter(|m| m.spec.cluster == name)
        .cloned()
        .collect();
    ichor_resources::sort_by_order(&mut mine);
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
            .map(cluster_machine)
            .chain(unreadable_machines(
                &c.metadata.name.clone().unwrap_or_default(),
                unreadable,
            ))
            .collect(),
        tracking: crate::plan::tracking(&c.metadata),
        active_operation: unfinished.first().map(|o| OperationRef {
            name: o.metadata.name.clone().unwrap_or_default(),
            kind: o.spec.kind.clone(),
            phase: Phase::parse(o.status.as_ref().map(|s| s.phase.as_str()).unwrap_or("")),
        }),
        unreadable: None,
        last_shutdown: last_shutdown(&c.metadata.name.clone().unwrap_or_default(), operations),
        stray_confirmation: has_confirmation(c),
        bundle_backup_stale: bundle_backup_stale(c),
    }
}

/// The longest text kept of a cluster condition's reason and message (cut with `…`).
const MAX_CONDITION_TEXT: usize = 400;

/// The cluster's `BundleBackupStale` condition, when it is True (cluster text: bounded here,
/// made inert where it is shown).
fn bundle_backup_stale(c: &TalosCluster) -> Option<ichor_model::StaleBundle> {
    let cond = c
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|x| x.type_ == ichor_model::BUNDLE_BACKUP_STALE && x.status == "True")?;
    let cut = |s: &str| ichor_model::inert::truncate(s, MAX_CONDITION_TEXT);
    Some(ichor_model::StaleBundle {
        reason: cut(&cond.reason),
        message: cut(&cond.message),
        since: cond.last_transition_time.as_deref().and_then(parse_time),
    })
}

/// Whether the cluster carries the kube-proxy confirmation annotation (ADR 0013). Outside a
/// kube-proxy switch's own start it is stray: a start set it and was stopped before taking it
/// back.
pub(crate) fn has_confirmation(c: &TalosCluster) -> bool {
    c.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(names::CONFIRM_KUBE_PROXY_SWITCH))
}
