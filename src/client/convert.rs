//! Between the wire (the generated proto types) and the domain types, both ways. The server
//! encodes with these and the gRPC client decodes with them, so a value survives the round trip
//! unchanged: `from(to(x)) == x` for everything the proto can express.

use super::proto;
use crate::model::{
    ApiError, CaRotation, Cluster, ClusterMachine, Code, Condition, Confirmed, Created, Effect,
    HeldMachine, MachinePhase, MachineProgress, Operation, OperationKind, OperationRef,
    OperationRequest, Permissions, Phase, Plan, PlanMachine, Reason, Refusal, SpecChange, Tracking,
    Warning,
};
use jiff::Timestamp;
use prost::Message as _;
use std::collections::{BTreeMap, HashMap};

// ---- small pieces ----

fn time_to_proto(t: Option<Timestamp>) -> String {
    t.map(|t| t.to_string()).unwrap_or_default()
}

/// An RFC 3339 time; empty or unreadable is no time (the value is shown, not acted upon).
fn time_from_proto(s: &str) -> Option<Timestamp> {
    if s.is_empty() {
        return None;
    }
    s.parse().ok()
}

/// An empty string is no value.
pub fn non_empty(s: String) -> Option<String> {
    if s.is_empty() { None } else { Some(s) }
}

fn params_to_proto(p: &BTreeMap<String, String>) -> HashMap<String, String> {
    p.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn params_from_proto(p: HashMap<String, String>) -> BTreeMap<String, String> {
    p.into_iter().collect()
}

/// The wire value of a kind.
pub fn kind_to_proto(k: OperationKind) -> proto::OperationKind {
    match k {
        OperationKind::Talos => proto::OperationKind::Talos,
        OperationKind::Kubernetes => proto::OperationKind::Kubernetes,
        OperationKind::Ichor => proto::OperationKind::Ichor,
        OperationKind::Cni => proto::OperationKind::Cni,
        OperationKind::Shutdown => proto::OperationKind::Shutdown,
        OperationKind::CaRotation => proto::OperationKind::CaRotation,
    }
}

/// The kind a wire value names; `None` for UNSPECIFIED and values this build does not know.
pub fn kind_from_proto(k: i32) -> Option<OperationKind> {
    match proto::OperationKind::try_from(k).ok()? {
        proto::OperationKind::Unspecified => None,
        proto::OperationKind::Talos => Some(OperationKind::Talos),
        proto::OperationKind::Kubernetes => Some(OperationKind::Kubernetes),
        proto::OperationKind::Ichor => Some(OperationKind::Ichor),
        proto::OperationKind::Cni => Some(OperationKind::Cni),
        proto::OperationKind::Shutdown => Some(OperationKind::Shutdown),
        proto::OperationKind::CaRotation => Some(OperationKind::CaRotation),
    }
}

fn effect_to_proto(e: Effect) -> proto::OperationEffect {
    match e {
        Effect::Reboot => proto::OperationEffect::Reboot,
        Effect::RestartComponents => proto::OperationEffect::RestartComponents,
        Effect::Stop => proto::OperationEffect::Stop,
        Effect::None => proto::OperationEffect::None,
        Effect::CaRotation => proto::OperationEffect::CaRotation,
    }
}

fn effect_from_proto(e: i32) -> Option<Effect> {
    match proto::OperationEffect::try_from(e).ok()? {
        proto::OperationEffect::Unspecified => None,
        proto::OperationEffect::Reboot => Some(Effect::Reboot),
        proto::OperationEffect::RestartComponents => Some(Effect::RestartComponents),
        proto::OperationEffect::Stop => Some(Effect::Stop),
        proto::OperationEffect::None => Some(Effect::None),
        proto::OperationEffect::CaRotation => Some(Effect::CaRotation),
    }
}

/// An answer the server should not have given: a field this build cannot read.
fn bad_answer(what: &str) -> ApiError {
    ApiError::refused(
        Code::Internal,
        Reason::Internal,
        &[("what", what)],
        format!("the server's answer could not be read: {what}"),
    )
}

fn spec_change_to_proto(s: &SpecChange) -> proto::SpecChange {
    proto::SpecChange {
        resource_kind: s.resource_kind.clone(),
        resource_name: s.resource_name.clone(),
        field: s.field.clone(),
        from: s.from.clone(),
        to: s.to.clone(),
    }
}

fn spec_change_from_proto(s: proto::SpecChange) -> SpecChange {
    SpecChange {
        resource_kind: s.resource_kind,
        resource_name: s.resource_name,
        field: s.field,
        from: s.from,
        to: s.to,
    }
}

fn refusal_to_proto(
    reason: Reason,
    params: &BTreeMap<String, String>,
    message: &str,
) -> proto::Refusal {
    proto::Refusal {
        reason: reason.as_str().to_string(),
        params: params_to_proto(params),
        message: message.to_string(),
    }
}

/// A refusal from the wire. A reason this build does not know is kept as `Internal`, with the
/// wire name in the `reason` parameter and the server's English message: still a refusal.
fn refusal_from_proto(r: proto::Refusal) -> Refusal {
    let mut params = params_from_proto(r.params);
    let reason = match Reason::parse(&r.reason) {
        Some(reason) => reason,
        None => {
            params.insert("reason".into(), r.reason);
            Reason::Internal
        }
    };
    Refusal {
        reason,
        params,
        message: r.message,
    }
}

// ---- operations ----

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
    }
}

