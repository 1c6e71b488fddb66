//! The patch types kube-apiserver offers: JSON merge patch (RFC 7386) and JSON patch (RFC 6902,
//! the `json-patch` crate) on every resource, strategic merge patch on the built-in kinds
//! only (a custom resource answers 415, as kube-apiserver's does); server-side apply
//! (`application/apply-patch+yaml`) on every resource, carried out by `managed::apply`.
//!
//! Strategic merge patch here is a merge patch plus the parts of it that the kinds written
//! through this API have: `metadata.finalizers` is a set (patch strategy `merge`: the patch's
//! entries are added, `$deleteFromPrimitiveList/finalizers` removes), and the `$`-directives
//! kubectl sends (`$setElementOrder/…`, `$retainKeys`) are dropped. Lease and Event have no
//! other list with a patch strategy, so for them this is kube-apiserver's answer.
//!
//! A merge patch whose body is not a JSON object is answered as kube-apiserver answers it
//! (`applyJSPatch` in its `handlers/patch.go`): under `Strict` and `Warn` (the server's
//! default) it is first decoded as an object, so an array, a string, a number or a boolean
//! is 400 `error decoding patch: json: cannot unmarshal array into Go value of type
//! map[string]interface {}`; `null` is 400 `Invalid JSON Patch`; under `Ignore` an array
//! replaces the whole object, which then does not decode: 422 naming the field `patch`.

use super::field_validation::FieldValidation;
use super::responses::{Failure, fail, status_body};
use serde_json::{Value, json};

/// A patch's media type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchType {
    Merge,
    Json,
    Strategic,
    /// Server-side apply: not a patch of the object, a configuration merged into it.
    Apply,
}

impl PatchType {
    /// The patch type of a `Content-Type`, or 415 with the types the resource accepts.
    pub(crate) fn of(content_type: &str, built_in: bool) -> Result<PatchType, Failure> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media {
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/strategic-merge-patch+json" if built_in => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" => Ok(PatchType::Apply),
            _ => {
                let accepted = if built_in {
                    "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
                } else {
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                };
                Err(fail(
                    415,
                    "UnsupportedMediaType",
                    format!(
                        "the body of the request was in an unknown format - accepted media types include: {accepted} (got {:?})",
                        media.chars().take(60).collect::<String>()
                    ),
                ))
            }
        }
    }
}

/// 422 for a patch that does not apply (a failed `test`, a path that is not there).
fn does_not_apply(e: impl std::fmt::Display) -> Failure {
    // The error names the patch's path: at most 200 characters of it.
    let e: String = e.to_string().chars().take(200).collect();
    let message = format!("the server rejected our request due to an error in our request: {e}");
    let details =
        json!({"causes": [{"reason": "FieldValueInvalid", "field": "patch", "message": e}]});
    (422, status_body(422, "Invalid", &message, Some(details)))
}

