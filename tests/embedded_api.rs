//! The embedded Kubernetes API answers as kube-apiserver does, through the real kube client.

use crate::common;

use common::{op, small_cluster};
use ichor_demo::apiserver::auth::{Rule, Subject, users};
use ichor_demo::apiserver::{EmbeddedApi, Fault};
use ichor_resources::*;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use std::time::Duration;

fn api() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

fn status_of(e: kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason, s.message),
        other => panic!("expected an API status, got {other:?}"),
    }
}

#[tokio::test]
async fn get_list_and_label_selectors() {
    let api = api();
    let client = api.client(users::ADMIN_TOKEN);
    let machines: Api<Machine> = Api::namespaced(client.clone(), "default");
    assert_eq!(
        machines
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        7
    );
    let selected = machines
        .list(&ListParams::default().labels("ichor.maesh.dev/upgrade-order in (1,2)"))
        .await
        .unwrap();
    let mut names: Vec<_> = selected
        .items
        .iter()
        .map(|m| m.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["c1-cp-a", "c1-cp-b", "c1-w-unapproved"]);
    let unlabelled = machines
        .list(&ListParams::default().labels("!ichor.maesh.dev/upgrade-order"))
        .await
        .unwrap();
    assert_eq!(unlabelled.items.len(), 1);
    let all: Api<TalosCluster> = Api::all(client.clone());
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    let other_ns: Api<TalosCluster> = Api::namespaced(client.clone(), "elsewhere");
    assert!(
        other_ns
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let c = Api::<TalosCluster>::namespaced(client, "default")
        .get("c1")
        .await
        .unwrap();
    assert_eq!(c.spec.talos_version, "v1.9.2");
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn create_with_generate_name_bumps_resource_version_and_logs_the_user() {
    let api = api();
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::OPERATOR_TOKEN), "default");
    let mut o = op("", "c1", "talos", 1);
    o.metadata.name = None;
    o.metadata.generate_name = Some("c1-talos-".into());
    let created = ops.create(&PostParams::default(), &o).await.unwrap();
    let name = created.metadata.name.clone().unwrap();
    assert!(
        name.starts_with("c1-talos-") && name.len() == "c1-talos-".len() + 5,
        "{name}"
    );
    let rv1: u64 = created
        .metadata
        .resource_version
        .clone()
        .unwrap()
        .parse()
        .unwrap();
    let patched = ops
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": true}})),
        )
        .await
        .unwrap();
    let rv2: u64 = patched
        .metadata
        .resource_version
        .clone()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv2 > rv1);
    assert!(patched.spec.paused);
    let log = api.write_log();
    assert_eq!(log.len(), 2);
    assert_eq!(
        (log[0].verb.as_str(), log[0].user.as_str()),
        ("create", users::OPERATOR)
    );
    assert_eq!(
        (log[1].verb.as_str(), log[1].name.as_str()),
        ("patch", name.as_str())
    );
}

#[tokio::test]
async fn stale_resource_version_is_a_conflict_and_duplicates_already_exist() {
    let api = api();
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let first = ops
        .create(&PostParams::default(), &op("o1", "c1", "talos", 1))
        .await
        .unwrap();
    let mut stale = first.clone();
    let mut fresh = first.clone();
    fresh.spec.paused = true;
    ops.replace("o1", &PostParams::default(), &fresh)
        .await
        .unwrap();
    stale.spec.max_unavailable = 3;
    let (code, reason, message) = status_of(
        ops.replace("o1", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert!(
        message.contains("the object has been modified"),
        "{message}"
    );
    let (code, reason, _) = status_of(
        ops.create(&PostParams::default(), &op("o1", "c1", "talos", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (409, "AlreadyExists"));
    let (code, reason, message) = status_of(ops.get("nope").await.unwrap_err());
    assert_eq!((code, reason.as_str()), (404, "NotFound"));
    assert_eq!(
        message,
        "talosoperations.ichor.maesh.dev \"nope\" not found"
    );
    assert_eq!(
        api.write_log().len(),
        2,
        "the refused writes are not logged"
    );
}

#[tokio::test]
async fn status_subresource_and_main_resource_keep_each_others_part() {
    let api = api();
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let mut o = op("o1", "c1", "talos", 1);
    o.status = Some(TalosOperationStatus {
        phase: "Running".into(),
        ..Default::default()
    });
    let created = ops.create(&PostParams::default(), &o).await.unwrap();
    assert_eq!(created.status, None, "create drops the status");
    ops.patch_status(
        "o1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Running"}, "spec": {"paused": true}})),
    )
    .await
    .unwrap();
    let after = ops.get("o1").await.unwrap();
    assert_eq!(after.status.unwrap().phase, "Running");
    assert!(
        !after.spec.paused,
        "a status write does not change the spec"
    );
    ops.patch(
        "o1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Failed"}})),
    )
    .await
    .unwrap();
    assert_eq!(
        ops.get("o1").await.unwrap().status.unwrap().phase,
        "Running"
    );
    let log = api.write_log();
    assert_eq!(log[1].resource, "talosoperations/status");
}

