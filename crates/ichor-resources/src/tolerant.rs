//! Reading tolerantly, as Kubernetes controllers read: a list is decoded object by object, so
//! one object that cannot be read as its type (a status written by hand with the wrong type, a
//! field from a newer writer) becomes an [`Unreadable`] that says which object and why, and the
//! rest of the list is read. The answer is read as text and decoded here, never by kube's typed
//! `list`/`get`, which fail whole on one bad item and log the whole response body.
//!
//! One decoder for the service and the demo's controller; what each does with an answer that is
//! not a list at all, and how it pages, is its own.

use crate::{
    IchorInstallation, IchorInstallationSpec, Machine, MachineSpec, TalosCluster, TalosClusterSpec,
    TalosClusterStatus, TalosOperation, TalosOperationSpec, TalosOperationStatus,
};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::api::ObjectMeta;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most characters of a decoding error kept (it may quote a value of the object).
pub const MAX_WHY: usize = 200;

/// An object that could not be read as its type: its kind, its metadata (as far as it reads),
/// the object as JSON (to pick out what can be read, such as `spec.cluster`), and why, short and
/// inert.
#[derive(Clone, Debug, PartialEq)]
pub struct Unreadable {
    /// The kind, as the API names it (`TalosOperation`).
    pub kind: String,
    pub api_version: String,
    /// Boxed: most objects read, and a `Result` with this as its error stays small.
    pub meta: Box<ObjectMeta>,
    pub raw: Value,
    /// Which part does not decode, and why: at most [`MAX_WHY`] characters, controls inert.
    pub why: String,
}

impl Unreadable {
    pub fn name(&self) -> String {
        self.meta.name.clone().unwrap_or_default()
    }

    pub fn namespace(&self) -> String {
        self.meta.namespace.clone().unwrap_or_default()
    }

    /// A string field of the object (`/spec/cluster`), when it is one.
    pub fn str_at(&self, pointer: &str) -> Option<&str> {
        self.raw.pointer(pointer).and_then(Value::as_str)
    }

    /// Whether this object may belong to `cluster`: its `spec.cluster` says so, or cannot be
    /// read.
    pub fn may_belong_to(&self, cluster: &str) -> bool {
        self.str_at("/spec/cluster").is_none_or(|c| c == cluster)
    }

    /// The reference an Event about it carries.
    pub fn reference(&self) -> ObjectReference {
        ObjectReference {
            api_version: Some(self.api_version.clone()),
            kind: Some(self.kind.clone()),
            name: self.meta.name.clone(),
            namespace: self.meta.namespace.clone(),
            uid: self.meta.uid.clone(),
            resource_version: self.meta.resource_version.clone(),
            ..Default::default()
        }
    }
}

/// A decoding error as a person reads it: which part, what, at most [`MAX_WHY`] characters,
/// control characters made inert.
pub fn why(part: Option<&str>, e: &dyn std::fmt::Display) -> String {
    let text = match part {
        Some(p) => format!("{p}: {e}"),
        None => e.to_string(),
    };
    ichor_model::inert::truncate(&ichor_model::inert::sanitize(&text), MAX_WHY)
}

/// A resource read part by part: which part of an object does not decode.
pub trait Tolerant: DeserializeOwned + Resource<DynamicType = ()> {
    /// The first part of `raw` (other than the metadata) that does not decode, and why.
    fn bad_part(raw: &Value) -> Option<(&'static str, String)>;
}

/// `raw[part]` decodes as `T` (an absent part is not this part's fault).
fn check<T: DeserializeOwned>(raw: &Value, part: &'static str) -> Option<(&'static str, String)> {
    let v = raw.get(part)?;
    T::deserialize(v).err().map(|e| (part, e.to_string()))
}

impl Tolerant for TalosOperation {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<TalosOperationSpec>(raw, "spec")
            .or_else(|| check::<Option<TalosOperationStatus>>(raw, "status"))
    }
}

impl Tolerant for TalosCluster {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<TalosClusterSpec>(raw, "spec")
            .or_else(|| check::<Option<TalosClusterStatus>>(raw, "status"))
    }
}

impl Tolerant for Machine {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<MachineSpec>(raw, "spec")
    }
}

impl Tolerant for IchorInstallation {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<IchorInstallationSpec>(raw, "spec")
    }
}

/// The start claims are Leases: anyone's, so read as tolerantly as the rest.
impl Tolerant for Lease {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<LeaseSpec>(raw, "spec")
    }
}

/// One object: `K`, or what can be said of it.
pub fn decode<K: Tolerant>(raw: Value) -> Result<K, Unreadable> {
    let whole = match K::deserialize(&raw) {
        Ok(k) => return Ok(k),
        Err(e) => e,
    };
    let meta_value = raw.get("metadata").cloned().unwrap_or(Value::Null);
    let (meta, why) = match ObjectMeta::deserialize(&meta_value) {
        Err(e) => {
            // Even the metadata is wrong: keep what names the object.
            let s = |k: &str| meta_value.get(k).and_then(Value::as_str).map(String::from);
            let meta = ObjectMeta {
                name: s("name"),
                namespace: s("namespace"),
                uid: s("uid"),
                resource_version: s("resourceVersion"),
                ..ObjectMeta::default()
            };
            (meta, why(Some("metadata"), &e))
        }
        Ok(meta) => {
            let why = match K::bad_part(&raw) {
                Some((part, e)) => why(Some(part), &e),
                None => why(None, &whole),
            };
            (meta, why)
        }
    };
    Err(Unreadable {
        kind: K::kind(&()).into_owned(),
        api_version: K::api_version(&()).into_owned(),
        meta: Box::new(meta),
        raw,
        why,
    })
}

