//! The kube-rs side of the contract table: each check drives kube's own client and types.

use super::{Check, KubeCheck};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_resources::TalosOperation;
use k8s_openapi::api::core::v1::{Namespace, Node};
use kube::Client;
use kube::api::{Api, ListParams, PostParams};

/// The API status of a refused call: (code, reason, message).
pub fn status(e: kube::Error) -> Result<kube::core::Status, String> {
    match e {
        kube::Error::Api(s) => Ok(*s),
        other => Err(format!("expected an API status, got {other:?}")),
    }
}

fn is<T: std::fmt::Debug + PartialEq>(what: &str, have: T, want: T) -> Check {
    if have == want {
        Ok(())
    } else {
        Err(format!("{what}: {have:?}, wanted {want:?}"))
    }
}

pub fn health(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        for path in ["/healthz", "/readyz", "/livez"] {
            let req = http::Request::get(path).body(Vec::new()).unwrap();
            let text = client.request_text(req).await.map_err(|e| e.to_string())?;
            is(path, text.as_str(), "ok")?;
        }
        Ok(())
    })
}

pub fn namespaces(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ns: Api<Namespace> = Api::all(client);
        let list = ns
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        let names: Vec<String> = list
            .items
            .iter()
            .filter_map(|n| n.metadata.name.clone())
            .collect();
        for want in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            if !names.iter().any(|n| n == want) {
                return Err(format!("{want} missing from {names:?}"));
            }
        }
        let default = ns.get("default").await.map_err(|e| e.to_string())?;
        is(
            "phase",
            default.status.and_then(|s| s.phase).as_deref(),
            Some("Active"),
        )?;
        let missing = status(ns.get("nope").await.err().ok_or("nope exists")?)?;
        is("code", missing.code, 404)
    })
}

pub fn create_in_missing_namespace(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "nope");
        let mut o = common_op("op2");
        o.metadata.namespace = Some("nope".into());
        let e = ops
            .create(&PostParams::default(), &o)
            .await
            .err()
            .ok_or("created")?;
        let s = status(e)?;
        is("code", s.code, 404)?;
        is("reason", s.reason.as_str(), "NotFound")?;
        is(
            "message",
            s.message.as_str(),
            "namespaces \"nope\" not found",
        )
    })
}

pub fn nodes(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let nodes: Api<Node> = Api::all(client);
        let list = nodes
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        is("nodes", list.items.len(), 0)?;
        let e = status(nodes.get("n1").await.err().ok_or("n1 exists")?)?;
        is("code", e.code, 404)
    })
}

/// A new operation `name` on c1.
pub fn common_op(name: &str) -> TalosOperation {
    crate::common::op(name, "c1", "talos", 1)
}

pub fn no_op_write(client: Client, _: EmbeddedApi) -> KubeCheck {
    use futures::StreamExt;
    use kube::api::{Patch, PatchParams, WatchParams};
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let patch = Patch::Merge(serde_json::json!({"metadata": {"labels": {"a": "b"}}}));
        let first = ops
            .patch("op1", &PatchParams::default(), &patch)
            .await
            .map_err(|e| e.to_string())?;
        let rv = first.metadata.resource_version.clone().unwrap_or_default();
        let again = ops
            .patch("op1", &PatchParams::default(), &patch)
            .await
            .map_err(|e| e.to_string())?;
        is(
            "resourceVersion",
            again.metadata.resource_version.as_deref(),
            Some(rv.as_str()),
        )?;
        let mut replaced = again.clone();
        replaced.metadata.managed_fields = None;
        let put = ops
            .replace("op1", &PostParams::default(), &replaced)
            .await
            .map_err(|e| e.to_string())?;
        is(
            "resourceVersion",
            put.metadata.resource_version.as_deref(),
            Some(rv.as_str()),
        )?;
        let events: Vec<_> = ops
            .watch(&WatchParams::default().timeout(1), &rv)
            .await
            .map_err(|e| e.to_string())?
            .collect()
            .await;
        is("watch events after the no-op writes", events.len(), 0)
    })
}

