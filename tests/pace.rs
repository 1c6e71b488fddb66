//! How long (issue 38), on every path: an unfinished operation's summary carries its machines'
//! phases and times (not their messages), so the list reads the same pace, slow machine and
//! estimate as the page; the lock condition's time; the demo's slow machine with the Warning
//! Event the simulated controller records on it; and the cluster's BundleBackupStale condition
//! the controller sets when a CA rotation completes.

use crate::common;

use common::paths::{Path, User, connect};
use common::{op, small_cluster};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_demo::controller::{Controller, reasons};
use ichor_model::{
    Estimate, ListQuery, MachinePhase, OperationClient, PhaseSince, Roles, SlowRule, View,
};
use ichor_resources::{TalosOperation, names};
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, PostParams};

/// The cluster `c1` with `c1-w-a` slow (its steps take ten times as long), an upgrade under way
/// on it driven a second at a time until that machine has run 37 s of its 40 s step (its
/// role's pace is 4 s, the bound 34 s), and a second upgrade waiting for the lock. Returns the
/// API and the moment it stands at.
async fn slow_world() -> (EmbeddedApi, Timestamp) {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    assert!(api.edit("machines", "default", "c1-w-a", |m| {
        m["metadata"]["annotations"] = serde_json::json!({ names::DEMO_SLOW: "10" });
    }));
    let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.create(&PostParams::default(), &op("up", "c1", "talos", 1))
        .await
        .unwrap();
    let mut now: Timestamp = "2026-11-29T10:00:00Z".parse().unwrap();
    for _ in 0..200 {
        now += SignedDuration::from_secs(1);
        ctrl.reconcile(now).await.unwrap();
        let st = ops.get("up").await.unwrap().status.unwrap_or_default();
        let slow = st.machines.iter().find(|m| m.name == "c1-w-a").unwrap();
        let since = slow
            .started_at
            .as_deref()
            .and_then(ichor_resources::parse_time);
        if since.is_some_and(|s| now.duration_since(s) >= SignedDuration::from_secs(36)) {
            break;
        }
    }
    ops.create(&PostParams::default(), &op("next", "c1", "kubernetes", 1))
        .await
        .unwrap();
    now += SignedDuration::from_secs(1);
    ctrl.reconcile(now).await.unwrap();
    (api, now)
}

async fn the_list_and_the_page_read_the_same_slow_machine(path: Path) {
    let (api, now) = slow_world().await;
    let c = connect(path, &api, User::Viewer).await;
    let page = c
        .list_page(&ListQuery {
            namespace: Some("default".into()),
            view: View::Summary,
            ..ListQuery::default()
        })
        .await
        .unwrap();
    let row = page.operations.iter().find(|o| o.name == "up").unwrap();
    let full = c.get_operation("default", "up").await.unwrap();
    let roles = Roles::of(&c.get_cluster("default", "c1").await.unwrap());
    let rule = SlowRule::default();
    let (listed, paged) = (
        row.timing(&roles, rule, now),
        full.timing(&roles, rule, now),
    );
    assert_eq!(listed, paged, "{path:?}: the list and the page agree");
    let w = &paged.running[0];
    assert_eq!(
        (w.name.as_str(), w.role.as_deref(), w.pace, w.bound, w.slow),
        (
            "c1-w-a",
            Some("worker"),
            Some(SignedDuration::from_secs(4)),
            Some(SignedDuration::from_secs(34)),
            true
        ),
        "{path:?}"
    );
    // The slow machine is named; the rest is said after it.
    assert!(
        matches!(&paged.estimate, Estimate::AfterSlow { machine, .. } if machine == "c1-w-a"),
        "{path:?}: {:?}",
        paged.estimate
    );
    // The summary keeps no message; the page has the slow machine's.
    assert!(
        row.machines.iter().all(|m| m.message.is_empty()),
        "{path:?}"
    );
    let said = &full.machines.iter().find(|m| m.name == "c1-w-a").unwrap();
    assert_eq!(said.phase, MachinePhase::Running);
    assert!(said.message.contains("waiting"), "{path:?}: {said:?}");
    // The Warning the controller recorded on the machine.
    let events = c.list_operation_events("default", "up").await.unwrap();
    let warning = events
        .iter()
        .find(|e| e.warning && e.object_name == "c1-w-a")
        .unwrap_or_else(|| panic!("{path:?}: no Warning on c1-w-a: {events:?}"));
    assert_eq!(warning.reason, reasons::STEP_SLOW, "{path:?}");
    // The second operation waits for the lock, since the pass that saw it.
    let waiting = c.get_operation("default", "next").await.unwrap();
    let listed = page.operations.iter().find(|o| o.name == "next");
    for o in [Some(&waiting), listed].into_iter().flatten() {
        assert_eq!(o.lock_holder(), Some("up"), "{path:?}");
        assert_eq!(
            o.timing(&roles, rule, now).phase,
            Some(PhaseSince::WaitingForLock(now)),
            "{path:?}"
        );
    }
    // A finished operation's summary lists no machine.
    assert!(
        page.operations
            .iter()
            .filter(|o| o.phase.is_finished())
            .all(|o| o.machines.is_empty())
    );
}

/// A CA rotation on `c1`, driven to its end.
async fn rotated_world() -> (EmbeddedApi, Timestamp) {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.create(&PostParams::default(), &op("rot", "c1", "ca-rotation", 1))
        .await
        .unwrap();
    let mut now: Timestamp = "2026-11-29T10:00:00Z".parse().unwrap();
    for _ in 0..400 {
        now += SignedDuration::from_secs(1);
        ctrl.reconcile(now).await.unwrap();
        let st = ops.get("rot").await.unwrap().status.unwrap_or_default();
        if st.phase == "Completed" {
            return (api, now);
        }
    }
    panic!("the rotation never completed");
}

async fn a_completed_rotation_leaves_the_bundle_backup_stale(path: Path) {
    let (api, done) = rotated_world().await;
    let c = connect(path, &api, User::Viewer).await;
    let one = c.get_cluster("default", "c1").await.unwrap();
    let stale = one.bundle_backup_stale.clone().expect("BundleBackupStale");
    assert_eq!(
        (stale.reason.as_str(), stale.since),
        ("CARotated", Some(done)),
        "{path:?}"
    );
    assert!(stale.message.contains("c1"), "{path:?}");
    let listed = c.list_clusters(Some("default")).await.unwrap();
    assert_eq!(
        listed.first().map(|c| &c.bundle_backup_stale),
        Some(&Some(stale))
    );
}

crate::matrix!(
    the_list_and_the_page_read_the_same_slow_machine,
    a_completed_rotation_leaves_the_bundle_backup_stale,
);
