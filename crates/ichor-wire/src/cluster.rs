//! Clusters.

use super::basics::{bad_answer, non_empty, time_from_proto, time_to_proto};
use super::proto;
use ichor_model::{
    ApiError, Cluster, ClusterMachine, OperationRef, Phase, ShutdownRecord, StaleBundle, Tracking,
};

/// A shutdown record for the wire.
pub(super) fn shutdown_to_proto(r: &ShutdownRecord) -> proto::ShutdownRecord {
    proto::ShutdownRecord {
        operation: r.operation.clone(),
        actor: r.actor.clone().unwrap_or_default(),
        finished_at: time_to_proto(r.finished_at),
        still_down: r.still_down,
    }
}

/// A shutdown record from the wire.
pub(super) fn shutdown_from_proto(r: proto::ShutdownRecord) -> ShutdownRecord {
    ShutdownRecord {
        finished_at: time_from_proto(&r.finished_at),
        operation: r.operation,
        actor: non_empty(r.actor),
        still_down: r.still_down,
    }
}

/// A cluster for the wire.
pub fn cluster_to_proto(c: &Cluster) -> proto::Cluster {
    proto::Cluster {
        namespace: c.namespace.clone(),
        name: c.name.clone(),
        talos_version: c.talos_version.clone(),
        kubernetes_version: c.kubernetes_version.clone(),
        kube_proxy: c.kube_proxy.clone(),
        ichor_version: c.ichor_version.clone(),
        machines: c
            .machines
            .iter()
            .map(|m| proto::ClusterMachine {
                name: m.name.clone(),
                role: m.role.clone(),
                order: m.order,
                approved: m.approved,
                hold: m.hold.clone(),
                unreadable: m.unreadable.clone(),
                talos_version: m.talos_version.clone(),
                kubernetes_version: m.kubernetes_version.clone(),
            })
            .collect(),
        tracking: c.tracking.as_ref().map(|t| proto::Tracking {
            tool: t.tool.clone(),
            object: t.object.clone(),
        }),
        active_operation: c.active_operation.as_ref().map(|o| proto::OperationRef {
            name: o.name.clone(),
            kind: o.kind.clone(),
            phase: o.phase.as_str().to_string(),
        }),
        unreadable: c.unreadable.clone(),
        last_shutdown: c.last_shutdown.as_ref().map(shutdown_to_proto),
        stray_confirmation: c.stray_confirmation,
        bundle_backup_stale: c
            .bundle_backup_stale
            .as_ref()
            .map(|b| proto::BundleBackupStale {
                reason: b.reason.clone(),
                message: b.message.clone(),
                since: time_to_proto(b.since),
            }),
    }
}

/// A cluster from the wire.
pub fn cluster_from_proto(c: proto::Cluster) -> Cluster {
    Cluster {
        namespace: c.namespace,
        name: c.name,
        talos_version: c.talos_version,
        kubernetes_version: c.kubernetes_version,
        kube_proxy: c.kube_proxy,
        ichor_version: c.ichor_version,
        machines: c
            .machines
            .into_iter()
            .map(|m| ClusterMachine {
                name: m.name,
                role: m.role,
                order: m.order,
                approved: m.approved,
                hold: m.hold,
                unreadable: m.unreadable,
                talos_version: m.talos_version,
                kubernetes_version: m.kubernetes_version,
            })
            .collect(),
        tracking: c.tracking.map(|t| Tracking {
            tool: t.tool,
            object: t.object,
        }),
        active_operation: c.active_operation.map(|o| OperationRef {
            phase: Phase::parse(&o.phase),
            name: o.name,
            kind: o.kind,
        }),
        unreadable: c.unreadable,
        last_shutdown: c.last_shutdown.map(shutdown_from_proto),
        stray_confirmation: c.stray_confirmation,
        bundle_backup_stale: c.bundle_backup_stale.map(|b| StaleBundle {
            since: time_from_proto(&b.since),
            reason: b.reason,
            message: b.message,
        }),
    }
}

/// The cluster an answer must carry.
pub fn required_cluster(c: Option<proto::Cluster>) -> Result<Cluster, ApiError> {
    c.map(cluster_from_proto)
        .ok_or_else(|| bad_answer("the answer carries no cluster"))
}
