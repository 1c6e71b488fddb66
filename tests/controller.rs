//! The simulated controller carries operations out as the ichor controller does.

use crate::common;

use common::{op, small_cluster};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_demo::controller::Controller;
use ichor_resources::*;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

struct Harness {
    api: EmbeddedApi,
    ctrl: Controller,
    ops: Api<TalosOperation>,
    now: Timestamp,
    /// Machines in the order they started, grouped by the pass in which they started together.
    started: Vec<Vec<String>>,
}

impl Harness {
    fn new() -> Harness {
        let api = EmbeddedApi::default();
        small_cluster(&api);
        let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
        let ops = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
        Harness {
            api,
            ctrl,
            ops,
            now: "2026-11-29T10:00:00Z".parse().unwrap(),
            started: Vec::new(),
        }
    }

    async fn create(&self, o: TalosOperation) {
        self.ops.create(&PostParams::default(), &o).await.unwrap();
    }

    async fn status(&self, name: &str) -> TalosOperationStatus {
        self.ops.get(name).await.unwrap().status.unwrap_or_default()
    }

    /// One controller pass a second later, recording which machines started.
    async fn tick(&mut self, watch: &str) {
        self.now += SignedDuration::from_secs(1);
        self.ctrl.reconcile(self.now).await.unwrap();
        let st = self.status(watch).await;
        let seen: Vec<String> = self.started.iter().flatten().cloned().collect();
        let new: Vec<String> = st
            .machines
            .iter()
            .filter(|m| m.phase == "Running" && !seen.contains(&m.name))
            .map(|m| m.name.clone())
            .collect();
        if !new.is_empty() {
            self.started.push(new);
        }
    }

    async fn run_until(&mut self, watch: &str, phase: &str, max: usize) {
        for _ in 0..max {
            self.tick(watch).await;
            if self.status(watch).await.phase == phase {
                return;
            }
        }
        panic!(
            "{watch} never reached {phase}: {:?}",
            self.status(watch).await
        );
    }

    /// Sets spec.paused as a person with kubectl would.
    async fn set_paused(&self, name: &str, paused: bool) {
        self.ops
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"paused": paused}})),
            )
            .await
            .unwrap();
    }

    /// The Events recorded so far, oldest first (by the order they were created).
    async fn events(&self) -> Vec<Event> {
        let mut evs = Api::<Event>::namespaced(self.api.client(users::ADMIN_TOKEN), "default")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        evs.sort_by_key(|e| e.metadata.uid.clone());
        evs
    }

    /// (reason, `kind/name` of the object, count) of each Event, oldest first.
    async fn event_lines(&self) -> Vec<(String, String, i32)> {
        self.events()
            .await
            .into_iter()
            .map(|e| {
                let io = &e.involved_object;
                (
                    e.reason.unwrap_or_default(),
                    format!(
                        "{}/{}",
                        io.kind.as_deref().unwrap_or_default(),
                        io.name.as_deref().unwrap_or_default()
                    ),
                    e.count.unwrap_or_default(),
                )
            })
            .collect()
    }

    async fn machines(&self) -> Vec<Machine> {
        Api::<Machine>::namespaced(self.api.client(users::ADMIN_TOKEN), "default")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    }
}