/// The operation an answer must carry.
pub fn required_operation(o: Option<proto::Operation>) -> Result<Operation, ApiError> {
    o.map(operation_from_proto)
        .ok_or_else(|| bad_answer("the answer carries no operation"))
}

// ---- requests ----

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

// ---- plans and starts ----

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
                machines: s
                    .iter()
                    .map(|m| proto::PlanMachine {
                        name: m.name.clone(),
                        role: m.role.clone(),
                    })
                    .collect(),
            })
            .collect(),
        held: p
            .held
            .iter()
            .map(|h| proto::HeldMachine {
                name: h.name.clone(),
                reason: h.reason.clone(),
            })
            .collect(),
        current: p.current.clone(),
        target: p.target.clone(),
        spec_change: p.spec_change.as_ref().map(spec_change_to_proto),
        blocked: p
            .blocked
            .as_ref()
            .map(|r| refusal_to_proto(r.reason, &r.params, &r.message)),
        stages: p.stages.clone(),
        replaces_secrets_bundle: p.replaces_secrets_bundle,
        shared_with: p.shared_with.clone(),
        denied: p
            .denied
            .as_ref()
            .map(|r| refusal_to_proto(r.reason, &r.params, &r.message)),
        fingerprint: p.fingerprint.clone(),
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
            .map(|s| {
                s.machines
                    .into_iter()
                    .map(|m| PlanMachine {
                        name: m.name,
                        role: m.role,
                    })
                    .collect()
            })
            .collect(),
        held: p
            .held
            .into_iter()
            .map(|h| HeldMachine {
                name: h.name,
                reason: h.reason,
            })
            .collect(),
        current: p.current,
        target: p.target,
        spec_change: p.spec_change.map(spec_change_from_proto),
        blocked: p.blocked.map(refusal_from_proto),
        stages: p.stages,
        replaces_secrets_bundle: p.replaces_secrets_bundle,
        shared_with: p.shared_with,
        denied: p.denied.map(refusal_from_proto),
        fingerprint: p.fingerprint,
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

// ---- clusters ----

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
    }
}

/// The cluster an answer must carry.
pub fn required_cluster(c: Option<proto::Cluster>) -> Result<Cluster, ApiError> {
    c.map(cluster_from_proto)
        .ok_or_else(|| bad_answer("the answer carries no cluster"))
}

// ---- errors ----