fn dynamic_ops(client: Client) -> Api<kube::api::DynamicObject> {
    let ar = kube::api::ApiResource::erase::<TalosOperation>(&());
    Api::namespaced_with(client, "default", &ar)
}

fn dynamic_op(name: &str, spec: serde_json::Value) -> Result<kube::api::DynamicObject, String> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "ichor.maesh.dev/v1alpha1", "kind": "TalosOperation",
        "metadata": {"name": name}, "spec": spec
    }))
    .map_err(|e| e.to_string())
}

pub fn invalid_names_the_field(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops = dynamic_ops(client);
        let o = dynamic_op("op2", serde_json::json!({"cluster": "c1", "kind": "bogus"}))?;
        let s = status(
            ops.create(&PostParams::default(), &o)
                .await
                .err()
                .ok_or("created")?,
        )?;
        is("code", s.code, 422)?;
        let causes = s.details.map(|d| d.causes).unwrap_or_default();
        let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
        is("cause fields", fields, vec!["spec.kind"])?;
        is(
            "cause reason",
            causes[0].reason.as_str(),
            "FieldValueNotSupported",
        )
    })
}

pub fn wrong_type_names_the_type(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops = dynamic_ops(client);
        let spec = serde_json::json!({"cluster": "c1", "kind": "talos", "maxUnavailable": "two"});
        let o = dynamic_op("op2", spec)?;
        let s = status(
            ops.create(&PostParams::default(), &o)
                .await
                .err()
                .ok_or("created")?,
        )?;
        is("code", s.code, 422)?;
        is(
            "message",
            s.message.as_str(),
            "TalosOperation.ichor.maesh.dev \"op2\" is invalid: spec.maxUnavailable: Invalid value: \"string\": spec.maxUnavailable in body must be of type integer: \"string\"",
        )?;
        let causes = s.details.map(|d| d.causes).unwrap_or_default();
        is(
            "cause reason",
            causes.first().map(|c| c.reason.clone()),
            Some("FieldValueTypeInvalid".into()),
        )
    })
}

pub fn strict_refuses_unknown_fields(client: Client, _: EmbeddedApi) -> KubeCheck {
    use kube::api::{Patch, PatchParams};
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let patch = Patch::Merge(serde_json::json!({"spec": {"foo": "bar"}}));
        let e = ops
            .patch("op1", &PatchParams::default().validation_strict(), &patch)
            .await
            .err()
            .ok_or("patched")?;
        let s = status(e)?;
        is("code", s.code, 400)?;
        is(
            "message",
            s.message.as_str(),
            "TalosOperation in version \"v1alpha1\" cannot be handled as a TalosOperation: strict decoding error: unknown field \"spec.foo\"",
        )
    })
}

pub fn default_prunes(client: Client, api: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops = dynamic_ops(client);
        let spec = serde_json::json!({"cluster": "c1", "kind": "talos", "foo": "bar"});
        let made = ops
            .create(&PostParams::default(), &dynamic_op("op2", spec)?)
            .await
            .map_err(|e| e.to_string())?;
        is(
            "returned spec.foo",
            made.data["spec"].get("foo").cloned(),
            None,
        )?;
        let stored = api
            .object("talosoperations", "default", "op2")
            .ok_or("not stored")?;
        is("stored spec.foo", stored["spec"].get("foo").cloned(), None)
    })
}