#[tokio::test]
async fn machine_order_and_steps_follow_sort_by_order_for_every_kind() {
    for (kind, max_unavailable) in [
        ("talos", 2),
        ("kubernetes", 1),
        ("cni", 3),
        ("shutdown", 1),
        ("ca-rotation", 2),
    ] {
        let mut h = Harness::new();
        h.create(op("o", "c1", kind, max_unavailable)).await;
        h.run_until("o", "Completed", 400).await;
        let kind_enum = OperationKind::parse(kind).unwrap();
        let plan = plan_steps(kind_enum, &h.machines().await, max_unavailable);
        let expected: Vec<Vec<String>> = plan.steps.clone();
        if kind == "ca-rotation" {
            // Five passes over the same order.
            assert_eq!(
                h.started.len(),
                expected.len(),
                "{kind}: first pass only is recorded"
            );
        }
        assert_eq!(
            h.started, expected,
            "{kind}: machines ran in the planned steps"
        );
        let st = h.status("o").await;
        let skipped: Vec<_> = st
            .machines
            .iter()
            .filter(|m| m.phase == "Skipped")
            .map(|m| m.name.as_str())
            .collect();
        if kind_enum.skips_held() {
            assert_eq!(skipped, ["c1-w-held"], "{kind}");
        } else {
            assert!(skipped.is_empty(), "{kind}: holds are not skipped");
        }
        assert!(
            st.machines
                .iter()
                .all(|m| m.phase == "Completed" || m.phase == "Skipped")
        );
        assert!(st.finished_at.is_some());
        assert!(
            !st.machines.iter().any(|m| m.name == "c1-w-unapproved"),
            "unapproved machines are not touched"
        );
    }
}

#[tokio::test]
async fn talos_order_is_control_planes_then_workers_by_label_then_name() {
    let mut h = Harness::new();
    h.create(op("o", "c1", "talos", 1)).await;
    h.run_until("o", "Completed", 200).await;
    let flat: Vec<String> = h.started.concat();
    assert_eq!(flat, ["c1-cp-a", "c1-cp-b", "c1-w-c", "c1-w-a", "c1-w-b"]);
}

#[tokio::test]
async fn a_second_operation_waits_for_the_cluster_lock() {
    let mut h = Harness::new();
    h.create(op("first", "c1", "kubernetes", 1)).await;
    h.tick("first").await;
    h.create(op("second", "c1", "talos", 1)).await;
    h.tick("first").await;
    let waiting = h.status("second").await;
    assert_eq!(waiting.phase, "Pending");
    let cond = waiting
        .conditions
        .iter()
        .find(|c| c.type_ == names::CLUSTER_LOCK_HELD)
        .unwrap();
    assert_eq!(cond.message, "cluster lock held by first");
    h.run_until("first", "Completed", 200).await;
    h.run_until("second", "Running", 5).await;
    assert!(h.status("second").await.conditions.is_empty());
    h.run_until("second", "Completed", 200).await;
}

#[tokio::test]
async fn pause_takes_effect_after_the_current_step_and_resume_continues() {
    let mut h = Harness::new();
    h.create(op("o", "c1", "talos", 1)).await;
    h.tick("o").await;
    h.tick("o").await;
    assert_eq!(h.status("o").await.phase, "Running");
    h.set_paused("o", true).await;
    h.run_until("o", "Paused", 10).await;
    let st = h.status("o").await;
    assert!(
        !st.machines.iter().any(|m| m.phase == "Running"),
        "the step under way finished first"
    );
    assert_eq!(
        st.machines
            .iter()
            .filter(|m| m.phase == "Completed")
            .count(),
        1
    );
    for _ in 0..10 {
        h.tick("o").await;
    }
    assert_eq!(
        h.status("o").await.phase,
        "Paused",
        "nothing moves while paused"
    );
    h.set_paused("o", false).await;
    h.run_until("o", "Completed", 200).await;
}

#[tokio::test]
async fn a_failing_machine_pauses_the_operation_and_nothing_is_retried() {
    let mut h = Harness::new();
    let machines: Api<Machine> = Api::namespaced(h.api.client(users::ADMIN_TOKEN), "default");
    machines
        .patch(
            "c1-w-a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {names::DEMO_FAIL: "talos"}}})),
        )
        .await
        .unwrap();
    h.create(op("o", "c1", "talos", 1)).await;
    h.run_until("o", "Paused", 200).await;
    let st = h.status("o").await;
    let failed = st.machines.iter().find(|m| m.name == "c1-w-a").unwrap();
    assert_eq!(failed.phase, "Failed");
    assert_eq!(
        st.failure_reason.as_deref(),
        Some("machine c1-w-a failed: installer exited with code 1: image verification failed")
    );
    assert_eq!(
        st.machines
            .iter()
            .find(|m| m.name == "c1-w-b")
            .unwrap()
            .phase,
        "Pending"
    );
    h.api.clear_write_log();
    for _ in 0..20 {
        h.tick("o").await;
    }
    assert_eq!(
        h.status("o").await,
        st,
        "nothing retried, nothing rolled back"
    );
    // Clearing spec.paused does not resume a failed operation either.
    h.set_paused("o", false).await;
    h.tick("o").await;
    assert_eq!(h.status("o").await.phase, "Paused");
    // A later operation takes the lock over from the one paused on a failure.
    h.create(op("next", "c1", "kubernetes", 1)).await;
    h.run_until("next", "Running", 3).await;
}

