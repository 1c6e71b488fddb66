//! Every Review complete (issue 17), through the real service and the embedded cluster: held
//! machines named whether or not they are skipped, unapproved ones named as not touched, a
//! start on a cluster that was shut down warned of, the hints of each kind, the GitOps refusal
//! for kube-proxy; and, at 40×12, the Review, the keys and the operation page scroll with a
//! marker. Nothing is written.

use crate::common;
use crate::snap_all;

use common::dialog::{dialog, form, on_clusters, review, select};
use common::driver::Driver;
use common::fixtures;
use common::snap::draw;
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{Screen, State};
use ichor_client::inprocess::InProcessClient;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_demo::demo;
use ichor_model::OperationClient;
use ichor_model::{OperationKind, Reason};
use ichor_resources::{Machine, TalosCluster, TalosOperation, TalosOperationStatus, names};
use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use std::sync::Arc;

/// The demo data without prod-eu's tracking and the unfinished operations; prod-eu-w12 not
/// approved.
async fn world() -> (EmbeddedApi, Arc<dyn OperationClient>) {
    let api = EmbeddedApi::default();
    demo::seed(&api, fixtures::now()).unwrap();
    let admin = api.client(users::ADMIN_TOKEN);
    let untracked =
        serde_json::json!({"metadata": {"annotations": {names::ARGOCD_TRACKING_ID: null}}});
    Api::<TalosCluster>::namespaced(admin.clone(), "default")
        .patch("prod-eu", &PatchParams::default(), &Patch::Merge(untracked))
        .await
        .unwrap();
    let ops: Api<TalosOperation> = Api::namespaced(admin.clone(), "default");
    for name in ["staging-talos-x7k2p", "edge-tokyo-talos-m4q9z"] {
        ops.delete(name, &DeleteParams::default()).await.unwrap();
    }
    Api::<Machine>::namespaced(admin, "default")
        .patch(
            "prod-eu-w12",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"approved": false}})),
        )
        .await
        .unwrap();
    api.clear_write_log();
    let service =
        OperationService::new(KubeAccess::new(api.client(users::ADMIN_TOKEN), "ichor-tui"));
    let client = InProcessClient::new(service, Caller::in_process());
    (api, Arc::new(client))
}

/// Staging shut down a minute ago by bob, the last thing done on it.
fn shut_down_staging(api: &EmbeddedApi) {
    let at = fixtures::now() - jiff::SignedDuration::from_secs(120);
    let mut o = common::op("staging-shutdown-z9q4w", "staging", "shutdown", 1);
    o.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at));
    o.metadata.annotations = Some([(names::ACTOR.to_string(), "bob@example.com".into())].into());
    o.status = Some(TalosOperationStatus {
        phase: "Completed".into(),
        finished_at: Some(ichor_resources::format_time(
            at + jiff::SignedDuration::from_secs(60),
        )),
        ..Default::default()
    });
    api.seed(&o).unwrap();
    api.clear_write_log();
}

