//! `metadata.managedFields`, as kube-apiserver keeps them: which field manager set which
//! fields, by operation (`Apply` for server-side apply, `Update` for every other write) and
//! subresource. Every write through the API records its manager (the `fieldManager` query
//! parameter, else the client's User-Agent up to its first `/`): an update takes the fields it
//! added or changed from every other manager, and the fields it removed go from all. Server-side
//! apply ([`apply`]) merges a configuration, owns exactly the fields it sets, prunes what its
//! manager set before and no longer does, and answers 409 naming the fields and their managers
//! when it would change a field another manager owns, unless forced.
//!
//! The fields the server sets (`apiVersion`, `kind`, the metadata's name, namespace, uid,
//! resourceVersion, generation, creationTimestamp, managedFields) are nobody's, as
//! kube-apiserver's `stripMeta` leaves them out; a kind with a status subresource has its
//! `status` owned through the subresource only, and the subresource owns nothing else.

pub(crate) mod apply;
mod fieldset;

use self::fieldset::{FieldSet, compare};
use super::routing::Target;
use serde_json::{Map, Value, json};

/// The metadata no manager owns.
const STRIPPED_METADATA: [&str; 11] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "selfLink",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "clusterName",
];

/// The longest manager name kept (kube-apiserver's limit).
const MAX_MANAGER_CHARS: usize = 128;

/// The manager of a write: `fieldManager`, else the User-Agent up to its first `/`.
pub(crate) fn manager_of(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
    let name = match field_manager {
        Some(m) if !m.is_empty() => m,
        _ => user_agent.unwrap_or("").split('/').next().unwrap_or(""),
    };
    name.chars().take(MAX_MANAGER_CHARS).collect()
}

/// One entry of `metadata.managedFields`.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    manager: String,
    /// `Apply` or `Update`.
    operation: String,
    api_version: String,
    time: Option<String>,
    /// `status`, or empty for the main resource.
    subresource: String,
    fields: FieldSet,
}

impl Entry {
    fn read(v: &Value) -> Option<Entry> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Some(Entry {
            manager: text("manager").unwrap_or_default(),
            operation: text("operation")?,
            api_version: text("apiVersion").unwrap_or_default(),
            time: text("time"),
            subresource: text("subresource").unwrap_or_default(),
            fields: FieldSet::from_fields_v1(v.get("fieldsV1").unwrap_or(&Value::Null)),
        })
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), self.fields.to_fields_v1());
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }

    fn is(&self, manager: &str, operation: &str, subresource: &str) -> bool {
        self.manager == manager && self.operation == operation && self.subresource == subresource
    }

    /// The manager as a conflict names it: `"kubectl"`, or for an update
    /// `"kubectl-edit" using ichor.maesh.dev/v1alpha1`, with its subresource if any.
    fn said(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == "Update" {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// The entries an object carries (an entry that does not read is dropped).
fn entries_of(obj: &Value) -> Vec<Entry> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Entry::read)
        .collect()
}

/// Writes `entries` into `obj`, in kube-apiserver's order (Apply before Update, then by time,
/// manager, apiVersion, subresource), those owning nothing left out.
fn set_entries(obj: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.fields.is_empty());
    entries.sort_by(|a, b| {
        (
            &a.operation,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                &b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        let list = entries.iter().map(Entry::to_json).collect();
        meta.insert("managedFields".into(), Value::Array(list));
    }
}

/// What a write through `t` may own: the status through the subresource, the rest through
/// the main resource (for a kind with a status subresource); the metadata node itself is
/// nobody's.
fn reachable(t: &Target, set: &FieldSet) -> FieldSet {
    let mut out = match (t.rt.has_status, t.status) {
        (false, _) => set.clone(),
        (true, true) => set.only("f:status"),
        (true, false) => set.without("f:status"),
    };
    out.unmark("f:metadata");
    out
}

/// The subresource a write through `t` is recorded under.
fn subresource(t: &Target) -> &'static str {
    if t.status { "status" } else { "" }
}

/// An object without what no manager owns.
fn stripped(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Value::Object(m) = &mut v {
        m.remove("apiVersion");
        m.remove("kind");
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in STRIPPED_METADATA {
                meta.remove(k);
            }
            if meta.is_empty() {
                m.remove("metadata");
            }
        }
    }
    v
}

