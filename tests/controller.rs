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

#[path = "controller/events.rs"]
mod events;
#[path = "controller/unreadable.rs"]
mod unreadable;

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

/// The controller running as the demo runs it is driven by its watches: it lists each kind
/// once, at the start, and learns of a new operation from the watch; it carries the operation
/// out without listing again (the controller before listed every operation on every pass).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_running_controller_watches_instead_of_listing() {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 400.0);
    let running = tokio::spawn(ctrl.run());
    let by_controller = |verb: &str, resource: &str| -> u64 {
        api.requests_by()
            .iter()
            .filter(|r| r.user == users::CONTROLLER && r.verb == verb && r.resource == resource)
            .map(|r| r.count)
            .sum()
    };
    common::eventually("the controller watches operations", || {
        by_controller("watch", "talosoperations") > 0
    })
    .await;
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.create(&PostParams::default(), &op("watched", "c1", "talos", 1))
        .await
        .unwrap();
    common::eventually("the operation completed", || {
        api.object("talosoperations", "default", "watched")
            .is_some_and(|o| o["status"]["phase"] == "Completed")
    })
    .await;
    running.abort();
    for resource in ["talosoperations", "talosclusters", "machines"] {
        assert_eq!(
            by_controller("list", resource),
            1,
            "{resource}: {:?}",
            api.requests_by()
        );
    }
    let done = api
        .object("talosoperations", "default", "watched")
        .unwrap_or_default();
    let managers: Vec<&str> = done["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert!(managers.contains(&"ichor-controller"), "{managers:?}");
}
