//! Listing as Kubernetes controllers read: object by object. One object that cannot be read as
//! its type (a status written by hand with the wrong type, a field from a newer writer) is an
//! [`Unreadable`] that says which object and why, and every other object of the list is read.
//! The list is read as text and decoded here, never by kube's typed `list`, which fails whole
//! on one bad item (and logs the response body).

use anyhow::Context as _;
use ichor_resources::{
    Machine, MachineSpec, TalosCluster, TalosClusterSpec, TalosClusterStatus, TalosOperation,
    TalosOperationSpec, TalosOperationStatus,
};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::api::{Api, ListParams};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most characters of a decoding error kept (it may quote a value of the object).
const MAX_WHY: usize = 200;

/// One reading of an object: kind, namespace, name, uid, resourceVersion.
pub(crate) type Identity = (String, String, String, String, String);

/// An object of a list that could not be read as its type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Unreadable {
    /// The kind, as the API names it (`TalosOperation`).
    pub(crate) kind: String,
    pub(crate) api_version: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
    /// The object as JSON, to pick out what can be read (`spec.cluster`).
    pub(crate) raw: Value,
    /// Which part does not decode, and why: short, and without control characters.
    pub(crate) why: String,
}

impl Unreadable {
    /// A string field of the object (`/spec/cluster`), when it is one.
    pub(crate) fn str_at(&self, pointer: &str) -> Option<&str> {
        self.raw.pointer(pointer).and_then(Value::as_str)
    }

    /// The reference an Event about it carries.
    pub(crate) fn reference(&self) -> ObjectReference {
        ObjectReference {
            api_version: Some(self.api_version.clone()),
            kind: Some(self.kind.clone()),
            name: Some(self.name.clone()),
            namespace: Some(self.namespace.clone()),
            uid: self.uid.clone(),
            resource_version: self.resource_version.clone(),
            ..Default::default()
        }
    }

    /// What tells this reading of the object from another: a fixed object (or one broken
    /// again) has another resourceVersion.
    pub(crate) fn identity(&self) -> Identity {
        (
            self.kind.clone(),
            self.namespace.clone(),
            self.name.clone(),
            self.uid.clone().unwrap_or_default(),
            self.resource_version.clone().unwrap_or_default(),
        )
    }
}

/// A list read object by object.
#[derive(Debug)]
pub(crate) struct Listed<K> {
    pub(crate) items: Vec<K>,
    pub(crate) unreadable: Vec<Unreadable>,
}

/// A resource read part by part: which part of an object does not decode.
pub(crate) trait Tolerant: DeserializeOwned + Resource<DynamicType = ()> {
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

/// A decoding error as a person reads it: which part, what; no control characters, at most
/// [`MAX_WHY`] characters.
fn why(part: Option<&str>, e: &str) -> String {
    let text = match part {
        Some(p) => format!("{p}: {e}"),
        None => e.to_string(),
    };
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() <= MAX_WHY {
        return clean;
    }
    let mut cut: String = clean.chars().take(MAX_WHY - 1).collect();
    cut.push('…');
    cut
}

/// One item of a list: the object, or why it cannot be read.
pub(crate) fn decode<K: Tolerant>(item: Value) -> Result<K, Box<Unreadable>> {
    match K::deserialize(&item) {
        Ok(k) => Ok(k),
        Err(e) => {
            let text = |p: &str| item.pointer(p).and_then(Value::as_str).map(str::to_string);
            let (part, e) = match K::bad_part(&item) {
                Some((part, e)) => (Some(part), e),
                None => (None, e.to_string()),
            };
            Err(Box::new(Unreadable {
                kind: K::kind(&()).to_string(),
                api_version: K::api_version(&()).to_string(),
                namespace: text("/metadata/namespace").unwrap_or_default(),
                name: text("/metadata/name").unwrap_or_default(),
                uid: text("/metadata/uid"),
                resource_version: text("/metadata/resourceVersion"),
                why: why(part, &e),
                raw: item,
            }))
        }
    }
}

/// Every `K` of every namespace, read object by object.
pub(crate) async fn list<K: Tolerant>(client: &kube::Client) -> anyhow::Result<Listed<K>> {
    let api: Api<K> = Api::all(client.clone());
    let req = kube::core::Request::new(api.resource_url())
        .list(&ListParams::default())
        .context("building the list request")?;
    let body = client.request_text(req).await?;
    let list: Value = serde_json::from_str(&body).context("the list is not JSON")?;
    let items = match list {
        Value::Object(mut o) => match o.remove("items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let mut listed = Listed {
        items: Vec::with_capacity(items.len()),
        unreadable: Vec::new(),
    };
    for item in items {
        match decode::<K>(item) {
            Ok(k) => listed.items.push(k),
            Err(u) => listed.unreadable.push(*u),
        }
    }
    Ok(listed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unreadable_object_says_which_part_and_why_briefly() {
        let raw = json!({
            "apiVersion": "ichor.maesh.dev/v1alpha1",
            "kind": "TalosOperation",
            "metadata": {"name": "o", "namespace": "a", "uid": "u-1", "resourceVersion": "7"},
            "spec": {"cluster": "c1", "kind": "talos"},
            "status": {"phase": 42},
        });
        let u = decode::<TalosOperation>(raw).err();
        let u = u.as_ref();
        assert_eq!(u.map(|u| u.name.as_str()), Some("o"));
        assert_eq!(u.map(|u| u.namespace.as_str()), Some("a"));
        assert_eq!(u.and_then(|u| u.uid.as_deref()), Some("u-1"));
        assert_eq!(u.and_then(|u| u.resource_version.as_deref()), Some("7"));
        assert_eq!(u.map(|u| u.kind.as_str()), Some("TalosOperation"));
        assert_eq!(u.and_then(|u| u.str_at("/spec/cluster")), Some("c1"));
        let why = u.map(|u| u.why.clone()).unwrap_or_default();
        assert!(
            why.starts_with("status: invalid type: integer `42`"),
            "{why}"
        );

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
}