/// The gRPC code of a domain code.
pub fn code_to_grpc(c: Code) -> tonic::Code {
    match c {
        Code::InvalidArgument => tonic::Code::InvalidArgument,
        Code::NotFound => tonic::Code::NotFound,
        Code::AlreadyExists => tonic::Code::AlreadyExists,
        Code::PermissionDenied => tonic::Code::PermissionDenied,
        Code::Unauthenticated => tonic::Code::Unauthenticated,
        Code::FailedPrecondition => tonic::Code::FailedPrecondition,
        Code::Aborted => tonic::Code::Aborted,
        Code::Unavailable => tonic::Code::Unavailable,
        Code::DeadlineExceeded => tonic::Code::DeadlineExceeded,
        Code::ResourceExhausted => tonic::Code::ResourceExhausted,
        Code::Internal => tonic::Code::Internal,
        Code::Unimplemented => tonic::Code::Unimplemented,
    }
}

/// The domain code of a gRPC code. Codes the domain lacks map to the nearest meaning: a call
/// cancelled may answer later (Unavailable, so it is retried). A request too large for the
/// server (OUT_OF_RANGE from tonic's message limit) is an invalid argument, and one that ran
/// into a limit (RESOURCE_EXHAUSTED, such as a metadata size) is not retried either: the same
/// request would meet the same limit.
pub fn code_from_grpc(c: tonic::Code) -> Code {
    match c {
        tonic::Code::InvalidArgument | tonic::Code::OutOfRange => Code::InvalidArgument,
        tonic::Code::ResourceExhausted => Code::ResourceExhausted,
        tonic::Code::NotFound => Code::NotFound,
        tonic::Code::AlreadyExists => Code::AlreadyExists,
        tonic::Code::PermissionDenied => Code::PermissionDenied,
        tonic::Code::Unauthenticated => Code::Unauthenticated,
        tonic::Code::FailedPrecondition => Code::FailedPrecondition,
        tonic::Code::Aborted => Code::Aborted,
        tonic::Code::Unavailable | tonic::Code::Cancelled => Code::Unavailable,
        tonic::Code::DeadlineExceeded => Code::DeadlineExceeded,
        tonic::Code::Unimplemented => Code::Unimplemented,
        tonic::Code::Ok | tonic::Code::Unknown | tonic::Code::Internal | tonic::Code::DataLoss => {
            Code::Internal
        }
    }
}

/// An error as a gRPC status: the code, the English message, and the reason with its
/// parameters encoded as [`proto::ErrorDetail`] in the details.
pub fn status_from_error(e: &ApiError) -> tonic::Status {
    let detail = proto::ErrorDetail {
        reason: e.reason.map(|r| r.as_str().to_string()).unwrap_or_default(),
        params: params_to_proto(&e.params),
    };
    tonic::Status::with_details(
        code_to_grpc(e.code),
        e.message.clone(),
        detail.encode_to_vec().into(),
    )
}

