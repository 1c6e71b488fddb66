//! Small pieces both ways: times, parameters, kinds, effects, spec changes, refusals.

use super::proto;
use ichor_model::{ApiError, Code, OperationEffect, OperationKind, Reason, Refusal, SpecChange};
use jiff::Timestamp;
use std::collections::{BTreeMap, HashMap};

pub(super) fn time_to_proto(t: Option<Timestamp>) -> String {
    t.map(|t| t.to_string()).unwrap_or_default()
}

/// An RFC 3339 time; empty or unreadable is no time (the value is shown, not acted upon).
pub(super) fn time_from_proto(s: &str) -> Option<Timestamp> {
    if s.is_empty() {
        return None;
    }
    s.parse().ok()
}

/// An empty string is no value.
pub fn non_empty(s: String) -> Option<String> {
    if s.is_empty() { None } else { Some(s) }
}

pub(super) fn params_to_proto(p: &BTreeMap<String, String>) -> HashMap<String, String> {
    p.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

pub(super) fn params_from_proto(p: HashMap<String, String>) -> BTreeMap<String, String> {
    p.into_iter().collect()
}

/// The wire value of a kind.
pub(crate) fn kind_to_proto(k: OperationKind) -> proto::OperationKind {
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
pub(crate) fn kind_from_proto(k: i32) -> Option<OperationKind> {
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

pub(super) fn effect_to_proto(e: OperationEffect) -> proto::OperationEffect {
    match e {
        OperationEffect::Reboot => proto::OperationEffect::Reboot,
        OperationEffect::RestartComponents => proto::OperationEffect::RestartComponents,
        OperationEffect::Stop => proto::OperationEffect::Stop,
        OperationEffect::None => proto::OperationEffect::None,
        OperationEffect::CaRotation => proto::OperationEffect::CaRotation,
    }
}

pub(super) fn effect_from_proto(e: i32) -> Option<OperationEffect> {
    match proto::OperationEffect::try_from(e).ok()? {
        proto::OperationEffect::Unspecified => None,
        proto::OperationEffect::Reboot => Some(OperationEffect::Reboot),
        proto::OperationEffect::RestartComponents => Some(OperationEffect::RestartComponents),
        proto::OperationEffect::Stop => Some(OperationEffect::Stop),
        proto::OperationEffect::None => Some(OperationEffect::None),
        proto::OperationEffect::CaRotation => Some(OperationEffect::CaRotation),
    }
}

/// An answer the server should not have given: a field this build cannot read.
pub(super) fn bad_answer(what: &str) -> ApiError {
    ApiError::refused(
        Code::Internal,
        Reason::Internal,
        &[("what", what)],
        format!("the server's answer could not be read: {what}"),
    )
}

pub(super) fn spec_change_to_proto(s: &SpecChange) -> proto::SpecChange {
    proto::SpecChange {
        resource_kind: s.resource_kind.clone(),
        resource_name: s.resource_name.clone(),
        field: s.field.clone(),
        from: s.from.clone(),
        to: s.to.clone(),
    }
}

pub(super) fn spec_change_from_proto(s: proto::SpecChange) -> SpecChange {
    SpecChange {
        resource_kind: s.resource_kind,
        resource_name: s.resource_name,
        field: s.field,
        from: s.from,
        to: s.to,
    }
}

pub(super) fn refusal_to_proto(
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
pub(super) fn refusal_from_proto(r: proto::Refusal) -> Refusal {
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
