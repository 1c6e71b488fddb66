//! One confirmed start writes one operation, in every weather (issue 21), on every path: the
//! claim ends with its start, a create answered after the deadline and applied later makes one
//! operation, a hostile Lease is a named refusal, a request id names one request, a stray
//! kube-proxy confirmation is named and taken back.

use super::common::paths::{Path, User, connect, connect_each, writer};
use super::common::{claim_given_back, names, operations_created};
use super::{req, world};
use ichor_demo::apiserver::{EmbeddedApi, Fault, FaultRule};
use ichor_model::{Code, OperationKind, OperationRequest, Reason};
use ichor_resources::names;
use serde_json::json;
use std::time::Duration;

/// Case 1: delete the new operation and start again at once: the claim is gone with its start.
pub async fn delete_and_start_again_works_at_once(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    let first = c
        .create_operation(&req(OperationKind::Kubernetes, Some("v1.33.0")))
        .await
        .unwrap();
    c.delete_operation("default", &first.operation.name, None)
        .await
        .unwrap();
    let again = c
        .create_operation(&req(OperationKind::Kubernetes, Some("v1.33.0")))
        .await
        .expect("no claim stands after the first start ended");
    assert_ne!(again.operation.name, first.operation.name);
    assert!(!super::common::claim_held(&api));
}

/// A start request of `kind` that goes ahead on the small cluster.
fn start_of(kind: OperationKind) -> OperationRequest {
    let target = match kind {
        OperationKind::Talos => Some("v1.9.3"),
        OperationKind::Kubernetes => Some("v1.33.0"),
        OperationKind::Ichor => Some("v0.15.0"),
        OperationKind::Cni => Some("replaced"),
        OperationKind::Shutdown | OperationKind::CaRotation => None,
    };
    req(kind, target)
}

/// Case 2, one kind: the create is answered 504 after 150 ms and carried out after 600 ms. The
/// start says its outcome is being settled (never "start again"), a second start meanwhile is
/// refused START_SETTLING, the late create lands, the claim is given back, and the cluster holds
/// one operation.
async fn a_late_create_of(path: Path, kind: OperationKind) {
    let case = format!("{path:?} {kind:?}");
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    api.fail_when(
        FaultRule::on("create", "talosoperations"),
        Fault::Late {
            answer: Duration::from_millis(150),
            apply: Duration::from_millis(600),
        },
    );
    let e = c.create_operation(&start_of(kind)).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::Unavailable, Some(Reason::StartOutcomeUnknown)),
        "{case}: {e:?}"
    );
    assert!(
        !e.message.contains("start the same operation again"),
        "{case}"
    );
    assert_eq!(
        e.param("actor"),
        Some(super::common::paths::actor(path, User::Admin)),
        "{case}"
    );
    let second = c.create_operation(&start_of(kind)).await.unwrap_err();
    assert_eq!(
        second.reason,
        Some(Reason::StartSettling),
        "{case}: {second:?}"
    );
    assert!(second.param("until").is_some(), "{case}");
    claim_given_back(&api).await;
    assert_eq!(operations_created(&api), 1, "{case}: the late create, once");
    let third = c.create_operation(&start_of(kind)).await.unwrap_err();
    assert_eq!(
        third.reason,
        Some(Reason::UnfinishedOperation),
        "{case}: {third:?}"
    );
    let annotations = api
        .object("talosclusters", "default", "c1")
        .and_then(|c| c.pointer("/metadata/annotations").cloned())
        .unwrap_or(json!({}));
    assert!(
        annotations.get(names::CONFIRM_KUBE_PROXY_SWITCH).is_none(),
        "{case}: the confirmation does not outlive the settled start"
    );
}

/// Case 2 for every kind.
pub async fn a_create_answered_late_then_applied_makes_one_operation(path: Path) {
    futures::future::join_all(
        OperationKind::ALL
            .iter()
            .map(|k| a_late_create_of(path, *k)),
    )
    .await;
}

