//! Requests: plans, starts, confirmations, permissions.

use super::basics::{kind_from_proto, kind_to_proto, non_empty};
use super::proto;
use ichor_model::{ApiError, Code, Confirmed, OperationRequest, Permissions, Reason};

/// A plan request for the wire.
pub fn plan_request_to_proto(r: &OperationRequest) -> proto::PlanOperationRequest {
    proto::PlanOperationRequest {
        namespace: r.namespace.clone(),
        cluster: r.cluster.clone().unwrap_or_default(),
        kind: kind_to_proto(r.kind) as i32,
        target: r.target.clone().unwrap_or_default(),
        max_unavailable: r.max_unavailable,
    }
}

/// A create request for the wire (the same fields as a plan request).
pub fn create_request_to_proto(r: &OperationRequest) -> proto::CreateOperationRequest {
    let p = plan_request_to_proto(r);
    proto::CreateOperationRequest {
        namespace: p.namespace,
        cluster: p.cluster,
        kind: p.kind,
        target: p.target,
        max_unavailable: p.max_unavailable,
        request_id: r.request_id.clone().unwrap_or_default(),
        plan_fingerprint: r.confirmed_plan.clone().unwrap_or_default(),
    }
}

/// A confirmation for the wire.
pub fn confirmed_to_proto(c: &Confirmed) -> proto::ConfirmedState {
    proto::ConfirmedState {
        uid: c.uid.clone(),
        generation: c.generation,
        finished: c.finished,
        paused: c.paused,
    }
}

/// A confirmation from the wire.
pub fn confirmed_from_proto(c: proto::ConfirmedState) -> Confirmed {
    Confirmed {
        uid: c.uid,
        generation: c.generation,
        finished: c.finished,
        paused: c.paused,
    }
}

/// Permissions for the wire.
pub fn permissions_to_proto(p: &Permissions) -> proto::GetPermissionsResponse {
    proto::GetPermissionsResponse {
        start: p.start,
        pause: p.pause,
        delete: p.delete,
        edit_clusters: p.edit_clusters,
        edit_installation: p.edit_installation,
    }
}

/// Permissions from the wire.
pub fn permissions_from_proto(p: &proto::GetPermissionsResponse) -> Permissions {
    Permissions {
        start: p.start,
        pause: p.pause,
        delete: p.delete,
        edit_clusters: p.edit_clusters,
        edit_installation: p.edit_installation,
    }
}

/// A request from the wire: an empty cluster or target is none; the kind must be known. The
/// rest is checked by the service, on every path alike.
pub fn request_from_proto(
    namespace: String,
    cluster: String,
    kind: i32,
    target: String,
    max_unavailable: Option<i32>,
) -> Result<OperationRequest, ApiError> {
    let kind = kind_from_proto(kind).ok_or_else(|| {
        let value = kind.to_string();
        ApiError::refused(
            Code::InvalidArgument,
            Reason::InvalidKind,
            &[("value", &value)],
            format!("the request names no operation kind this server knows (kind = {value})"),
        )
    })?;
    Ok(OperationRequest {
        namespace,
        cluster: non_empty(cluster),
        kind,
        target: non_empty(target),
        max_unavailable,
        request_id: None,
        confirmed_plan: None,
    })
}
