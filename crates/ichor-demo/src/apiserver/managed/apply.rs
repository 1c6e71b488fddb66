//! Server-side apply (`PATCH` with `application/apply-patch+yaml`), as kube-apiserver's field
//! manager does it: the configuration (YAML, or JSON, which is YAML) is merged into the stored
//! object (or makes it, when there is none: 201); its manager then owns exactly the fields it
//! sets, and what that manager set before and no longer does is removed unless another
//! manager owns it. A change to a field another manager owns is a conflict: 409 naming each
//! field and its manager, unless `force=true`, which takes them. The merged object then goes
//! the way of every write (pruning, validation, admission, preconditions).

use super::fieldset::{FieldSet, ListKind, compare, fields_of, item_element, list_kind};
use super::{Entry, entries_of, reachable, set_entries, stripped, subresource};
use crate::apiserver::ApiState;
use crate::apiserver::auth::Identity;
use crate::apiserver::field_validation::prune_unknown;
use crate::apiserver::responses::{Failure, conflict, fail, object_not_found, status_body};
use crate::apiserver::routing::Target;
use crate::apiserver::store::{Fields, now_rfc3339};
use serde_json::{Value, json};

/// What an apply asks: its configuration, its manager, and whether it takes conflicting fields.
pub(crate) struct Apply<'a> {
    pub(crate) body: &'a [u8],
    pub(crate) manager: &'a str,
    pub(crate) force: bool,
}

/// 400 with kube-apiserver's words.
fn bad(message: impl Into<String>) -> Failure {
    fail(400, "BadRequest", message)
}

/// The most conflicting fields a 409 names (the rest are counted).
const MAX_NAMED: usize = 20;

