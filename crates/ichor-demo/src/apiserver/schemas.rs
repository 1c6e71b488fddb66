//! The schema of every kind served, generated from the types we already have, never written
//! by hand: the ichor kinds' from their CRDs (`crds`: kube-derive runs schemars over the Rust
//! types), the built-in kinds' from k8s-openapi's `schemars` impls (generated from
//! kube-apiserver's own OpenAPI document). They serve field validation and pruning (`structural`) and the OpenAPI
//! documents kubectl reads (`openapi`).
//!
//! All of them sit in one map of definitions named as kube-apiserver names them
//! (`io.k8s.api.coordination.v1.Lease`, `dev.maesh.ichor.v1alpha1.TalosOperation`), referred
//! to as `#/components/schemas/NAME`; each kind's definition carries its
//! `x-kubernetes-group-version-kind`, which is how kubectl finds it.

use super::crds::definitions;
use super::kinds::{
    CORE, CRDS, ENDPOINT_SLICES, EVENTS, EVENTS_V1, LEASES, NAMESPACES, NODES, RESOURCES,
    ResourceType,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Endpoints, Event, Namespace, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

/// Where definitions are referred to from.
pub(crate) const REF_PREFIX: &str = "#/components/schemas/";

/// The definitions of every kind served, and of everything they refer to.
pub(crate) struct Schemas {
    pub(crate) defs: Map<String, Value>,
}

/// The schemas, built once.
pub(crate) fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(build)
}

/// The name of the definition of a kind: kube-apiserver's (`io.k8s.api.<group>.<version>.Kind`
/// for the built-in kinds, the reversed group for custom resources).
pub(crate) fn definition_name(rt: &ResourceType) -> String {
    let group = match rt.group {
        "" => "core".to_string(),
        "apiextensions.k8s.io" => {
            return format!(
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{}.{}",
                rt.version, rt.kind
            );
        }
        g if g.ends_with(".k8s.io") => g.trim_end_matches(".k8s.io").to_string(),
        g => {
            let reversed: Vec<&str> = g.split('.').rev().collect();
            return format!("{}.{}.{}", reversed.join("."), rt.version, rt.kind);
        }
    };
    format!("io.k8s.api.{group}.{}.{}", rt.version, rt.kind)
}

/// Every kind served, once each (the core Events are served twice: as `v1` and as
/// `events.k8s.io/v1`, each with its own schema).
pub(crate) fn served_kinds() -> Vec<ResourceType> {
    let mut kinds: Vec<ResourceType> = RESOURCES.to_vec();
    kinds.extend([
        LEASES,
        EVENTS,
        EVENTS_V1,
        ENDPOINT_SLICES,
        NAMESPACES,
        NODES,
        CRDS,
    ]);
    kinds.extend(CORE);
    kinds
}

impl Schemas {
    /// The definition of the kind `rt`.
    pub(crate) fn of(&self, rt: &ResourceType) -> Option<&Value> {
        self.defs.get(&definition_name(rt))
    }

    /// `schema` with its reference followed (`$ref`, or the `allOf` of one that carries a
    /// description beside a reference).
    pub(crate) fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        let mut s = schema;
        for _ in 0..8 {
            if let Some(name) = s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(REF_PREFIX))
            {
                match self.defs.get(name) {
                    Some(d) => s = d,
                    None => return s,
                }
            } else if let Some([one]) = s.get("allOf").and_then(Value::as_array).map(Vec::as_slice)
            {
                s = one;
            } else {
                return s;
            }
        }
        s
    }
}

fn build() -> Schemas {
    let mut generator: SchemaGenerator = SchemaSettings::openapi3().into_generator();
    let meta_ref = generator.subschema_for::<ObjectMeta>().to_value();
    generator.subschema_for::<Lease>();
    generator.subschema_for::<Event>();
    generator.subschema_for::<k8s_openapi::api::events::v1::Event>();
    generator.subschema_for::<Service>();
    generator.subschema_for::<Endpoints>();
    generator.subschema_for::<Pod>();
    generator.subschema_for::<EndpointSlice>();
    generator.subschema_for::<Namespace>();
    generator.subschema_for::<Node>();
    generator.subschema_for::<CustomResourceDefinition>();
    let mut defs = generator.take_definitions(true);
    for (rt, crd) in definitions() {
        let mut schema = serde_json::to_value(crd)
            .ok()
            .and_then(|v| {
                v.pointer("/spec/versions/0/schema/openAPIV3Schema")
                    .cloned()
            })
            .unwrap_or_else(|| json!({"type": "object"}));
        // kube-apiserver serves a custom resource's metadata as ObjectMeta.
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert("metadata".into(), meta_ref.clone());
            for field in ["apiVersion", "kind"] {
                props
                    .entry(field)
                    .or_insert_with(|| json!({"type": "string"}));
            }
        }
        defs.insert(definition_name(&rt), schema);
    }
    for rt in served_kinds() {
        let gvk = json!([{"group": rt.group, "version": rt.version, "kind": rt.kind}]);
        if let Some(Value::Object(d)) = defs.get_mut(&definition_name(&rt)) {
            d.insert("x-kubernetes-group-version-kind".into(), gvk);
        }
    }
    Schemas { defs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_kind_has_a_schema_with_its_kind() {
        let s = schemas();
        for rt in served_kinds() {
            let Some(d) = s.of(&rt) else {
                panic!("no schema for {}", definition_name(&rt));
            };
            assert_eq!(
                d["x-kubernetes-group-version-kind"][0]["kind"],
                rt.kind,
                "{}",
                definition_name(&rt)
            );
            assert!(d["properties"]["metadata"].is_object(), "{}", rt.kind);
        }
        assert_eq!(
            definition_name(&RESOURCES[3]),
            "dev.maesh.ichor.v1alpha1.TalosOperation"
        );
        assert_eq!(definition_name(&LEASES), "io.k8s.api.coordination.v1.Lease");
        assert_eq!(definition_name(&EVENTS), "io.k8s.api.core.v1.Event");
        let op = s.of(&RESOURCES[3]).unwrap();
        let max = s.resolve(&op["properties"]["spec"]);
        assert_eq!(max["properties"]["maxUnavailable"]["type"], "integer");
        let meta = s.resolve(&op["properties"]["metadata"]);
        assert!(meta["properties"]["finalizers"].is_object(), "{meta}");
    }
}
