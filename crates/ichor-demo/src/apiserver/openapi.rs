//! The OpenAPI documents kube-apiserver serves, built from the generated schemas (`schemas`):
//! `/openapi/v3` (the index of group-versions), `/openapi/v3/api/v1` and
//! `/openapi/v3/apis/{group}/{version}` (each group-version's paths and the schemas its kinds
//! reach), and `/openapi/v2` (one Swagger 2.0 document, as JSON). kubectl reads v3 for
//! `explain` and to learn that the server validates fields itself (the `fieldValidation`
//! parameter of each kind's PATCH operation).

use super::kinds::ResourceType;
use super::schemas::{REF_PREFIX, definition_name, schemas, served_kinds};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The OpenAPI document at `path`, if it is one.
pub(crate) fn document(path: &str) -> Option<Value> {
    if path == "/openapi/v3" {
        return Some(index());
    }
    if path == "/openapi/v2" {
        return Some(swagger());
    }
    let gv = path.strip_prefix("/openapi/v3/")?;
    let api_version = gv
        .strip_prefix("api/")
        .or_else(|| gv.strip_prefix("apis/"))?;
    let kinds: Vec<ResourceType> = served_kinds()
        .into_iter()
        .filter(|k| k.api_version() == api_version)
        .collect();
    if kinds.is_empty() {
        return None;
    }
    Some(group_version(&kinds))
}

/// The URL path of a group-version's documents: `api/v1` or `apis/{group}/{version}`.
fn gv_path(rt: &ResourceType) -> String {
    match rt.group {
        "" => format!("api/{}", rt.version),
        g => format!("apis/{g}/{}", rt.version),
    }
}

fn index() -> Value {
    let mut paths = Map::new();
    for rt in served_kinds() {
        let p = gv_path(&rt);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}")}),
        );
    }
    json!({"paths": paths})
}

/// One group-version's document.
fn group_version(kinds: &[ResourceType]) -> Value {
    let mut paths = Map::new();
    for rt in kinds {
        operations(rt, &mut paths);
    }
    let roots: Vec<String> = kinds.iter().map(definition_name).collect();
    let all = &schemas().defs;
    let mut components = Map::new();
    for name in reachable(&roots) {
        if let Some(d) = all.get(&name) {
            components.insert(name, d.clone());
        }
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0-ichor-demo"},
        "paths": paths,
        "components": {"schemas": components}
    })
}

/// The definitions `roots` refer to, themselves included.
fn reachable(roots: &[String]) -> BTreeSet<String> {
    let defs = &schemas().defs;
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = roots.to_vec();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(d) = defs.get(&name) {
            refs(d, &mut todo);
        }
    }
    seen
}

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str)
                && let Some(name) = r.strip_prefix(REF_PREFIX)
            {
                out.push(name.to_string());
            }
            m.values().for_each(|x| refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// The paths of one kind: its collection and its objects, with the operations it serves.
fn operations(rt: &ResourceType, paths: &mut Map<String, Value>) {
    let base = format!("/{}", gv_path(rt));
    let (collection, object) = if rt.namespaced {
        (
            format!("{base}/namespaces/{{namespace}}/{}", rt.plural),
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", rt.plural),
        )
    } else {
        (
            format!("{base}/{}", rt.plural),
            format!("{base}/{}/{{name}}", rt.plural),
        )
    };
    let op = |action: &str| operation(rt, action);
    if rt.read_only {
        paths.insert(collection, json!({"get": op("list")}));
        paths.insert(object, json!({"get": op("get")}));
    } else {
        paths.insert(collection, json!({"get": op("list"), "post": op("post")}));
        paths.insert(
            object,
            json!({"get": op("get"), "put": op("put"), "patch": op("patch"), "delete": op("delete")}),
        );
    }
}

fn operation(rt: &ResourceType, action: &str) -> Value {
    let gvk = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let query = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string"}});
    let schema_ref = json!({"$ref": format!("{REF_PREFIX}{}", definition_name(rt))});
    let mut params = vec![query("pretty")];
    if matches!(action, "post" | "put" | "patch") {
        params.extend([
            query("dryRun"),
            query("fieldManager"),
            query("fieldValidation"),
        ]);
    }
    let content = json!({"application/json": {"schema": schema_ref}});
    let mut op = json!({
        "operationId": format!("{action}{}", rt.kind),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": content}}
    });
    if matches!(action, "post" | "put") {
        op["requestBody"] = json!({"content": content, "required": true});
    }
    op
}

/// The Swagger 2.0 document: every kind's paths and every definition, references under
/// `#/definitions/`.
fn swagger() -> Value {
    let mut paths = Map::new();
    for rt in served_kinds() {
        operations(&rt, &mut paths);
    }
    let text = serde_json::to_string(&json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0-ichor-demo"},
        "paths": paths,
        "definitions": schemas().defs,
    }))
    .unwrap_or_default()
    .replace(REF_PREFIX, "#/definitions/");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_group_version_is_indexed_with_its_kinds() {
        let Some(idx) = document("/openapi/v3") else {
            panic!("no index");
        };
        for p in [
            "api/v1",
            "apis/coordination.k8s.io/v1",
            "apis/ichor.maesh.dev/v1alpha1",
        ] {
            let url = idx["paths"][p]["serverRelativeURL"].as_str().unwrap_or("");
            let Some(doc) = document(url) else {
                panic!("no document at {url}");
            };
            assert!(!doc["components"]["schemas"].as_object().unwrap().is_empty());
        }
        let Some(ichor) = document("/openapi/v3/apis/ichor.maesh.dev/v1alpha1") else {
            panic!("no ichor document");
        };
        let schemas = &ichor["components"]["schemas"];
        assert!(schemas["dev.maesh.ichor.v1alpha1.TalosOperation"].is_object());
        assert!(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].is_object());
        let patch = &ichor["paths"]["/apis/ichor.maesh.dev/v1alpha1/namespaces/{namespace}/talosoperations/{name}"]
            ["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"]["kind"],
            "TalosOperation"
        );
        assert!(patch["parameters"].to_string().contains("fieldValidation"));
        let Some(v2) = document("/openapi/v2") else {
            panic!("no v2");
        };
        assert!(v2["definitions"]["io.k8s.api.coordination.v1.Lease"].is_object());
        assert!(!v2.to_string().contains("#/components/"));
    }
}