/// A gRPC status as an error. Details that are absent or not an [`proto::ErrorDetail`] give no
/// reason; a reason this build does not know gives none either (its parameters are kept).
pub fn error_from_status(s: &tonic::Status) -> ApiError {
    let mut e = ApiError::new(code_from_grpc(s.code()), s.message());
    if !s.details().is_empty()
        && let Ok(d) = proto::ErrorDetail::decode(s.details())
    {
        e.reason = Reason::parse(&d.reason);
        e.params = params_from_proto(d.params);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Option<Timestamp> {
        Some(s.parse().unwrap())
    }

    fn sample_operation() -> Operation {
        Operation {
            namespace: "default".into(),
            name: "c1-ca-rotation-x".into(),
            uid: "00000000-0000-0000-0000-000000000007".into(),
            generation: 3,
            request_id: Some("r-1".into()),
            cluster: "c1".into(),
            kind: Some(OperationKind::CaRotation),
            kind_raw: "ca-rotation".into(),
            max_unavailable: 1,
            paused: true,
            phase: Phase::Paused,
            failure_reason: Some("c1-w-a: timed out".into()),
            machines: vec![MachineProgress {
                name: "c1-w-a".into(),
                phase: MachinePhase::Failed,
                message: "timed out".into(),
                started_at: ts("2026-10-26T10:00:00Z"),
                finished_at: ts("2026-10-26T10:04:00.5Z"),
            }],
            ca_rotation: Some(CaRotation {
                stage: "Issuing".into(),
                pass: 2,
                passes: 5,
            }),
            conditions: vec![Condition {
                type_: "ClusterLockHeld".into(),
                status: "True".into(),
                reason: "Held".into(),
                message: "held by x".into(),
            }],
            created_at: ts("2026-10-26T09:59:59Z"),
            started_at: ts("2026-10-26T10:00:00Z"),
            finished_at: None,
            actor: Some("operator".into()),
            paused_by: Some("admin".into()),
            paused_at: ts("2026-10-26T10:05:00Z"),
            current: None,
            target: None,
            unreadable: None,
        }
    }

    #[test]
    fn operations_survive_the_wire() {
        let o = sample_operation();
        assert_eq!(operation_from_proto(operation_to_proto(&o)), o);
        let unknown = Operation {
            kind: None,
            kind_raw: "firmware".into(),
            phase: Phase::Other("Draining".into()),
            ca_rotation: None,
            ..o
        };
        let wire = operation_to_proto(&unknown);
        assert_eq!(wire.kind, proto::OperationKind::Unspecified as i32);
        assert_eq!(operation_from_proto(wire), unknown.clone());
        let unreadable = Operation {
            unreadable: Some("status: invalid type: integer `42`, expected a string".into()),
            ..unknown
        };
        assert_eq!(
            operation_from_proto(operation_to_proto(&unreadable)),
            unreadable
        );
    }

    #[test]
    fn plans_and_starts_survive_the_wire() {
        let plan = Plan {
            namespace: "default".into(),
            cluster: "c1".into(),
            kind: OperationKind::Talos,
            effect: Effect::Reboot,
            max_unavailable: 2,
            steps: vec![
                vec![PlanMachine {
                    name: "cp".into(),
                    role: "controlplane".into(),
                }],
                vec![],
            ],
            held: vec![HeldMachine {
                name: "w".into(),
                reason: "disk".into(),
            }],
            current: "v1.9.2".into(),
            target: "v1.9.3".into(),
            spec_change: Some(SpecChange {
                resource_kind: "TalosCluster".into(),
                resource_name: "c1".into(),
                field: "spec.talosVersion".into(),
                from: "v1.9.2".into(),
                to: "v1.9.3".into(),
            }),
            blocked: Some(Refusal::new(
                Reason::UnfinishedOperation,
                &[("operation", "x")],
                "busy",
            )),
            stages: vec!["Accepting".into()],
            replaces_secrets_bundle: true,
            shared_with: vec!["c2".into()],
            denied: Some(Refusal::new(
                Reason::NotPermitted,
                &[("verb", "update")],
                "no",
            )),
            fingerprint: "f00d".into(),
        };
        assert_eq!(plan_from_proto(plan_to_proto(&plan)).unwrap(), plan);
        let created = Created {
            operation: sample_operation(),
            found: true,
            spec_written: plan.spec_change.clone(),
            warnings: vec![Warning {
                reason: Reason::AnnotationNotRemoved,
                params: BTreeMap::from([("annotation".into(), "a".into())]),
                message: "remove it".into(),
            }],
        };
        assert_eq!(
            created_from_proto(created_to_proto(&created)).unwrap(),
            created
        );
        let mut bad = plan_to_proto(&plan);
        bad.kind = 99;
        assert_eq!(plan_from_proto(bad).unwrap_err().code, Code::Internal);
    }

    #[test]
    fn requests_treat_empty_as_none_and_refuse_unknown_kinds() {
        let r = OperationRequest {
            namespace: "default".into(),
            cluster: None,
            kind: OperationKind::Shutdown,
            target: None,
            max_unavailable: Some(3),
            request_id: None,
            confirmed_plan: None,
        };
        let w = create_request_to_proto(&r);
        let back = request_from_proto(w.namespace, w.cluster, w.kind, w.target, w.max_unavailable)
            .unwrap();
        assert_eq!(back, r);
        let bound = OperationRequest {
            request_id: Some("r-9".into()),
            confirmed_plan: Some("f00d".into()),
            ..r
        };
        let w = create_request_to_proto(&bound);
        assert_eq!(
            (w.request_id.as_str(), w.plan_fingerprint.as_str()),
            ("r-9", "f00d")
        );
        let c = Confirmed {
            uid: "u".into(),
            generation: 4,
            finished: true,
            paused: false,
        };
        assert_eq!(confirmed_from_proto(confirmed_to_proto(&c)), c);
        for kind in [0, 99, -1, i32::MAX] {
            let e = request_from_proto("default".into(), String::new(), kind, String::new(), None)
                .unwrap_err();
            assert_eq!(
                (e.code, e.reason),
                (Code::InvalidArgument, Some(Reason::InvalidKind))
            );
        }
        for (code, want) in [
            (tonic::Code::ResourceExhausted, Code::ResourceExhausted),
            (tonic::Code::OutOfRange, Code::InvalidArgument),
        ] {
            assert_eq!(code_from_grpc(code), want);
            assert!(
                !code_from_grpc(code).is_transient(),
                "{code:?} is not retried"
            );
        }
    }

    #[test]
    fn clusters_survive_the_wire() {
        let c = Cluster {
            namespace: "default".into(),
            name: "c1".into(),
            talos_version: "v1.9.2".into(),
            kubernetes_version: "v1.32.3".into(),
            kube_proxy: "enabled".into(),
            ichor_version: None,
            machines: vec![ClusterMachine {
                name: "m".into(),
                role: "worker".into(),
                order: Some(0),
                approved: false,
                hold: Some("why".into()),
                unreadable: Some("spec: missing field `role`".into()),
            }],
            tracking: Some(Tracking {
                tool: "Flux".into(),
                object: "Kustomization flux-system/c1".into(),
            }),
            active_operation: Some(OperationRef {
                name: "o".into(),
                kind: "talos".into(),
                phase: Phase::Unknown,
            }),
            unreadable: Some("spec: invalid type".into()),
        };
        assert_eq!(cluster_from_proto(cluster_to_proto(&c)), c);
    }

    #[test]
    fn errors_keep_code_reason_and_params() {
        for code in [
            Code::InvalidArgument,
            Code::NotFound,
            Code::AlreadyExists,
            Code::PermissionDenied,
            Code::Unauthenticated,
            Code::FailedPrecondition,
            Code::Aborted,
            Code::Unavailable,
            Code::DeadlineExceeded,
            Code::ResourceExhausted,
            Code::Internal,
            Code::Unimplemented,
        ] {
            let e = ApiError::refused(
                code,
                Reason::Downgrade,
                &[("from", "v1.9.2"), ("to", "v1.8.0")],
                "downgrade: ä",
            );
            assert_eq!(error_from_status(&status_from_error(&e)), e);
        }
        let plain = ApiError::new(Code::NotFound, "gone");
        assert_eq!(error_from_status(&status_from_error(&plain)), plain);
    }

    #[test]
    fn foreign_or_absent_details_give_no_reason() {
        let s = tonic::Status::unavailable("tcp connect error");
        let e = error_from_status(&s);
        assert_eq!((e.code, e.reason), (Code::Unavailable, None));
        let s =
            tonic::Status::with_details(tonic::Code::NotFound, "x", vec![0xff, 0xff, 0xff].into());
        assert_eq!(error_from_status(&s).reason, None);
        let s = tonic::Status::with_details(
            tonic::Code::FailedPrecondition,
            "x",
            proto::ErrorDetail {
                reason: "SOMETHING_NEW".into(),
                params: HashMap::from([("k".into(), "v".into())]),
            }
            .encode_to_vec()
            .into(),
        );
        let e = error_from_status(&s);
        assert_eq!((e.reason, e.param("k")), (None, Some("v")));
    }
}