#[tokio::test]
async fn invalid_objects_are_422() {
    let api = api();
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let (code, reason, message) = status_of(
        ops.create(&PostParams::default(), &op("o1", "c1", "reboot", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert!(
        message.contains("spec.kind: Unsupported value: \"reboot\""),
        "{message}"
    );
    let (code, _, message) = status_of(
        ops.create(&PostParams::default(), &op("o1", "c1", "talos", 0))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422);
    assert!(message.contains("spec.maxUnavailable"), "{message}");
    let (code, _, _) = status_of(
        ops.create(&PostParams::default(), &op("Bad_Name", "c1", "talos", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422);
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn dry_run_checks_everything_and_stores_nothing() {
    let api = api();
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::OPERATOR_TOKEN), "default");
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let answered = ops.create(&dry, &op("o1", "c1", "talos", 1)).await.unwrap();
    assert_eq!(answered.metadata.name.as_deref(), Some("o1"));
    assert!(ops.get_opt("o1").await.unwrap().is_none());
    let (code, _, _) = status_of(
        ops.create(&dry, &op("o1", "c1", "nope", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422, "validation runs in a dry run");
    let viewer: Api<TalosOperation> = Api::namespaced(api.client(users::VIEWER_TOKEN), "default");
    let (code, _, _) = status_of(
        viewer
            .create(&dry, &op("o1", "c1", "talos", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403, "RBAC runs in a dry run");
    let clusters: Api<TalosCluster> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let (code, _, _) = status_of(
        clusters
            .patch(
                "c1",
                &PatchParams {
                    dry_run: true,
                    ..Default::default()
                },
                &Patch::Merge(json!({"spec": {"cni": {"kubeProxy": "replaced"}}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422, "admission runs in a dry run");
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn authentication_rbac_and_impersonation() {
    let api = api();
    let unknown: Api<TalosOperation> = Api::namespaced(api.client("no-such-token"), "default");
    let (code, reason, _) = status_of(unknown.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (401, "Unauthorized"));

    let viewer: Api<TalosOperation> = Api::namespaced(api.client(users::VIEWER_TOKEN), "default");
    viewer.list(&ListParams::default()).await.unwrap();
    let (code, reason, message) = status_of(
        viewer
            .create(&PostParams::default(), &op("o1", "c1", "talos", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        message,
        "talosoperations.ichor.maesh.dev is forbidden: User \"viewer\" cannot create resource \"talosoperations\" in API group \"ichor.maesh.dev\" in the namespace \"default\""
    );
    let operator_clusters: Api<TalosCluster> =
        Api::namespaced(api.client(users::OPERATOR_TOKEN), "default");
    let (code, _, _) = status_of(
        operator_clusters
            .patch(
                "c1",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"talosVersion": "v1.9.3"}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403, "operators may not edit clusters");
    assert!(api.write_log().is_empty());

    // The server's identity may impersonate; the impersonated user's rights decide.
    let as_viewer =
        common::impersonating(&api, users::SERVER_TOKEN, users::VIEWER, &["ichor:viewers"]);
    let ops: Api<TalosOperation> = Api::namespaced(as_viewer, "default");
    ops.list(&ListParams::default()).await.unwrap();
    let (code, _, message) = status_of(
        ops.create(&PostParams::default(), &op("o1", "c1", "talos", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert!(message.contains("User \"viewer\""), "{message}");
    let as_operator = common::impersonating(
        &api,
        users::SERVER_TOKEN,
        users::OPERATOR,
        &["ichor:operators"],
    );
    Api::<TalosOperation>::namespaced(as_operator, "default")
        .create(&PostParams::default(), &op("o1", "c1", "talos", 1))
        .await
        .unwrap();
    assert_eq!(
        api.write_log()[0].user,
        users::OPERATOR,
        "the write log names the impersonated user"
    );

    // An operator may not impersonate anyone.
    let sneaky = common::impersonating(
        &api,
        users::OPERATOR_TOKEN,
        users::ADMIN,
        &["system:masters"],
    );
    let (code, _, message) = status_of(
        Api::<TalosOperation>::namespaced(sneaky, "default")
            .list(&ListParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert!(
        message.contains("cannot impersonate resource \"users\""),
        "{message}"
    );
    assert_eq!(api.write_log().len(), 1);
}

#[tokio::test]
async fn kube_proxy_change_needs_the_confirmation_annotation() {
    let api = api();
    let clusters: Api<TalosCluster> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let (code, reason, message) = status_of(
        clusters
            .patch(
                "c1",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"cni": {"kubeProxy": "replaced"}}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert!(
        message.contains("ValidatingAdmissionPolicy")
            && message.contains(names::CONFIRM_KUBE_PROXY_SWITCH),
        "{message}"
    );
    assert!(api.write_log().is_empty());
    clusters
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"annotations": {names::CONFIRM_KUBE_PROXY_SWITCH: "true"}},
                "spec": {"cni": {"kubeProxy": "replaced"}}
            })),
        )
        .await
        .unwrap();
    assert_eq!(
        clusters.get("c1").await.unwrap().spec.cni.kube_proxy,
        "replaced"
    );
    // Other spec changes need no annotation.
    clusters
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"talosVersion": "v1.9.3"}})),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn injected_faults() {
    let api = api();
    let clusters: Api<TalosCluster> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    api.fail_next(1, Fault::Unavailable);
    let (code, _, _) = status_of(clusters.get("c1").await.unwrap_err());
    assert_eq!(code, 503);
    api.fail_next(1, Fault::Reset);
    let err = clusters.get("c1").await.unwrap_err();
    assert!(
        !matches!(err, kube::Error::Api(_)),
        "a reset has no response: {err:?}"
    );
    assert!(format!("{err:?}").contains("reset"), "{err:?}");
    clusters.get("c1").await.unwrap();

    api.conflict_next_writes(1);
    let (code, _, _) = status_of(
        clusters
            .patch(
                "c1",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"talosVersion": "v1.9.3"}})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 409);
    clusters
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"talosVersion": "v1.9.3"}})),
        )
        .await
        .unwrap();
    assert_eq!(api.write_log().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn delay_fault_meets_a_client_timeout() {
    let api = api();
    api.fail_next(1, Fault::Delay(Duration::from_secs(60)));
    let clusters: Api<TalosCluster> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let slow = tokio::time::timeout(Duration::from_secs(5), clusters.get("c1")).await;
    assert!(slow.is_err(), "the delayed request outlasts the timeout");
    clusters.get("c1").await.unwrap();
}

#[tokio::test]
async fn delete_and_token_review() {
    let api = api();
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.create(&PostParams::default(), &op("o1", "c1", "talos", 1))
        .await
        .unwrap();
    ops.delete("o1", &DeleteParams::default()).await.unwrap();
    assert!(ops.get_opt("o1").await.unwrap().is_none());
    let log = api.write_log();
    assert_eq!(
        log.iter().map(|w| w.verb.as_str()).collect::<Vec<_>>(),
        ["create", "delete"]
    );

    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": users::OPERATOR_TOKEN}});
    let req = http::Request::post("/apis/authentication.k8s.io/v1/tokenreviews")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&review).unwrap())
        .unwrap();
    let answer: serde_json::Value = api.client(users::SERVER_TOKEN).request(req).await.unwrap();
    assert_eq!(answer.pointer("/status/authenticated"), Some(&json!(true)));
    assert_eq!(
        answer.pointer("/status/user/username"),
        Some(&json!(users::OPERATOR))
    );
    let req = http::Request::post("/apis/authentication.k8s.io/v1/tokenreviews")
        .body(serde_json::to_vec(&review).unwrap())
        .unwrap();
    let denied = api
        .client(users::OPERATOR_TOKEN)
        .request::<serde_json::Value>(req)
        .await
        .unwrap_err();
    assert_eq!(status_of(denied).0, 403);
    // Extra rules can be granted per test.
    api.add_rule(Rule::new(
        Subject::User(users::OPERATOR.into()),
        &["create"],
        &["tokenreviews"],
    ));
}

/// `limit` and `continue` as kube-apiserver serves them: pages in order, each answered at the
/// first page's resourceVersion, a token for the rest and how many are left; the pages are
/// of the first page's snapshot, so an object created between the pages is in none of them,
/// and a watch from the list's version sees it.
#[tokio::test]
async fn lists_in_pages_with_limit_and_continue() {
    let api = EmbeddedApi::default();
    for i in 0..5 {
        api.seed(&op(&format!("op-{i}"), "c1", "talos", 1)).unwrap();
    }
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let first = ops.list(&ListParams::default().limit(2)).await.unwrap();
    let names = |l: &kube::core::ObjectList<TalosOperation>| -> Vec<String> {
        l.items
            .iter()
            .map(|o| o.metadata.name.clone().unwrap())
            .collect()
    };
    assert_eq!(names(&first), ["op-0", "op-1"]);
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let rv = first.metadata.resource_version.clone();
    let token = first.metadata.continue_.clone().unwrap();
    ops.create(&PostParams::default(), &op("op-9", "c1", "talos", 1))
        .await
        .unwrap();
    let second = ops
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&second), ["op-2", "op-3"]);
    assert_eq!(
        second.metadata.resource_version, rv,
        "the first page's version"
    );
    let token = second.metadata.continue_.clone().unwrap();
    let last = ops
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&last), ["op-4"]);
    assert!(last.metadata.continue_.is_none());
    // kube's own pager walks them all.
    let all = ops.list(&ListParams::default()).await.unwrap();
    assert_eq!(all.items.len(), 6);
    let e = ops
        .list(&ListParams::default().continue_token("not-a-token"))
        .await
        .unwrap_err();
    assert_eq!(status_of(e).0, 400);
}

/// Metadata-only lists (`as=PartialObjectMetadataList`), as kube's `list_metadata` asks:
/// every object's metadata, nothing of its spec or status.
#[tokio::test]
async fn lists_of_metadata_only() {
    let api = EmbeddedApi::default();
    for i in 0..3 {
        api.seed(&op(&format!("op-{i}"), "c1", "talos", 1)).unwrap();
    }
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::VIEWER_TOKEN), "default");
    let list = ops.list_metadata(&ListParams::default()).await.unwrap();
    let names: Vec<String> = list
        .items
        .iter()
        .map(|m| m.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["op-0", "op-1", "op-2"]);
    for m in &list.items {
        let t = m.types.as_ref().unwrap();
        assert_eq!(
            (t.api_version.as_str(), t.kind.as_str()),
            ("meta.k8s.io/v1", "PartialObjectMetadata")
        );
        assert!(m.metadata.resource_version.is_some() && m.metadata.uid.is_some());
    }
    let paged = ops
        .list_metadata(&ListParams::default().limit(2))
        .await
        .unwrap();
    assert_eq!(paged.items.len(), 2);
    assert!(paged.metadata.continue_.is_some());
}