/// The entries to start an update from: the stored object's, unless the request sets others
/// (kube-apiserver takes a client's managedFields as they are; `[{}]` clears them).
fn base_entries(old: &Value, new: &Value) -> Vec<Entry> {
    let given = new.pointer("/metadata/managedFields");
    match given.and_then(Value::as_array) {
        Some(list) if !list.is_empty() && given != old.pointer("/metadata/managedFields") => {
            entries_of(new)
        }
        _ => entries_of(old),
    }
}

/// Records an update (every write but an apply) by `manager` from `old` (anything but an
/// object, for a create) to `new`, in `new`'s managedFields: it takes what it added or changed, and what
/// it removed goes from every manager. A write that changes nothing changes no entry.
pub(crate) fn record_update(t: &Target, old: &Value, new: &mut Value, manager: &str, now: &str) {
    let empty = json!({});
    let old = if old.is_object() { old } else { &empty };
    let mut entries = base_entries(old, new);
    let c = compare(&stripped(old), &stripped(new));
    let taken = reachable(t, &c.changed());
    let removed = c.removed;
    let sub = subresource(t);
    for e in entries.iter_mut() {
        e.fields = e.fields.difference(&removed).difference(&taken);
    }
    if !taken.is_empty() {
        match entries.iter_mut().find(|e| e.is(manager, "Update", sub)) {
            Some(e) => {
                e.fields.union_with(&taken);
                e.api_version = t.rt.api_version();
                e.time = Some(now.to_string());
            }
            None => entries.push(Entry {
                manager: manager.to_string(),
                operation: "Update".into(),
                api_version: t.rt.api_version(),
                time: Some(now.to_string()),
                subresource: sub.to_string(),
                fields: taken,
            }),
        }
    }
    set_entries(new, entries);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::kinds::RESOURCES;

    fn target(status: bool) -> Target {
        Target {
            rt: RESOURCES[3],
            namespace: Some("default".into()),
            name: Some("op".into()),
            status,
        }
    }

    #[test]
    fn an_update_takes_what_it_changed_and_a_removal_goes_from_all() {
        let t = target(false);
        let mut created = json!({"metadata": {"name": "op", "labels": {"a": "1"}},
                                 "spec": {"cluster": "c", "paused": false}});
        record_update(&t, &Value::Null, &mut created, "creator", "T1");
        let mf = &created["metadata"]["managedFields"][0];
        assert_eq!(mf["manager"], "creator");
        assert_eq!(mf["operation"], "Update");
        assert_eq!(
            mf["fieldsV1"],
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                   "f:spec": {".": {}, "f:cluster": {}, "f:paused": {}}})
        );
        let mut paused = created.clone();
        paused["spec"]["paused"] = json!(true);
        paused["metadata"]["labels"] = json!({});
        record_update(&t, &created, &mut paused, "pauser", "T2");
        let by = |m: &str| {
            paused["metadata"]["managedFields"]
                .as_array()
                .and_then(|l| l.iter().find(|e| e["manager"] == m))
                .map(|e| e["fieldsV1"].clone())
        };
        assert_eq!(
            by("creator"),
            Some(json!({"f:metadata": {"f:labels": {}},
                        "f:spec": {".": {}, "f:cluster": {}}}))
        );
        assert_eq!(by("pauser"), Some(json!({"f:spec": {"f:paused": {}}})));
        // Nothing changed: nothing recorded, not even the time.
        let mut again = paused.clone();
        record_update(&t, &paused, &mut again, "pauser", "T3");
        assert_eq!(again, paused);
    }

    #[test]
    fn a_status_write_owns_the_status_only() {
        let old = json!({"metadata": {"name": "op"}, "spec": {"cluster": "c"}});
        let mut new = old.clone();
        new["status"] = json!({"phase": "Running"});
        record_update(&target(true), &old, &mut new, "ctl", "T");
        let mf = &new["metadata"]["managedFields"][0];
        assert_eq!(mf["subresource"], "status");
        assert_eq!(
            mf["fieldsV1"],
            json!({"f:status": {".": {}, "f:phase": {}}})
        );
    }

    #[test]
    fn managers_are_named_by_field_manager_or_user_agent() {
        assert_eq!(manager_of(Some("kubectl"), Some("x/1")), "kubectl");
        assert_eq!(
            manager_of(None, Some("kubectl/v1.32.0 (linux/amd64)")),
            "kubectl"
        );
        assert_eq!(manager_of(Some(""), None), "");
        assert_eq!(manager_of(Some(&"m".repeat(300)), None).len(), 128);
    }
}