/// A list answer (or one chunk of it, `limit`/`continue`): its objects, each decoded on its
/// own, those that cannot be read, and the token of the next chunk, if any.
pub type Chunk<K> = (Vec<K>, Vec<Unreadable>, Option<String>);

/// An answer that is not a Kubernetes list at all: why, short and inert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAList(pub String);

impl std::fmt::Display for NotAList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAList {}

/// A list answer's items, each decoded on its own (see [`Chunk`]).
pub fn decode_list<K: Tolerant>(body: &str) -> Result<Chunk<K>, NotAList> {
    let mut list: Value = serde_json::from_str(body).map_err(|e| NotAList(why(None, &e)))?;
    let next = list
        .pointer("/metadata/continue")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let items = match list.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items,
        Some(Value::Null) | None => Vec::new(),
        Some(_) => return Err(NotAList("items is not a list".into())),
    };
    let (mut good, mut bad) = (Vec::with_capacity(items.len()), Vec::new());
    for item in items {
        match decode::<K>(item) {
            Ok(k) => good.push(k),
            Err(u) => bad.push(u),
        }
    }
    Ok((good, bad, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(name: &str, status: Value) -> Value {
        json!({
            "apiVersion": "ichor.maesh.dev/v1alpha1",
            "kind": "TalosOperation",
            "metadata": {"name": name, "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
            "spec": {"cluster": "c1", "kind": "talos", "maxUnavailable": 1},
            "status": status,
        })
    }

    #[test]
    fn one_bad_object_is_one_unreadable_item() {
        let body = json!({
            "apiVersion": "ichor.maesh.dev/v1alpha1",
            "kind": "TalosOperationList",
            "metadata": {"continue": "next"},
            "items": [
                op("good", json!({"phase": "Running"})),
                op("bad", json!({"phase": 42})),
                op("other", json!({"phase": "Completed"})),
            ],
        })
        .to_string();
        let (good, bad, next) = decode_list::<TalosOperation>(&body).unwrap();
        assert_eq!((good.len(), bad.len()), (2, 1));
        assert_eq!(next.as_deref(), Some("next"));
        let u = &bad[0];
        assert_eq!(
            (u.name().as_str(), u.namespace().as_str()),
            ("bad", "default")
        );
        assert_eq!(u.kind, "TalosOperation");
        let r = u.reference();
        assert_eq!(
            (r.uid.as_deref(), r.resource_version.as_deref()),
            (Some("u-1"), Some("7"))
        );
        assert!(
            u.why.starts_with("status: invalid type: integer `42`"),
            "{}",
            u.why
        );
        assert_eq!(u.str_at("/spec/cluster"), Some("c1"));
        assert!(u.may_belong_to("c1") && !u.may_belong_to("c2"));
    }

    #[test]
    fn why_is_short_and_inert() {
        let body = json!({"items": [op("huge", json!({"machines": "y".repeat(100_000)}))]});
        let (_, bad, _) = decode_list::<TalosOperation>(&body.to_string()).unwrap();
        assert!(bad[0].why.chars().count() <= MAX_WHY, "{}", bad[0].why);
        let long = json!({
            "metadata": {"name": "m"},
            "spec": {"cluster": "c1", "role": "worker", "approved": format!("\u{1b}[2J{}", "x".repeat(5000))},
        });
        let why = decode::<Machine>(long)
            .err()
            .map(|u| u.why)
            .unwrap_or_default();
        assert!(why.starts_with("spec: "), "{why}");
        assert!(why.chars().count() <= MAX_WHY, "{}", why.len());
        assert!(!why.chars().any(char::is_control), "{why:?}");
    }

    #[test]
    fn an_answer_that_is_not_a_list_says_so() {
        assert!(decode_list::<TalosOperation>("<html>").is_err());
        let e = decode_list::<TalosOperation>(r#"{"items": 5}"#).unwrap_err();
        assert_eq!(e.to_string(), "items is not a list");
        let (good, bad, next) = decode_list::<TalosOperation>(r#"{"items": null}"#).unwrap();
        assert!(good.is_empty() && bad.is_empty() && next.is_none());
    }

    #[test]
    fn broken_metadata_still_names_the_object() {
        let mut raw = op("m", json!({}));
        raw["metadata"]["labels"] = json!(5);
        let u = decode::<TalosOperation>(raw).unwrap_err();
        assert_eq!(
            (u.name().as_str(), u.namespace().as_str()),
            ("m", "default")
        );
        assert_eq!(u.meta.resource_version.as_deref(), Some("7"));
        assert!(u.why.starts_with("metadata: "), "{}", u.why);
    }
}