/// The JSON type of a value, as Go's decoder names it in "cannot unmarshal array into …".
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A merge patch that is not an object, refused as kube-apiserver refuses it (see the
/// module's notes); `None` for an object.
fn not_an_object(p: &Value, directive: FieldValidation) -> Option<Failure> {
    if p.is_object() {
        return None;
    }
    let go_map = "map[string]interface {}";
    let invalid = || fail(400, "BadRequest", "Invalid JSON Patch");
    Some(match (directive, p) {
        (_, Value::Null) => invalid(),
        (FieldValidation::Strict | FieldValidation::Warn, _) => fail(
            400,
            "BadRequest",
            format!(
                "error decoding patch: json: cannot unmarshal {} into Go value of type {go_map}",
                json_type(p)
            ),
        ),
        (FieldValidation::Ignore, Value::Array(_)) => {
            let patched: String = p.to_string().chars().take(100).collect();
            let why = format!("json: cannot unmarshal array into Go value of type {go_map}");
            let message = format!("Invalid value: {patched:?}: {why}");
            let details = json!({"causes": [{"reason": "FieldValueInvalid", "field": "patch",
                                             "message": message}]});
            let text = format!("\"\" is invalid: patch: {message}");
            (422, status_body(422, "Invalid", &text, Some(details)))
        }
        (FieldValidation::Ignore, _) => invalid(),
    })
}

/// `old` with `patch` applied; `directive`: the request's `fieldValidation`.
pub(crate) fn apply(
    kind: PatchType,
    old: &Value,
    patch: &[u8],
    directive: FieldValidation,
) -> Result<Value, Failure> {
    let mut obj = old.clone();
    let bad = |e: serde_json::Error| {
        fail(
            400,
            "BadRequest",
            format!("the body of the request could not be decoded as a {kind:?} patch: {e}"),
        )
    };
    match kind {
        PatchType::Merge => {
            let p: Value = serde_json::from_slice(patch).map_err(bad)?;
            if let Some(refused) = not_an_object(&p, directive) {
                return Err(refused);
            }
            json_patch::merge(&mut obj, &p);
        }
        PatchType::Json => {
            let p: json_patch::Patch = serde_json::from_slice(patch).map_err(bad)?;
            json_patch::patch(&mut obj, &p).map_err(does_not_apply)?;
        }
        PatchType::Apply => {
            return Err(fail(
                500,
                "InternalError",
                "an apply is not a patch of the object",
            ));
        }
        PatchType::Strategic => {
            let mut p: Value = serde_json::from_slice(patch).map_err(bad)?;
            let finalizers = strategic_finalizers(old, &mut p);
            strip_directives(&mut p);
            json_patch::merge(&mut obj, &p);
            if let (Some(f), Some(meta)) = (finalizers, obj.get_mut("metadata")) {
                meta["finalizers"] = f;
            }
        }
    }
    Ok(obj)
}

/// The finalizers after a strategic merge patch, when it touches them: the old ones, less
/// those the patch deletes, plus those it names. Takes them out of the patch.
fn strategic_finalizers(old: &Value, patch: &mut Value) -> Option<Value> {
    let meta = patch.get_mut("metadata")?.as_object_mut()?;
    let added = meta.remove("finalizers");
    let deleted = meta.remove("$deleteFromPrimitiveList/finalizers");
    if added.is_none() && deleted.is_none() {
        return None;
    }
    if added.as_ref().is_some_and(Value::is_null) {
        return Some(Value::Null);
    }
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let deleted = strings(deleted.as_ref());
    let mut out: Vec<String> = strings(old.pointer("/metadata/finalizers"))
        .into_iter()
        .filter(|f| !deleted.contains(f))
        .collect();
    for f in strings(added.as_ref()) {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    Some(json!(out))
}

/// Drops the `$`-keys of a strategic merge patch (directives for lists this API's kinds do
/// not have).
fn strip_directives(v: &mut Value) {
    if let Value::Object(m) = v {
        m.retain(|k, _| !k.starts_with('$'));
        m.values_mut().for_each(strip_directives);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_patch_type() {
        let old = json!({"metadata": {"name": "a", "finalizers": ["x"]}, "spec": {"n": 1}});
        let apply = |kind, old: &Value, p: &[u8]| apply(kind, old, p, FieldValidation::Warn);
        let merged = apply(PatchType::Merge, &old, br#"{"spec": {"n": 2}}"#).unwrap();
        assert_eq!(merged["spec"]["n"], 2);
        let patched = apply(
            PatchType::Json,
            &old,
            br#"[{"op": "test", "path": "/spec/n", "value": 1}, {"op": "replace", "path": "/spec/n", "value": 3}]"#,
        )
        .unwrap();
        assert_eq!(patched["spec"]["n"], 3);
        let failed = apply(
            PatchType::Json,
            &old,
            br#"[{"op": "test", "path": "/spec/n", "value": 9}]"#,
        );
        assert_eq!(failed.err().map(|f| f.0), Some(422));
        let smp = apply(
            PatchType::Strategic,
            &old,
            br#"{"metadata": {"finalizers": ["y"], "$setElementOrder/finalizers": ["x", "y"]}}"#,
        )
        .unwrap();
        assert_eq!(smp["metadata"]["finalizers"], json!(["x", "y"]));
        let smp = apply(
            PatchType::Strategic,
            &old,
            br#"{"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}"#,
        )
        .unwrap();
        assert_eq!(smp["metadata"]["finalizers"], json!([]));
    }

    #[test]
    fn a_merge_patch_that_is_not_an_object_is_refused_as_kube_apiserver_refuses_it() {
        let old = json!({"metadata": {"name": "a"}, "spec": {"n": 1}});
        let refused = |p: &[u8], d| apply(PatchType::Merge, &old, p, d).err();
        let Some((400, status)) = refused(b"[1, 2]", FieldValidation::Warn) else {
            panic!("an array under Warn is not 400");
        };
        assert_eq!(
            status["message"],
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        for (p, d) in [
            (&b"\"x\""[..], FieldValidation::Strict),
            (b"7", FieldValidation::Warn),
        ] {
            assert_eq!(refused(p, d).map(|f| f.0), Some(400));
        }
        let Some((400, status)) = refused(b"null", FieldValidation::Strict) else {
            panic!("null is not 400");
        };
        assert_eq!(status["message"], "Invalid JSON Patch");
        let Some((422, status)) = refused(b"[1]", FieldValidation::Ignore) else {
            panic!("an array under Ignore is not 422");
        };
        assert_eq!(status["details"]["causes"][0]["field"], "patch");
        assert_eq!(
            refused(b"true", FieldValidation::Ignore).map(|f| f.0),
            Some(400)
        );
    }

    #[test]
    fn strategic_merge_is_for_built_in_kinds() {
        let smp = "application/strategic-merge-patch+json";
        assert_eq!(PatchType::of(smp, true).ok(), Some(PatchType::Strategic));
        assert_eq!(PatchType::of(smp, false).err().map(|f| f.0), Some(415));
        assert_eq!(
            PatchType::of("application/apply-patch+yaml", false).ok(),
            Some(PatchType::Apply)
        );
        assert_eq!(
            PatchType::of("application/apply-patch+cbor", false)
                .err()
                .map(|f| f.0),
            Some(415)
        );
    }
}
