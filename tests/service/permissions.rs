//! Who may do what, Kubernetes' faults as codes, and objects that cannot be read.

use super::*;

pub(super) async fn a_viewer_may_read_and_nothing_else(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Viewer).await;
    // Nothing blocks this start, so the dry run is what refuses it.
    let refused_start = c
        .create_operation(&req(OperationKind::Shutdown, None))
        .await
        .map(drop)
        .unwrap_err();
    seed_op(&api, "run", "talos", "Running", None).await;
    c.list_operations(Some("default")).await.unwrap();
    for e in [
        refused_start,
        c.set_operation_paused("default", "run", true, None)
            .await
            .map(drop)
            .unwrap_err(),
        c.delete_operation("default", "run", None)
            .await
            .unwrap_err(),
    ] {
        assert_eq!(e.code, Code::PermissionDenied, "{e:?}");
        assert!(
            e.message.contains("User \"viewer\" cannot"),
            "{}",
            e.message
        );
    }
    assert!(api.write_log().is_empty());
}

pub(super) async fn a_caller_who_may_edit_clusters_but_not_create_operations_changes_nothing(
    path: Path,
) {
    let api = world();
    let c = connect(path, &api, User::ClusterEditor).await;
    let e = c
        .create_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied);
    assert!(
        e.message.contains("dry run")
            && e.message
                .contains("cannot create resource \"talosoperations\""),
        "{}",
        e.message
    );
    assert!(
        api.write_log().is_empty(),
        "stopped by the dry run before the spec was touched"
    );
    assert_eq!(
        admin_clusters(&api)
            .get("c1")
            .await
            .unwrap()
            .spec
            .talos_version,
        "v1.9.2"
    );
}

pub(super) async fn an_operator_may_not_edit_the_spec_but_may_start_what_it_names(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Operator).await;
    let e = c
        .create_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied);
    assert!(
        e.message
            .contains("cannot update resource \"talosclusters\""),
        "{}",
        e.message
    );
    assert!(
        api.write_log().is_empty(),
        "the spec write's dry run refused it before the claim"
    );
    let created = c
        .create_operation(&req(OperationKind::Talos, Some("v1.9.2")))
        .await
        .unwrap();
    assert_eq!(
        created.operation.actor.as_deref(),
        Some(actor(path, User::Operator))
    );
    let created = c
        .create_operation(&req(OperationKind::Shutdown, None))
        .await;
    assert_eq!(
        created.unwrap_err().reason,
        Some(Reason::UnfinishedOperation),
        "the first start holds the cluster"
    );
}

pub(super) async fn kubernetes_faults_come_back_as_codes(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    api.fail_next(1, Fault::Unavailable);
    let e = c.list_operations(Some("default")).await.unwrap_err();
    assert_eq!(e.code, Code::Unavailable);
    api.fail_next(1, Fault::Reset);
    let e = c.list_clusters(Some("default")).await.unwrap_err();
    assert_eq!(e.code, Code::Unavailable);
    c.list_operations(Some("default")).await.unwrap();
    // A create answered 503: refused, so nothing was created and the claim is given back at
    // once.
    api.fail_when(
        FaultRule::on("create", "talosoperations"),
        Fault::Unavailable,
    );
    let e = c
        .create_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::Aborted, Some(Reason::WriteNotApplied))
    );
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("create leases by {u}"),
            format!("update leases by {u}")
        ]
    );
    // A create whose connection is reset: it may have landed, so the claim stands, marked
    // settling, until the settle window has passed; then it is given back.
    api.clear_write_log();
    api.fail_when(FaultRule::on("create", "talosoperations"), Fault::Reset);
    let e = c
        .create_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::Unavailable, Some(Reason::StartOutcomeUnknown))
    );
    assert!(e.param("until").is_some() && e.param("request_id").is_some());
    assert_eq!(
        names(&api.write_log()),
        [
            format!("update leases by {u}"),
            format!("update leases by {u}")
        ],
        "the claim taken (the Lease kept from the first start), and kept, marked settling"
    );
    common::claim_given_back(&api).await;
    assert_eq!(common::operations_created(&api), 0);
}