#[tokio::test]
async fn ca_rotation_goes_through_five_passes_and_its_stages() {
    let mut h = Harness::new();
    h.create(op("ca", "c1", "ca-rotation", 1)).await;
    let mut seen: Vec<(i32, String)> = Vec::new();
    for _ in 0..600 {
        h.tick("ca").await;
        let st = h.status("ca").await;
        if let Some(ca) = &st.ca_rotation {
            assert_eq!(ca.passes, 5);
            let here = (ca.pass, ca.stage.clone());
            if seen.last() != Some(&here) {
                seen.push(here);
            }
        }
        if st.phase == "Completed" {
            break;
        }
    }
    let want: Vec<(i32, String)> = [
        (1, "Accepting"),
        (2, "Issuing"),
        (3, "Issuing"),
        (3, "AwaitingCredentials"),
        (4, "Dropping"),
        (5, "Dropping"),
    ]
    .into_iter()
    .map(|(p, s)| (p, s.to_string()))
    .collect();
    assert_eq!(seen, want);
    let st = h.status("ca").await;
    assert_eq!(st.phase, "Completed");
    assert_eq!(
        st.machines.len(),
        6,
        "held machines take part, unapproved do not"
    );
}

#[tokio::test]
async fn ichor_upgrade_touches_no_machine() {
    let mut h = Harness::new();
    h.create(op("i", "c1", "ichor", 1)).await;
    h.run_until("i", "Completed", 20).await;
    assert!(h.status("i").await.machines.is_empty());
    assert!(h.started.is_empty());
}

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

// ---- objects the controller cannot read ----

/// A cluster `name` in `ns` with a control plane and a worker, and no operation.
fn seed_cluster(api: &EmbeddedApi, ns: &str, name: &str) {
    let mut c = TalosCluster::new(
        name,
        TalosClusterSpec {
            talos_version: "v1.9.2".into(),
            kubernetes_version: "v1.32.3".into(),
            cni: CniSpec {
                kube_proxy: "enabled".into(),
            },
        },
    );
    c.metadata.namespace = Some(ns.into());
    api.seed(&c).unwrap();
    for (m, role) in [("cp", "controlplane"), ("w", "worker")] {
        let mut m = machine(name, &format!("{name}-{m}"), role, None, true, None);
        m.metadata.namespace = Some(ns.into());
        api.seed(&m).unwrap();
    }
}

/// An operation in `ns`.
fn op_in(ns: &str, name: &str, cluster: &str) -> TalosOperation {
    let mut o = op(name, cluster, "talos", 1);
    o.metadata.namespace = Some(ns.into());
    o
}

/// TalosOperations of `ns` as an admin's kubectl reaches them, as JSON (one that cannot be read
/// as a TalosOperation reads as JSON).
fn ops_json(h: &Harness, ns: &str) -> Api<kube::api::DynamicObject> {
    Api::namespaced_with(
        h.api.client(users::ADMIN_TOKEN),
        ns,
        &kube::api::ApiResource::erase::<TalosOperation>(&()),
    )
}

