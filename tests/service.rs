//! OperationService behaviour, through the real kube client code against the embedded API,
//! asserting the answer and what the cluster holds (the write log) afterwards. Every scenario
//! runs over every path (a matrix, not a copy).

use crate::common;

use common::paths::{Path, User, actor, connect, writer};
use common::{names, op, small_cluster};
use ichor_demo::apiserver::auth::users;
use ichor_demo::apiserver::{EmbeddedApi, Fault, FaultRule};
use ichor_demo::controller::Controller;
use ichor_model::{
    Code, MachinePhase, OperationEffect, OperationKind, OperationRequest, Phase, Reason,
};
use ichor_resources::*;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

fn req(kind: OperationKind, target: Option<&str>) -> OperationRequest {
    OperationRequest {
        namespace: "default".into(),
        cluster: Some("c1".into()),
        kind,
        target: target.map(str::to_string),
        max_unavailable: None,
        request_id: None,
        confirmed_plan: None,
    }
}

async fn seed_op(api: &EmbeddedApi, name: &str, kind: &str, phase: &str, failure: Option<&str>) {
    let mut o = op(name, "c1", kind, 1);
    o.status = Some(TalosOperationStatus {
        phase: phase.into(),
        failure_reason: failure.map(str::to_string),
        machines: vec![ichor_resources::MachineProgress {
            name: "c1-cp-a".into(),
            phase: if failure.is_some() {
                "Failed"
            } else {
                "Completed"
            }
            .into(),
            message: "m".into(),
            ..Default::default()
        }],
        ..Default::default()
    });
    if phase == "Paused" && failure.is_none() {
        o.spec.paused = true;
    }
    api.seed(&o).unwrap();
}

fn admin_clusters(api: &EmbeddedApi) -> Api<TalosCluster> {
    Api::namespaced(api.client(users::ADMIN_TOKEN), "default")
}

async fn track_with_argo(api: &EmbeddedApi) {
    admin_clusters(api)
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {names::ARGOCD_TRACKING_ID: "platform-c1:ichor.maesh.dev/TalosCluster:default/c1"}}})),
        )
        .await
        .unwrap();
    api.clear_write_log();
}

// ---- reads ----

