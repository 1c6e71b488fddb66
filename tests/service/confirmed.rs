//! Pause, resume and delete, and what a confirmation binds: who and when, a resume after a failure, finished operations, the object read, the plan reviewed, a repeated start, a standing claim, an ichor upgrade's clusters, the permissions asked.

use super::*;
use ichor_model::{HistoryAction, HistoryOutcome};

pub(super) async fn pause_and_resume_record_who_and_when(path: Path) {
    let api = world();
    seed_op(&api, "run", "talos", "Running", None).await;
    let c = connect(path, &api, User::Operator).await;
    let admin = connect(path, &api, User::Admin).await;
    let before = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(1);
    let paused = c
        .set_operation_paused("default", "run", true, None)
        .await
        .unwrap();
    assert!(paused.paused);
    assert_eq!(
        paused.paused_by.as_deref(),
        Some(actor(path, User::Operator))
    );
    assert!(paused.paused_at.is_some_and(|at| at >= before));
    // Resumed by another person: both are kept, each with its person, time and outcome.
    let resumed = admin
        .set_operation_paused("default", "run", false, None)
        .await
        .unwrap();
    assert!(!resumed.paused);
    assert_eq!(resumed.paused_by.as_deref(), Some(actor(path, User::Admin)));
    let history: Vec<(HistoryAction, &str, HistoryOutcome)> = resumed
        .history
        .iter()
        .map(|e| (e.action.clone(), e.actor.as_str(), e.outcome.clone()))
        .collect();
    assert_eq!(
        history,
        [
            (
                HistoryAction::Pause,
                actor(path, User::Operator),
                HistoryOutcome::Applied
            ),
            (
                HistoryAction::Resume,
                actor(path, User::Admin),
                HistoryOutcome::Applied
            ),
        ],
        "{path:?}"
    );
    assert!(
        resumed
            .history
            .iter()
            .all(|e| e.at.is_some_and(|at| at >= before))
    );
    let read = c.get_operation("default", "run").await.unwrap();
    assert_eq!(
        read.history, resumed.history,
        "{path:?}: read back as written"
    );
    // Both writes name ichor-tui as their field manager, on every path.
    let stored = api.object("talosoperations", "default", "run").unwrap();
    let managers: Vec<(&str, &str)> = stored["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| Some((e["manager"].as_str()?, e["operation"].as_str()?)))
        .collect();
    assert!(
        managers.contains(&(ichor_service::manager::FIELD_MANAGER, "Update")),
        "{path:?}: {managers:?}"
    );
    let (u, a) = (writer(path, User::Operator), writer(path, User::Admin));
    assert_eq!(
        names(&api.write_log()),
        [
            format!("patch talosoperations by {u}"),
            format!("patch talosoperations by {a}")
        ]
    );
    // Each write an Event made as its person, naming them.
    assert_eq!(
        common::events_written(&api.write_log()),
        [
            format!("create events by {u}"),
            format!("create events by {a}")
        ]
    );
    let events = admin
        .list_events("default", "run", ichor_model::EventsWanted::All)
        .await
        .unwrap();
    let said: Vec<(String, String)> = events
        .events
        .iter()
        .map(|e| (e.reason.clone(), e.message.clone()))
        .collect();
    for (reason, who) in [("PauseRequested", u), ("ResumeRequested", a)] {
        assert!(
            said.iter()
                .any(|(r, m)| r == reason && m.contains(&format!("by {who}"))),
            "{path:?}: {said:?}"
        );
    }
    // Pausing what is paused writes nothing.
    api.clear_write_log();
    c.set_operation_paused("default", "run", false, None)
        .await
        .unwrap();
    assert!(api.write_log().is_empty());
    // A conflict is retried with a fresh read: one write, one entry.
    api.conflict_next_writes(1);
    let again = c
        .set_operation_paused("default", "run", true, None)
        .await
        .unwrap();
    assert_eq!(names(&api.write_log()).len(), 1);
    assert_eq!(again.history.len(), 3);
}

/// The Event that names the person is written after the pause landed: when it cannot be (the
/// API answers 503, or the connection breaks), the pause is still answered as done, written
/// once, with its person in the history; nothing is written again.
pub(super) async fn a_pause_whose_event_cannot_be_written_is_still_done(path: Path) {
    for fault in [Fault::Unavailable, Fault::Reset] {
        let api = world();
        seed_op(&api, "run", "talos", "Running", None).await;
        let c = connect(path, &api, User::Operator).await;
        api.fail_when(FaultRule::on("create", "events"), fault);
        let paused = c
            .set_operation_paused("default", "run", true, None)
            .await
            .unwrap_or_else(|e| panic!("{path:?} {fault:?}: {e:?}"));
        assert!(paused.paused, "{path:?} {fault:?}");
        let who: Vec<&str> = paused.history.iter().map(|e| e.actor.as_str()).collect();
        assert_eq!(who, [actor(path, User::Operator)], "{path:?} {fault:?}");
        let u = writer(path, User::Operator);
        assert_eq!(
            names(&api.write_log()),
            [format!("patch talosoperations by {u}")],
            "{path:?} {fault:?}"
        );
        assert!(
            common::events_written(&api.write_log()).is_empty(),
            "{path:?} {fault:?}: {:?}",
            api.write_log()
        );
    }
}

pub(super) async fn resuming_a_pause_caused_by_a_failure_is_refused(path: Path) {
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

pub(super) async fn finished_operations_cannot_be_paused_or_resumed(path: Path) {
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

pub(super) async fn delete_removes_the_operation(path: Path) {
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

pub(super) async fn writes_are_bound_to_what_was_confirmed(path: Path) {
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

pub(super) async fn the_write_goes_to_the_object_that_was_read(path: Path) {
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

pub(super) async fn a_start_is_bound_to_the_plan_it_was_reviewed_on(path: Path) {
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

pub(super) async fn a_repeated_start_returns_its_operation_and_writes_nothing(path: Path) {
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

pub(super) async fn a_standing_claim_refuses_other_starts(path: Path) {
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

pub(super) async fn an_ichor_upgrade_names_the_clusters_it_serves_and_waits_for_them(path: Path) {
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

pub(super) async fn who_may_start_pause_and_delete_is_asked_of_kubernetes(path: Path) {
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
