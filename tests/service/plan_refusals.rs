//! What a plan refuses: an unfinished operation, GitOps tracking, a downgrade, a plan that touches no machine, invalid arguments, a missing cluster name; and the plan's order is the executor's.

use super::*;

pub(super) async fn plan_blocked_by_an_unfinished_operation(path: Path) {
    for (phase, failure) in [
        ("Running", None),
        ("Paused", Some("machine c1-cp-a failed: x")),
        ("Failed", None),
        ("", None),
    ] {
        let api = world();
        seed_op(&api, "other-op", "kubernetes", phase, failure).await;
        let c = connect(path, &api, User::Viewer).await;
        let plan = c
            .plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
            .await
            .unwrap();
        let b = plan.blocked.expect("blocked");
        assert_eq!(b.reason, Reason::UnfinishedOperation, "{phase}");
        assert_eq!(b.params["operation"], "other-op");
        assert!(api.write_log().is_empty());
    }
    // A Completed operation does not block.
    let api = world();
    seed_op(&api, "old", "kubernetes", "Completed", None).await;
    let c = connect(path, &api, User::Viewer).await;
    assert!(
        c.plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
            .await
            .unwrap()
            .blocked
            .is_none()
    );
}

pub(super) async fn plan_blocked_by_gitops_tracking(path: Path) {
    let api = world();
    track_with_argo(&api).await;
    let c = connect(path, &api, User::Viewer).await;
    let b = c
        .plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap()
        .blocked
        .unwrap();
    assert_eq!(b.reason, Reason::TrackedByGitops);
    assert_eq!(b.params["tool"], "Argo CD");
    assert_eq!(b.params["object"], "platform-c1");
    assert_eq!(b.params["field"], "spec.talosVersion");
    assert_eq!(
        (b.params["current"].as_str(), b.params["target"].as_str()),
        ("v1.9.2", "v1.9.3")
    );
    // The service's English is the dashboard's (locales/en/errors.ftl), on every path.
    assert!(
        b.message.contains(
            "Make the change in Git: spec.talosVersion: v1.9.2 → v1.9.3; merge it in the repository"
        ),
        "{}",
        b.message
    );
    // Shutdown and CA rotation write no spec: not refused.
    assert!(
        c.plan_operation(&req(OperationKind::Shutdown, None))
            .await
            .unwrap()
            .blocked
            .is_none()
    );
    assert!(
        c.plan_operation(&req(OperationKind::CaRotation, None))
            .await
            .unwrap()
            .blocked
            .is_none()
    );
    // A target the spec already names writes no spec: not refused.
    assert!(
        c.plan_operation(&req(OperationKind::Talos, Some("v1.9.2")))
            .await
            .unwrap()
            .blocked
            .is_none()
    );
    // Flux, by label, on the ichor installation.
    Api::<IchorInstallation>::namespaced(api.client(users::ADMIN_TOKEN), "default")
        .patch(
            "ichor",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {names::FLUX_HELM_NAME: "ichor", names::FLUX_HELM_NAMESPACE: "flux-system"}}})),
        )
        .await
        .unwrap();
    let b = c
        .plan_operation(&req(OperationKind::Ichor, Some("v0.15.0")))
        .await
        .unwrap()
        .blocked
        .unwrap();
    assert_eq!(
        (b.params["tool"].as_str(), b.params["object"].as_str()),
        ("Flux", "HelmRelease flux-system/ichor")
    );
}

pub(super) async fn plan_blocked_by_a_downgrade(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Viewer).await;
    for (kind, target) in [
        (OperationKind::Talos, "v1.8.9"),
        (OperationKind::Kubernetes, "1.31.0"),
        (OperationKind::Ichor, "v0.14.1"),
    ] {
        let b = c
            .plan_operation(&req(kind, Some(target)))
            .await
            .unwrap()
            .blocked
            .unwrap();
        assert_eq!(b.reason, Reason::Downgrade, "{kind:?}");
        assert_eq!(b.params["kind"], kind.as_str());
    }
    assert!(api.write_log().is_empty());
}

pub(super) async fn a_plan_that_touches_no_machine_is_blocked(path: Path) {
    let api = world();
    let mut c2 = TalosCluster::new(
        "c2",
        TalosClusterSpec {
            talos_version: "v1.9.2".into(),
            kubernetes_version: "v1.32.3".into(),
            cni: Default::default(),
        },
    );
    c2.metadata.namespace = Some("default".into());
    api.seed(&c2).unwrap();
    for m in [
        machine("c2", "c2-cp", "controlplane", Some(1), false, None),
        machine(
            "c2",
            "c2-w",
            "worker",
            Some(2),
            true,
            Some("waiting for a new disk"),
        ),
    ] {
        let mut m = m;
        m.metadata.namespace = Some("default".into());
        api.seed(&m).unwrap();
    }
    let c = connect(path, &api, User::Admin).await;
    let mut r = req(OperationKind::Talos, Some("v1.9.3"));
    r.cluster = Some("c2".into());
    let b = c.plan_operation(&r).await.unwrap().blocked.unwrap();
    assert_eq!(b.reason, Reason::NoMachines);
    assert_eq!(
        (b.params["cluster"].as_str(), b.params["held"].as_str()),
        ("c2", "1")
    );
    let e = c.create_operation(&r).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::FailedPrecondition, Some(Reason::NoMachines))
    );
    // A shutdown includes the held worker, so it is not blocked.
    r.kind = OperationKind::Shutdown;
    r.target = None;
    assert!(c.plan_operation(&r).await.unwrap().blocked.is_none());
    assert!(api.write_log().is_empty());
}

