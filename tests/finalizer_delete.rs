//! A delete that a finalizer holds, as a real cluster answers it (a controller may keep a
//! TalosOperation with a finalizer): the delete succeeds, the operation stays with its
//! deletionTimestamp, and the dashboard shows it as being deleted, waiting for the finalizer,
//! on every path; not as gone and not as an error. Once the finalizer's owner removes it, the
//! operation is gone.

mod common;

use common::op;
use common::paths::{Path, User, connect};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_tui::i18n::{Lang, Texts};
use ichor_tui::model::{Code, ListQuery};
use ichor_tui::views::style::Theme;
use ichor_tui::views::words::phase_view;

/// The small cluster and the operation `held`, which `example.com/x` finalizes.
fn api() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    let mut o = op("held", "c1", "talos", 1);
    o.metadata.finalizers = Some(vec!["example.com/x".into()]);
    api.seed(&o).unwrap();
    api
}

async fn a_held_delete_is_shown_as_deleting(path: Path) {
    let api = api();
    let c = connect(path, &api, User::Operator).await;
    c.delete_operation("default", "held", None).await.unwrap();
    let held = c.get_operation("default", "held").await.unwrap();
    assert_eq!(
        held.deleting,
        Some(vec!["example.com/x".to_string()]),
        "{path:?}"
    );
    let page = c
        .list_page(&ListQuery::everything(Some("default")))
        .await
        .unwrap();
    let row = page.operations.iter().find(|o| o.name == "held").unwrap();
    assert_eq!(row.deleting, held.deleting, "{path:?}");
    let en = phase_view(&Texts::new(Lang::En), &Theme::default(), row).0;
    assert_eq!(en, "… deleting (waiting for example.com/x)");
    let ja = phase_view(&Texts::new(Lang::Ja), &Theme::default(), row).0;
    assert!(ja.contains("example.com/x"), "{ja}");
    // The finalizer's owner lets it go, as a controller would: it is gone.
    let owner: kube::Api<ichor_resources::TalosOperation> = kube::Api::namespaced(
        api.client(ichor_demo::apiserver::auth::users::CONTROLLER_TOKEN),
        "default",
    );
    let release = serde_json::json!({"metadata": {"finalizers": null}});
    owner
        .patch(
            "held",
            &Default::default(),
            &kube::api::Patch::Merge(release),
        )
        .await
        .unwrap();
    let gone = c.get_operation("default", "held").await.unwrap_err();
    assert_eq!(gone.code, Code::NotFound, "{path:?}");
}

#[tokio::test]
async fn in_process() {
    a_held_delete_is_shown_as_deleting(Path::InProcess).await;
}

#[tokio::test]
async fn impersonated() {
    a_held_delete_is_shown_as_deleting(Path::Impersonated).await;
}

#[tokio::test]
async fn over_grpc() {
    a_held_delete_is_shown_as_deleting(Path::Grpc).await;
}

#[tokio::test]
async fn over_connect() {
    a_held_delete_is_shown_as_deleting(Path::Connect).await;
}

/// An operation not being deleted shows its phase, as before.
#[test]
fn an_operation_not_being_deleted_shows_its_phase() {
    let o = ichor_tui::model::Operation::default();
    let shown = phase_view(&Texts::new(Lang::En), &Theme::default(), &o).0;
    assert!(!shown.contains("deleting"), "{shown}");
}