pub fn json_patch(client: Client, _: EmbeddedApi) -> KubeCheck {
    use kube::api::{Patch, PatchParams};
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let ok = serde_json::from_value(serde_json::json!([
            {"op": "test", "path": "/spec/paused", "value": false},
            {"op": "replace", "path": "/spec/paused", "value": true}
        ]))
        .map_err(|e| e.to_string())?;
        let patched = ops
            .patch("op1", &PatchParams::default(), &Patch::<()>::Json(ok))
            .await
            .map_err(|e| e.to_string())?;
        is("paused", patched.spec.paused, true)?;
        let failing = serde_json::from_value(serde_json::json!([
            {"op": "test", "path": "/spec/paused", "value": false}
        ]))
        .map_err(|e| e.to_string())?;
        let e = ops
            .patch("op1", &PatchParams::default(), &Patch::<()>::Json(failing))
            .await
            .err()
            .ok_or("a failed test applied")?;
        is("code", status(e)?.code, 422)
    })
}

pub fn strategic_merge_patch(client: Client, _: EmbeddedApi) -> KubeCheck {
    use k8s_openapi::api::coordination::v1::Lease;
    use kube::api::{Patch, PatchParams};
    Box::pin(async move {
        let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
        let lease: Lease = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "l1"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}
        }))
        .map_err(|e| e.to_string())?;
        leases
            .create(&PostParams::default(), &lease)
            .await
            .map_err(|e| e.to_string())?;
        let smp = Patch::Strategic(serde_json::json!({"spec": {"holderIdentity": "b"}}));
        let patched = leases
            .patch("l1", &PatchParams::default(), &smp)
            .await
            .map_err(|e| e.to_string())?;
        let spec = patched.spec.unwrap_or_default();
        is("holder", spec.holder_identity.as_deref(), Some("b"))?;
        is("duration", spec.lease_duration_seconds, Some(15))?;
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let smp = Patch::Strategic(serde_json::json!({"spec": {"paused": true}}));
        let e = ops
            .patch("op1", &PatchParams::default(), &smp)
            .await
            .err()
            .ok_or("patched")?;
        is("code", status(e)?.code, 415)
    })
}

pub fn finalizers(client: Client, _: EmbeddedApi) -> KubeCheck {
    use futures::StreamExt;
    use kube::api::{DeleteParams, Patch, PatchParams, WatchEvent, WatchParams};
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let add = Patch::Merge(serde_json::json!({"metadata": {"finalizers": ["example.com/x"]}}));
        let held = ops
            .patch("op1", &PatchParams::default(), &add)
            .await
            .map_err(|e| e.to_string())?;
        let rv = held.metadata.resource_version.clone().unwrap_or_default();
        ops.delete("op1", &DeleteParams::default())
            .await
            .map_err(|e| e.to_string())?;
        let deleting = ops.get("op1").await.map_err(|e| e.to_string())?;
        is(
            "deletionTimestamp set",
            deleting.metadata.deletion_timestamp.is_some(),
            true,
        )?;
        let more = Patch::Merge(
            serde_json::json!({"metadata": {"finalizers": ["example.com/x", "example.com/y"]}}),
        );
        let e = ops
            .patch("op1", &PatchParams::default(), &more)
            .await
            .err()
            .ok_or("added")?;
        is("code", status(e)?.code, 422)?;
        let release = Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}}));
        ops.patch("op1", &PatchParams::default(), &release)
            .await
            .map_err(|e| e.to_string())?;
        let gone = status(ops.get("op1").await.err().ok_or("still there")?)?;
        is("code", gone.code, 404)?;
        let events: Vec<String> = ops
            .watch(&WatchParams::default().timeout(1), &rv)
            .await
            .map_err(|e| e.to_string())?
            .filter_map(|e| async move {
                match e {
                    Ok(WatchEvent::Added(_)) => Some("ADDED".to_string()),
                    Ok(WatchEvent::Modified(_)) => Some("MODIFIED".to_string()),
                    Ok(WatchEvent::Deleted(_)) => Some("DELETED".to_string()),
                    _ => None,
                }
            })
            .collect()
            .await;
        is(
            "watch events",
            events,
            vec!["MODIFIED".to_string(), "DELETED".to_string()],
        )
    })
}