pub(super) async fn a_badly_typed_object_is_a_row_and_the_list_mends_when_it_is_fixed(path: Path) {
    let api = world();
    seed_op(&api, "good-1", "talos", "Completed", None).await;
    seed_op(&api, "bad", "kubernetes", "Completed", None).await;
    seed_op(&api, "good-2", "cni", "Completed", None).await;
    // As `kubectl patch … --subresource=status -p '{"status":{"phase":42}}'` leaves it.
    assert!(api.edit("talosoperations", "default", "bad", |v| {
        v["status"] = json!({"phase": 42});
    }));
    let c = connect(path, &api, User::Operator).await;
    for namespace in [Some("default"), None] {
        let ops = c.list_operations(namespace).await.unwrap();
        assert_eq!(ops.len(), 3, "{namespace:?}: the rest of the list is there");
        for o in ops.iter().filter(|o| o.name != "bad") {
            assert_eq!(
                (o.unreadable.as_deref(), &o.phase),
                (None, &Phase::Completed)
            );
        }
        let bad = ops.iter().find(|o| o.name == "bad").unwrap();
        let why = bad.unreadable.as_deref().unwrap_or_default();
        assert!(
            why.starts_with("status: invalid type: integer `42`, expected a string"),
            "{why}"
        );
        assert_eq!(
            (bad.cluster.as_str(), bad.kind, bad.namespace.as_str()),
            ("c1", Some(OperationKind::Kubernetes), "default"),
            "what can be read of it is there"
        );
        assert!(!bad.uid.is_empty());
    }
    // Its page says so too.
    let got = c.get_operation("default", "bad").await.unwrap();
    assert!(got.unreadable.is_some());
    // Nothing is written to it: what it would change is unknown.
    for e in [
        c.set_operation_paused("default", "bad", true, None)
            .await
            .unwrap_err(),
        c.delete_operation("default", "bad", None)
            .await
            .unwrap_err(),
    ] {
        assert_eq!(
            (e.code, e.reason),
            (Code::FailedPrecondition, Some(Reason::OperationUnreadable))
        );
        assert_eq!(e.param("operation"), Some("bad"));
    }
    // A start on its cluster waits until it can be read.
    let plan = c
        .plan_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap();
    let blocked = plan.blocked.expect("blocked by the unreadable operation");
    assert_eq!(blocked.reason, Reason::OperationUnreadable);
    let e = c
        .create_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::OperationUnreadable));
    // The clusters screen is unaffected.
    assert_eq!(c.list_clusters(Some("default")).await.unwrap().len(), 1);
    assert!(api.write_log().is_empty(), "{:?}", api.write_log());

    // Fixed: the same list, every row readable, with no restart.
    assert!(api.edit("talosoperations", "default", "bad", |v| {
        v["status"] = json!({"phase": "Completed"});
    }));
    let ops = c.list_operations(Some("default")).await.unwrap();
    assert_eq!(ops.len(), 3);
    assert!(ops.iter().all(|o| o.unreadable.is_none()));
    assert_eq!(
        c.get_operation("default", "bad").await.unwrap().phase,
        Phase::Completed
    );
    let plan = c
        .plan_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap();
    assert_eq!(plan.blocked, None);
}

pub(super) async fn an_unreadable_cluster_or_machine_is_listed_as_such_and_blocks_a_start(
    path: Path,
) {
    let api = world();
    let c = connect(path, &api, User::Operator).await;
    let talos = || req(OperationKind::Talos, Some("v1.9.3"));
    // A machine whose spec a person typed wrong.
    assert!(api.edit("machines", "default", "c1-w-a", |v| {
        v["spec"]["approved"] = json!("yes");
    }));
    let clusters = c.list_clusters(Some("default")).await.unwrap();
    let m = clusters[0]
        .machines
        .iter()
        .find(|m| m.name == "c1-w-a")
        .expect("the machine is listed");
    assert!(
        m.unreadable
            .as_deref()
            .is_some_and(|w| w.starts_with("spec: "))
    );
    assert_eq!(clusters[0].machines.len(), 7, "every machine is there");
    let page = c.get_cluster("default", "c1").await.unwrap();
    assert_eq!(
        page.machines
            .iter()
            .filter(|m| m.unreadable.is_some())
            .count(),
        1
    );
    let blocked = c.plan_operation(&talos()).await.unwrap().blocked.unwrap();
    assert_eq!(blocked.reason, Reason::MachineUnreadable);
    assert_eq!(blocked.params["machine"], "c1-w-a");
    assert!(api.edit("machines", "default", "c1-w-a", |v| {
        v["spec"]["approved"] = json!(true);
    }));
    assert_eq!(c.plan_operation(&talos()).await.unwrap().blocked, None);

    // A cluster whose spec cannot be read: a row with its name, and no plan.
    assert!(api.edit("talosclusters", "default", "c1", |v| {
        v["spec"]["talosVersion"] = json!(42);
    }));
    let clusters = c.list_clusters(Some("default")).await.unwrap();
    assert_eq!(clusters.len(), 1);
    assert_eq!(clusters[0].name, "c1");
    assert!(clusters[0].unreadable.is_some());
    assert_eq!(
        clusters[0].machines.len(),
        7,
        "its machines are still shown"
    );
    assert!(
        c.get_cluster("default", "c1")
            .await
            .unwrap()
            .unreadable
            .is_some()
    );
    for r in [
        talos(),
        OperationRequest {
            cluster: None,
            ..talos()
        },
    ] {
        let e = c.plan_operation(&r).await.unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::FailedPrecondition, Some(Reason::ClusterUnreadable)),
            "{r:?}"
        );
    }
    assert!(api.write_log().is_empty());
    assert!(api.edit("talosclusters", "default", "c1", |v| {
        v["spec"]["talosVersion"] = json!("v1.9.2");
    }));
    assert!(
        c.list_clusters(Some("default")).await.unwrap()[0]
            .unreadable
            .is_none()
    );
    assert_eq!(c.plan_operation(&talos()).await.unwrap().blocked, None);
}