/// Writes a Lease `ichor-start-c1` with `spec` as raw JSON (as anyone who may write leases can).
fn hostile_claim(api: &EmbeddedApi, spec: serde_json::Value) {
    if api.object("leases", "default", "ichor-start-c1").is_none() {
        super::claim(api, "x", jiff::Timestamp::now());
    }
    assert!(api.edit("leases", "default", "ichor-start-c1", |l| {
        l["spec"] = spec.clone();
    }));
}

/// Case 3: hostile claims. A renew time far in the future with the longest duration stands at
/// most a minute; one in the past with that duration has lapsed; one that cannot be read is
/// CLAIM_UNREADABLE naming what to delete, never INTERNAL, never a panic.
pub async fn a_hostile_claim_is_bounded_or_named(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    let talos = || req(OperationKind::Talos, Some("v1.9.3"));
    hostile_claim(
        &api,
        json!({"holderIdentity": "x", "renewTime": "9999-12-30T21:00:00.000000Z", "leaseDurationSeconds": 2147483647}),
    );
    let plan = c.plan_operation(&talos()).await.unwrap();
    let blocked = plan
        .blocked
        .expect("a claim renewed 'in the future' stands");
    assert_eq!(blocked.reason, Reason::StartInProgress);
    let until: jiff::Timestamp = blocked.params["until"].parse().unwrap();
    assert!(until <= jiff::Timestamp::now() + jiff::SignedDuration::from_secs(61));
    let e = c.create_operation(&talos()).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::StartInProgress), "{e:?}");

    hostile_claim(
        &api,
        json!({"holderIdentity": "x", "renewTime": "2026-01-01T00:00:00.000000Z", "leaseDurationSeconds": 2147483647}),
    );
    assert_eq!(c.plan_operation(&talos()).await.unwrap().blocked, None);

    for spec in [
        json!({"holderIdentity": "x", "renewTime": "9999-12-31T23:59:59Z", "leaseDurationSeconds": 60}),
        json!({"holderIdentity": "x", "renewTime": "not a time"}),
        json!({"holderIdentity": "x", "leaseDurationSeconds": "sixty"}),
        json!({"holderIdentity": "x"}),
    ] {
        hostile_claim(&api, spec.clone());
        let plan = c.plan_operation(&talos()).await.unwrap();
        let blocked = plan.blocked.expect("an unreadable claim blocks");
        assert_eq!(blocked.reason, Reason::ClaimUnreadable, "{spec}");
        assert!(
            blocked
                .message
                .contains("kubectl delete lease ichor-start-c1 -n default"),
            "{}",
            blocked.message
        );
        let e = c.create_operation(&talos()).await.unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::FailedPrecondition, Some(Reason::ClaimUnreadable)),
            "{spec}"
        );
    }
    assert!(api.write_log().is_empty(), "{:?}", names(&api.write_log()));
}

/// Case 4: a request id names one request. The same id for another cluster, kind or target,
/// or from another caller, is refused REQUEST_ID_REUSED and never answered with the operation.
pub async fn a_request_id_names_one_request(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    let with_id = |r: OperationRequest| OperationRequest {
        request_id: Some("r-bound".into()),
        ..r
    };
    let talos = with_id(req(OperationKind::Talos, Some("v1.9.3")));
    let made = c.create_operation(&talos).await.unwrap();
    let repeat = c.create_operation(&talos).await.unwrap();
    assert!(repeat.found && repeat.operation.name == made.operation.name);
    api.clear_write_log();
    for other in [
        with_id(req(OperationKind::Talos, Some("v1.9.4"))),
        with_id(req(OperationKind::Kubernetes, Some("v1.33.0"))),
        with_id(req(OperationKind::Shutdown, None)),
    ] {
        let e = c.create_operation(&other).await.unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::InvalidArgument, Some(Reason::RequestIdReused)),
            "{other:?}"
        );
    }
    // Another user who knows the id gets nothing back (in-process every start is the
    // dashboard's own, actor ichor-tui).
    if path != Path::InProcess {
        let viewer = connect(path, &api, User::Viewer).await;
        let e = viewer.create_operation(&talos).await.unwrap_err();
        assert_eq!(e.reason, Some(Reason::RequestIdReused), "{e:?}");
        assert!(!e.message.contains(&made.operation.name));
    }
    assert!(api.write_log().is_empty(), "{:?}", names(&api.write_log()));
}

