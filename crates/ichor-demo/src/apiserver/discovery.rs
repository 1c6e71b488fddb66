//! The discovery documents kubectl reads before anything else: the version, the API groups and
//! each group's resources (and, from `openapi`, the OpenAPI documents).

use super::kinds::{
    CORE, CRDS, ENDPOINT_SLICES, EVENTS, EVENTS_V1, NAMESPACES, NODES, RESOURCES, ResourceType,
};
use ichor_resources::{GROUP, VERSION};
use serde_json::{Value, json};

/// The API groups served besides the core group: (group, version).
const GROUPS: [(&str, &str); 7] = [
    (GROUP, VERSION),
    ("apiextensions.k8s.io", "v1"),
    ("authentication.k8s.io", "v1"),
    ("authorization.k8s.io", "v1"),
    ("coordination.k8s.io", "v1"),
    ("discovery.k8s.io", "v1"),
    ("events.k8s.io", "v1"),
];

/// The verbs of the read-only kinds.
const READ_VERBS: [&str; 3] = ["get", "list", "watch"];

/// The verbs of every ichor kind, Leases and core Events.
const OBJECT_VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// The discovery document for `path`, if it is one.
pub(crate) fn document(path: &str) -> Option<Value> {
    let doc = match path {
        "/version" => version(),
        "/api" => json!({
            "kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]
        }),
        "/api/v1" => core_resource_list(),
        "/apis/discovery.k8s.io/v1" => resource_list(
            "discovery.k8s.io/v1",
            vec![read_only_resource(&ENDPOINT_SLICES, &[])],
        ),
        "/apis/events.k8s.io/v1" => resource_list(
            "events.k8s.io/v1",
            vec![read_only_resource(&EVENTS_V1, &[])],
        ),
        "/apis" => group_list(),
        "/apis/apiextensions.k8s.io/v1" => resource_list(
            "apiextensions.k8s.io/v1",
            vec![read_only_resource(&CRDS, &["api-extensions"])],
        ),
        "/apis/authentication.k8s.io/v1" => resource_list(
            "authentication.k8s.io/v1",
            vec![
                review_resource("tokenreviews", "TokenReview"),
                review_resource("selfsubjectreviews", "SelfSubjectReview"),
            ],
        ),
        "/apis/authorization.k8s.io/v1" => resource_list(
            "authorization.k8s.io/v1",
            vec![
                review_resource("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
                review_resource("selfsubjectrulesreviews", "SelfSubjectRulesReview"),
            ],
        ),
        "/apis/coordination.k8s.io/v1" => resource_list(
            "coordination.k8s.io/v1",
            vec![
                json!({"name": "leases", "singularName": "lease", "namespaced": true,
                        "kind": "Lease", "verbs": OBJECT_VERBS}),
            ],
        ),
        p if p == format!("/apis/{GROUP}/{VERSION}") => ichor_resource_list(),
        p if p.starts_with("/openapi/") => return super::openapi::document(p),
        _ => return None,
    };
    Some(doc)
}

fn version() -> Value {
    json!({
        "major": "1", "minor": "33", "gitVersion": "v1.33.0-ichor-demo",
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2026-11-01T00:00:00Z", "goVersion": "go1.24", "compiler": "gc",
        "platform": "linux/amd64"
    })
}

fn group_list() -> Value {
    let groups: Vec<Value> = GROUPS
        .iter()
        .map(|(name, version)| {
            let gv = json!({"groupVersion": format!("{name}/{version}"), "version": version});
            json!({"name": name, "versions": [gv], "preferredVersion": gv})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn resource_list(group_version: &str, resources: Vec<Value>) -> Value {
    json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
        "resources": resources
    })
}

/// A review: cluster-scoped, create only.
fn review_resource(plural: &str, kind: &str) -> Value {
    json!({"name": plural, "singularName": kind.to_lowercase(), "namespaced": false,
           "kind": kind, "verbs": ["create"]})
}

/// A read-only kind: get and list.
fn read_only_resource(r: &ResourceType, categories: &[&str]) -> Value {
    let mut v = json!({"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                       "kind": r.kind, "verbs": READ_VERBS});
    if let Value::Object(m) = &mut v {
        if !r.short_names.is_empty() {
            m.insert("shortNames".into(), json!(r.short_names));
        }
        if !categories.is_empty() {
            m.insert("categories".into(), json!(categories));
        }
    }
    v
}

/// The core group: Events, Services, Endpoints and Pods (the last three read only) and the
/// Pods' `portforward` subresource, which is only ever created (a connection upgrade).
fn core_resource_list() -> Value {
    let mut resources = vec![json!({
        "name": EVENTS.plural, "singularName": EVENTS.singular, "namespaced": true,
        "kind": EVENTS.kind, "verbs": OBJECT_VERBS, "shortNames": EVENTS.short_names
    })];
    for r in CORE {
        let categories: &[&str] = if r.plural == "endpoints" {
            &[]
        } else {
            &["all"]
        };
        resources.push(read_only_resource(&r, categories));
        if r.plural == "pods" {
            resources.push(json!({
                "name": "pods/portforward", "singularName": "", "namespaced": true,
                "kind": "PodPortForwardOptions", "verbs": ["create", "get"]
            }));
        }
    }
    resources.push(read_only_resource(&NAMESPACES, &[]));
    resources.push(read_only_resource(&NODES, &[]));
    json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": resources})
}

fn ichor_resource_list() -> Value {
    let mut resources = Vec::new();
    for r in RESOURCES {
        resources.push(json!({
            "name": r.plural, "singularName": r.singular, "namespaced": true, "kind": r.kind,
            "verbs": OBJECT_VERBS, "shortNames": r.short_names, "categories": ["ichor"]
        }));
        if r.has_status {
            resources.push(json!({
                "name": format!("{}/status", r.plural), "singularName": "", "namespaced": true,
                "kind": r.kind, "verbs": ["get", "patch", "update"]
            }));
        }
    }
    resource_list(&format!("{GROUP}/{VERSION}"), resources)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The group list and the review and Lease resource lists, in full.
    #[test]
    fn generated_documents_match_the_written_ones() {
        let gv = |g: &str| json!({"groupVersion": format!("{g}/v1"), "version": "v1"});
        let ichor_gv = json!({"groupVersion": format!("{GROUP}/{VERSION}"), "version": VERSION});
        let want_groups = json!({
            "kind": "APIGroupList", "apiVersion": "v1",
            "groups": [
                {"name": GROUP, "versions": [ichor_gv], "preferredVersion": ichor_gv},
                {"name": "apiextensions.k8s.io", "versions": [gv("apiextensions.k8s.io")],
                 "preferredVersion": gv("apiextensions.k8s.io")},
                {"name": "authentication.k8s.io", "versions": [gv("authentication.k8s.io")],
                 "preferredVersion": gv("authentication.k8s.io")},
                {"name": "authorization.k8s.io", "versions": [gv("authorization.k8s.io")],
                 "preferredVersion": gv("authorization.k8s.io")},
                {"name": "coordination.k8s.io", "versions": [gv("coordination.k8s.io")],
                 "preferredVersion": gv("coordination.k8s.io")},
                {"name": "discovery.k8s.io", "versions": [gv("discovery.k8s.io")],
                 "preferredVersion": gv("discovery.k8s.io")},
                {"name": "events.k8s.io", "versions": [gv("events.k8s.io")],
                 "preferredVersion": gv("events.k8s.io")}
            ]
        });
        assert_eq!(document("/apis"), Some(want_groups));
        let want_authn = json!({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "authentication.k8s.io/v1",
            "resources": [{"name": "tokenreviews", "singularName": "tokenreview", "namespaced": false,
                           "kind": "TokenReview", "verbs": ["create"]},
                           {"name": "selfsubjectreviews", "singularName": "selfsubjectreview", "namespaced": false,
                           "kind": "SelfSubjectReview", "verbs": ["create"]}]
        });
        assert_eq!(document("/apis/authentication.k8s.io/v1"), Some(want_authn));
        let want_authz = json!({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "authorization.k8s.io/v1",
            "resources": [{"name": "selfsubjectaccessreviews", "singularName": "selfsubjectaccessreview",
                           "namespaced": false, "kind": "SelfSubjectAccessReview", "verbs": ["create"]},
                          {"name": "selfsubjectrulesreviews", "singularName": "selfsubjectrulesreview",
                           "namespaced": false, "kind": "SelfSubjectRulesReview", "verbs": ["create"]}]
        });
        assert_eq!(document("/apis/authorization.k8s.io/v1"), Some(want_authz));
        let want_leases = json!({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "coordination.k8s.io/v1",
            "resources": [{"name": "leases", "singularName": "lease", "namespaced": true, "kind": "Lease",
                           "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}]
        });
        assert_eq!(document("/apis/coordination.k8s.io/v1"), Some(want_leases));
        assert_eq!(document("/apis/nothing"), None);
    }

    /// The core group lists Events, Services, Endpoints, Pods and the port-forward
    /// subresource.
    #[test]
    fn core_group_lists_what_reaches_ichor_ui() {
        let Some(doc) = document("/api/v1") else {
            panic!("no /api/v1 document");
        };
        let names: Vec<&str> = doc["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "events",
                "services",
                "endpoints",
                "pods",
                "pods/portforward",
                "namespaces",
                "nodes"
            ]
        );
        assert_eq!(doc["resources"][1]["shortNames"], json!(["svc"]));
        assert_eq!(
            doc["resources"][1]["verbs"],
            json!(["get", "list", "watch"])
        );
        assert_eq!(doc["resources"][4]["verbs"], json!(["create", "get"]));
    }
}
