//! Reads: the list and one operation as the status has them, who the caller is, the clusters.

use super::*;

pub(super) async fn list_and_get_return_the_status_as_it_is(path: Path) {
    let api = world();
    seed_op(&api, "done", "kubernetes", "Completed", None).await;
    let mut elsewhere = op("far", "c9", "talos", 1);
    elsewhere.metadata.namespace = Some("other".into());
    api.seed(&elsewhere).unwrap();
    let c = connect(path, &api, User::Viewer).await;
    let ns = c.list_operations(Some("default")).await.unwrap();
    assert_eq!(
        ns.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
        ["done"]
    );
    let all = c.list_operations(None).await.unwrap();
    assert_eq!(all.len(), 2);
    let got = c.get_operation("default", "done").await.unwrap();
    assert_eq!(got.phase, Phase::Completed);
    assert_eq!(got.kind, Some(OperationKind::Kubernetes));
    assert_eq!(got.machines[0].phase, MachinePhase::Completed);
    let far = c.get_operation("other", "far").await.unwrap();
    assert_eq!(far.phase, Phase::Unknown, "no status: nothing guessed");
    let missing = c.get_operation("default", "nope").await.unwrap_err();
    assert_eq!(
        (missing.code, missing.reason),
        (Code::NotFound, Some(Reason::OperationNotFound))
    );
    assert_eq!(missing.param("operation"), Some("nope"));
    assert!(api.write_log().is_empty());
}

#[tokio::test]
pub(super) async fn who_am_i_asks_kubernetes_in_process_and_names_the_caller_otherwise() {
    use ichor_service::OperationService;
    use ichor_service::access::{Caller, KubeAccess};
    let api = world();
    let service = OperationService::new(KubeAccess::new(
        api.client(users::OPERATOR_TOKEN),
        "ichor-tui",
    ));
    assert_eq!(
        service.who_am_i(&Caller::in_process()).await.unwrap(),
        users::OPERATOR
    );
    assert_eq!(
        service.who_am_i(&Caller::user("carol", &[])).await.unwrap(),
        "carol"
    );
    let nobody = OperationService::new(KubeAccess::new(api.client("wrong-token"), "ichor-tui"));
    assert_eq!(
        nobody
            .who_am_i(&Caller::in_process())
            .await
            .unwrap_err()
            .code,
        Code::Unauthenticated
    );
    assert!(api.write_log().is_empty(), "a review is not a write");
}

pub(super) async fn clusters_show_versions_machines_tracking_and_the_unfinished_operation(
    path: Path,
) {
    let api = world();
    track_with_argo(&api).await;
    seed_op(&api, "busy", "talos", "Running", None).await;
    let c = connect(path, &api, User::Viewer).await;
    let clusters = c.list_clusters(Some("default")).await.unwrap();
    assert_eq!(clusters.len(), 1);
    let cl = c.get_cluster("default", "c1").await.unwrap();
    assert_eq!(cl, clusters[0]);
    assert_eq!(
        (
            cl.talos_version.as_str(),
            cl.kubernetes_version.as_str(),
            cl.kube_proxy.as_str()
        ),
        ("v1.9.2", "v1.32.3", "enabled")
    );
    assert_eq!(cl.ichor_version.as_deref(), Some("v0.14.2"));
    assert_eq!(
        cl.machines
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>(),
        [
            "c1-cp-a",
            "c1-w-unapproved",
            "c1-cp-b",
            "c1-w-held",
            "c1-w-c",
            "c1-w-a",
            "c1-w-b"
        ]
    );
    let held = cl.machines.iter().find(|m| m.name == "c1-w-held").unwrap();
    assert_eq!(held.hold.as_deref(), Some("disk replacement"));
    assert!(
        !cl.machines
            .iter()
            .find(|m| m.name == "c1-w-unapproved")
            .unwrap()
            .approved
    );
    let t = cl.tracking.unwrap();
    assert_eq!(
        (t.tool.as_str(), t.object.as_str()),
        ("Argo CD", "platform-c1")
    );
    assert_eq!(cl.active_operation.unwrap().name, "busy");
    let e = c.get_cluster("default", "nope").await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::NotFound, Some(Reason::ClusterNotFound))
    );
    assert!(api.write_log().is_empty());
}
