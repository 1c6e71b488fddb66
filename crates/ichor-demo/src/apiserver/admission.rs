//! Admission after validation: the ValidatingAdmissionPolicy of ADR 0013.

use super::responses::{Failure, fail};
use super::routing::Target;
use ichor_resources::names;
use serde_json::Value;

/// A `spec.cni.kubeProxy` change needs the confirmation annotation (`ichor-kube-proxy-switch`).
pub(crate) fn admit(t: &Target, name: &str, old: &Value, new: &Value) -> Result<(), Failure> {
    if t.rt.kind != "TalosCluster" || t.status {
        return Ok(());
    }
    let mode = |v: &Value| {
        v.pointer("/spec/cni/kubeProxy")
            .and_then(Value::as_str)
            .unwrap_or("enabled")
            .to_string()
    };
    let confirmed = new
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(names::CONFIRM_KUBE_PROXY_SWITCH));
    if mode(old) != mode(new) && !confirmed {
        return Err(fail(
            422,
            "Invalid",
            format!(
                "{} {name:?} is forbidden: ValidatingAdmissionPolicy 'ichor-kube-proxy-switch' with binding 'ichor-kube-proxy-switch' denied request: changing spec.cni.kubeProxy requires the annotation {}",
                t.qualified(),
                names::CONFIRM_KUBE_PROXY_SWITCH
            ),
        ));
    }
    Ok(())
}