async fn list_and_get_return_the_status_as_it_is(path: Path) {
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
async fn who_am_i_asks_kubernetes_in_process_and_names_the_caller_otherwise() {
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

async fn clusters_show_versions_machines_tracking_and_the_unfinished_operation(path: Path) {
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

// ---- plans ----

async fn plan_talos_steps_held_and_versions(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Viewer).await;
    let mut r = req(OperationKind::Talos, Some("1.9.3"));
    r.max_unavailable = Some(2);
    let plan = c.plan_operation(&r).await.unwrap();
    assert_eq!(plan.effect, OperationEffect::Reboot);
    let steps: Vec<Vec<&str>> = plan
        .steps
        .iter()
        .map(|s| s.iter().map(|m| m.name.as_str()).collect())
        .collect();
    assert_eq!(
        steps,
        vec![
            vec!["c1-cp-a"],
            vec!["c1-cp-b"],
            vec!["c1-w-c", "c1-w-a"],
            vec!["c1-w-b"]
        ]
    );
    assert_eq!(plan.steps[0][0].role, "controlplane");
    assert_eq!(plan.held.len(), 1);
    assert_eq!(
        (plan.held[0].name.as_str(), plan.held[0].reason.as_str()),
        ("c1-w-held", "disk replacement")
    );
    assert_eq!(
        (plan.current.as_str(), plan.target.as_str()),
        ("v1.9.2", "v1.9.3"),
        "answered with the leading v"
    );
    assert_eq!(plan.machine_count(), 5);
    let change = plan.spec_change.unwrap();
    assert_eq!(
        (
            change.field.as_str(),
            change.from.as_str(),
            change.to.as_str()
        ),
        ("spec.talosVersion", "v1.9.2", "v1.9.3")
    );
    assert!(plan.blocked.is_none());
    assert!(api.write_log().is_empty(), "a plan writes nothing");
}

async fn plan_effects_and_shapes_for_every_kind(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Viewer).await;
    for (kind, target, effect) in [
        (
            OperationKind::Talos,
            Some("v1.9.3"),
            OperationEffect::Reboot,
        ),
        (
            OperationKind::Kubernetes,
            Some("v1.33.0"),
            OperationEffect::RestartComponents,
        ),
        (
            OperationKind::Cni,
            Some("replaced"),
            OperationEffect::RestartComponents,
        ),
        (OperationKind::Ichor, Some("0.15.0"), OperationEffect::None),
        (OperationKind::Shutdown, None, OperationEffect::Stop),
        (OperationKind::CaRotation, None, OperationEffect::CaRotation),
    ] {
        let plan = c.plan_operation(&req(kind, target)).await.unwrap();
        assert_eq!(plan.effect, effect, "{kind:?}");
        assert!(plan.blocked.is_none(), "{kind:?}: {:?}", plan.blocked);
    }
    let ichor = c
        .plan_operation(&req(OperationKind::Ichor, Some("0.15.0")))
        .await
        .unwrap();
    assert!(ichor.steps.is_empty());
    assert_eq!(
        (ichor.current.as_str(), ichor.target.as_str()),
        ("v0.14.2", "v0.15.0")
    );
    assert_eq!(
        ichor.spec_change.unwrap().resource_kind,
        "IchorInstallation"
    );
    let shutdown = c
        .plan_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap();
    let steps: Vec<Vec<&str>> = shutdown
        .steps
        .iter()
        .map(|s| s.iter().map(|m| m.name.as_str()).collect())
        .collect();
    assert_eq!(
        steps,
        vec![
            vec!["c1-w-held", "c1-w-c", "c1-w-a", "c1-w-b"],
            vec!["c1-cp-a", "c1-cp-b"]
        ]
    );
    assert!(shutdown.held.is_empty() && shutdown.spec_change.is_none());
    let ca = c
        .plan_operation(&req(OperationKind::CaRotation, None))
        .await
        .unwrap();
    let order: Vec<&str> = ca.steps.iter().flatten().map(|m| m.name.as_str()).collect();
    assert_eq!(
        order,
        [
            "c1-cp-a",
            "c1-cp-b",
            "c1-w-held",
            "c1-w-c",
            "c1-w-a",
            "c1-w-b"
        ]
    );
    assert!(
        ca.steps.iter().all(|s| s.len() == 1),
        "one machine at a time"
    );
    assert!(
        ca.held.is_empty(),
        "a held machine is not skipped: it would be locked out"
    );
    assert_eq!(
        ca.stages,
        ["Accepting", "Issuing", "AwaitingCredentials", "Dropping"]
    );
    assert!(ca.replaces_secrets_bundle);
    assert!(api.write_log().is_empty());
}

async fn plan_says_what_the_review_must_say_besides_the_steps(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Viewer).await;
    let unapproved = |p: &ichor_model::Plan| -> Vec<(String, String)> {
        p.unapproved
            .iter()
            .map(|m| (m.name.clone(), m.role.clone()))
            .collect()
    };
    let not_skipped = |p: &ichor_model::Plan| -> Vec<(String, String)> {
        p.held_not_skipped
            .iter()
            .map(|h| (h.name.clone(), h.reason.clone()))
            .collect()
    };
    let held = vec![("c1-w-held".to_string(), "disk replacement".to_string())];
    let idle = vec![("c1-w-unapproved".to_string(), "worker".to_string())];
    for (kind, target) in [
        (OperationKind::Talos, Some("v1.9.3")),
        (OperationKind::Kubernetes, Some("v1.33.0")),
        (OperationKind::Cni, Some("replaced")),
        (OperationKind::Shutdown, None),
        (OperationKind::CaRotation, None),
    ] {
        let plan = c.plan_operation(&req(kind, target)).await.unwrap();
        assert_eq!(unapproved(&plan), idle, "{kind:?}: not touched, listed");
        let skips = kind.skips_held();
        assert_eq!(plan.held.is_empty(), !skips, "{kind:?}");
        assert_eq!(
            not_skipped(&plan),
            if skips { Vec::new() } else { held.clone() },
            "{kind:?}: a held machine it handles anyway is named"
        );
        assert_eq!(
            plan.credentials_stop_working,
            kind == OperationKind::CaRotation,
            "{kind:?}"
        );
        if !skips {
            assert!(
                plan.steps.iter().flatten().any(|m| m.name == "c1-w-held"),
                "{kind:?}: and it is in the steps"
            );
        }
    }
    let ichor = c
        .plan_operation(&req(OperationKind::Ichor, Some("0.15.0")))
        .await
        .unwrap();
    assert!(ichor.unapproved.is_empty() && ichor.held_not_skipped.is_empty());
    assert!(!ichor.credentials_stop_working);
    assert!(api.write_log().is_empty());
}

