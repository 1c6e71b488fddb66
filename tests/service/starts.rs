//! Starts: the spec first, then the operation; a rerun after a half failure; a tracked spec; the kube-proxy confirmation and its removal.

use super::*;

pub(super) async fn create_writes_the_spec_then_the_operation(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    let created = c
        .create_operation(&req(OperationKind::Talos, Some("1.9.3")))
        .await
        .unwrap();
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("create leases by {u}"),
            format!("update talosclusters by {u}"),
            format!("create talosoperations by {u}"),
            format!("update leases by {u}")
        ],
        "the claim, the spec, the operation, the claim given back"
    );
    assert_eq!(
        admin_clusters(&api)
            .get("c1")
            .await
            .unwrap()
            .spec
            .talos_version,
        "v1.9.3"
    );
    let op = created.operation;
    assert!(op.name.starts_with("c1-talos-"), "{}", op.name);
    assert_eq!(op.actor.as_deref(), Some(actor(path, User::Admin)));
    // The person, and beside it the route the start came by.
    let stored: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let annotations = stored.get(&op.name).await.unwrap().metadata.annotations;
    let route = match path {
        Path::InProcess => "in-process",
        _ => "ichor-ui",
    };
    assert_eq!(
        annotations
            .unwrap_or_default()
            .get(names::ACTOR_ROUTE)
            .map(String::as_str),
        Some(route)
    );
    assert_eq!(
        (op.current.as_deref(), op.target.as_deref()),
        (Some("v1.9.2"), Some("v1.9.3"))
    );
    assert_eq!(created.spec_written.unwrap().to, "v1.9.3");
    assert!(created.warnings.is_empty());
}

pub(super) async fn a_rerun_after_a_half_failure_only_creates_the_operation(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    api.fail_when(
        FaultRule::on("create", "talosoperations"),
        Fault::Unavailable,
    );
    let e = c
        .create_operation(&req(OperationKind::Kubernetes, Some("v1.33.0")))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::SpecWrittenCreateFailed));
    assert_eq!(
        e.code,
        Code::Aborted,
        "an answer that says what happened, not an unknown outcome: a client does not repeat it"
    );
    assert_eq!(
        (e.param("field"), e.param("target")),
        (Some("spec.kubernetesVersion"), Some("v1.33.0"))
    );
    assert!(
        e.message
            .contains("Start the same operation again to finish"),
        "{}",
        e.message
    );
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("create leases by {u}"),
            format!("update talosclusters by {u}"),
            format!("update leases by {u}")
        ],
        "the claim is given back, so a rerun is not kept waiting"
    );
    api.clear_write_log();
    let plan = c
        .plan_operation(&req(OperationKind::Kubernetes, Some("v1.33.0")))
        .await
        .unwrap();
    assert!(plan.spec_change.is_none() && plan.blocked.is_none());
    let again = c
        .create_operation(&req(OperationKind::Kubernetes, Some("v1.33.0")))
        .await
        .unwrap();
    assert!(again.spec_written.is_none());
    assert_eq!(
        names(&api.write_log()),
        [
            format!("update leases by {u}"),
            format!("create talosoperations by {u}"),
            format!("update leases by {u}")
        ],
        "no second spec write (the claim kept from the first start is taken again)"
    );
}

pub(super) async fn a_tracked_spec_is_refused_then_started_with_the_version_git_wrote(path: Path) {
    let api = world();
    track_with_argo(&api).await;
    let c = connect(path, &api, User::Admin).await;
    let e = c
        .create_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::FailedPrecondition, Some(Reason::TrackedByGitops))
    );
    assert!(
        e.message.contains("merge it in the repository")
            && e.message
                .contains("then start with the version the spec then names"),
        "{}",
        e.message
    );
    assert!(api.write_log().is_empty());
    // Argo CD syncs the merged change; starting with that version writes no spec.
    admin_clusters(&api)
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"talosVersion": "v1.9.3"}})),
        )
        .await
        .unwrap();
    api.clear_write_log();
    let created = c
        .create_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    assert!(created.spec_written.is_none());
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("create leases by {u}"),
            format!("create talosoperations by {u}"),
            format!("update leases by {u}")
        ]
    );
}

pub(super) async fn create_refuses_what_the_plan_refuses_and_writes_nothing(path: Path) {
    let api = world();
    seed_op(&api, "busy", "talos", "Running", None).await;
    let c = connect(path, &api, User::Admin).await;
    let e = c
        .create_operation(&req(OperationKind::Kubernetes, Some("v1.33.0")))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::FailedPrecondition, Some(Reason::UnfinishedOperation))
    );
    assert_eq!(e.param("operation"), Some("busy"));
    let e = c
        .create_operation(&req(OperationKind::CaRotation, None))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::UnfinishedOperation));
    let api2 = world();
    let c2 = connect(path, &api2, User::Admin).await;
    let e = c2
        .create_operation(&req(OperationKind::Talos, Some("v1.9.0")))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::FailedPrecondition, Some(Reason::Downgrade))
    );
    assert!(api.write_log().is_empty() && api2.write_log().is_empty());
}

