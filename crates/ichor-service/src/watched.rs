//! What the operations watch decodes each object into: its operation as a list row carries it
//! (or the operation that says it cannot be read), straight from the object's JSON, instead of a `DynamicObject` (a
//! `serde_json::Value` tree, several KB for a 15-machine operation) kept until the store took
//! it. kube's watcher decodes a list page of 500 objects at once, so a page held 500 trees;
//! now each tree lives only while its object is decoded.

use crate::{convert, tolerant};
use ichor_model::Operation;
use ichor_resources::TalosOperation;
use kube::api::ObjectMeta;
use serde::de::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;

/// One watched object.
#[derive(Clone, Debug)]
pub(crate) struct Watched {
    /// What names the object, and its resourceVersion (which the watcher resumes from).
    metadata: ObjectMeta,
    /// Its operation as a list row carries it (machines counted, not listed).
    pub(crate) op: Box<Operation>,
}

impl Watched {
    fn of(raw: Value) -> Watched {
        let text = |k: &str| {
            raw.get("metadata")
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .map(String::from)
        };
        let metadata = ObjectMeta {
            name: text("name"),
            namespace: text("namespace"),
            uid: text("uid"),
            resource_version: text("resourceVersion"),
            ..ObjectMeta::default()
        };
        let op = match tolerant::decode::<TalosOperation>(raw) {
            Ok(op) => convert::operation(&op),
            Err(u) => convert::unreadable_operation(&u),
        };
        Watched {
            metadata,
            op: Box::new(op.summarized()),
        }
    }
}

/// Any JSON is a watched object: one that is not a TalosOperation is the operation that says
/// so (a `DynamicObject` refused every object of a list page for one that was not an object).
impl<'de> Deserialize<'de> for Watched {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Watched, D::Error> {
        Value::deserialize(d).map(Watched::of)
    }
}

impl kube::Resource for Watched {
    type DynamicType = ();
    type Scope = <TalosOperation as kube::Resource>::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        TalosOperation::kind(dt)
    }
    fn group(dt: &()) -> Cow<'_, str> {
        TalosOperation::group(dt)
    }
    fn version(dt: &()) -> Cow<'_, str> {
        TalosOperation::version(dt)
    }
    fn plural(dt: &()) -> Cow<'_, str> {
        TalosOperation::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_decodes_into_its_operation_and_names() {
        let raw = json!({
            "apiVersion": "ichor.maesh.dev/v1alpha1",
            "kind": "TalosOperation",
            "metadata": {"name": "op", "namespace": "default", "uid": "u", "resourceVersion": "9"},
            "spec": {"cluster": "prod", "kind": "talos", "maxUnavailable": 1, "paused": false},
            "status": {"phase": "Completed", "machines": [{"name": "cp-1", "phase": "Completed"}]}
        });
        let w: Watched = serde_json::from_value(raw).unwrap();
        assert_eq!(w.metadata.resource_version.as_deref(), Some("9"));
        assert_eq!(w.op.name, "op");
        assert!(w.op.machines.is_empty());
        assert_eq!(
            w.op.summary.as_ref().map(|p| (p.done, p.total)),
            Some((1, 1))
        );
        assert!(w.op.unreadable.is_none());
    }

    /// A list item that is not even an object is still a watched object that says it cannot
    /// be read: the rest of its list page is not lost.
    #[test]
    fn anything_else_is_an_operation_that_says_it_cannot_be_read() {
        let page: Vec<Watched> = serde_json::from_value(json!([
            "not an object",
            {"metadata": {"name": "bad", "namespace": "default"}, "spec": {"kind": 7}},
        ]))
        .unwrap();
        assert!(page.iter().all(|w| w.op.unreadable.is_some()));
        assert_eq!(page[1].op.name, "bad");
        assert_eq!(page[1].metadata.name.as_deref(), Some("bad"));
    }
}