/// A completed operation of `kind` on c1, created `minutes` ago by `actor`.
fn seed_done(api: &EmbeddedApi, name: &str, kind: &str, minutes: i64, actor: &str) {
    let at = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(minutes * 60);
    let mut o = op(name, "c1", kind, 1);
    o.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at));
    o.metadata.annotations = Some([(names::ACTOR.to_string(), actor.to_string())].into());
    o.status = Some(TalosOperationStatus {
        phase: "Completed".into(),
        finished_at: Some(format_time(at + jiff::SignedDuration::from_secs(60))),
        ..Default::default()
    });
    api.seed(&o).unwrap();
}

async fn a_completed_shutdown_is_remembered_and_a_start_after_it_warned(path: Path) {
    let api = world();
    seed_done(&api, "c1-talos-old", "talos", 90, "alice");
    seed_done(&api, "c1-shutdown-1", "shutdown", 30, "bob");
    let c = connect(path, &api, User::Viewer).await;
    let cluster = c.get_cluster("default", "c1").await.unwrap();
    let r = cluster
        .last_shutdown
        .clone()
        .expect("the shutdown is remembered");
    assert_eq!(
        (r.operation.as_str(), r.actor.as_deref(), r.still_down),
        ("c1-shutdown-1", Some("bob"), true)
    );
    assert!(r.finished_at.is_some());
    let listed = c.list_clusters(Some("default")).await.unwrap();
    assert_eq!(listed[0].last_shutdown, cluster.last_shutdown);
    for (kind, target) in [
        (OperationKind::Talos, Some("v1.9.3")),
        (OperationKind::Shutdown, None),
        (OperationKind::CaRotation, None),
    ] {
        let plan = c.plan_operation(&req(kind, target)).await.unwrap();
        assert_eq!(
            plan.shut_down.as_ref().map(|s| s.operation.as_str()),
            Some("c1-shutdown-1"),
            "{kind:?}: a start on a cluster that was shut down warns"
        );
        assert!(plan.blocked.is_none(), "{kind:?}: a warning, not a refusal");
    }
    // Something started on it since: the trace stays, the warning goes.
    seed_done(&api, "c1-kubernetes-2", "kubernetes", 5, "carol");
    let cluster = c.get_cluster("default", "c1").await.unwrap();
    let r = cluster.last_shutdown.expect("still remembered");
    assert!(!r.still_down);
    let plan = c
        .plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    assert_eq!(plan.shut_down, None);
    assert!(api.write_log().is_empty());
}

