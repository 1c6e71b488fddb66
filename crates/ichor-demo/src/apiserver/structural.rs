//! An object against its kind's schema, as kube-apiserver decodes and validates it: fields the
//! schema does not know are pruned (and reported as `fieldValidation` asks), `null` is dropped
//! from fields that are not nullable, and a value of the wrong type is a 422 cause naming the
//! type (`spec.maxUnavailable in body must be of type integer: "string"`), as the CRD
//! validator words it. Required fields are the CRD's, from the same schema.
//!
//! Written here because no crate walks an OpenAPI v3 schema with kube-apiserver's pruning
//! rules (jsonschema validators report unknown fields but neither prune them nor know
//! `x-kubernetes-preserve-unknown-fields` and `x-kubernetes-int-or-string`).

use super::schemas::Schemas;
use serde_json::{Map, Value};

/// One field that failed: kube-apiserver's `StatusCause`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cause {
    /// `FieldValueRequired`, `FieldValueTypeInvalid`, `FieldValueInvalid`, …
    pub(crate) reason: &'static str,
    /// `spec.maxUnavailable`.
    pub(crate) field: String,
    /// `Invalid value: "string": … must be of type integer: "string"`.
    pub(crate) message: String,
}

/// What walking an object found.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// Paths of the fields pruned, `spec.foo`, in the order met.
    pub(crate) unknown: Vec<String>,
    pub(crate) causes: Vec<Cause>,
}

/// The JSON type names the schemas use, of a value.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The most fields a refusal or its warnings name (the rest are counted): a body may hold any
/// number of unknown or wrong fields, and an answer never echoes unbounded input.
pub(crate) const MAX_NAMED: usize = 10;

/// A field path as an answer names it: at most 120 characters.
pub(crate) fn bounded(path: &str) -> String {
    match path.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &path[..cut]),
        None => path.to_string(),
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

/// Walks `value` (at `path`) against `schema`, pruning in place.
pub(crate) fn walk(
    schemas: &Schemas,
    schema: &Value,
    value: &mut Value,
    path: &str,
    out: &mut Findings,
) {
    let schema = schemas.resolve(schema);
    if flag(schema, "x-kubernetes-int-or-string") {
        if !matches!(type_name(value), "integer" | "string") {
            type_invalid(value, path, "integer-or-string", out);
        }
        return;
    }
    let want = schema.get("type").and_then(Value::as_str);
    let have = type_name(value);
    match want {
        Some(w) if w != have && !(w == "number" && have == "integer") => {
            type_invalid(value, path, w, out);
        }
        Some("object") | None => {
            if let Value::Object(map) = value {
                walk_object(schemas, schema, map, path, out);
            }
        }
        Some("array") => {
            if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(schemas, item_schema, item, &format!("{path}[{i}]"), out);
                }
            }
        }
        Some(_) => {}
    }
}

fn type_invalid(value: &Value, path: &str, want: &str, out: &mut Findings) {
    if out.causes.len() >= MAX_NAMED {
        return;
    }
    let have = type_name(value);
    let path = bounded(path);
    out.causes.push(Cause {
        reason: "FieldValueTypeInvalid",
        message: format!(
            "Invalid value: \"{have}\": {path} in body must be of type {want}: \"{have}\""
        ),
        field: path,
    });
}

