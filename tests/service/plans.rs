//! Plans: the steps, held machines and versions, the effect and shape of every kind, what the Review must say, the trace of a finished shutdown, the resource as YAML.

use super::*;

pub(super) async fn plan_talos_steps_held_and_versions(path: Path) {
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

pub(super) async fn plan_effects_and_shapes_for_every_kind(path: Path) {
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

pub(super) async fn plan_says_what_the_review_must_say_besides_the_steps(path: Path) {
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

pub(super) async fn a_completed_shutdown_is_remembered_and_a_start_after_it_warned(path: Path) {
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

pub(super) async fn the_resource_is_read_as_yaml_as_the_caller(path: Path) {
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