/// The configuration in the body: an object, YAML or JSON.
fn configuration(t: &Target, body: &[u8]) -> Result<Value, Failure> {
    let text = std::str::from_utf8(body).map_err(|e| bad(format!("error decoding YAML: {e}")))?;
    let v: Value = serde_saphyr::from_str(text).map_err(|e| {
        let e: String = e.to_string().chars().take(200).collect();
        bad(format!("error decoding YAML: {e}"))
    })?;
    let Value::Object(_) = v else {
        return Err(bad(
            "error decoding YAML: the configuration is not an object",
        ));
    };
    let said = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (said("apiVersion"), said("kind"));
    if api_version != t.rt.api_version() {
        return Err(bad(format!(
            "Incorrect version specified in apply patch. Specified patch version: {}, expected: {}",
            bounded(api_version),
            t.rt.api_version()
        )));
    }
    if kind != t.rt.kind {
        return Err(bad(format!(
            "Incorrect kind specified in apply patch. Specified patch kind: {}, expected: {}",
            bounded(kind),
            t.rt.kind
        )));
    }
    if v.pointer("/metadata/managedFields").is_some() {
        return Err(bad("metadata.managedFields must be nil"));
    }
    let named = v.pointer("/metadata/name").and_then(Value::as_str);
    if named.is_some_and(|n| n != t.name()) {
        return Err(bad(
            "the name of the object does not match the name on the URL",
        ));
    }
    let ns = v.pointer("/metadata/namespace").and_then(Value::as_str);
    if ns.is_some_and(|n| Some(n) != t.namespace.as_deref()) {
        return Err(bad(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(v)
}

fn bounded(s: &str) -> String {
    s.chars().take(64).collect()
}

/// The part of a configuration a write through `t` applies: the status through the status
/// subresource, the rest through the main resource (for a kind with a status subresource).
fn applied_part(t: &Target, mut config: Value) -> Value {
    if let Value::Object(m) = &mut config {
        match (t.rt.has_status, t.status) {
            (true, true) => {
                m.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "status"));
            }
            (true, false) => {
                m.remove("status");
            }
            (false, _) => {}
        }
    }
    config
}

/// `live` with `config` merged in: objects field by field, sets and keyed lists item by item,
/// everything else replaced; `null` removes the field.
fn merge(live: &Value, config: &Value, path: &mut Vec<String>) -> Value {
    match (live, config) {
        (Value::Object(l), Value::Object(c)) => {
            let mut out = l.clone();
            for (k, cv) in c {
                if cv.is_null() {
                    out.remove(k);
                    continue;
                }
                path.push(k.clone());
                let merged = match l.get(k) {
                    Some(lv) => merge(lv, cv, path),
                    None => cv.clone(),
                };
                path.pop();
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(c)) => {
            let fields: Vec<&str> = path.iter().map(String::as_str).collect();
            match list_kind(&fields) {
                ListKind::Atomic => config.clone(),
                kind => Value::Array(merge_items(kind, l, c)),
            }
        }
        _ => config.clone(),
    }
}

/// The items of a set or keyed list merged: the live ones (a keyed one merged with the
/// configuration's of the same key), then the configuration's new ones.
fn merge_items(kind: ListKind, live: &[Value], config: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = live.to_vec();
    for item in config {
        let element = item_element(kind, item);
        let same = out
            .iter()
            .position(|l| element.is_some() && item_element(kind, l) == element);
        match (same, kind) {
            (Some(i), ListKind::Map(_)) => out[i] = merge(&out[i], item, &mut Vec::new()),
            (Some(_), _) => {}
            (None, _) => out.push(item.clone()),
        }
    }
    out
}

/// Removes the members of `gone` from `v`, but not a field `keep` (what other managers own)
/// holds anything of.
fn remove_fields(v: &mut Value, gone: &FieldSet, keep: Option<&FieldSet>, path: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (element, sub) in gone.children() {
                let Some(name) = element.strip_prefix("f:") else {
                    continue;
                };
                let kept = keep.and_then(|k| k.child(element));
                if sub.is_member() && kept.is_none() {
                    m.remove(name);
                } else if let Some(child) = m.get_mut(name) {
                    path.push(name.to_string());
                    remove_fields(child, sub, kept, path);
                    path.pop();
                }
            }
        }
        Value::Array(items) => {
            let fields: Vec<&str> = path.iter().map(String::as_str).collect();
            let kind = list_kind(&fields);
            items.retain_mut(|item| {
                let Some(element) = item_element(kind, item) else {
                    return true;
                };
                let Some(sub) = gone.child(&element) else {
                    return true;
                };
                let kept = keep.and_then(|k| k.child(&element));
                if sub.is_member() && kept.is_none() {
                    return false;
                }
                remove_fields(item, sub, kept, &mut Vec::new());
                true
            });
        }
        _ => {}
    }
}

/// The 409 of an apply that would change fields other managers own, as kube-apiserver words it.
fn conflicts(found: &[(String, FieldSet)]) -> Failure {
    let mut by_manager: Vec<(&String, Vec<String>)> =
        found.iter().map(|(m, s)| (m, s.paths())).collect();
    by_manager.sort();
    let total: usize = by_manager.iter().map(|(_, p)| p.len()).sum();
    let mut causes = Vec::new();
    for (manager, paths) in &by_manager {
        for p in paths.iter().take(MAX_NAMED.saturating_sub(causes.len())) {
            causes.push(json!({"reason": "FieldManagerConflict",
                               "message": format!("conflict with {manager}"), "field": p}));
        }
    }
    let message = match by_manager.as_slice() {
        [(manager, paths)] if paths.len() == 1 => {
            format!(
                "Apply failed with 1 conflict: conflict with {manager}: {}",
                paths[0]
            )
        }
        _ => {
            let mut lines = Vec::new();
            let mut named = 0;
            for (manager, paths) in &by_manager {
                lines.push(format!("conflicts with {manager}:"));
                for p in paths {
                    if named < MAX_NAMED {
                        lines.push(format!("- {p}"));
                    }
                    named += 1;
                }
            }
            if total > MAX_NAMED {
                lines.push(format!("and {} more", total - MAX_NAMED));
            }
            format!("Apply failed with {total} conflicts: {}", lines.join("\n"))
        }
    };
    let details = json!({"causes": causes});
    (409, status_body(409, "Conflict", &message, Some(details)))
}

