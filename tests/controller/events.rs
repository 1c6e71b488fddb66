//! What a rollout records: Events as a real controller writes them, aggregated, under both
//! APIs, and how many a rollout of each kind makes.

use super::*;
fn line(reason: &str, object: &str, count: i32) -> (String, String, i32) {
    (reason.to_string(), object.to_string(), count)
}

/// A rollout records what a real controller would: the start, each machine's step starting and
/// finishing (on the Machine, related to the operation), the end; as the controller, with
/// references that `kubectl describe` finds them by.
#[tokio::test]
async fn a_rollout_records_its_events() {
    let mut h = Harness::new();
    h.create(op("o", "c1", "talos", 1)).await;
    h.run_until("o", "Completed", 200).await;
    let mut want = vec![line("Started", "TalosOperation/o", 1)];
    for m in ["c1-cp-a", "c1-cp-b", "c1-w-c", "c1-w-a", "c1-w-b"] {
        want.push(line("StepStarted", &format!("Machine/{m}"), 1));
        want.push(line("StepCompleted", &format!("Machine/{m}"), 1));
    }
    want.push(line("Completed", "TalosOperation/o", 1));
    assert_eq!(h.event_lines().await, want);

    let evs = h.events().await;
    let started = &evs[0];
    assert_eq!(
        started.message.as_deref(),
        Some(
            "Started the talos operation on cluster c1 to v1.9.2: 5 machines in 5 steps, 1 held and skipped"
        )
    );
    let o = h.ops.get("o").await.unwrap();
    assert_eq!(started.involved_object.uid, o.metadata.uid);
    assert_eq!(
        started.involved_object.api_version.as_deref(),
        Some("ichor.maesh.dev/v1alpha1")
    );
    assert_eq!(
        started.involved_object.namespace.as_deref(),
        Some("default")
    );
    let step = &evs[1];
    assert_eq!(
        step.message.as_deref(),
        Some("o: installing Talos v1.9.2 and rebooting")
    );
    assert_eq!(
        step.related.as_ref().and_then(|r| r.name.as_deref()),
        Some("o")
    );
    let cp_a = h
        .machines()
        .await
        .into_iter()
        .find(|m| m.metadata.name.as_deref() == Some("c1-cp-a"));
    assert_eq!(step.involved_object.uid, cp_a.and_then(|m| m.metadata.uid));
    for e in &evs {
        assert_eq!(e.type_.as_deref(), Some("Normal"));
        assert_eq!(
            e.source.as_ref().and_then(|s| s.component.as_deref()),
            Some("ichor-controller")
        );
        assert_eq!(e.reporting_component.as_deref(), Some("ichor-controller"));
        assert!(e.first_timestamp.is_some() && e.first_timestamp == e.last_timestamp);
    }
    assert!(
        h.api
            .write_log()
            .iter()
            .filter(|w| w.resource == "events")
            .all(|w| w.user == users::CONTROLLER && w.verb == "create"),
        "events are the controller's own"
    );
    assert!(
        evs.last()
            .unwrap()
            .message
            .as_deref()
            .unwrap()
            .starts_with("Completed: 5 machines done, 1 skipped in ")
    );
}

/// Pausing and resuming twice: the second Paused and Resumed bump the first ones' counts.
#[tokio::test]
async fn repeated_events_are_aggregated() {
    let mut h = Harness::new();
    h.create(op("o", "c1", "talos", 1)).await;
    h.tick("o").await;
    for _ in 0..2 {
        h.set_paused("o", true).await;
        h.run_until("o", "Paused", 10).await;
        h.set_paused("o", false).await;
        h.run_until("o", "Running", 10).await;
    }
    let lines = h.event_lines().await;
    let count = |reason: &str| {
        let found: Vec<_> = lines.iter().filter(|(r, _, _)| r == reason).collect();
        assert_eq!(found.len(), 1, "one {reason} event: {lines:?}");
        found[0].2
    };
    assert_eq!(count("Paused"), 2);
    assert_eq!(count("Resumed"), 2);
    let paused = h
        .events()
        .await
        .into_iter()
        .find(|e| e.reason.as_deref() == Some("Paused"))
        .unwrap();
    assert!(paused.last_timestamp > paused.first_timestamp);
    assert!(
        h.api
            .write_log()
            .iter()
            .any(|w| w.resource == "events" && w.verb == "patch" && w.user == users::CONTROLLER),
        "the count is bumped with a patch"
    );
}

#[tokio::test]
async fn a_failing_machine_is_a_warning_on_the_machine_and_the_operation() {
    let mut h = Harness::new();
    Api::<Machine>::namespaced(h.api.client(users::ADMIN_TOKEN), "default")
        .patch(
            "c1-w-a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {names::DEMO_FAIL: "talos"}}})),
        )
        .await
        .unwrap();
    h.create(op("o", "c1", "talos", 1)).await;
    h.run_until("o", "Paused", 200).await;
    let evs = h.events().await;
    let warnings: Vec<(String, String)> = evs
        .iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .map(|e| {
            (
                e.reason.clone().unwrap_or_default(),
                e.involved_object.name.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        warnings,
        [
            ("StepFailed".to_string(), "c1-w-a".to_string()),
            ("MachineFailed".to_string(), "o".to_string())
        ]
    );
    let failed = evs
        .iter()
        .find(|e| e.reason.as_deref() == Some("MachineFailed"))
        .unwrap();
    assert_eq!(
        failed.message.as_deref(),
        Some(
            "Machine c1-w-a failed: installer exited with code 1: image verification failed. The operation is paused: nothing retries and nothing is rolled back; delete it and start again"
        )
    );
    let before = h.event_lines().await;
    for _ in 0..10 {
        h.tick("o").await;
    }
    assert_eq!(
        h.event_lines().await,
        before,
        "nothing retried, nothing recorded"
    );
}

#[tokio::test]
async fn waiting_for_the_lock_is_recorded_once() {
    let mut h = Harness::new();
    h.create(op("first", "c1", "kubernetes", 1)).await;
    h.tick("first").await;
    h.create(op("second", "c1", "talos", 1)).await;
    for _ in 0..5 {
        h.tick("first").await;
    }
    let waiting: Vec<_> = h
        .events()
        .await
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some("second"))
        .collect();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].reason.as_deref(), Some("WaitingForLock"));
    assert_eq!(
        waiting[0].message.as_deref(),
        Some("Waiting for the cluster lock of c1, held by first")
    );
    assert_eq!(waiting[0].count, Some(1));
    h.run_until("first", "Completed", 200).await;
    h.run_until("second", "Running", 5).await;
    let second: Vec<String> = h
        .event_lines()
        .await
        .into_iter()
        .filter(|(_, o, _)| o == "TalosOperation/second")
        .map(|(r, _, _)| r)
        .collect();
    assert_eq!(second, ["WaitingForLock", "Started"]);
}

