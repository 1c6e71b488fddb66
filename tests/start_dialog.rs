//! Starting operations: the Clusters screens and the Review/Start dialog, through the real
//! service and embedded cluster. Nothing is written before Start.

use crate::common;
use crate::snap_all;

use common::dialog::{dialog, form, on_clusters, review, select};
use common::fixtures;
use ichor_app::action::{Effect, Key, KeyCode};
use ichor_app::state::{NewOpStep, Notice, Screen};
use ichor_client::inprocess::InProcessClient;
use ichor_demo::apiserver::auth::users;
use ichor_demo::apiserver::{EmbeddedApi, Fault, FaultRule};
use ichor_demo::controller::Controller;
use ichor_demo::demo;
use ichor_model::OperationClient;
use ichor_model::{OperationKind, Phase, Reason};
use ichor_resources::{TalosCluster, TalosOperation, names};
use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use std::sync::Arc;

/// The demo data; `clean` removes prod-eu's tracking and the unfinished operations.
pub(crate) async fn world(clean: bool) -> (EmbeddedApi, Arc<dyn OperationClient>) {
    let api = EmbeddedApi::default();
    demo::seed(&api, fixtures::now()).unwrap();
    if clean {
        let admin = api.client(users::ADMIN_TOKEN);
        Api::<TalosCluster>::namespaced(admin.clone(), "default")
            .patch(
                "prod-eu",
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"metadata": {"annotations": {names::ARGOCD_TRACKING_ID: null}}})),
            )
            .await
            .unwrap();
        let ops: Api<TalosOperation> = Api::namespaced(admin, "default");
        for name in ["staging-talos-x7k2p", "edge-tokyo-talos-m4q9z"] {
            ops.delete(name, &DeleteParams::default()).await.unwrap();
        }
        api.clear_write_log();
    }
    let service =
        OperationService::new(KubeAccess::new(api.client(users::ADMIN_TOKEN), "ichor-tui"));
    (
        api,
        Arc::new(InProcessClient::new(service, Caller::in_process())),
    )
}

fn target_of(kind: OperationKind) -> Option<&'static str> {
    match kind {
        OperationKind::Talos => Some("1.9.3"),
        OperationKind::Kubernetes => Some("v1.33.0"),
        OperationKind::Ichor => Some("0.15.0"),
        _ => None,
    }
}

// ---- screens ----

#[tokio::test]
async fn clusters_list_and_page() {
    let (_api, client) = world(false).await;
    let mut d = on_clusters(client).await;
    snap_all!("clusters_list", &d.state);
    select(&mut d, "prod-eu").await;
    d.code(KeyCode::Enter).await;
    assert_eq!(d.state.screen, Screen::Cluster);
    snap_all!("cluster_page", &d.state);
}