async fn the_resource_is_read_as_yaml_as_the_caller(path: Path) {
    let api = world();
    let mut o = op("c1-talos-y", "c1", "talos", 1);
    o.metadata.managed_fields = Some(vec![Default::default()]);
    o.status = Some(TalosOperationStatus {
        phase: "Paused".into(),
        failure_reason: Some("machine c1-w-a failed: \u{1b}[2Jgone\nkind: Evil".into()),
        ..Default::default()
    });
    api.seed(&o).unwrap();
    let c = connect(path, &api, User::Viewer).await;
    let yaml = c
        .get_operation_manifest("default", "c1-talos-y")
        .await
        .unwrap();
    assert!(yaml.contains("kind: TalosOperation\n"), "{yaml}");
    assert!(yaml.contains("  name: c1-talos-y\n"), "{yaml}");
    assert!(yaml.contains("  phase: Paused\n"), "{yaml}");
    assert!(!yaml.contains("managedFields"), "{yaml}");
    assert!(
        yaml.contains(r#"failureReason: "machine c1-w-a failed: \e[2Jgone\nkind: Evil""#),
        "hostile text stays inside its quotes, escaped: {yaml}"
    );
    assert!(!yaml.contains('\u{1b}'), "{yaml}");
    assert_eq!(yaml.matches("\nkind: ").count(), 1, "{yaml}");
    // An object that does not read as a TalosOperation is shown all the same.
    api.seed(&op("c1-talos-bad", "c1", "talos", 1)).unwrap();
    assert!(api.edit("talosoperations", "default", "c1-talos-bad", |v| {
        v["status"] = json!({"phase": 42});
    }));
    let yaml = c
        .get_operation_manifest("default", "c1-talos-bad")
        .await
        .unwrap();
    assert!(yaml.contains("  phase: 42\n"), "{yaml}");
    let missing = c
        .get_operation_manifest("default", "nope")
        .await
        .unwrap_err();
    assert_eq!(
        (missing.code, missing.reason),
        (Code::NotFound, Some(Reason::OperationNotFound))
    );
    assert!(api.write_log().is_empty(), "a read");
}

async fn plan_blocked_by_an_unfinished_operation(path: Path) {
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

async fn plan_blocked_by_gitops_tracking(path: Path) {
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

async fn plan_blocked_by_a_downgrade(path: Path) {
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

async fn a_plan_that_touches_no_machine_is_blocked(path: Path) {
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

async fn invalid_arguments(path: Path) {
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

async fn the_cluster_may_be_omitted_only_when_there_is_one(path: Path) {
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
async fn plan_order_matches_the_executors_order(path: Path) {
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

// ---- starts ----

async fn create_writes_the_spec_then_the_operation(path: Path) {
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

async fn a_rerun_after_a_half_failure_only_creates_the_operation(path: Path) {
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

async fn a_tracked_spec_is_refused_then_started_with_the_version_git_wrote(path: Path) {
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

async fn create_refuses_what_the_plan_refuses_and_writes_nothing(path: Path) {
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

async fn kube_proxy_switch_sets_and_removes_the_confirmation(path: Path) {
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
async fn the_kube_proxy_confirmation_never_outlives_its_start(path: Path) {
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

async fn a_confirmation_that_cannot_be_removed_is_a_warning(path: Path) {
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

// ---- pause, resume, delete ----

async fn pause_and_resume_record_who_and_when(path: Path) {
    let api = world();
    seed_op(&api, "run", "talos", "Running", None).await;
    let c = connect(path, &api, User::Operator).await;
    let paused = c
        .set_operation_paused("default", "run", true, None)
        .await
        .unwrap();
    assert!(paused.paused);
    assert_eq!(
        paused.paused_by.as_deref(),
        Some(actor(path, User::Operator))
    );
    assert!(paused.paused_at.is_some());
    let resumed = c
        .set_operation_paused("default", "run", false, None)
        .await
        .unwrap();
    assert!(!resumed.paused);
    let u = writer(path, User::Operator);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("patch talosoperations by {u}"),
            format!("patch talosoperations by {u}")
        ]
    );
    // Pausing what is paused writes nothing.
    api.clear_write_log();
    c.set_operation_paused("default", "run", false, None)
        .await
        .unwrap();
    assert!(api.write_log().is_empty());
    // A conflict is retried with a fresh read.
    api.conflict_next_writes(1);
    c.set_operation_paused("default", "run", true, None)
        .await
        .unwrap();
    assert_eq!(api.write_log().len(), 1);
}

async fn resuming_a_pause_caused_by_a_failure_is_refused(path: Path) {
    let api = world();
    seed_op(
        &api,
        "broken",
        "talos",
        "Paused",
        Some("machine c1-cp-a failed: installer exited"),
    )
    .await;
    let c = connect(path, &api, User::Operator).await;
    let e = c
        .set_operation_paused("default", "broken", false, None)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::FailedPrecondition, Some(Reason::ResumeAfterFailure))
    );
    assert_eq!(e.param("machine"), Some("c1-cp-a"));
    assert!(
        e.message.contains("delete it and start again"),
        "{}",
        e.message
    );
    assert!(api.write_log().is_empty());
}

async fn finished_operations_cannot_be_paused_or_resumed(path: Path) {
    let api = world();
    seed_op(&api, "done", "talos", "Completed", None).await;
    seed_op(&api, "failed", "talos", "Failed", None).await;
    let c = connect(path, &api, User::Operator).await;
    for (name, paused) in [
        ("done", true),
        ("done", false),
        ("failed", true),
        ("failed", false),
    ] {
        let e = c
            .set_operation_paused("default", name, paused, None)
            .await
            .unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::FailedPrecondition, Some(Reason::OperationFinished)),
            "{name}"
        );
    }
    let e = c
        .set_operation_paused("default", "nope", true, None)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::NotFound, Some(Reason::OperationNotFound))
    );
    assert!(api.write_log().is_empty());
}

async fn delete_removes_the_operation(path: Path) {
    let api = world();
    seed_op(&api, "run", "talos", "Running", None).await;
    let c = connect(path, &api, User::Operator).await;
    c.delete_operation("default", "run", None).await.unwrap();
    assert_eq!(
        names(&api.write_log()),
        [format!(
            "delete talosoperations by {}",
            writer(path, User::Operator)
        )]
    );
    let e = c
        .delete_operation("default", "run", None)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::NotFound, Some(Reason::OperationNotFound))
    );
}

// ---- what was confirmed ----

/// Replaces operation `name` by a running one of the same name (a new uid).
fn replace_op(api: &EmbeddedApi, name: &str) {
    api.remove("talosoperations", "default", name);
    let mut o = op(name, "c1", "talos", 1);
    o.status = Some(TalosOperationStatus {
        phase: "Running".into(),
        ..Default::default()
    });
    api.seed(&o).unwrap();
}

async fn writes_are_bound_to_what_was_confirmed(path: Path) {
    let api = world();
    seed_op(&api, "done", "talos", "Completed", None).await;
    let c = connect(path, &api, User::Operator).await;
    let asked = c
        .get_operation("default", "done")
        .await
        .unwrap()
        .confirmed();
    assert!(asked.finished && !asked.uid.is_empty());
    // The finished operation is gone and a running one has its name: refused, untouched.
    replace_op(&api, "done");
    let e = c
        .delete_operation("default", "done", Some(&asked))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason, e.param("change")),
        (
            Code::FailedPrecondition,
            Some(Reason::ChangedSinceConfirmed),
            Some("replaced")
        )
    );
    assert_eq!(e.param("phase"), Some("Running"));
    assert!(api.write_log().is_empty());
    assert!(api.object("talosoperations", "default", "done").is_some());

    // Paused by someone else since the question: the spec changed.
    let asked = c
        .get_operation("default", "done")
        .await
        .unwrap()
        .confirmed();
    api.edit("talosoperations", "default", "done", |o| {
        o["spec"]["paused"] = json!(true);
    });
    let e = c
        .set_operation_paused("default", "done", true, Some(&asked))
        .await
        .unwrap_err();
    assert_eq!(e.param("change"), Some("paused"));
    api.edit("talosoperations", "default", "done", |o| {
        o["spec"]["paused"] = json!(false);
    });
    let e = c
        .set_operation_paused("default", "done", true, Some(&asked))
        .await
        .unwrap_err();
    assert_eq!(
        e.param("change"),
        Some("spec"),
        "paused and resumed: the same state, another spec"
    );
    // Finished since the question.
    let asked = c
        .get_operation("default", "done")
        .await
        .unwrap()
        .confirmed();
    api.edit("talosoperations", "default", "done", |o| {
        o["status"]["phase"] = json!("Failed");
    });
    let e = c
        .delete_operation("default", "done", Some(&asked))
        .await
        .unwrap_err();
    assert_eq!(e.param("change"), Some("finished"));
    assert!(api.write_log().is_empty());

    // Status writes do not change the generation: a running rollout is paused as confirmed.
    let api = world();
    seed_op(&api, "run", "talos", "Running", None).await;
    let c = connect(path, &api, User::Operator).await;
    let asked = c.get_operation("default", "run").await.unwrap().confirmed();
    api.edit("talosoperations", "default", "run", |o| {
        o["status"]["machines"][0]["message"] = json!("rebooting");
    });
    let paused = c
        .set_operation_paused("default", "run", true, Some(&asked))
        .await
        .unwrap();
    assert!(paused.paused);
}

async fn the_write_goes_to_the_object_that_was_read(path: Path) {
    // Replaced between the service's own read and its write: the uid precondition refuses the
    // write, the service reads again, and the confirmation no longer holds.
    for verb in ["patch", "delete"] {
        let api = world();
        seed_op(&api, "run", "talos", "Running", None).await;
        let c = connect(path, &api, User::Operator).await;
        let asked = c.get_operation("default", "run").await.unwrap().confirmed();
        api.before(FaultRule::on(verb, "talosoperations"), |api| {
            replace_op(api, "run")
        });
        let e = if verb == "patch" {
            c.set_operation_paused("default", "run", true, Some(&asked))
                .await
                .map(drop)
                .unwrap_err()
        } else {
            c.delete_operation("default", "run", Some(&asked))
                .await
                .unwrap_err()
        };
        assert_eq!(e.param("change"), Some("replaced"), "{verb}: {e:?}");
        assert!(api.write_log().is_empty(), "{verb}");
        let theirs = api.object("talosoperations", "default", "run").unwrap();
        assert_eq!(theirs["spec"]["paused"], false, "{verb}: untouched");
    }
}

async fn a_start_is_bound_to_the_plan_it_was_reviewed_on(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    let reviewed = c
        .plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    assert_eq!(reviewed.fingerprint.len(), 32);
    let bound = |plan: &ichor_model::Plan| OperationRequest {
        confirmed_plan: Some(plan.fingerprint.clone()),
        ..req(OperationKind::Talos, Some("v1.9.3"))
    };
    // A machine put on hold since the Review: another plan.
    api.edit("machines", "default", "c1-w-a", |m| {
        m["metadata"]["annotations"] = json!({names::UPGRADE_HOLD: "firmware"});
    });
    let e = c.create_operation(&bound(&reviewed)).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::FailedPrecondition, Some(Reason::PlanChanged))
    );
    assert!(api.write_log().is_empty());
    // A change the plan does not show does not matter.
    let reviewed = c
        .plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    api.edit("talosclusters", "default", "c1", |c| {
        c["spec"]["kubernetesVersion"] = json!("v1.32.4");
    });
    // Changed between the start's own read and its spec write: the write conflicts, and the
    // fresh read is re-planned and re-checked; the target now written by someone else is
    // another plan.
    api.before(FaultRule::on("update", "talosclusters"), |api| {
        api.edit("talosclusters", "default", "c1", |c| {
            c["spec"]["talosVersion"] = json!("v1.9.3");
        });
    });
    let e = c.create_operation(&bound(&reviewed)).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::PlanChanged), "{e:?}");
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("create leases by {u}"),
            format!("update leases by {u}")
        ],
        "only the claim, given back: no spec write, no operation"
    );
    // Reviewed again, it starts, writing no spec.
    api.clear_write_log();
    let reviewed = c
        .plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    let created = c.create_operation(&bound(&reviewed)).await.unwrap();
    assert!(created.spec_written.is_none());
    assert_eq!(common::operations_created(&api), 1);
}

