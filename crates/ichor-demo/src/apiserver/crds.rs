//! The CustomResourceDefinitions of the four ichor kinds, served as kube-apiserver serves them
//! under `apiextensions.k8s.io/v1` (get, list and watch; read only here: the kinds are the
//! build's own). Each is `CustomResourceExt::crd()` of its Rust type (kube-derive runs
//! schemars over it), the same definition the OpenAPI documents, field validation and pruning
//! read (`schemas`), with what kube-apiserver adds once it has accepted one: the printer
//! columns the server-side Tables print (`table`), and a status that says the names are
//! accepted and the definition established (what `kubectl wait --for=condition=Established`
//! waits for).

use super::ApiState;
use super::kinds::{CRDS, RESOURCES, ResourceType};
use super::store::now_rfc3339;
use super::table::printer_columns;
use ichor_resources::{IchorInstallation, Machine, TalosCluster, TalosOperation};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use serde_json::{Value, json};

/// Each ichor kind and its definition, as its Rust type generates it.
pub(crate) fn definitions() -> [(ResourceType, CustomResourceDefinition); 4] {
    let [clusters, machines, installations, operations] = RESOURCES;
    [
        (clusters, TalosCluster::crd()),
        (machines, Machine::crd()),
        (installations, IchorInstallation::crd()),
        (operations, TalosOperation::crd()),
    ]
}

/// A definition as kube-apiserver serves it once accepted, without its server-set metadata:
/// the printer columns of its kind, and its status.
fn served(rt: &ResourceType, crd: &CustomResourceDefinition) -> Value {
    let mut v = serde_json::to_value(crd).unwrap_or_else(|_| json!({}));
    let now = now_rfc3339();
    if let Some(versions) = v
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    {
        for version in versions {
            version["additionalPrinterColumns"] = Value::Array(printer_columns(rt));
        }
    }
    let condition = |type_: &str, reason: &str, message: &str| {
        json!({"type": type_, "status": "True", "lastTransitionTime": now,
               "reason": reason, "message": message})
    };
    let names = v.pointer("/spec/names").cloned().unwrap_or(Value::Null);
    v["status"] = json!({
        "acceptedNames": names,
        "storedVersions": [rt.version],
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
    });
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("creationTimestamp".into(), json!(now));
        meta.insert("generation".into(), json!(1));
    }
    v
}

impl ApiState {
    /// Stores the definitions of the ichor kinds (at start, as the demo's chart installs them).
    pub(crate) fn ensure_crds(&mut self) {
        for (rt, crd) in definitions() {
            let name = format!("{}.{}", rt.plural, rt.group);
            let key = (CRDS.plural.to_string(), String::new(), name);
            if self.objects.contains_key(&key) {
                continue;
            }
            let mut obj = served(&rt, &crd);
            let rv = self.next_resource_version();
            let uid = self.next_uid();
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("resourceVersion".into(), json!(rv.to_string()));
                meta.insert("uid".into(), json!(uid));
            }
            self.put_object(key, obj, rv);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_names_its_kind_and_is_established() {
        let [.., (rt, crd)] = definitions();
        let v = served(&rt, &crd);
        assert_eq!(
            v["metadata"]["name"], "talosoperations.ichor.maesh.dev",
            "{v}"
        );
        assert_eq!(v["spec"]["names"]["shortNames"], json!(["top"]));
        assert_eq!(v["spec"]["scope"], "Namespaced");
        assert!(v["spec"]["versions"][0]["subresources"]["status"].is_object());
        let columns = &v["spec"]["versions"][0]["additionalPrinterColumns"];
        assert!(
            columns
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["jsonPath"] == ".status.phase")),
            "{columns}"
        );
        assert_eq!(v["status"]["conditions"][1]["type"], "Established");
        assert_eq!(v["status"]["conditions"][1]["status"], "True");
    }
}