/// The same Events under events.k8s.io/v1, converted: `regarding`, `note`, `series`; and the
/// field selectors `kubectl describe` sends.
#[tokio::test]
async fn events_are_served_as_events_k8s_io_and_by_field_selector() {
    use k8s_openapi::api::events::v1::Event as EventV1;
    let mut h = Harness::new();
    h.create(op("o", "c1", "talos", 1)).await;
    h.tick("o").await;
    h.set_paused("o", true).await;
    h.run_until("o", "Paused", 10).await;
    h.set_paused("o", false).await;
    h.run_until("o", "Running", 10).await;
    h.set_paused("o", true).await;
    h.run_until("o", "Paused", 10).await;
    let v1: Api<EventV1> = Api::namespaced(h.api.client(users::VIEWER_TOKEN), "default");
    let all = v1.list(&ListParams::default()).await.unwrap().items;
    let paused = all
        .iter()
        .find(|e| e.reason.as_deref() == Some("Paused"))
        .unwrap();
    assert_eq!(
        paused.regarding.as_ref().and_then(|r| r.name.as_deref()),
        Some("o")
    );
    assert!(paused.note.as_deref().unwrap().starts_with("Paused"));
    assert_eq!(paused.series.as_ref().map(|s| s.count), Some(2));
    assert_eq!(
        paused.reporting_controller.as_deref(),
        Some("ichor-controller")
    );
    let o = h.ops.get("o").await.unwrap();
    let uid = o.metadata.uid.unwrap();
    let core: Api<Event> = Api::namespaced(h.api.client(users::VIEWER_TOKEN), "default");
    let selector = format!(
        "involvedObject.name=o,involvedObject.namespace=default,involvedObject.kind=TalosOperation,involvedObject.uid={uid}"
    );
    let described = core
        .list(&ListParams::default().fields(&selector))
        .await
        .unwrap();
    assert!(!described.items.is_empty());
    assert!(
        described
            .items
            .iter()
            .all(|e| e.involved_object.name.as_deref() == Some("o"))
    );
    let on_machines = core
        .list(&ListParams::default().fields("involvedObject.kind=Machine"))
        .await
        .unwrap();
    assert!(
        on_machines
            .items
            .iter()
            .all(|e| e.involved_object.kind.as_deref() == Some("Machine"))
    );
    let by_v1_name = v1
        .list(&ListParams::default().fields("regarding.name=o"))
        .await
        .unwrap();
    assert_eq!(by_v1_name.items.len(), described.items.len());
    // One who may read operations but not events is refused.
    let reader: Api<Event> =
        Api::namespaced(h.api.client(users::OPERATIONS_READER_TOKEN), "default");
    match reader.list(&ListParams::default()).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 403),
        other => panic!("expected 403, got {other:?}"),
    }
}

/// How many Events a rollout of each kind records on the demo's prod-eu (3 control planes, 12
/// workers, one held): printed for the README, and checked against what each kind does.
#[tokio::test]
async fn events_per_rollout_in_the_demo() {
    let api = EmbeddedApi::default();
    let now: Timestamp = "2026-11-29T10:00:00Z".parse().unwrap();
    ichor_demo::demo::seed(&api, now).unwrap();
    let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let events: Api<Event> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let mut now = now;
    // (kind, events: Started, a start and an end for each machine step, the CA passes, Completed)
    let machines = 14; // 15, one held
    for (kind, want) in [
        ("kubernetes", 2 + 2 * machines),
        ("talos", 2 + 2 * machines),
        ("ichor", 2),
        ("shutdown", 2 + 2 * (machines + 1)),
        ("ca-rotation", 2 + 5 * 2 * (machines + 1) + 4 + 1),
    ] {
        let name = format!("prod-eu-{kind}-counted");
        ops.create(&PostParams::default(), &op(&name, "prod-eu", kind, 1))
            .await
            .unwrap();
        for _ in 0..2000 {
            now += SignedDuration::from_secs(2);
            ctrl.reconcile(now).await.unwrap();
            let st = ops.get(&name).await.unwrap().status.unwrap_or_default();
            if st.phase == "Completed" {
                break;
            }
        }
        let recorded = events
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|e| {
                e.involved_object.name.as_deref() == Some(name.as_str())
                    || e.related.as_ref().and_then(|r| r.name.as_deref()) == Some(name.as_str())
            })
            .count();
        println!("events: a {kind} rollout of prod-eu records {recorded}");
        assert_eq!(recorded, want, "{kind}");
    }
}
