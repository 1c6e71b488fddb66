//! The rows of the contract table about definitions and field ownership: the
//! CustomResourceDefinitions, server-side apply and managedFields, metadata left out when
//! empty, and a merge patch that is not an object. Both clients, in one file.

use super::kube_checks::status;
use super::{Check, KubeCheck, Kubectl};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_resources::TalosOperation;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

fn want(out: &str, needle: &str) -> Check {
    if out.contains(needle) {
        Ok(())
    } else {
        Err(format!("wanted {needle:?} in {out}"))
    }
}

fn is<T: std::fmt::Debug + PartialEq>(what: &str, have: T, want: T) -> Check {
    if have == want {
        Ok(())
    } else {
        Err(format!("{what}: {have:?}, wanted {want:?}"))
    }
}

/// The names of the four ichor CRDs.
const CRD_NAMES: [&str; 4] = [
    "ichorinstallations.ichor.maesh.dev",
    "machines.ichor.maesh.dev",
    "talosclusters.ichor.maesh.dev",
    "talosoperations.ichor.maesh.dev",
];

pub fn crds_kubectl(k: &Kubectl) -> Check {
    let out = k.ok(&["get", "crd"], None)?;
    for name in CRD_NAMES {
        want(&out, name)?;
    }
    let out = k.ok(&["api-resources", "--api-group=apiextensions.k8s.io"], None)?;
    want(&out, "customresourcedefinitions")?;
    let crd = k.json(&["get", "crd", "talosoperations.ichor.maesh.dev"])?;
    is(
        "its kind's short name",
        &crd["spec"]["names"]["shortNames"],
        &json!(["top"]),
    )?;
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    is(
        "maxUnavailable's type in the schema",
        &schema["properties"]["spec"]["properties"]["maxUnavailable"]["type"],
        &json!("integer"),
    )?;
    k.ok(
        &[
            "wait",
            "--for=condition=Established",
            "crd/talosoperations.ichor.maesh.dev",
            "--timeout=10s",
        ],
        None,
    )?;
    let out = k.ok(&["explain", "crd.spec.names.shortNames"], None)?;
    want(&out, "shortNames")?;
    let out = k.ok(&["explain", "crd.spec.versions.schema"], None)?;
    want(&out, "openAPIV3Schema")
}

pub fn crds_kube(client: Client, _: EmbeddedApi) -> KubeCheck {
    use futures::StreamExt;
    use kube::api::{WatchEvent, WatchParams};
    Box::pin(async move {
        let crds: Api<CustomResourceDefinition> = Api::all(client);
        let list = crds
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        let mut names: Vec<String> = list
            .items
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        names.sort();
        is("names", names, CRD_NAMES.map(String::from).to_vec())?;
        let op = crds
            .get("talosoperations.ichor.maesh.dev")
            .await
            .map_err(|e| e.to_string())?;
        is("scope", op.spec.scope.as_str(), "Namespaced")?;
        let established = op
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        is("established", established, true)?;
        // A watch from the start sends each definition once.
        let added = crds
            .watch(&WatchParams::default().timeout(1), "0")
            .await
            .map_err(|e| e.to_string())?
            .filter(|e| std::future::ready(matches!(e, Ok(WatchEvent::Added(_)))))
            .count()
            .await;
        is("definitions watched", added, 4)?;
        let refused = crds
            .delete("machines.ichor.maesh.dev", &Default::default())
            .await
            .err()
            .ok_or("a definition was deleted")?;
        is("delete", status(refused)?.code, 405)
    })
}

/// An operation for `kubectl apply --server-side`, with `maxUnavailable` as given.
fn applied(max_unavailable: u32) -> String {
    format!(
        "apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosOperation
metadata:
  name: applied
spec:
  cluster: c1
  kind: talos
  maxUnavailable: {max_unavailable}
"
    )
}

/// The managers of an object's managedFields, as (manager, operation).
fn managers(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (s("manager"), s("operation"))
        })
        .collect()
}