async fn a_repeated_start_returns_its_operation_and_writes_nothing(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    let r = OperationRequest {
        request_id: Some("7f3a-start".into()),
        ..req(OperationKind::Shutdown, None)
    };
    let first = c.create_operation(&r).await.unwrap();
    assert!(!first.found);
    assert_eq!(first.operation.request_id.as_deref(), Some("7f3a-start"));
    api.clear_write_log();
    let again = c.create_operation(&r).await.unwrap();
    assert!(again.found);
    assert_eq!(again.operation.name, first.operation.name);
    assert!(api.write_log().is_empty(), "a repeat writes nothing");
    // A new request is a new start, refused for the first.
    let e = c
        .create_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::UnfinishedOperation));
    assert_eq!(e.param("operation"), Some(first.operation.name.as_str()));
    // A request id that is not one is refused before anything is read.
    let bad = OperationRequest {
        request_id: Some("a b\u{1b}[2J".into()),
        ..req(OperationKind::Shutdown, None)
    };
    let e = c.create_operation(&bad).await.unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(!e.message.contains('\u{1b}'));
}

fn claim(api: &EmbeddedApi, holder: &str, renewed: jiff::Timestamp) {
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    let lease = Lease {
        metadata: kube::api::ObjectMeta {
            name: Some(format!("{}c1", names::START_CLAIM_PREFIX)),
            namespace: Some("default".into()),
            annotations: Some(
                [
                    (names::CLAIM_OPERATION.to_string(), "c1-talos-zzzzz".into()),
                    (names::ACTOR.to_string(), "carol".into()),
                ]
                .into(),
            ),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            renew_time: Some(MicroTime(renewed)),
            lease_duration_seconds: Some(60),
            ..Default::default()
        }),
    };
    api.seed(&lease).unwrap();
}