/// `kubectl patch --subresource=status --type=merge -p STATUS` on the operation `name` of `ns`;
/// a status the schema refuses (a phase of 42) is written around the API, as by a writer from
/// before a schema change (kube-apiserver, as the demo API, answers 422 to it).
async fn patch_status(h: &Harness, ns: &str, name: &str, status: serde_json::Value) {
    if !status["phase"].is_string() {
        let fields = status.as_object().cloned().unwrap_or_default();
        let merge = |o: &mut serde_json::Value| {
            for (k, v) in fields {
                o["status"][k.as_str()] = v;
            }
        };
        assert!(h.api.edit("talosoperations", ns, name, merge));
        return;
    }
    ops_json(h, ns)
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .unwrap();
}

/// The phase of `name` in `ns`, as JSON (42 for one written so).
async fn phase_of(h: &Harness, ns: &str, name: &str) -> serde_json::Value {
    ops_json(h, ns).get(name).await.unwrap().data["status"]["phase"].clone()
}

/// Controller passes, a second apart, until every operation named is Completed (each pass must
/// succeed: one object that cannot be read is not a failed pass).
async fn run_until_completed(h: &mut Harness, ops: &[(&str, &str)], max: usize) {
    for _ in 0..max {
        h.now += SignedDuration::from_secs(1);
        h.ctrl.reconcile(h.now).await.unwrap();
        let mut done = true;
        for (ns, name) in ops {
            done &= phase_of(h, ns, name).await == "Completed";
        }
        if done {
            return;
        }
    }
    let mut phases = Vec::new();
    for (ns, name) in ops {
        phases.push(format!("{ns}/{name}: {}", phase_of(h, ns, name).await));
    }
    panic!("not all completed: {phases:?}");
}

/// The Warning Events `Unreadable` of `ns`.
async fn unreadable_warnings(h: &Harness, ns: &str) -> Vec<Event> {
    Api::<Event>::namespaced(h.api.client(users::ADMIN_TOKEN), ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("Unreadable"))
        .collect()
}

/// One operation whose status cannot be read (as `kubectl patch --subresource=status` can
/// leave it) stops no other: it is skipped, with one Warning Event on it that says why; the
/// operations in its namespace and in another complete; fixed, it goes on too.
#[tokio::test]
async fn an_unreadable_operation_is_skipped_with_a_warning_and_every_other_goes_on() {
    let mut h = Harness::new();
    seed_cluster(&h.api, "default", "c3");
    seed_cluster(&h.api, "other", "c2");
    h.create(op("broken", "c1", "talos", 1)).await;
    h.create(op_in("default", "mine", "c3")).await;
    Api::<TalosOperation>::namespaced(h.api.client(users::ADMIN_TOKEN), "other")
        .create(&PostParams::default(), &op_in("other", "theirs", "c2"))
        .await
        .unwrap();
    patch_status(&h, "default", "broken", json!({"phase": 42})).await;
    run_until_completed(&mut h, &[("default", "mine"), ("other", "theirs")], 100).await;

    assert_eq!(phase_of(&h, "default", "broken").await, 42, "untouched");
    let warnings = unreadable_warnings(&h, "default").await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert_eq!(w.type_.as_deref(), Some("Warning"));
    assert_eq!(w.count, Some(1), "once, not on every pass");
    let io = &w.involved_object;
    assert_eq!(
        (
            io.kind.as_deref(),
            io.name.as_deref(),
            io.namespace.as_deref()
        ),
        (Some("TalosOperation"), Some("broken"), Some("default"))
    );
    let uid = ops_json(&h, "default")
        .get("broken")
        .await
        .unwrap()
        .metadata
        .uid;
    assert_eq!(io.uid, uid);
    let message = w.message.clone().unwrap_or_default();
    assert!(
        message.contains("status: invalid type: integer `42`, expected a string"),
        "{message}"
    );
    assert!(
        message.contains("every other operation goes on"),
        "{message}"
    );
    assert!(message.len() < 400, "{message}");
    assert_eq!(
        w.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("ichor-controller")
    );
    assert!(unreadable_warnings(&h, "other").await.is_empty());

    // Fixed: it is read again, and carried out.
    patch_status(&h, "default", "broken", json!({"phase": "Pending"})).await;
    run_until_completed(&mut h, &[("default", "broken")], 100).await;
    assert_eq!(unreadable_warnings(&h, "default").await.len(), 1);
}