fn walk_object(
    schemas: &Schemas,
    schema: &Value,
    map: &mut Map<String, Value>,
    path: &str,
    out: &mut Findings,
) {
    let props = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    // `null` is no value unless the schema says the field may be null.
    map.retain(|k, v| {
        !v.is_null()
            || props
                .and_then(|p| p.get(k))
                .is_some_and(|s| flag(schemas.resolve(s), "nullable"))
    });
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let field = child(path, &key);
        let sub = props.and_then(|p| p.get(&key)).or(additional);
        match (sub, map.get_mut(&key)) {
            (Some(sub), Some(v)) => walk(schemas, sub, v, &field, out),
            // A free-form object (no properties, no map values) keeps what it holds.
            (None, _) if preserve || (props.is_none() && additional.is_none()) => {}
            (None, _) => {
                map.remove(&key);
                out.unknown.push(field);
            }
            (Some(_), None) => {}
        }
    }
    for req in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(req) && out.causes.len() < MAX_NAMED {
            out.causes.push(Cause {
                reason: "FieldValueRequired",
                field: bounded(&child(path, req)),
                message: "Required value".into(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::kinds::{LEASES, RESOURCES};
    use crate::apiserver::schemas::schemas;
    use serde_json::json;

    fn check(rt: usize, mut obj: Value) -> (Value, Findings) {
        let s = schemas();
        let mut out = Findings::default();
        let Some(schema) = s.of(&RESOURCES[rt]) else {
            panic!("no schema");
        };
        walk(s, schema, &mut obj, "", &mut out);
        (obj, out)
    }

    #[test]
    fn unknown_fields_are_pruned_and_named() {
        let (obj, out) = check(
            3,
            json!({"apiVersion": "ichor.maesh.dev/v1alpha1", "kind": "TalosOperation",
                   "metadata": {"name": "a", "bogus": 1, "labels": {"x": "y"}},
                   "spec": {"cluster": "c1", "kind": "talos", "foo": "bar", "paused": null},
                   "extra": true}),
        );
        assert_eq!(out.unknown, ["extra", "metadata.bogus", "spec.foo"]);
        assert!(out.causes.is_empty(), "{:?}", out.causes);
        assert_eq!(obj["spec"], json!({"cluster": "c1", "kind": "talos"}));
        assert_eq!(obj["metadata"], json!({"name": "a", "labels": {"x": "y"}}));
    }

    #[test]
    fn a_wrong_type_names_the_type() {
        let (_, out) = check(
            3,
            json!({"metadata": {"name": "a"}, "spec": {"cluster": "c1", "kind": "talos", "maxUnavailable": "two"}}),
        );
        assert_eq!(
            out.causes,
            [Cause {
                reason: "FieldValueTypeInvalid",
                field: "spec.maxUnavailable".into(),
                message: "Invalid value: \"string\": spec.maxUnavailable in body must be of type integer: \"string\"".into(),
            }]
        );
        let (_, out) = check(
            3,
            json!({"metadata": {"name": "a"}, "spec": {"kind": "talos"}}),
        );
        assert_eq!(out.causes[0].field, "spec.cluster");
        assert_eq!(out.causes[0].reason, "FieldValueRequired");
    }

    #[test]
    fn what_is_named_is_bounded() {
        let spec: serde_json::Map<String, Value> = (0..50)
            .map(|i| (format!("{}{i}", "x".repeat(300)), json!(1)))
            .collect();
        let (_, out) = check(3, json!({"metadata": {"name": "a"}, "spec": spec}));
        assert_eq!(out.unknown.len(), 50, "every unknown field is pruned");
        assert_eq!(bounded(&out.unknown[0]).chars().count(), 121);
        let bad: serde_json::Map<String, Value> =
            (0..50).map(|i| (format!("m{i}"), json!(i))).collect();
        let (_, out) = check(3, json!({"metadata": {"name": "a", "labels": bad}}));
        assert_eq!(out.causes.len(), MAX_NAMED, "50 wrong labels, 10 named");
    }

    #[test]
    fn built_in_kinds_use_k8s_openapi_schemas() {
        let s = schemas();
        let mut lease = json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": "x", "nope": 1}});
        let mut out = Findings::default();
        let Some(schema) = s.of(&LEASES) else {
            panic!("no lease schema");
        };
        walk(s, schema, &mut lease, "", &mut out);
        assert_eq!(out.unknown, ["spec.nope"]);
        assert_eq!(out.causes[0].field, "spec.leaseDurationSeconds");
    }
}
