//! A delete that a finalizer holds, as a real cluster answers it (a controller may keep a
//! TalosOperation with a finalizer): the delete succeeds, the operation stays with its
//! deletionTimestamp, and the dashboard shows it as being deleted, waiting for the finalizer,
//! on every path; not as gone and not as an error. Once the finalizer's owner removes it, the
//! operation is gone.

use crate::common;

use common::op;
use common::paths::{Path, User, connect};
use common::snap::draw;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_model::{Code, ListQuery, Operation};
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;

/// The list screen showing `op`, as text.
fn list_screen(op: &Operation, lang: Lang) -> String {
    let term = draw(
        &common::fixtures::listed(vec![op.clone()]),
        lang,
        140,
        20,
        Theme::default(),
    );
    let buf = term.backend().buffer();
    let mut text = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            text.push_str(buf[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

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
    let en = list_screen(row, Lang::En);
    assert!(
        en.contains("… deleting (waiting for example.com/x)"),
        "{en}"
    );
    let ja = list_screen(row, Lang::Ja);
    assert!(ja.contains("削") && ja.contains("example.com/x"), "{ja}");
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
    let shown = list_screen(&common::fixtures::running_rollout(), Lang::En);
    assert!(!shown.contains("deleting"), "{shown}");
}