/// An operation that cannot be read while it holds its cluster's lock keeps it: the next one on
/// that cluster waits for it, as it would for a readable one; fixed, both complete in turn.
#[tokio::test]
async fn an_unreadable_operation_keeps_the_cluster_lock_it_holds() {
    let mut h = Harness::new();
    h.create(op("first", "c1", "talos", 1)).await;
    h.run_until("first", "Running", 5).await;
    h.create(op("second", "c1", "kubernetes", 1)).await;
    patch_status(&h, "default", "first", json!({"phase": 42})).await;
    for _ in 0..20 {
        h.now += SignedDuration::from_secs(1);
        h.ctrl.reconcile(h.now).await.unwrap();
    }
    let second = h.status("second").await;
    assert_eq!(second.phase, "Pending", "{second:?}");
    assert!(
        second
            .conditions
            .iter()
            .any(|c| c.message == "cluster lock held by first"),
        "{second:?}"
    );
    assert!(second.machines.iter().all(|m| m.phase != "Running"));
    patch_status(&h, "default", "first", json!({"phase": "Running"})).await;
    run_until_completed(&mut h, &[("default", "first"), ("default", "second")], 400).await;
}

/// A cluster that cannot be read, or one of its machines, holds that cluster's operations
/// where they are (never "cluster not found", never a plan without the machine), with a
/// Warning on the object; the operations of other clusters go on; fixed, they go on too.
#[tokio::test]
async fn an_unreadable_cluster_or_machine_holds_its_operations_and_no_other() {
    let mut h = Harness::new();
    seed_cluster(&h.api, "default", "c3");
    seed_cluster(&h.api, "other", "c2");
    h.create(op("on-c1", "c1", "talos", 1)).await;
    h.create(op_in("default", "on-c3", "c3")).await;
    Api::<TalosOperation>::namespaced(h.api.client(users::ADMIN_TOKEN), "other")
        .create(&PostParams::default(), &op_in("other", "on-c2", "c2"))
        .await
        .unwrap();
    // As another writer leaves them, past the schema.
    assert!(h.api.edit("machines", "default", "c1-w-a", |m| {
        m["spec"]["approved"] = json!("yes");
    }));
    assert!(h.api.edit("talosclusters", "other", "c2", |c| {
        c["spec"]["talosVersion"] = json!(42);
    }));
    run_until_completed(&mut h, &[("default", "on-c3")], 100).await;
    for (ns, name) in [("default", "on-c1"), ("other", "on-c2")] {
        let phase = phase_of(&h, ns, name).await;
        assert!(
            phase.is_null() || phase == "Pending",
            "{ns}/{name}: {phase}"
        );
    }
    let machine = unreadable_warnings(&h, "default").await;
    assert_eq!(machine.len(), 1, "{machine:?}");
    assert_eq!(machine[0].involved_object.name.as_deref(), Some("c1-w-a"));
    assert!(
        machine[0]
            .message
            .as_deref()
            .is_some_and(|m| m.contains("spec: invalid type: string \"yes\", expected a boolean")),
        "{machine:?}"
    );
    let cluster = unreadable_warnings(&h, "other").await;
    assert_eq!(cluster.len(), 1, "{cluster:?}");
    assert_eq!(
        cluster[0].involved_object.kind.as_deref(),
        Some("TalosCluster")
    );
    assert!(h.api.edit("machines", "default", "c1-w-a", |m| {
        m["spec"]["approved"] = json!(true);
    }));
    assert!(h.api.edit("talosclusters", "other", "c2", |c| {
        c["spec"]["talosVersion"] = json!("v1.9.2");
    }));
    run_until_completed(&mut h, &[("default", "on-c1"), ("other", "on-c2")], 200).await;
    // Every machine of c1 was carried out, the one that could not be read too.
    let st = h.status("on-c1").await;
    assert!(
        st.machines
            .iter()
            .any(|m| m.name == "c1-w-a" && m.phase == "Completed"),
        "{st:?}"
    );
}