pub fn server_side_apply_kubectl(k: &Kubectl) -> Check {
    let out = k.ok(&["apply", "--server-side", "-f", "-"], Some(&applied(1)))?;
    want(
        &out,
        "talosoperation.ichor.maesh.dev/applied serverside-applied",
    )?;
    // The same manager changes its own field.
    k.ok(&["apply", "--server-side", "-f", "-"], Some(&applied(2)))?;
    let obj = k.json(&["get", "top", "applied", "--show-managed-fields"])?;
    is("maxUnavailable", &obj["spec"]["maxUnavailable"], &json!(2))?;
    is(
        "managers",
        managers(&obj),
        vec![("kubectl".to_string(), "Apply".to_string())],
    )?;
    // Another manager changing it is a conflict naming the field and its manager.
    let other = ["apply", "--server-side", "--field-manager=other", "-f", "-"];
    k.refused(
        &other,
        Some(&applied(3)),
        "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.maxUnavailable",
    )?;
    let unchanged = k.json(&["get", "top", "applied"])?;
    is(
        "maxUnavailable after the conflict",
        &unchanged["spec"]["maxUnavailable"],
        &json!(2),
    )?;
    let forced = [&other[..], &["--force-conflicts"]].concat();
    let labelled = applied(3).replace(
        "  name: applied\n",
        "  name: applied\n  labels:\n    owner: other\n",
    );
    k.ok(&forced, Some(&labelled))?;
    let obj = k.json(&["get", "top", "applied", "--show-managed-fields"])?;
    is("maxUnavailable", &obj["spec"]["maxUnavailable"], &json!(3))?;
    let kubectl_fields = obj["metadata"]["managedFields"]
        .as_array()
        .and_then(|l| l.iter().find(|e| e["manager"] == "kubectl"))
        .map(|e| e["fieldsV1"]["f:spec"].clone())
        .unwrap_or(Value::Null);
    if kubectl_fields.get("f:maxUnavailable").is_some() {
        return Err(format!(
            "kubectl still owns maxUnavailable: {kubectl_fields}"
        ));
    }
    is(
        "the label",
        &obj["metadata"]["labels"]["owner"],
        &json!("other"),
    )?;
    // A manager that drops a field it alone set removes it.
    k.ok(&other, Some(&applied(3)))?;
    let obj = k.json(&["get", "top", "applied"])?;
    is(
        "the label once dropped",
        obj["metadata"].get("labels").cloned(),
        None,
    )
}

pub fn server_side_apply_kube(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let config = |n: u32| {
            Patch::Apply(
                json!({"apiVersion": "ichor.maesh.dev/v1alpha1", "kind": "TalosOperation",
                                "metadata": {"name": "op1"}, "spec": {"maxUnavailable": n}}),
            )
        };
        let a = PatchParams::apply("first");
        let first = ops
            .patch("op1", &a, &config(2))
            .await
            .map_err(|e| e.to_string())?;
        is("maxUnavailable", first.spec.max_unavailable, 2)?;
        let e = ops
            .patch("op1", &PatchParams::apply("second"), &config(4))
            .await
            .err()
            .ok_or("a conflicting apply was accepted")?;
        let s = status(e)?;
        is("code", s.code, 409)?;
        is("reason", s.reason.as_str(), "Conflict")?;
        let cause = s
            .details
            .and_then(|d| d.causes.into_iter().next())
            .ok_or("no cause")?;
        is("cause field", cause.field.as_str(), ".spec.maxUnavailable")?;
        is("cause", cause.message.as_str(), "conflict with \"first\"")?;
        let forced = ops
            .patch("op1", &PatchParams::apply("second").force(), &config(4))
            .await
            .map_err(|e| e.to_string())?;
        is("maxUnavailable when forced", forced.spec.max_unavailable, 4)?;
        // An apply needs a manager; force is for applies only.
        let e = ops
            .patch("op1", &PatchParams::default(), &config(5))
            .await
            .err()
            .ok_or("an apply without a manager was accepted")?;
        is("without a manager", status(e)?.code, 422)?;
        // kube-rs refuses to send force on a merge patch; kubectl's client-go would.
        let req = http::Request::patch(
            "/apis/ichor.maesh.dev/v1alpha1/namespaces/default/talosoperations/op1?force=true",
        )
        .header("content-type", "application/merge-patch+json")
        .body(br#"{"spec": {"paused": true}}"#.to_vec())
        .map_err(|e| e.to_string())?;
        let e = ops
            .clone()
            .into_client()
            .request::<Value>(req)
            .await
            .err()
            .ok_or("force on a merge patch was accepted")?;
        is("force on a merge patch", status(e)?.code, 422)?;
        // An apply of an object that is not there creates it.
        let created = Patch::Apply(json!({"apiVersion": "ichor.maesh.dev/v1alpha1",
            "kind": "TalosOperation", "metadata": {"name": "op9"},
            "spec": {"cluster": "c1", "kind": "talos"}}));
        let op9 = ops
            .patch("op9", &PatchParams::apply("first"), &created)
            .await
            .map_err(|e| e.to_string())?;
        is("created uid", op9.metadata.uid.is_some(), true)?;
        Ok(())
    })
}

