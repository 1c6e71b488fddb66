//! The object store: get and list, and create, update, merge patch and delete with an
//! apiserver's rules (preconditions, resourceVersion, generation, server-owned metadata, the
//! status subresource, each write's manager in `managedFields`); every write is validated and
//! admitted first, and logged. Also the ways
//! around the API: the demo data's `seed`, and (with the `faults` feature) the tests' `edit`,
//! `remove` and `object`.

use super::admission::admit;
use super::auth::Identity;
use super::field_validation::conform;
use super::finalizers::{check_no_new_finalizers, has_finalizers, is_deleting};
use super::managed::record_update;
use super::patch::{self, PatchType};
use super::responses::{Failure, conflict, fail, object_not_found, precondition_failed};
use super::routing::Target;
use super::selector::LabelSelector;
use super::validation::{invalid, validate, validate_name};
use super::{ApiState, EmbeddedApi};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// A stored object's key: (plural, namespace, name).
pub(crate) type Key = (String, String, String);

/// How a write's fields are recorded in `metadata.managedFields` (see `managed`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fields<'a> {
    /// Any write but an apply, by this manager: it takes what it changed.
    Updated(&'a str),
    /// A server-side apply: its managedFields are already in the object.
    Applied,
}

/// The metadata a write never changes: the server set it at creation.
const SERVER_OWNED: [&str; 7] = [
    "uid",
    "creationTimestamp",
    "namespace",
    "name",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// The characters of a `generateName` suffix, as kube-apiserver picks them.
pub(crate) const NAME_SUFFIX_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

pub(super) fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn uid_text(n: u64) -> String {
    format!("00000000-0000-0000-0000-{n:012}")
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

fn meta_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.get_mut("metadata").and_then(Value::as_object_mut)
}

/// Sets `key` to `value`, or removes it when `value` is `None`.
fn set_or_remove(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    match value {
        Some(v) => map.insert(key.into(), v),
        None => map.remove(key),
    };
}

impl ApiState {
    fn key(t: &Target, name: &str) -> Key {
        (
            t.rt.plural.to_string(),
            t.namespace.clone().unwrap_or_default(),
            name.to_string(),
        )
    }

    pub(super) fn next_resource_version(&mut self) -> u64 {
        self.resource_version += 1;
        self.watches.moved_to(self.resource_version);
        self.resource_version
    }

    pub(super) fn next_uid(&mut self) -> String {
        self.uid += 1;
        uid_text(self.uid)
    }

    /// The named object of `t`.
    pub(crate) fn get(&self, t: &Target) -> Result<Value, Failure> {
        self.objects
            .get(&Self::key(t, &t.name()))
            .map(|v| Value::clone(v))
            .ok_or_else(|| object_not_found(t))
    }

    /// The objects a list answers, borrowed from the store.
    pub(crate) fn list_items(&self, t: &Target, selector: &LabelSelector) -> Vec<&Arc<Value>> {
        self.objects
            .iter()
            .filter(|((p, ns, _), _)| {
                p == t.rt.plural && t.namespace.as_ref().is_none_or(|n| n == ns)
            })
            .map(|(_, v)| v)
            .filter(|v| selector.matches(v))
            .collect()
    }

    /// Prunes `obj` to its schema under the request's `fieldValidation`, keeping its warnings
    /// for the response.
    fn conform(&mut self, t: &Target, name: &str, obj: &mut Value) -> Result<(), Failure> {
        let warnings = conform(t, name, obj, self.field_validation)?;
        self.warnings.extend(warnings);
        Ok(())
    }

    /// 409 if a test forced this write to conflict.
    fn take_forced_conflict(&mut self, t: &Target, dry_run: bool) -> Result<(), Failure> {
        if self.faults.take_conflict(dry_run) {
            return Err(conflict(t));
        }
        Ok(())
    }

    /// Stores a checked object under a new resourceVersion and logs the write.
    pub(super) fn commit(
        &mut self,
        verb: &str,
        t: &Target,
        name: &str,
        mut obj: Value,
        who: &Identity,
    ) -> Value {
        let rv = self.next_resource_version();
        if let Some(meta) = meta_mut(&mut obj) {
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
        }
        self.put_object(Self::key(t, name), obj.clone(), rv);
        self.write_log.record(verb, t, name, who);
        obj
    }

    pub(crate) fn create(
        &mut self,
        t: &Target,
        mut obj: Value,
        who: &Identity,
        dry_run: bool,
        fields: Fields,
    ) -> Result<Value, Failure> {
        let ns = t
            .namespace
            .clone()
            .ok_or_else(|| fail(405, "MethodNotAllowed", "create needs a namespace"))?;
        self.check_namespace_exists(&ns)?;
        let name = new_object_name(t, &ns, &obj)?;
        self.conform(t, &name, &mut obj)?;
        if self.objects.contains_key(&Self::key(t, &name)) {
            return Err(fail(
                409,
                "AlreadyExists",
                format!("{} {name:?} already exists", t.qualified()),
            ));
        }
        self.take_forced_conflict(t, dry_run)?;
        stamp_new(t, &mut obj, &name, &ns);
        drop_empty_metadata(&mut obj);
        validate(t, &name, &obj)?;
        if let Fields::Updated(manager) = fields {
            record_update(t, &json!({}), &mut obj, manager, &now_rfc3339());
        }
        if dry_run {
            return Ok(obj);
        }
        let uid = self.next_uid();
        if let Some(meta) = meta_mut(&mut obj) {
            meta.insert("uid".into(), json!(uid));
        }
        Ok(self.commit("create", t, &name, obj, who))
    }

    /// A replace (`verb` "update") or a patched object (`verb` "patch").
    pub(crate) fn update(
        &mut self,
        t: &Target,
        mut obj: Value,
        who: &Identity,
        dry_run: bool,
        verb: &str,
        fields: Fields,
    ) -> Result<Value, Failure> {
        let name = t.name();
        let old = self.get(t)?;
        check_update_preconditions(t, &name, &old, &obj)?;
        self.take_forced_conflict(t, dry_run)?;
        keep_other_part(t, &old, &mut obj);
        keep_server_metadata(&old, &mut obj);
        drop_empty_metadata(&mut obj);
        check_no_new_finalizers(t, &name, &old, &obj)?;
        self.conform(t, &name, &mut obj)?;
        validate(t, &name, &obj)?;
        admit(t, &name, &old, &obj)?;
        bump_generation_on_spec_change(&old, &mut obj);
        if let Fields::Updated(manager) = fields {
            record_update(t, &old, &mut obj, manager, &now_rfc3339());
        }
        // A write that changes nothing is no write: the same resourceVersion, no watch event
        // (kube-apiserver's GuaranteedUpdate skips storing an unchanged object).
        if dry_run || obj == old {
            return Ok(obj);
        }
        if is_deleting(&obj) && !has_finalizers(&obj) {
            // The last finalizer removed: the object goes (one DELETED change, no MODIFIED).
            let key = Self::key(t, &name);
            self.objects.insert(key.clone(), Arc::new(obj.clone()));
            self.take_object(&key);
            self.write_log.record(verb, t, &name, who);
            return Ok(obj);
        }
        Ok(self.commit(verb, t, &name, obj, who))
    }

    /// A patch of any type kube-apiserver offers; a resourceVersion the patch sets is a
    /// precondition, and a patch that sets none applies to the stored object as it is.
    pub(crate) fn patch(
        &mut self,
        t: &Target,
        kind: PatchType,
        patch: &[u8],
        who: &Identity,
        dry_run: bool,
        manager: &str,
    ) -> Result<Value, Failure> {
        let old = self.get(t)?;
        let mut obj = patch::apply(kind, &old, patch, self.field_validation)?;
        let rv = str_at(&old, "/metadata/resourceVersion")
            .unwrap_or("")
            .to_string();
        match str_at(&obj, "/metadata/resourceVersion") {
            Some(set) if set != rv => return Err(conflict(t)),
            Some(_) => {}
            None => {
                if let Some(meta) = meta_mut(&mut obj) {
                    meta.insert("resourceVersion".into(), json!(rv));
                }
            }
        }
        self.update(t, obj, who, dry_run, "patch", Fields::Updated(manager))
    }

    /// A delete; `preconditions` may name the uid and resourceVersion the object must have.
    pub(crate) fn delete(
        &mut self,
        t: &Target,
        who: &Identity,
        dry_run: bool,
        preconditions: &Value,
    ) -> Result<Value, Failure> {
        let name = t.name();
        let obj = self.get(t)?;
        for (field, key) in [("UID", "uid"), ("ResourceVersion", "resourceVersion")] {
            if let Some(want) = preconditions.get(key).and_then(Value::as_str) {
                let have = obj
                    .get("metadata")
                    .and_then(|m| m.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if want != have {
                    return Err(precondition_failed(field, want, have));
                }
            }
        }
        if let Some(held) = self.hold_delete(t, &name, &obj, who, dry_run) {
            return Ok(held);
        }
        if !dry_run {
            self.take_object(&Self::key(t, &name));
            self.write_log.record("delete", t, &name, who);
        }
        Ok(obj)
    }
}

/// The name of an object to create: `metadata.name`, or `metadata.generateName` with a random
/// suffix. The metadata must be there, and its namespace, if any, the request's.
fn new_object_name(t: &Target, ns: &str, obj: &Value) -> Result<String, Failure> {
    let meta = obj
        .get("metadata")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid(t, "", "metadata", "Required value".into()))?;
    if let Some(obj_ns) = meta.get("namespace").and_then(Value::as_str)
        && obj_ns != ns
    {
        return Err(fail(
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let name = match (
        meta.get("name").and_then(Value::as_str),
        meta.get("generateName").and_then(Value::as_str),
    ) {
        (Some(n), _) if !n.is_empty() => n.to_string(),
        (_, Some(g)) if !g.is_empty() => {
            let suffix: String = (0..5)
                .map(|_| NAME_SUFFIX_CHARS[fastrand::usize(..NAME_SUFFIX_CHARS.len())] as char)
                .collect();
            format!("{g}{suffix}")
        }
        _ => {
            return Err(invalid(
                t,
                "",
                "metadata.name",
                "Required value: name or generateName is required".into(),
            ));
        }
    };
    validate_name(t, &name)?;
    Ok(name)
}

/// The server's part of a new object: its name, namespace, creation time and first
/// generation; no resourceVersion yet, and no status (that is the subresource's).
fn stamp_new(t: &Target, obj: &mut Value, name: &str, ns: &str) {
    if let Some(meta) = meta_mut(obj) {
        meta.insert("name".into(), json!(name));
        meta.insert("namespace".into(), json!(ns));
        meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
        meta.insert("generation".into(), json!(1));
        for server_set in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            meta.remove(server_set);
        }
    }
    if t.rt.has_status
        && let Value::Object(o) = obj
    {
        o.remove("status");
    }
}

/// An update names the stored object: its name, its current resourceVersion, and its uid if
/// the body has one (not another object of the same name).
fn check_update_preconditions(
    t: &Target,
    name: &str,
    old: &Value,
    obj: &Value,
) -> Result<(), Failure> {
    if str_at(obj, "/metadata/name").is_some_and(|n| n != name) {
        return Err(fail(
            400,
            "BadRequest",
            "the name of the object does not match the name on the URL",
        ));
    }
    match str_at(obj, "/metadata/resourceVersion") {
        None | Some("") => {
            return Err(invalid(
                t,
                name,
                "metadata.resourceVersion",
                "Invalid value: 0x0: must be specified for an update".into(),
            ));
        }
        Some(rv) if Some(rv) != str_at(old, "/metadata/resourceVersion") => {
            return Err(conflict(t));
        }
        Some(_) => {}
    }
    let old_uid = str_at(old, "/metadata/uid").unwrap_or("");
    if let Some(uid) = str_at(obj, "/metadata/uid")
        && !uid.is_empty()
        && uid != old_uid
    {
        return Err(precondition_failed("UID", uid, old_uid));
    }
    Ok(())
}

/// The status subresource and the main resource each keep the other's part.
fn keep_other_part(t: &Target, old: &Value, obj: &mut Value) {
    if !t.rt.has_status {
        return;
    }
    let status = if t.status {
        let status = obj.get("status").cloned();
        *obj = old.clone();
        status
    } else {
        old.get("status").cloned()
    };
    if let Value::Object(o) = obj {
        set_or_remove(o, "status", status);
    }
}

/// Server-owned metadata stays as it was.
fn keep_server_metadata(old: &Value, obj: &mut Value) {
    if let (Some(meta), Some(old_meta)) = (
        meta_mut(obj),
        old.get("metadata").and_then(Value::as_object),
    ) {
        for k in SERVER_OWNED {
            set_or_remove(meta, k, old_meta.get(k).cloned());
        }
    }
}

/// The metadata an object has none of is left out, as kube-apiserver's ObjectMeta encodes it
/// (`omitempty`): the update that removes the last finalizer leaves no `finalizers: []`.
fn drop_empty_metadata(obj: &mut Value) {
    if let Some(meta) = meta_mut(obj) {
        meta.retain(|k, v| {
            let empty = match v {
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            let omitted = matches!(
                k.as_str(),
                "finalizers" | "ownerReferences" | "managedFields" | "labels" | "annotations"
            );
            !(empty && omitted)
        });
    }
}

/// A spec change is a new generation.
fn bump_generation_on_spec_change(old: &Value, obj: &mut Value) {
    if old.get("spec") == obj.get("spec") {
        return;
    }
    let generation = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    if let Some(meta) = meta_mut(obj) {
        meta.insert("generation".into(), json!(generation + 1));
    }
}

impl EmbeddedApi {
    /// Stores an object as it is, status included, bypassing the API (demo data and fixtures).
    /// Not logged. `obj` must serialise with apiVersion, kind and metadata.name/namespace.
    pub fn seed<K: serde::Serialize + kube::Resource<DynamicType = ()>>(
        &self,
        obj: &K,
    ) -> anyhow::Result<()> {
        let mut v = serde_json::to_value(obj)?;
        let plural = K::plural(&()).to_string();
        let ns = obj
            .meta()
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let name = obj
            .meta()
            .name
            .clone()
            .ok_or_else(|| anyhow::anyhow!("seeded object without a name"))?;
        let mut st = self.lock();
        st.ensure_namespace(&ns);
        let rv = st.next_resource_version();
        let uid = st.next_uid();
        let meta =
            meta_mut(&mut v).ok_or_else(|| anyhow::anyhow!("seeded object without metadata"))?;
        meta.insert("namespace".into(), json!(ns));
        meta.insert("resourceVersion".into(), json!(rv.to_string()));
        meta.insert("uid".into(), json!(uid));
        meta.entry("creationTimestamp")
            .or_insert_with(|| json!(now_rfc3339()));
        meta.entry("generation").or_insert(json!(1));
        st.put_object((plural, ns, name), v, rv);
        Ok(())
    }
}

/// Test helpers: the world changing behind a service's back. With the `faults` feature only.
#[cfg(feature = "faults")]
impl EmbeddedApi {
    /// Changes a stored object as another writer would (resourceVersion bumped; generation
    /// bumped when the spec changed). Not logged. Returns whether the object exists.
    pub fn edit(
        &self,
        plural: &str,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> bool {
        let mut st = self.lock();
        let rv = st.next_resource_version();
        let key = (plural.to_string(), namespace.to_string(), name.to_string());
        let Some(mut obj) = st.objects.get(&key).map(|v| Value::clone(v)) else {
            return false;
        };
        let spec = obj.get("spec").cloned();
        f(&mut obj);
        let bump = obj.get("spec") != spec.as_ref();
        if let Some(meta) = meta_mut(&mut obj) {
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
            if bump {
                let g = meta.get("generation").and_then(Value::as_i64).unwrap_or(1);
                meta.insert("generation".into(), json!(g + 1));
            }
        }
        st.put_object(key, obj, rv);
        true
    }

    /// Removes a stored object as another writer would. Not logged.
    pub fn remove(&self, plural: &str, namespace: &str, name: &str) -> bool {
        let mut st = self.lock();
        st.take_object(&(plural.to_string(), namespace.to_string(), name.to_string()))
            .is_some()
    }

    /// A stored object as JSON (tests).
    pub fn object(&self, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        self.lock()
            .objects
            .get(&(plural.to_string(), namespace.to_string(), name.to_string()))
            .map(|v| Value::clone(v))
    }
}