async fn get_json(client: &Client, path: &str) -> Result<serde_json::Value, String> {
    let req = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    client
        .request(req)
        .await
        .map_err(|e| format!("{path}: {e}"))
}

pub fn openapi(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let index = get_json(&client, "/openapi/v3").await?;
        for gv in [
            "api/v1",
            "apis/coordination.k8s.io/v1",
            "apis/ichor.maesh.dev/v1alpha1",
        ] {
            let url = index["paths"][gv]["serverRelativeURL"]
                .as_str()
                .ok_or(format!("{gv} not indexed"))?;
            let doc = get_json(&client, url).await?;
            let schemas = doc["components"]["schemas"]
                .as_object()
                .ok_or("no schemas")?;
            let kinds = schemas
                .values()
                .filter(|s| s.get("x-kubernetes-group-version-kind").is_some())
                .count();
            if kinds == 0 {
                return Err(format!("{gv}: no schema names its kind"));
            }
        }
        let ichor = get_json(&client, "/openapi/v3/apis/ichor.maesh.dev/v1alpha1").await?;
        let op = &ichor["components"]["schemas"]["dev.maesh.ichor.v1alpha1.TalosOperation"];
        is(
            "spec.maxUnavailable type",
            op["properties"]["spec"]["properties"]["maxUnavailable"]["type"].as_str(),
            Some("integer"),
        )?;
        let v2 = get_json(&client, "/openapi/v2").await?;
        is("v2 swagger", v2["swagger"].as_str(), Some("2.0"))?;
        is(
            "v2 Lease",
            v2["definitions"]["io.k8s.api.coordination.v1.Lease"].is_object(),
            true,
        )
    })
}

/// A length-delimited protobuf field (every length here is under 128).
fn ld(field: u8, bytes: &[u8]) -> Vec<u8> {
    [&[(field << 3) | 2, bytes.len() as u8][..], bytes].concat()
}

pub fn access_review_protobuf(client: Client, _: EmbeddedApi) -> KubeCheck {
    use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
    Box::pin(async move {
        // runtime.Unknown{typeMeta, raw: SelfSubjectAccessReview{spec{resourceAttributes}}}
        let attrs = [
            ld(1, b"default"),
            ld(2, b"delete"),
            ld(5, b"talosoperations"),
        ]
        .concat();
        let review = ld(2, &ld(1, &attrs));
        let type_meta = [
            ld(1, b"authorization.k8s.io/v1"),
            ld(2, b"SelfSubjectAccessReview"),
        ]
        .concat();
        let body = [&b"k8s\0"[..], &ld(1, &type_meta), &ld(2, &review)].concat();
        let req = http::Request::post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
            .header("content-type", "application/vnd.kubernetes.protobuf")
            .header(
                "accept",
                "application/vnd.kubernetes.protobuf, application/json",
            )
            .body(body)
            .map_err(|e| e.to_string())?;
        let answered: SelfSubjectAccessReview =
            client.request(req).await.map_err(|e| e.to_string())?;
        is("allowed", answered.status.map(|s| s.allowed), Some(true))?;
        let api: Api<SelfSubjectAccessReview> = Api::all(client);
        let json_review: SelfSubjectAccessReview = serde_json::from_value(serde_json::json!({
            "spec": {"resourceAttributes": {"verb": "escalate", "resource": "roles", "namespace": "default"}}
        }))
        .map_err(|e| e.to_string())?;
        let admin = api
            .create(&PostParams::default(), &json_review)
            .await
            .map_err(|e| e.to_string())?;
        is(
            "admin escalate",
            admin.status.map(|s| s.allowed),
            Some(true),
        )
    })
}