pub(super) async fn invalid_arguments(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    let cases = [
        (
            req(OperationKind::Shutdown, Some("v1.9.3")),
            Reason::TargetNotTaken,
        ),
        (
            req(OperationKind::CaRotation, Some("x")),
            Reason::TargetNotTaken,
        ),
        (
            req(OperationKind::Talos, Some("1.9")),
            Reason::InvalidVersion,
        ),
        (
            req(OperationKind::Kubernetes, Some("latest")),
            Reason::InvalidVersion,
        ),
        (req(OperationKind::Talos, None), Reason::TargetRequired),
        (
            req(OperationKind::Cni, Some("disabled")),
            Reason::InvalidKubeProxyMode,
        ),
        (
            OperationRequest {
                max_unavailable: Some(0),
                ..req(OperationKind::Talos, Some("v1.9.3"))
            },
            Reason::InvalidMaxUnavailable,
        ),
    ];
    for (r, reason) in cases {
        let e = c.plan_operation(&r).await.unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::InvalidArgument, Some(reason)),
            "{r:?}"
        );
        let e = c.create_operation(&r).await.unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::InvalidArgument, Some(reason)),
            "{r:?}"
        );
    }
    assert!(api.write_log().is_empty());
}

pub(super) async fn the_cluster_may_be_omitted_only_when_there_is_one(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Viewer).await;
    let mut r = req(OperationKind::Shutdown, None);
    r.cluster = None;
    assert_eq!(c.plan_operation(&r).await.unwrap().cluster, "c1");
    let mut second = TalosCluster::new(
        "c2",
        TalosClusterSpec {
            talos_version: "v1.9.2".into(),
            kubernetes_version: "v1.32.3".into(),
            cni: Default::default(),
        },
    );
    second.metadata.namespace = Some("default".into());
    api.seed(&second).unwrap();
    let e = c.plan_operation(&r).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::InvalidArgument, Some(Reason::ClusterRequired))
    );
    assert_eq!(e.param("choices"), Some("c1, c2"));
    r.namespace = "empty".into();
    let e = c.plan_operation(&r).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::NotFound, Some(Reason::NoClusters))
    );
    let mut named = req(OperationKind::Shutdown, None);
    named.cluster = Some("c3".into());
    let e = c.plan_operation(&named).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::NotFound, Some(Reason::ClusterNotFound))
    );
}

/// TestPlanOperationOrderMatchesTheExecutorsCandidateOrder: the order a person confirms is the
/// order that runs, for every kind.
pub(super) async fn plan_order_matches_the_executors_order(path: Path) {
    for (kind, target, max) in [
        (OperationKind::Talos, Some("v1.9.3"), 2),
        (OperationKind::Kubernetes, Some("v1.33.0"), 1),
        (OperationKind::Cni, Some("replaced"), 3),
        (OperationKind::Ichor, Some("v0.15.0"), 1),
        (OperationKind::Shutdown, None, 1),
        (OperationKind::CaRotation, None, 1),
    ] {
        let api = world();
        let c = connect(path, &api, User::Admin).await;
        let mut r = req(kind, target);
        r.max_unavailable = Some(max);
        let plan = c.plan_operation(&r).await.unwrap();
        let created = c.create_operation(&r).await.unwrap();
        let name = created.operation.name.clone();
        let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
        let mut now: jiff::Timestamp = "2026-11-29T10:00:00Z".parse().unwrap();
        let mut ran: Vec<Vec<String>> = Vec::new();
        for _ in 0..300 {
            now += jiff::SignedDuration::from_secs(1);
            ctrl.reconcile(now).await.unwrap();
            let op = c.get_operation("default", &name).await.unwrap();
            let seen: Vec<String> = ran.iter().flatten().cloned().collect();
            let started: Vec<String> = op
                .machines
                .iter()
                .filter(|m| m.phase == MachinePhase::Running && !seen.contains(&m.name))
                .map(|m| m.name.clone())
                .collect();
            if !started.is_empty() {
                ran.push(started);
            }
            if op.phase == Phase::Completed {
                break;
            }
        }
        let planned: Vec<Vec<String>> = plan
            .steps
            .iter()
            .map(|s| s.iter().map(|m| m.name.clone()).collect())
            .collect();
        assert_eq!(ran, planned, "{kind:?}");
        let op = c.get_operation("default", &name).await.unwrap();
        assert_eq!(op.phase, Phase::Completed, "{kind:?}");
    }
}