pub(super) async fn kube_proxy_switch_sets_and_removes_the_confirmation(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    // Someone edits the cluster between the start's read and its spec write: the write
    // conflicts, and the start reads again and re-checks before it writes.
    api.before(FaultRule::on("update", "talosclusters"), |api| {
        api.edit("talosclusters", "default", "c1", |c| {
            c["metadata"]["labels"] = json!({"team": "platform"});
        });
    });
    let created = c
        .create_operation(&req(OperationKind::Cni, Some("replaced")))
        .await
        .unwrap();
    assert!(created.warnings.is_empty());
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("create leases by {u}"),
            format!("update leases by {u}"),
            format!("update talosclusters by {u}"),
            format!("create talosoperations by {u}"),
            format!("update talosclusters by {u}"),
            format!("update leases by {u}")
        ],
        "the conflicted write was made again after a fresh read (the claim renewed); the annotation came off in a second update; the claim given back"
    );
    let cl = admin_clusters(&api).get("c1").await.unwrap();
    assert_eq!(cl.spec.cni.kube_proxy, "replaced");
    assert!(
        !cl.metadata
            .annotations
            .unwrap_or_default()
            .contains_key(names::CONFIRM_KUBE_PROXY_SWITCH),
        "no standing consent is left behind"
    );
}

fn confirmation_present(api: &EmbeddedApi) -> bool {
    api.object("talosclusters", "default", "c1")
        .and_then(|c| c.pointer("/metadata/annotations").cloned())
        .and_then(|a| a.get(names::CONFIRM_KUBE_PROXY_SWITCH).cloned())
        .is_some()
}

/// The kube-proxy confirmation never outlives its start: a fault at the spec write, at the
/// create, at the create and the removal, then a rerun; after each the annotation is gone or the
/// answer names it, and the rerun leaves none.
pub(super) async fn the_kube_proxy_confirmation_never_outlives_its_start(path: Path) {
    let replaced = || req(OperationKind::Cni, Some("replaced"));
    // At the spec write: nothing written but the claim, taken and given back.
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    api.fail_when(FaultRule::on("update", "talosclusters"), Fault::Unavailable);
    let e = c.create_operation(&replaced()).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::Unavailable), "{e:?}");
    assert!(!confirmation_present(&api));
    c.create_operation(&replaced()).await.unwrap();
    assert!(!confirmation_present(&api), "the rerun leaves none");

    // At the create: the spec (with the annotation) was written; the annotation is taken back
    // before the answer, which says so.
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    api.fail_when(
        FaultRule::on("create", "talosoperations"),
        Fault::Unavailable,
    );
    let e = c.create_operation(&replaced()).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::SpecWrittenCreateFailed));
    assert_eq!(e.param("annotation"), Some("removed"));
    assert!(!confirmation_present(&api));
    let again = c.create_operation(&replaced()).await.unwrap();
    assert!(again.spec_written.is_none() && again.warnings.is_empty());
    assert!(!confirmation_present(&api));

    // At the create and at the removal: the answer names the annotation left behind, and the
    // rerun, finding it, removes it.
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    api.fail_when(
        FaultRule::on("create", "talosoperations"),
        Fault::Unavailable,
    );
    api.fail_when(
        FaultRule::on("update", "talosclusters").after(1),
        Fault::Unavailable,
    );
    let e = c.create_operation(&replaced()).await.unwrap_err();
    assert_eq!(e.param("annotation"), Some("left"));
    assert!(
        e.message.contains(names::CONFIRM_KUBE_PROXY_SWITCH),
        "{}",
        e.message
    );
    assert!(confirmation_present(&api));
    api.clear_write_log();
    let plan = c.plan_operation(&replaced()).await.unwrap();
    assert!(plan.stray_confirmation, "the Review names it");
    let again = c.create_operation(&replaced()).await.unwrap();
    assert!(again.spec_written.is_none());
    let said: Vec<Reason> = again.warnings.iter().map(|w| w.reason).collect();
    assert_eq!(said, [Reason::ConfirmationRemoved], "and the start says so");
    assert!(
        !confirmation_present(&api),
        "found on the rerun, and removed"
    );
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("update leases by {u}"),
            format!("create talosoperations by {u}"),
            format!("update talosclusters by {u}"),
            format!("update leases by {u}")
        ]
    );
}

pub(super) async fn a_confirmation_that_cannot_be_removed_is_a_warning(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    api.fail_when(
        FaultRule::on("update", "talosclusters").after(1),
        Fault::Unavailable,
    );
    let created = c
        .create_operation(&req(OperationKind::Cni, Some("replaced")))
        .await
        .unwrap();
    assert_eq!(created.warnings.len(), 1);
    let w = &created.warnings[0];
    assert_eq!(w.reason, Reason::AnnotationNotRemoved);
    assert_eq!(w.params["annotation"], names::CONFIRM_KUBE_PROXY_SWITCH);
    assert!(
        w.message.contains(&format!(
            "Remove it by hand: kubectl annotate taloscluster c1 {}-",
            names::CONFIRM_KUBE_PROXY_SWITCH
        )),
        "{}",
        w.message
    );
    assert!(!created.operation.name.is_empty(), "the operation exists");
}