pub fn empty_metadata_kubectl(k: &Kubectl) -> Check {
    let add = r#"{"metadata":{"finalizers":["example.com/x"]}}"#;
    k.ok(&["patch", "top", "op1", "--type=merge", "-p", add], None)?;
    let remove = r#"[{"op":"replace","path":"/metadata/finalizers","value":[]}]"#;
    k.ok(&["patch", "top", "op1", "--type=json", "-p", remove], None)?;
    let obj = k.json(&["get", "top", "op1"])?;
    is(
        "finalizers",
        obj["metadata"].get("finalizers").cloned(),
        None,
    )
}

pub fn empty_metadata_kube(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let p = PatchParams::default();
        let add = Patch::Merge(json!({"metadata": {"finalizers": ["example.com/x"]}}));
        ops.patch("op1", &p, &add)
            .await
            .map_err(|e| e.to_string())?;
        let none = Patch::Merge(json!({"metadata": {"finalizers": [], "labels": {}}}));
        let raw: Api<kube::api::DynamicObject> = Api::namespaced_with(
            ops.clone().into_client(),
            "default",
            &kube::api::ApiResource::erase::<TalosOperation>(&()),
        );
        let obj = raw
            .patch("op1", &p, &none)
            .await
            .map_err(|e| e.to_string())?;
        let meta = serde_json::to_value(&obj.metadata).map_err(|e| e.to_string())?;
        is("finalizers", meta.get("finalizers").cloned(), None)?;
        is("labels", meta.get("labels").cloned(), None)
    })
}

pub fn merge_patch_not_an_object_kubectl(k: &Kubectl) -> Check {
    let before = k.json(&["get", "top", "op1"])?;
    k.refused(
        &[
            "patch",
            "top",
            "op1",
            "--type=merge",
            "-p",
            r#"[{"op":"replace"}]"#,
        ],
        None,
        "cannot unmarshal array into Go value of type map[string]interface {}",
    )?;
    let after = k.json(&["get", "top", "op1"])?;
    is(
        "resourceVersion",
        &after["metadata"]["resourceVersion"],
        &before["metadata"]["resourceVersion"],
    )
}

pub fn merge_patch_not_an_object_kube(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let before = ops.get("op1").await.map_err(|e| e.to_string())?;
        let p = PatchParams::default();
        for body in [json!([1, 2]), json!("x"), json!(null)] {
            let e = ops
                .patch("op1", &p, &Patch::Merge(body.clone()))
                .await
                .err()
                .ok_or_else(|| format!("{body} was applied"))?;
            let s = status(e)?;
            is(
                &format!("{body}"),
                (s.code, s.reason.as_str()),
                (400, "BadRequest"),
            )?;
        }
        let after = ops.get("op1").await.map_err(|e| e.to_string())?;
        is(
            "resourceVersion",
            after.metadata.resource_version,
            before.metadata.resource_version,
        )
    })
}