/// The screen's words as one line, wherever they wrapped.
fn flat(state: &State, lang: Lang, w: u16, h: u16) -> String {
    let term = draw(state, lang, w, h, Theme::default());
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push(' ');
    }
    out.replace(['│', '┌', '┐', '└', '┘', '─'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn snap_small(name: &str, state: &State) {
    snap_small_renamed(name, state, "", "");
}

/// `snap_small` with `from` (a name the server made up) said as `to`, which is as wide.
fn snap_small_renamed(name: &str, state: &State, from: &str, to: &str) {
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(state, lang, 40, 12, Theme::default());
        let mut screen = term.backend().to_string();
        if !from.is_empty() {
            screen = screen.replace(from, to);
        }
        // The operation was created now: the clock time its state is new since says it one way.
        let created = state
            .detail
            .as_ref()
            .and_then(|d| d.op.data.as_ref()?.created_at);
        if let Some(at) = created {
            let clock = at.to_zoned(state.tz.clone()).strftime("%H:%M").to_string();
            screen = screen.replace(&format!("since {clock}"), "since HH:MM");
            screen = screen.replace(&format!("{clock} から"), "HH:MM から");
        }
        // Its events were recorded now: their clock times said one way.
        let events = state.detail.as_ref().and_then(|d| d.events.data.as_deref());
        for at in events.unwrap_or_default().iter().filter_map(|e| e.at()) {
            let z = at.to_zoned(state.tz.clone());
            for form in ["%Y-%m-%d %H:%M:%S", "%H:%M:%S"] {
                screen = screen.replace(&z.strftime(form).to_string(), "YYYY-MM-DD HH:MM:SS");
            }
        }
        crate::snapshot!(format!("{name}_{}_40x12", lang.code()), screen);
    }
}

#[tokio::test]
async fn a_rollout_review_names_held_and_unapproved_machines() {
    let (api, client) = world().await;
    let d = review(client, "prod-eu", OperationKind::Talos, Some("v1.9.3")).await;
    let plan = dialog(&d).plan.data.clone().unwrap();
    assert_eq!(plan.unapproved[0].name, "prod-eu-w12");
    let all = flat(&d.state, Lang::En, 160, 48);
    assert!(
        all.contains("Held, skipped (1): – prod-eu-w07: RAID controller"),
        "{all}"
    );
    assert!(
        all.contains("Not approved, not touched (1): – prod-eu-w12 (worker)"),
        "{all}"
    );
    snap_all!("review_held_and_unapproved", &d.state);
    assert!(api.write_log().is_empty() && !d.wrote());
}

#[tokio::test]
async fn a_ca_rotation_review_says_why_a_held_machine_is_not_skipped() {
    let (api, client) = world().await;
    let d = review(client, "prod-eu", OperationKind::CaRotation, None).await;
    let all = flat(&d.state, Lang::En, 160, 48);
    assert!(
        all.contains("Held, but not skipped (1): a machine left out would be locked out when the old CA is dropped. – prod-eu-w07"),
        "{all}"
    );
    assert!(
        all.contains("stop working when the old CA is dropped"),
        "{all}"
    );
    assert!(
        all.contains("Not approved, not touched (1): – prod-eu-w12"),
        "{all}"
    );
    snap_all!("review_ca_rotation_held_and_unapproved", &d.state);
    // At 40×12 the Review scrolls, the typed name stays in sight, a marker counts the rest.
    snap_small("review_ca_rotation", &d.state);
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn the_review_scrolls_at_40_by_12_to_its_end() {
    let (api, client) = world().await;
    // Laid out in each language, as the runtime lays the screen out in the one it shows.
    for lang in [Lang::En, Lang::Ja] {
        let mut d = review(client.clone(), "prod-eu", OperationKind::CaRotation, None).await;
        d.lang = lang;
        d.act(Action::Resize(40, 12)).await;
        d.act(Action::Redraw).await;
        let room = d.state.viewport.dialog;
        assert!(room.lines > room.rows && room.rows >= 2, "{room:?}");
        // A page at a time, and one more press than the text has pages.
        for _ in 0..=room.lines.div_ceil(room.rows) {
            d.code(KeyCode::PageDown).await;
        }
        assert_eq!(
            dialog(&d).scroll,
            room.last_start(),
            "to the end, no further"
        );
        if lang == Lang::En {
            let end = flat(&d.state, lang, 40, 12);
            assert!(end.contains("above") && !end.contains("more ┘"), "{end}");
        }
        let term = draw(&d.state, lang, 40, 12, Theme::default());
        crate::snapshot!(
            format!(
                "review_ca_rotation_scrolled_to_the_end_{}_40x12",
                lang.code()
            ),
            term.backend()
        );
        // Typing the name works while it is scrolled.
        d.type_text("prod-eu").await;
        assert!(dialog(&d).can_start());
        assert!(!d.wrote());
    }
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn a_start_on_a_cluster_that_was_shut_down_warns() {
    let (api, client) = world().await;
    shut_down_staging(&api);
    let mut d = on_clusters(client.clone()).await;
    select(&mut d, "staging").await;
    d.code(KeyCode::Enter).await;
    assert_eq!(d.state.screen, Screen::Cluster);
    let page = flat(&d.state, Lang::En, 160, 48);
    assert!(
        page.contains("Shut down 2026-11-29 11:59 by bob@example.com (staging-shutdown-z9q4w)"),
        "{page}"
    );
    assert!(page.contains("presumably still stopped"), "{page}");
    snap_all!("cluster_page_shut_down", &d.state);
    let d = review(client, "staging", OperationKind::Talos, Some("v1.9.4")).await;
    let plan = dialog(&d).plan.data.clone().unwrap();
    assert!(plan.shut_down.is_some() && plan.blocked.is_none());
    let all = flat(&d.state, Lang::En, 160, 48);
    assert!(
        all.contains("Cluster staging was shut down at 2026-11-29 11:59 by bob@example.com"),
        "{all}"
    );
    snap_all!("review_on_a_shut_down_cluster", &d.state);
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn each_kind_hints_its_own_version() {
    let (_api, client) = world().await;
    for (kind, example) in [
        (OperationKind::Talos, "v1.9.3"),
        (OperationKind::Kubernetes, "v1.33.0"),
        (OperationKind::Ichor, "v0.15.0"),
    ] {
        let d = form(client.clone(), "prod-eu", kind).await;
        let all = flat(&d.state, Lang::En, 80, 24);
        assert!(
            all.contains(&format!(
                "Type the version to upgrade to, such as {example}."
            )),
            "{kind:?}: {all}"
        );
        let mut d = d;
        d.code(KeyCode::Tab).await;
        d.type_text("abc").await;
        let all = flat(&d.state, Lang::En, 80, 24);
        assert!(
            all.contains(&format!("“abc” is not a version such as {example}.")),
            "{kind:?}: {all}"
        );
        if kind == OperationKind::Ichor {
            snap_all!("form_ichor_hint", &d.state);
        }
    }
    let d = form(client, "prod-eu", OperationKind::Kubernetes).await;
    snap_all!("form_kubernetes_hint", &d.state);
}

#[tokio::test]
async fn the_gitops_refusal_for_kube_proxy_speaks_of_the_mode() {
    let api = EmbeddedApi::default();
    demo::seed(&api, fixtures::now()).unwrap();
    let service =
        OperationService::new(KubeAccess::new(api.client(users::ADMIN_TOKEN), "ichor-tui"));
    let client: Arc<dyn OperationClient> =
        Arc::new(InProcessClient::new(service, Caller::in_process()));
    let d = review(client, "prod-eu", OperationKind::Cni, None).await;
    let blocked = dialog(&d).plan.data.clone().unwrap().blocked.unwrap();
    assert_eq!(blocked.reason, Reason::TrackedByGitops);
    let all = flat(&d.state, Lang::En, 160, 48);
    assert!(
        all.contains("then start with the kube-proxy mode the spec then names"),
        "{all}"
    );
    assert!(!all.contains("the version the spec"), "{all}");
    snap_all!("blocked_tracked_kube_proxy", &d.state);
    assert!(api.write_log().is_empty());
}

// ---- 40×12 ----

/// The operations list, as the demo holds it, at 40×12.
async fn small_list() -> Driver {
    let (_api, client) = world().await;
    let mut d = Driver::new(fixtures::state(), client).await;
    d.act(Action::Resize(40, 12)).await;
    d.act(Action::Redraw).await;
    d
}

#[tokio::test]
async fn the_keys_scroll_at_40_by_12() {
    let mut d = small_list().await;
    d.key(Key::ch('?')).await;
    let room = d.state.viewport.dialog;
    assert!(room.lines > room.rows, "{room:?}");
    snap_small("keys", &d.state);
    d.key(Key::ch('G')).await;
    let end = flat(&d.state, Lang::En, 40, 12);
    assert!(
        end.contains("since it took effect") && end.contains("above"),
        "{end}"
    );
    snap_small("keys_scrolled_to_the_end", &d.state);
    d.key(Key::ch('?')).await;
    assert!(d.state.dialog.is_none(), "? closes what it opened");
}

#[tokio::test]
async fn the_operation_page_at_40_by_12_counts_what_it_cannot_show() {
    let (api, client) = world().await;
    let mut d = Driver::new(fixtures::state(), client).await;
    // Start a rollout on prod-eu through the dialog, then read its page small.
    let mut r = review(
        d.client.clone(),
        "prod-eu",
        OperationKind::Talos,
        Some("v1.9.3"),
    )
    .await;
    r.code(KeyCode::Enter).await;
    assert_eq!(r.state.screen, Screen::Operation);
    d.state = r.state;
    d.act(Action::Resize(40, 12)).await;
    d.act(Action::Redraw).await;
    let page = flat(&d.state, Lang::En, 40, 12);
    assert!(page.contains("more lines: Enter shows it all"), "{page}");
    assert!(page.contains("MACHINE") || page.contains("# "), "{page}");
    // The server names the operation (generateName): the snapshots say its name one way.
    let made_up = d
        .state
        .detail
        .as_ref()
        .map(|p| p.name.clone())
        .unwrap_or_default();
    assert_eq!(made_up.len(), "prod-eu-talos-xxxxx".len(), "{made_up}");
    snap_small_renamed("operation_page", &d.state, &made_up, "prod-eu-talos-xxxxx");
    d.code(KeyCode::Enter).await;
    let whole = flat(&d.state, Lang::En, 40, 12);
    assert!(whole.contains("more"), "{whole}");
    d.key(Key::ch('G')).await;
    snap_small_renamed(
        "operation_page_read_whole_to_the_end",
        &d.state,
        &made_up,
        "prod-eu-talos-xxxxx",
    );
    assert_eq!(
        common::operations_created(&api),
        1,
        "one start, through its Review"
    );
}

/// A kube-proxy confirmation left on a cluster by a start that was stopped between its spec
/// write and its create: the cluster page shows it while it stands, and the Review of any start
/// names it (the start takes it back).
#[tokio::test]
async fn a_stray_confirmation_is_shown_on_the_cluster_page_and_in_the_review() {
    let (api, client) = world().await;
    assert!(api.edit("talosclusters", "default", "staging", |c| {
        c["metadata"]["annotations"][names::CONFIRM_KUBE_PROXY_SWITCH] = serde_json::json!("true");
    }));
    api.clear_write_log();
    let mut d = on_clusters(client.clone()).await;
    select(&mut d, "staging").await;
    d.code(KeyCode::Enter).await;
    let page = flat(&d.state, Lang::En, 160, 48);
    assert!(
        page.contains("The kube-proxy confirmation (ichor.maesh.dev/confirm-kube-proxy-switch) is on this cluster"),
        "{page}"
    );
    snap_all!("cluster_page_stray_confirmation", &d.state);
    let d = review(client, "staging", OperationKind::Talos, Some("v1.9.4")).await;
    let all = flat(&d.state, Lang::En, 160, 48);
    assert!(all.contains("this start removes it"), "{all}");
    snap_all!("review_stray_confirmation", &d.state);
    assert!(api.write_log().is_empty());
}