#[tokio::test]
async fn the_form_for_every_kind() {
    let (api, client) = world(true).await;
    for kind in OperationKind::ALL {
        let mut d = form(client.clone(), "prod-eu", kind).await;
        if let Some(t) = target_of(kind) {
            d.code(KeyCode::Tab).await;
            d.type_text(t).await;
        }
        snap_all!(format!("form_{}", kind.as_str()), &d.state);
    }
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn invalid_input_is_explained_where_it_is_typed() {
    let (api, client) = world(true).await;
    let mut d = form(client, "prod-eu", OperationKind::Talos).await;
    d.code(KeyCode::Tab).await;
    d.type_text("1.9").await;
    snap_all!("form_invalid_version", &d.state);
    d.code(KeyCode::Enter).await;
    assert_eq!(
        dialog(&d).step,
        NewOpStep::Form,
        "Enter does not review an invalid form"
    );
    assert!(!d.effects.iter().any(|e| matches!(e, Effect::Plan { .. })));
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn the_review_for_every_kind() {
    for kind in OperationKind::ALL {
        let (api, client) = world(true).await;
        let d = review(client, "prod-eu", kind, target_of(kind)).await;
        let plan = dialog(&d).plan.data.clone().unwrap();
        assert!(plan.blocked.is_none(), "{kind:?}: {:?}", plan.blocked);
        snap_all!(format!("review_{}", kind.as_str()), &d.state);
        assert!(
            api.write_log().is_empty(),
            "{kind:?}: a Review writes nothing"
        );
        assert!(!d.wrote());
    }
}

#[tokio::test]
async fn blocked_plans_offer_no_start() {
    struct Case {
        name: &'static str,
        clean: bool,
        cluster: &'static str,
        kind: OperationKind,
        target: &'static str,
        reason: Reason,
    }
    let cases = [
        Case {
            name: "blocked_unfinished",
            clean: false,
            cluster: "edge-tokyo",
            kind: OperationKind::Kubernetes,
            target: "v1.33.0",
            reason: Reason::UnfinishedOperation,
        },
        Case {
            name: "blocked_tracked",
            clean: false,
            cluster: "prod-eu",
            kind: OperationKind::Talos,
            target: "v1.9.3",
            reason: Reason::TrackedByGitops,
        },
        Case {
            name: "blocked_downgrade",
            clean: true,
            cluster: "prod-eu",
            kind: OperationKind::Talos,
            target: "v1.8.4",
            reason: Reason::Downgrade,
        },
    ];
    for Case {
        name,
        clean,
        cluster,
        kind,
        target,
        reason,
    } in cases
    {
        let target = Some(target);
        let (api, client) = world(clean).await;
        let mut d = review(client, cluster, kind, target).await;
        assert_eq!(
            dialog(&d)
                .plan
                .data
                .as_ref()
                .unwrap()
                .blocked
                .as_ref()
                .unwrap()
                .reason,
            reason
        );
        snap_all!(name, &d.state);
        d.code(KeyCode::Enter).await;
        assert!(!d.wrote(), "{name}: Start is not offered");
        assert_eq!(dialog(&d).step, NewOpStep::Review);
        assert!(api.write_log().is_empty(), "{name}");
    }
}

#[tokio::test]
async fn a_long_plan_scrolls() {
    let (_api, client) = world(true).await;
    let mut d = review(client, "prod-eu", OperationKind::Talos, Some("v1.9.3")).await;
    for _ in 0..6 {
        d.code(KeyCode::Down).await;
    }
    // At 80×24 the plan is a few lines longer than the room: it scrolls to its end, no further.
    let last = d.state.viewport.dialog.last_start();
    assert!(last > 0, "{:?}", d.state.viewport);
    assert_eq!(dialog(&d).scroll, last);
    snap_all!("review_scrolled", &d.state);
}

#[tokio::test]
async fn the_typed_name_gates_start() {
    let (api, client) = world(true).await;
    let mut d = review(client, "prod-eu", OperationKind::Shutdown, None).await;
    d.code(KeyCode::Enter).await;
    assert!(!d.wrote(), "no name typed: no start");
    d.type_text("prod").await;
    snap_all!("review_name_partial", &d.state);
    d.code(KeyCode::Enter).await;
    assert!(!d.wrote(), "a partial name: no start");
    d.type_text("-EU").await;
    assert_eq!(
        dialog(&d).typed_name,
        "prod-EU",
        "capitals are typed as typed (and no part of a cluster name)"
    );
    d.code(KeyCode::Enter).await;
    assert!(!d.wrote(), "a wrong name: no start");
    d.code(KeyCode::Backspace).await;
    d.code(KeyCode::Backspace).await;
    d.type_text("eux").await;
    d.code(KeyCode::Enter).await;
    assert!(!d.wrote(), "a longer name: no start");
    d.code(KeyCode::Backspace).await;
    assert!(dialog(&d).can_start());
    snap_all!("review_name_typed", &d.state);
    assert!(api.write_log().is_empty(), "nothing written before Start");
    d.code(KeyCode::Esc).await;
    assert!(d.state.dialog.is_none());
    assert!(api.write_log().is_empty(), "nothing written after Esc");
}

#[tokio::test]
async fn escape_closes_the_dialog_at_every_step() {
    let (api, client) = world(true).await;
    let mut d = form(client.clone(), "staging", OperationKind::Talos).await;
    d.code(KeyCode::Esc).await;
    assert!(d.state.dialog.is_none());
    let mut d = form(client.clone(), "staging", OperationKind::Talos).await;
    d.code(KeyCode::Tab).await;
    d.type_text("1.9.4").await;
    d.code(KeyCode::Esc).await;
    assert!(
        d.state.dialog.is_none(),
        "Esc in a text field closes the dialog too"
    );
    let mut d = review(client, "staging", OperationKind::Talos, Some("1.9.4")).await;
    d.code(KeyCode::Esc).await;
    assert!(d.state.dialog.is_none());
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn a_half_success_says_what_was_written_and_a_second_start_finishes_it() {
    let (api, client) = world(true).await;
    let mut d = review(
        client,
        "staging",
        OperationKind::Kubernetes,
        Some("v1.33.0"),
    )
    .await;
    api.fail_when(
        FaultRule::on("create", "talosoperations"),
        Fault::Unavailable,
    );
    d.code(KeyCode::Enter).await;
    let dl = dialog(&d);
    assert_eq!(dl.step, NewOpStep::Review);
    assert_eq!(
        dl.start_error.as_ref().unwrap().reason,
        Some(Reason::SpecWrittenCreateFailed)
    );
    assert!(
        dl.plan.data.as_ref().unwrap().spec_change.is_none(),
        "the fresh plan writes no spec"
    );
    snap_all!("review_half_success", &d.state);
    let by = |v: &str| format!("{v} by admin");
    assert_eq!(
        common::names(&api.write_log()),
        [
            by("create leases"),
            by("update talosclusters"),
            by("update leases")
        ],
        "the spec write, between taking and giving back the claim"
    );
    api.clear_write_log();
    d.code(KeyCode::Enter).await;
    assert!(d.state.dialog.is_none());
    assert_eq!(d.state.screen, Screen::Operation);
    assert_eq!(
        common::names(&api.write_log()),
        [
            by("update leases"),
            by("create talosoperations"),
            by("update leases")
        ],
        "only the create, within the claim"
    );
}

#[tokio::test]
async fn a_confirmation_left_behind_is_a_warning_that_cannot_be_missed() {
    let (api, client) = world(true).await;
    let mut d = review(client, "staging", OperationKind::Cni, None).await;
    api.fail_when(
        FaultRule::on("update", "talosclusters").after(1),
        Fault::Unavailable,
    );
    d.code(KeyCode::Enter).await;
    let Some(Notice::Started(created)) = &d.state.notice else {
        panic!("{:?}", d.state.notice)
    };
    assert_eq!(created.warnings[0].reason, Reason::AnnotationNotRemoved);
    let term = common::snap::draw(
        &d.state,
        ichor_views::i18n::Lang::En,
        80,
        24,
        Default::default(),
    );
    let banner: String = (0..80)
        .map(|x| term.backend().buffer()[(x, 1)].symbol().to_string())
        .collect();
    assert!(
        banner.contains("⚠") && banner.contains("annotation"),
        "{banner}"
    );
    let style = common::snap::styles(term.backend().buffer());
    assert!(
        style
            .lines()
            .any(|l| l.starts_with(" 1:") && l.contains("fg=Red") && l.contains("BOLD")),
        "{style}"
    );
}

// ---- end to end ----

/// Starts Talos, kube-proxy and shutdown operations through the dialog, each run to Completed
/// by the simulated controller.
#[tokio::test]
async fn starts_through_the_dialog_run_to_completed() {
    let (api, client) = world(true).await;
    let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    let mut now = fixtures::now();
    for (kind, target, typed) in [
        (OperationKind::Talos, Some("v1.9.4"), None),
        (OperationKind::Cni, None, None),
        (OperationKind::Shutdown, None, Some("staging")),
    ] {
        let mut d = review(client.clone(), "staging", kind, target).await;
        assert!(
            api.writes_by(users::ADMIN).is_empty(),
            "{kind:?}: nothing before Start"
        );
        if let Some(name) = typed {
            d.type_text(name).await;
        }
        d.code(KeyCode::Enter).await;
        assert_eq!(
            d.state.screen,
            Screen::Operation,
            "{kind:?}: the new operation's page opens"
        );
        let name = d.state.detail.as_ref().unwrap().name.clone();
        for _ in 0..200 {
            now += jiff::SignedDuration::from_secs(1);
            ctrl.reconcile(now).await.unwrap();
            d.key(Key::ch('R')).await;
            if d.state
                .detail
                .as_ref()
                .unwrap()
                .op
                .data
                .as_ref()
                .unwrap()
                .phase
                == Phase::Completed
            {
                break;
            }
        }
        let op = d.state.detail.as_ref().unwrap().op.data.clone().unwrap();
        assert_eq!(op.phase, Phase::Completed, "{kind:?} {name}");
        assert_eq!(op.actor.as_deref(), Some("ichor-tui"));
        api.clear_write_log();
    }
    let staging = Api::<TalosCluster>::namespaced(api.client(users::ADMIN_TOKEN), "default")
        .get("staging")
        .await
        .unwrap();
    assert_eq!(
        (
            staging.spec.talos_version.as_str(),
            staging.spec.cni.kube_proxy.as_str()
        ),
        ("v1.9.4", "replaced")
    );
}

// ---- bound to what was reviewed ----

fn client_as(api: &EmbeddedApi, token: &str) -> Arc<dyn OperationClient> {
    let service = OperationService::new(KubeAccess::new(api.client(token), "ichor-tui"));
    Arc::new(InProcessClient::new(service, Caller::in_process()))
}

#[tokio::test]
async fn a_review_for_someone_who_may_not_start_it_offers_no_start() {
    let (api, _) = world(true).await;
    let operator = client_as(&api, users::OPERATOR_TOKEN);
    let mut d = review(operator, "staging", OperationKind::Talos, Some("1.9.4")).await;
    let plan = dialog(&d).plan.data.clone().unwrap();
    assert_eq!(plan.denied.unwrap().reason, Reason::NotPermitted);
    assert!(!dialog(&d).start_offered());
    snap_all!("review_denied", &d.state);
    d.code(KeyCode::Enter).await;
    assert!(!d.wrote() && api.write_log().is_empty());
}

#[tokio::test]
async fn a_plan_that_changed_since_the_review_is_shown_again_instead_of_started() {
    let (api, client) = world(true).await;
    let mut d = review(client, "staging", OperationKind::Talos, Some("1.9.4")).await;
    let reviewed = dialog(&d).plan.data.clone().unwrap();
    // Someone holds a machine between the Review and Start.
    let held = reviewed.steps.last().unwrap()[0].name.clone();
    api.edit("machines", "default", &held, |m| {
        m["metadata"]["annotations"] = serde_json::json!({names::UPGRADE_HOLD: "firmware"});
    });
    d.code(KeyCode::Enter).await;
    let dl = dialog(&d);
    assert_eq!(dl.step, NewOpStep::Review);
    assert_eq!(
        dl.start_error.as_ref().unwrap().reason,
        Some(Reason::PlanChanged)
    );
    let now = dl.plan.data.as_ref().unwrap();
    assert_ne!(now.fingerprint, reviewed.fingerprint);
    assert!(now.held.iter().any(|h| h.name == held));
    assert!(api.write_log().is_empty());
    snap_all!("review_plan_changed", &d.state);
    // Start from the new Review starts the new plan.
    d.code(KeyCode::Enter).await;
    assert_eq!(d.state.screen, Screen::Operation);
    assert_eq!(common::operations_created(&api), 1);
}

#[tokio::test]
async fn a_start_waiting_for_its_answer_can_be_left() {
    let (api, client) = world(true).await;
    let mut d = review(client, "staging", OperationKind::Talos, Some("1.9.4")).await;
    // Enter without running the start: the dialog waits for its answer.
    let effects = ichor_app::update::update(
        &mut d.state,
        ichor_app::action::Action::Key(Key::plain(KeyCode::Enter)),
    );
    assert!(matches!(effects.as_slice(), [Effect::Create { .. }]));
    assert!(matches!(dialog(&d).step, NewOpStep::Starting { .. }));
    snap_all!("review_starting", &d.state);
    // Other keys wait; Esc stops waiting and reads the Review again.
    d.key(Key::ch('x')).await;
    assert!(matches!(dialog(&d).step, NewOpStep::Starting { .. }));
    d.code(KeyCode::Esc).await;
    let dl = dialog(&d);
    assert_eq!(dl.step, NewOpStep::Review);
    assert_eq!(
        dl.start_error.as_ref().unwrap().reason,
        Some(Reason::WriteAbandoned)
    );
    // Esc only stops the waiting: it sends nothing that writes (the runtime runs a sent
    // write to its end; tests/runtime.rs), and nothing that could stop the start.
    assert!(!d.effects.iter().any(Effect::is_write), "{:?}", d.effects);
    snap_all!("review_start_abandoned", &d.state);
    assert!(api.write_log().is_empty(), "the start was never run here");
}

#[tokio::test]
async fn a_blocked_review_takes_no_typed_name_and_r_reads_it_again() {
    let (api, client) = world(false).await;
    // staging has an unfinished operation: a shutdown is blocked, the name field is not shown.
    let mut d = review(client, "staging", OperationKind::Shutdown, None).await;
    assert!(dialog(&d).plan.data.as_ref().unwrap().blocked.is_some());
    d.type_text("staging").await;
    assert_eq!(dialog(&d).typed_name, "", "no field, no keys");
    let before = d.effects.len();
    d.key(Key::ch('R')).await;
    assert!(
        d.effects[before..]
            .iter()
            .any(|e| matches!(e, Effect::Plan { .. })),
        "R reviews again"
    );
    assert_eq!(dialog(&d).typed_name, "");
    // The blocker cleared: now the field is there, empty, and must be typed.
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.delete("staging-talos-x7k2p", &DeleteParams::default())
        .await
        .unwrap();
    api.clear_write_log();
    d.key(Key::ch('R')).await;
    assert!(dialog(&d).start_offered());
    assert!(!dialog(&d).can_start());
    d.code(KeyCode::BackTab).await;
    d.code(KeyCode::Enter).await;
    d.code(KeyCode::Enter).await;
    assert!(
        api.write_log().is_empty(),
        "Shift-Tab, Enter, Enter does not shut it down: the name was never typed"
    );
}

/// A start whose create got no answer: the Review says its outcome is not known yet and not to
/// start again; the status line keeps saying it is looked for, until when; once the create can
/// no longer land and no operation carries the request id, the dashboard says it did not happen.
#[tokio::test]
async fn a_start_whose_outcome_is_unknown_is_looked_for_until_it_is_settled() {
    use ichor_app::action::Action;
    use ichor_model::{ApiError, Code};
    let (api, client) = world(true).await;
    let mut d = review(client, "staging", OperationKind::Talos, Some("1.9.4")).await;
    let effects = ichor_app::update::update(&mut d.state, Action::Key(Key::plain(KeyCode::Enter)));
    let [Effect::Create { seq, .. }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let until = fixtures::now() + jiff::SignedDuration::from_secs(60);
    let unknown = ApiError::refused(
        Code::Unavailable,
        Reason::StartOutcomeUnknown,
        &[
            ("cluster", "staging"),
            ("operation", "staging-talos-abcde"),
            ("actor", "ichor-tui"),
            ("until", &until.to_string()),
            ("request_id", "r-unknown"),
            ("detail", "connection reset by peer"),
        ],
        "unknown",
    );
    d.act(Action::Started {
        seq: *seq,
        result: Err(unknown),
    })
    .await;
    let settling = d.state.settling.clone().expect("looked for");
    assert_eq!(
        (settling.request_id.as_str(), settling.until),
        ("r-unknown", until)
    );
    snap_all!("review_start_outcome_unknown", &d.state);
    // Esc leaves the Review; the status line keeps saying it is looked for.
    d.code(KeyCode::Esc).await;
    assert!(d.state.dialog.is_none());
    snap_all!("start_settling_status", &d.state);
    // Looked for while it may land, and once after: nothing carries the request id.
    d.state.now = until - jiff::SignedDuration::from_secs(10);
    d.act(Action::Tick).await;
    assert!(d.state.settling.is_some(), "still looked for");
    d.state.now = until + jiff::SignedDuration::from_secs(2);
    d.act(Action::Tick).await;
    assert!(d.state.settling.is_none());
    assert_eq!(
        d.state.notice,
        Some(Notice::StartNotCreated("staging".into()))
    );
    snap_all!("start_not_created", &d.state);
    assert!(api.write_log().is_empty(), "no start was run here");
}