async fn a_standing_claim_refuses_other_starts(path: Path) {
    let api = world();
    claim(&api, "another-start", jiff::Timestamp::now());
    let c = connect(path, &api, User::Admin).await;
    let plan = c
        .plan_operation(&req(OperationKind::CaRotation, None))
        .await
        .unwrap();
    let blocked = plan.blocked.expect("blocked by the claim");
    assert_eq!(blocked.reason, Reason::StartInProgress);
    assert_eq!(blocked.params["operation"], "c1-talos-zzzzz");
    assert_eq!(blocked.params["actor"], "carol");
    let e = c
        .create_operation(&req(OperationKind::CaRotation, None))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::StartInProgress));
    assert!(api.write_log().is_empty());
    // A claim that has lapsed (its start died) stands in no one's way.
    claim(
        &api,
        "another-start",
        jiff::Timestamp::now() - jiff::SignedDuration::from_secs(120),
    );
    c.create_operation(&req(OperationKind::CaRotation, None))
        .await
        .unwrap();
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("update leases by {u}"),
            format!("create talosoperations by {u}"),
            format!("update leases by {u}")
        ]
    );
}

async fn an_ichor_upgrade_names_the_clusters_it_serves_and_waits_for_them(path: Path) {
    let api = world();
    let mut c2 = TalosCluster::new(
        "c2",
        TalosClusterSpec {
            talos_version: "v1.9.2".into(),
            kubernetes_version: "v1.32.3".into(),
            cni: CniSpec {
                kube_proxy: "enabled".into(),
            },
        },
    );
    c2.metadata.namespace = Some("default".into());
    api.seed(&c2).unwrap();
    let c = connect(path, &api, User::Admin).await;
    let plan = c
        .plan_operation(&req(OperationKind::Ichor, Some("v0.15.0")))
        .await
        .unwrap();
    assert_eq!(plan.shared_with, ["c2"]);
    assert!(plan.blocked.is_none());
    let mut theirs = op("c2-rollout", "c2", "kubernetes", 1);
    theirs.status = Some(TalosOperationStatus {
        phase: "Running".into(),
        ..Default::default()
    });
    api.seed(&theirs).unwrap();
    let plan = c
        .plan_operation(&req(OperationKind::Ichor, Some("v0.15.0")))
        .await
        .unwrap();
    let blocked = plan.blocked.expect("a rollout on another served cluster");
    assert_eq!(blocked.reason, Reason::InstallationBusy);
    assert_eq!(
        (
            blocked.params["cluster"].as_str(),
            blocked.params["operation"].as_str()
        ),
        ("c2", "c2-rollout")
    );
    let e = c
        .create_operation(&req(OperationKind::Ichor, Some("v0.15.0")))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::InstallationBusy));
    assert!(api.write_log().is_empty());
    // Other kinds on c1 are not held up by c2's rollout.
    let plan = c
        .plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    assert!(plan.blocked.is_none() && plan.shared_with.is_empty());
}