/// The object an apply makes of `live` (`None`: there is none yet) and its managedFields.
fn applied(
    t: &Target,
    live: Option<&Value>,
    config: &Value,
    how: &Apply,
    now: &str,
) -> Result<Value, Failure> {
    let base = match live {
        Some(l) => l.clone(),
        None => json!({"apiVersion": t.rt.api_version(), "kind": t.rt.kind,
                       "metadata": {"name": t.name(), "namespace": t.namespace}}),
    };
    let sub = subresource(t);
    let mut entries = entries_of(&base);
    let mine = |e: &Entry| e.is(how.manager, "Apply", sub);
    let last = entries
        .iter()
        .find(|e| mine(e))
        .map(|e| e.fields.clone())
        .unwrap_or_default();
    let set = reachable(t, &fields_of(&stripped(config), &mut Vec::new(), false));
    let others = entries
        .iter()
        .filter(|e| !mine(e))
        .fold(FieldSet::default(), |acc, e| acc.union(&e.fields));
    let mut merged = merge(&base, config, &mut Vec::new());
    let gone = last.difference(&set);
    remove_fields(
        &mut merged,
        &gone,
        Some(&others.union(&set)),
        &mut Vec::new(),
    );
    let c = compare(&stripped(&base), &stripped(&merged));
    let changed = reachable(t, &c.changed());
    let found: Vec<(String, FieldSet)> = entries
        .iter()
        .filter(|e| !mine(e))
        .map(|e| (e.said(), e.fields.intersection(&changed)))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    if !how.force && !found.is_empty() {
        return Err(conflicts(&found));
    }
    for e in entries.iter_mut().filter(|e| !mine(e)) {
        e.fields = e.fields.difference(&changed).difference(&c.removed);
    }
    let changed_anything = merged != base || set != last;
    match entries.iter_mut().find(|e| mine(e)) {
        Some(e) => {
            e.fields = set;
            e.api_version = t.rt.api_version();
            if changed_anything {
                e.time = Some(now.to_string());
            }
        }
        None => entries.push(Entry {
            manager: how.manager.to_string(),
            operation: "Apply".into(),
            api_version: t.rt.api_version(),
            time: Some(now.to_string()),
            subresource: sub.to_string(),
            fields: set,
        }),
    }
    set_entries(&mut merged, entries);
    Ok(merged)
}