/// Case 4b: a request id is bound only once something was written for it. A start refused
/// before any write (a viewer's, refused by Kubernetes; a downgrade, refused by the plan) leaves
/// its id free: the admin's start, or the same caller's corrected one, with that id goes ahead.
pub async fn a_refused_start_leaves_its_request_id_free(path: Path) {
    let api = world();
    let clients = connect_each(path, &api, &[User::Viewer, User::Admin]).await;
    let (viewer, admin) = (&clients[0], &clients[1]);
    let with_id = |id: &str, r: OperationRequest| OperationRequest {
        request_id: Some(id.into()),
        ..r
    };
    let shutdown = with_id("r-refused-first", req(OperationKind::Shutdown, None));
    let e = viewer.create_operation(&shutdown).await.unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied, "{e:?}");
    assert!(api.write_log().is_empty(), "{:?}", names(&api.write_log()));
    let made = admin.create_operation(&shutdown).await.unwrap();
    assert_eq!(
        made.operation.request_id.as_deref(),
        Some("r-refused-first")
    );
    let by_admin = format!("create talosoperations by {}", writer(path, User::Admin));
    assert!(names(&api.write_log()).contains(&by_admin), "{by_admin}");
    assert!(api.remove("talosoperations", "default", &made.operation.name));
    api.clear_write_log();

    // The same caller: a downgrade is refused by the plan, then the corrected start goes ahead.
    let downgrade = with_id("r-corrected", req(OperationKind::Talos, Some("v1.8.9")));
    let e = admin.create_operation(&downgrade).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::Downgrade), "{e:?}");
    assert!(api.write_log().is_empty(), "{:?}", names(&api.write_log()));
    let corrected = with_id("r-corrected", req(OperationKind::Talos, Some("v1.9.3")));
    let started = admin.create_operation(&corrected).await.unwrap();
    assert!(!started.found);
    assert_eq!(operations_created(&api), 1);
    // Now it is bound: the same id for another request is refused, and writes nothing.
    api.clear_write_log();
    let e = admin.create_operation(&downgrade).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::RequestIdReused), "{e:?}");
    assert!(api.write_log().is_empty(), "{:?}", names(&api.write_log()));
}

/// Case 5: a kube-proxy confirmation left by a start stranded between its spec write and its
/// create is shown on the cluster page, named in any start's Review, and removed by that start,
/// which says so.
pub async fn a_stray_confirmation_is_named_and_taken_back(path: Path) {
    let api = world();
    assert!(api.edit("talosclusters", "default", "c1", |c| {
        c["metadata"]["annotations"] = json!({names::CONFIRM_KUBE_PROXY_SWITCH: "true"});
    }));
    let c = connect(path, &api, User::Admin).await;
    assert!(
        c.get_cluster("default", "c1")
            .await
            .unwrap()
            .stray_confirmation
    );
    let talos = req(OperationKind::Talos, Some("v1.9.3"));
    assert!(c.plan_operation(&talos).await.unwrap().stray_confirmation);
    let created = c.create_operation(&talos).await.unwrap();
    let said: Vec<Reason> = created.warnings.iter().map(|w| w.reason).collect();
    assert_eq!(said, [Reason::ConfirmationRemoved]);
    assert!(
        !c.get_cluster("default", "c1")
            .await
            .unwrap()
            .stray_confirmation
    );
    let u = writer(path, User::Admin);
    assert_eq!(
        names(&api.write_log()),
        [
            format!("create leases by {u}"),
            format!("update talosclusters by {u}"),
            format!("create talosoperations by {u}"),
            format!("update talosclusters by {u}"),
            format!("update leases by {u}"),
        ]
    );
}