async fn who_may_start_pause_and_delete_is_asked_of_kubernetes(path: Path) {
    let api = world();
    let admin = connect(path, &api, User::Admin).await;
    let all = admin.permissions("default").await.unwrap();
    assert!(all.start && all.pause && all.delete && all.edit_clusters && all.edit_installation);
    let viewer = connect(path, &api, User::Viewer).await;
    assert_eq!(
        viewer.permissions("default").await.unwrap(),
        ichor_model::Permissions::default()
    );
    let operator = connect(path, &api, User::Operator).await;
    let p = operator.permissions("default").await.unwrap();
    assert!(p.start && p.pause && p.delete && !p.edit_clusters && !p.edit_installation);
    // The Review says who may not start what.
    let plan = operator
        .plan_operation(&req(OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    let denied = plan.denied.expect("the operator may not edit the cluster");
    assert_eq!(denied.reason, Reason::NotPermitted);
    assert_eq!(
        (
            denied.params["verb"].as_str(),
            denied.params["resource"].as_str()
        ),
        ("update", "talosclusters")
    );
    let plan = operator
        .plan_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap();
    assert!(plan.denied.is_none(), "a shutdown writes no spec");
    let plan = viewer
        .plan_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap();
    assert_eq!(plan.denied.unwrap().params["resource"], "talosoperations");
    assert!(api.write_log().is_empty(), "questions write nothing");
}

// ---- permissions ----

async fn a_viewer_may_read_and_nothing_else(path: Path) {
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

async fn a_caller_who_may_edit_clusters_but_not_create_operations_changes_nothing(path: Path) {
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

async fn an_operator_may_not_edit_the_spec_but_may_start_what_it_names(path: Path) {
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

// ---- Kubernetes faults ----

async fn kubernetes_faults_come_back_as_codes(path: Path) {
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

// ---- objects that cannot be read ----

async fn a_badly_typed_object_is_a_row_and_the_list_mends_when_it_is_fixed(path: Path) {
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

async fn an_unreadable_cluster_or_machine_is_listed_as_such_and_blocks_a_start(path: Path) {
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

#[path = "service/claims.rs"]
mod claims;
use claims::{
    a_create_answered_late_then_applied_makes_one_operation, a_hostile_claim_is_bounded_or_named,
    a_refused_start_leaves_its_request_id_free, a_request_id_names_one_request,
    a_stray_confirmation_is_named_and_taken_back, delete_and_start_again_works_at_once,
};

crate::matrix!(
    delete_and_start_again_works_at_once,
    a_create_answered_late_then_applied_makes_one_operation,
    a_hostile_claim_is_bounded_or_named,
    a_request_id_names_one_request,
    a_refused_start_leaves_its_request_id_free,
    a_stray_confirmation_is_named_and_taken_back,
    list_and_get_return_the_status_as_it_is,
    clusters_show_versions_machines_tracking_and_the_unfinished_operation,
    plan_talos_steps_held_and_versions,
    plan_effects_and_shapes_for_every_kind,
    plan_says_what_the_review_must_say_besides_the_steps,
    a_completed_shutdown_is_remembered_and_a_start_after_it_warned,
    the_resource_is_read_as_yaml_as_the_caller,
    plan_blocked_by_an_unfinished_operation,
    plan_blocked_by_gitops_tracking,
    plan_blocked_by_a_downgrade,
    invalid_arguments,
    a_plan_that_touches_no_machine_is_blocked,
    the_cluster_may_be_omitted_only_when_there_is_one,
    plan_order_matches_the_executors_order,
    create_writes_the_spec_then_the_operation,
    a_rerun_after_a_half_failure_only_creates_the_operation,
    a_tracked_spec_is_refused_then_started_with_the_version_git_wrote,
    create_refuses_what_the_plan_refuses_and_writes_nothing,
    kube_proxy_switch_sets_and_removes_the_confirmation,
    a_confirmation_that_cannot_be_removed_is_a_warning,
    the_kube_proxy_confirmation_never_outlives_its_start,
    writes_are_bound_to_what_was_confirmed,
    the_write_goes_to_the_object_that_was_read,
    a_start_is_bound_to_the_plan_it_was_reviewed_on,
    a_repeated_start_returns_its_operation_and_writes_nothing,
    a_standing_claim_refuses_other_starts,
    an_ichor_upgrade_names_the_clusters_it_serves_and_waits_for_them,
    who_may_start_pause_and_delete_is_asked_of_kubernetes,
    pause_and_resume_record_who_and_when,
    resuming_a_pause_caused_by_a_failure_is_refused,
    finished_operations_cannot_be_paused_or_resumed,
    delete_removes_the_operation,
    a_viewer_may_read_and_nothing_else,
    a_caller_who_may_edit_clusters_but_not_create_operations_changes_nothing,
    an_operator_may_not_edit_the_spec_but_may_start_what_it_names,
    kubernetes_faults_come_back_as_codes,
    a_badly_typed_object_is_a_row_and_the_list_mends_when_it_is_fixed,
    an_unreadable_cluster_or_machine_is_listed_as_such_and_blocks_a_start,
);

#[tokio::test(start_paused = true)]
async fn a_request_that_outlasts_its_deadline_is_deadline_exceeded() {
    let api = world();
    let c = connect(Path::InProcess, &api, User::Admin).await;
    api.fail_next(1, Fault::Delay(Duration::from_secs(120)));
    let e = c.list_operations(Some("default")).await.unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded);
}

#[tokio::test]
async fn read_only_clients_refuse_writes_themselves() {
    use ichor_client::inprocess::InProcessClient;
    use ichor_client::retry::Retrying;
    use ichor_model::OperationClient;
    use ichor_service::OperationService;
    use ichor_service::access::{Caller, KubeAccess};
    let api = world();
    seed_op(&api, "run", "talos", "Running", None).await;
    let service =
        OperationService::new(KubeAccess::new(api.client(users::ADMIN_TOKEN), "ichor-tui"));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let c = Retrying::new(InProcessClient::new(service, Caller::in_process()), tx).read_only(true);
    c.list_operations(None).await.unwrap();
    c.plan_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap();
    for e in [
        c.create_operation(&req(OperationKind::Talos, Some("v1.9.3")))
            .await
            .map(drop)
            .unwrap_err(),
        c.set_operation_paused("default", "run", true, None)
            .await
            .map(drop)
            .unwrap_err(),
        c.delete_operation("default", "run", None)
            .await
            .unwrap_err(),
    ] {
        assert_eq!(
            (e.code, e.reason),
            (Code::PermissionDenied, Some(Reason::ReadOnly))
        );
    }
    assert!(api.write_log().is_empty());
}