pub fn rules_review(client: Client, _: EmbeddedApi) -> KubeCheck {
    use k8s_openapi::api::authorization::v1::SelfSubjectRulesReview;
    Box::pin(async move {
        let api: Api<SelfSubjectRulesReview> = Api::all(client);
        let review: SelfSubjectRulesReview =
            serde_json::from_value(serde_json::json!({"spec": {"namespace": "default"}}))
                .map_err(|e| e.to_string())?;
        let answered = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| e.to_string())?;
        let status = answered.status.ok_or("no status")?;
        is("incomplete", status.incomplete, false)?;
        let any = status.resource_rules.iter().any(|r| {
            r.verbs.iter().any(|v| v == "*")
                && r.resources
                    .as_ref()
                    .is_some_and(|x| x.iter().any(|x| x == "*"))
        });
        is("admin may do anything", any, true)
    })
}

fn names<K: kube::Resource + Clone>(list: &kube::core::ObjectList<K>) -> Vec<String> {
    list.items
        .iter()
        .filter_map(|o| o.meta().name.clone())
        .collect()
}

pub fn paging_snapshot(client: Client, _: EmbeddedApi) -> KubeCheck {
    use kube::api::{Patch, PatchParams};
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        for n in ["op2", "op3"] {
            ops.create(&PostParams::default(), &common_op(n))
                .await
                .map_err(|e| e.to_string())?;
        }
        let first = ops
            .list(&ListParams::default().limit(1))
            .await
            .map_err(|e| e.to_string())?;
        is("page 1", names(&first), vec!["op1".to_string()])?;
        let token = first
            .metadata
            .continue_
            .clone()
            .ok_or("no continue token")?;
        ops.create(&PostParams::default(), &common_op("op4"))
            .await
            .map_err(|e| e.to_string())?;
        let pause = Patch::Merge(serde_json::json!({"spec": {"paused": true}}));
        ops.patch("op2", &PatchParams::default(), &pause)
            .await
            .map_err(|e| e.to_string())?;
        ops.delete("op3", &Default::default())
            .await
            .map_err(|e| e.to_string())?;
        let rest = ops
            .list(&ListParams::default().limit(10).continue_token(&token))
            .await
            .map_err(|e| e.to_string())?;
        is(
            "page 2",
            names(&rest),
            vec!["op2".to_string(), "op3".to_string()],
        )?;
        is("op2 as it was", rest.items[0].spec.paused, false)?;
        is(
            "list version",
            rest.metadata.resource_version,
            first.metadata.resource_version,
        )
    })
}

pub fn paging_expired(client: Client, api: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        ops.create(&PostParams::default(), &common_op("op2"))
            .await
            .map_err(|e| e.to_string())?;
        let first = ops
            .list(&ListParams::default().limit(1))
            .await
            .map_err(|e| e.to_string())?;
        let token = first
            .metadata
            .continue_
            .clone()
            .ok_or("no continue token")?;
        for i in 0..1010 {
            api.edit("talosoperations", "default", "op1", |o| {
                o["metadata"]["labels"] = serde_json::json!({"n": i.to_string()})
            });
        }
        let e = ops
            .list(&ListParams::default().limit(10).continue_token(&token))
            .await
            .err()
            .ok_or("a continue token 1,010 changes old still worked")?;
        let s = status(e)?;
        is("code", s.code, 410)?;
        is("reason", s.reason.as_str(), "Expired")
    })
}

pub fn list_exact(client: Client, _: EmbeddedApi) -> KubeCheck {
    use kube::api::VersionMatch;
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let before = ops
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        let rv = before.metadata.resource_version.clone().unwrap_or_default();
        ops.create(&PostParams::default(), &common_op("op2"))
            .await
            .map_err(|e| e.to_string())?;
        let exact = ops
            .list(&ListParams::default().at(&rv).matching(VersionMatch::Exact))
            .await
            .map_err(|e| e.to_string())?;
        is("items at rv", names(&exact), vec!["op1".to_string()])?;
        is("list version", exact.metadata.resource_version, Some(rv))
    })
}