impl ApiState {
    /// A server-side apply to `t`: 201 with the object it made, or 200 with the object merged.
    pub(crate) fn apply(
        &mut self,
        t: &Target,
        how: &Apply,
        who: &Identity,
        dry_run: bool,
    ) -> Result<(u16, Value), Failure> {
        if how.manager.is_empty() {
            let message = "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch";
            let details = json!({"causes": [{"reason": "FieldValueRequired",
                "message": "Required value: is required for apply patch", "field": "fieldManager"}]});
            return Err((422, status_body(422, "Invalid", message, Some(details))));
        }
        let mut config = applied_part(t, configuration(t, how.body)?);
        let warnings = prune_unknown(t, &mut config, self.field_validation)?;
        self.warnings.extend(warnings);
        let live = self.get(t).ok();
        if let Some(rv) = config
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            && live
                .as_ref()
                .and_then(|l| l.pointer("/metadata/resourceVersion"))
                .and_then(Value::as_str)
                != Some(rv)
        {
            return Err(conflict(t));
        }
        if live.is_none() && t.status {
            return Err(object_not_found(t));
        }
        let obj = applied(t, live.as_ref(), &config, how, &now_rfc3339())?;
        if live.is_none() {
            let created = self.create(t, obj, who, dry_run, Fields::Applied)?;
            return Ok((201, created));
        }
        let updated = self.update(t, obj, who, dry_run, "patch", Fields::Applied)?;
        Ok((200, updated))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::kinds::RESOURCES;

    fn target() -> Target {
        Target {
            rt: RESOURCES[3],
            namespace: Some("default".into()),
            name: Some("op".into()),
            status: false,
        }
    }

    fn op(spec: Value) -> Value {
        json!({"apiVersion": "ichor.maesh.dev/v1alpha1", "kind": "TalosOperation",
               "metadata": {"name": "op"}, "spec": spec})
    }

    fn apply_as(
        live: Option<&Value>,
        config: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, Failure> {
        let how = Apply {
            body: b"",
            manager,
            force,
        };
        applied(&target(), live, config, &how, "T")
    }

    fn owned(obj: &Value, manager: &str) -> Value {
        obj["metadata"]["managedFields"]
            .as_array()
            .and_then(|l| l.iter().find(|e| e["manager"] == manager))
            .map(|e| e["fieldsV1"].clone())
            .unwrap_or(Value::Null)
    }

    #[test]
    fn an_applier_owns_what_it_sets_and_its_dropped_fields_go() {
        let first = apply_as(
            None,
            &op(json!({"cluster": "c", "maxUnavailable": 2})),
            "a",
            false,
        )
        .unwrap();
        assert_eq!(
            owned(&first, "a"),
            json!({"f:spec": {"f:cluster": {}, "f:maxUnavailable": {}}})
        );
        let second = apply_as(Some(&first), &op(json!({"cluster": "c"})), "a", false).unwrap();
        assert!(second["spec"].get("maxUnavailable").is_none(), "{second}");
        assert_eq!(owned(&second, "a"), json!({"f:spec": {"f:cluster": {}}}));
    }

    #[test]
    fn another_managers_field_is_a_conflict_unless_forced() {
        let first = apply_as(
            None,
            &op(json!({"cluster": "c", "maxUnavailable": 2})),
            "a",
            false,
        )
        .unwrap();
        // The same value is shared, not a conflict.
        let shared = apply_as(Some(&first), &op(json!({"maxUnavailable": 2})), "b", false).unwrap();
        assert_eq!(
            owned(&shared, "b"),
            json!({"f:spec": {"f:maxUnavailable": {}}})
        );
        let Err((409, status)) =
            apply_as(Some(&first), &op(json!({"maxUnavailable": 3})), "b", false)
        else {
            panic!("no conflict");
        };
        assert_eq!(
            status["message"],
            "Apply failed with 1 conflict: conflict with \"a\": .spec.maxUnavailable"
        );
        assert_eq!(
            status["details"]["causes"][0]["field"],
            ".spec.maxUnavailable"
        );
        let forced = apply_as(Some(&first), &op(json!({"maxUnavailable": 3})), "b", true).unwrap();
        assert_eq!(forced["spec"]["maxUnavailable"], 3);
        assert_eq!(owned(&forced, "a"), json!({"f:spec": {"f:cluster": {}}}));
        assert_eq!(
            owned(&forced, "b"),
            json!({"f:spec": {"f:maxUnavailable": {}}})
        );
        // A field another manager still owns stays when its first applier drops it.
        let dropped = apply_as(Some(&shared), &op(json!({"cluster": "c"})), "a", false).unwrap();
        assert_eq!(dropped["spec"]["maxUnavailable"], 2);
    }

    #[test]
    fn sets_merge_item_by_item() {
        let mut live = op(json!({"cluster": "c"}));
        live["metadata"]["finalizers"] = json!(["theirs"]);
        let mut config = op(json!({}));
        config["metadata"]["finalizers"] = json!(["mine"]);
        let merged = apply_as(Some(&live), &config, "a", false).unwrap();
        assert_eq!(merged["metadata"]["finalizers"], json!(["theirs", "mine"]));
    }

    #[test]
    fn a_configuration_names_its_kind_and_object() {
        let t = target();
        assert!(configuration(&t, b"apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: op\n").is_ok());
        for bad in [
            &b"[1]"[..],
            b"apiVersion: v1\nkind: TalosOperation\n",
            b"apiVersion: ichor.maesh.dev/v1alpha1\nkind: Machine\n",
            b"apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: other\n",
            b"{not yaml",
        ] {
            assert_eq!(configuration(&t, bad).err().map(|f| f.0), Some(400));
        }
    }
}
