//! The checks an apiserver runs on an object before it is stored: the name, the kind and
//! apiVersion, and the CRD schemas' required fields and enums.

use super::responses::{Failure, fail, status_body};
use super::routing::Target;
use super::structural::Cause;
use serde_json::{Value, json};

const OPERATION_KINDS: &[&str] = &[
    "talos",
    "kubernetes",
    "ichor",
    "cni",
    "shutdown",
    "ca-rotation",
];
const KUBE_PROXY_MODES: &[&str] = &["enabled", "replaced"];
const MACHINE_ROLES: &[&str] = &["controlplane", "worker"];

/// 422 Invalid for one field of the object `name`.
pub(crate) fn invalid(t: &Target, name: &str, field: &str, detail: String) -> Failure {
    let reason = if detail.starts_with("Required value") {
        "FieldValueRequired"
    } else if detail.starts_with("Unsupported value") {
        "FieldValueNotSupported"
    } else {
        "FieldValueInvalid"
    };
    let cause = Cause {
        reason,
        field: field.to_string(),
        message: detail,
    };
    invalid_causes(t, name, &[cause])
}

/// 422 Invalid with kube-apiserver's `details.causes`, one for each field, which kubectl
/// prints by field (`The TalosOperation "x" is invalid: spec.kind: Unsupported value: …`).
pub(crate) fn invalid_causes(t: &Target, name: &str, causes: &[Cause]) -> Failure {
    let qualified = match t.rt.group {
        "" => t.rt.kind.to_string(),
        group => format!("{}.{group}", t.rt.kind),
    };
    let each: Vec<String> = causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect();
    let what = match each.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let message = format!("{qualified} {name:?} is invalid: {what}");
    let causes: Vec<Value> = causes
        .iter()
        .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
        .collect();
    let details = json!({"name": name, "group": t.rt.group, "kind": t.rt.kind, "causes": causes});
    (422, status_body(422, "Invalid", &message, Some(details)))
}

/// A name must be a lowercase RFC 1123 subdomain.
pub(crate) fn validate_name(t: &Target, name: &str) -> Result<(), Failure> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(invalid(
            t,
            name,
            "metadata.name",
            format!(
                "Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
            ),
        ))
    }
}

/// The fields of one object under check.
struct Fields<'a> {
    t: &'a Target,
    name: &'a str,
    obj: &'a Value,
}

impl Fields<'_> {
    fn invalid(&self, field: &str, detail: String) -> Failure {
        invalid(self.t, self.name, field, detail)
    }

    /// A string that must be there and not empty.
    fn required(&self, pointer: &str, field: &str) -> Result<(), Failure> {
        match self.obj.pointer(pointer) {
            Some(Value::String(s)) if !s.is_empty() => Ok(()),
            _ => Err(self.invalid(field, "Required value".into())),
        }
    }

    /// A string that must be one of `allowed`.
    fn one_of(&self, pointer: &str, field: &str, allowed: &[&str]) -> Result<(), Failure> {
        match self.obj.pointer(pointer) {
            Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
            Some(Value::String(s)) => Err(self.invalid(
                field,
                format!(
                    "Unsupported value: {s:?}: supported values: {}",
                    allowed
                        .iter()
                        .map(|a| format!("\"{a}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            None => Err(self.invalid(field, "Required value".into())),
            Some(_) => Err(self.invalid(field, "Invalid value: must be a string".into())),
        }
    }
}

/// The CRD schemas' checks, as an apiserver would run them.
pub(crate) fn validate(t: &Target, name: &str, obj: &Value) -> Result<(), Failure> {
    let kind_ok = obj.get("kind").and_then(Value::as_str) == Some(t.rt.kind)
        && obj.get("apiVersion").and_then(Value::as_str) == Some(&t.rt.api_version());
    if !kind_ok {
        return Err(fail(
            400,
            "BadRequest",
            format!("the object is not a {} {}", t.rt.api_version(), t.rt.kind),
        ));
    }
    let fields = Fields { t, name, obj };
    match t.rt.kind {
        "TalosOperation" => validate_operation(&fields),
        "TalosCluster" => validate_cluster(&fields),
        "Machine" => {
            fields.required("/spec/cluster", "spec.cluster")?;
            fields.one_of("/spec/role", "spec.role", MACHINE_ROLES)
        }
        "IchorInstallation" => fields.required("/spec/version", "spec.version"),
        "Event" => validate_event(&fields),
        _ => Ok(()),
    }
}

/// An Event names the object it is about, in its own namespace.
fn validate_event(f: &Fields) -> Result<(), Failure> {
    if !f.obj.get("involvedObject").is_some_and(Value::is_object) {
        return Err(f.invalid("involvedObject", "Required value".into()));
    }
    f.required("/involvedObject/kind", "involvedObject.kind")?;
    f.required("/involvedObject/name", "involvedObject.name")?;
    let ns = f.obj.pointer("/metadata/namespace").and_then(Value::as_str);
    match f
        .obj
        .pointer("/involvedObject/namespace")
        .and_then(Value::as_str)
    {
        Some(io) if Some(io) != ns => Err(f.invalid(
            "involvedObject.namespace",
            format!("Invalid value: {io:?}: does not match event.namespace"),
        )),
        _ => Ok(()),
    }
}

fn validate_operation(f: &Fields) -> Result<(), Failure> {
    f.required("/spec/cluster", "spec.cluster")?;
    f.one_of("/spec/kind", "spec.kind", OPERATION_KINDS)?;
    if let Some(m) = f.obj.pointer("/spec/maxUnavailable")
        && m.as_i64().is_none_or(|m| m < 1)
    {
        return Err(f.invalid(
            "spec.maxUnavailable",
            format!("Invalid value: {m}: should be greater than or equal to 1"),
        ));
    }
    if let Some(p) = f.obj.pointer("/spec/paused")
        && !p.is_boolean()
    {
        return Err(f.invalid("spec.paused", "Invalid value: must be a boolean".into()));
    }
    Ok(())
}

fn validate_cluster(f: &Fields) -> Result<(), Failure> {
    f.required("/spec/talosVersion", "spec.talosVersion")?;
    f.required("/spec/kubernetesVersion", "spec.kubernetesVersion")?;
    if f.obj.pointer("/spec/cni/kubeProxy").is_some() {
        f.one_of(
            "/spec/cni/kubeProxy",
            "spec.cni.kubeProxy",
            KUBE_PROXY_MODES,
        )?;
    }
    Ok(())
}
