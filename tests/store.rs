//! The in-process list kept by a watch (client/store.rs), against the embedded API through
//! kube-runtime's watcher: an idle list reads memory and costs the API nothing; a change
//! shows without a list; a person who may list but not watch reads the API every poll; a
//! watch that comes back too old (410) lists again; a full view always reads the API.

use crate::common;

use common::op;
use ichor_client::inprocess::InProcessClient;
use ichor_demo::apiserver::auth::{Rule, Subject, users};
use ichor_demo::apiserver::{EmbeddedApi, FaultRule};
use ichor_model::OperationClient;
use ichor_model::{ListQuery, Phase, View};
use ichor_resources::*;
use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use std::time::Duration;

fn seeded(names: &[&str]) -> EmbeddedApi {
    let api = EmbeddedApi::default();
    for name in names {
        api.seed(&op(name, "c1", "talos", 1)).unwrap();
    }
    api
}

/// The dashboard's in-process client for the person with `token`, its list kept by a watch of
/// `default` made with the same credentials.
fn watching(api: &EmbeddedApi, token: &str) -> InProcessClient {
    let service = OperationService::new(KubeAccess::new(api.client(token), "ichor-tui"));
    InProcessClient::new(service, Caller::in_process())
        .with_watch(api.client(token), Some("default".into()))
}

fn summaries() -> ListQuery {
    ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        page_size: 100,
        ..ListQuery::default()
    }
}

async fn names(c: &InProcessClient) -> Vec<String> {
    let mut names: Vec<String> = c
        .list_page(&summaries())
        .await
        .unwrap()
        .operations
        .into_iter()
        .map(|o| o.name)
        .collect();
    names.sort();
    names
}

async fn eventually(what: &str, mut done: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{what}");
}

/// Waits until the watch holds the list: polls stop reaching the API.
async fn until_watched(api: &EmbeddedApi, c: &InProcessClient, user: &str) {
    eventually("the watch holds the list", async || {
        let before = api.request_count_of(user);
        c.list_page(&summaries()).await.unwrap();
        api.request_count_of(user) == before
    })
    .await;
}

#[tokio::test]
async fn an_idle_list_reads_memory_and_costs_the_api_nothing() {
    let api = seeded(&["a", "b", "c"]);
    let c = watching(&api, users::VIEWER_TOKEN);
    until_watched(&api, &c, users::VIEWER).await;
    assert_eq!(api.watch_count(), 1);
    let requests = api.request_count_of(users::VIEWER);
    for _ in 0..50 {
        assert_eq!(names(&c).await, ["a", "b", "c"]);
    }
    assert_eq!(
        api.request_count_of(users::VIEWER),
        requests,
        "50 polls of the list, no request"
    );
    // A full view, and a read of one operation, read the API as ever.
    let full = ListQuery {
        view: View::Full,
        ..summaries()
    };
    assert_eq!(c.list_page(&full).await.unwrap().operations.len(), 3);
    c.get_operation("default", "a").await.unwrap();
    assert_eq!(api.request_count_of(users::VIEWER), requests + 2);
}

/// The first poll waits for the watch's first list rather than listing everything from the
/// API as well.
#[tokio::test]
async fn the_first_poll_reads_the_watchs_first_list() {
    let api = seeded(&["a", "b"]);
    let c = watching(&api, users::VIEWER_TOKEN);
    assert_eq!(names(&c).await, ["a", "b"]);
    eventually("the watch is open", async || api.watch_count() == 1).await;
    assert_eq!(
        api.request_count_of(users::VIEWER),
        2,
        "the watch's list and the watch, and no list of the poll's own"
    );
}

/// A poll that names the version it holds gets nothing back until the rows change.
#[tokio::test]
async fn a_poll_that_knows_the_version_gets_nothing_until_a_change() {
    let api = seeded(&["a"]);
    let c = watching(&api, users::VIEWER_TOKEN);
    until_watched(&api, &c, users::VIEWER).await;
    let first = c.list_page(&summaries()).await.unwrap();
    let known = ListQuery {
        known_version: Some(first.version.clone()),
        ..summaries()
    };
    for _ in 0..3 {
        let again = c.list_page(&known).await.unwrap();
        assert!(again.unchanged && again.operations.is_empty(), "{again:?}");
        assert_eq!((again.total, &again.version), (1, &first.version));
    }
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.create(&PostParams::default(), &op("b", "c1", "talos", 1))
        .await
        .unwrap();
    eventually("the change is a new page", async || {
        let p = c.list_page(&known).await.unwrap();
        !p.unchanged && p.operations.len() == 2 && p.version != first.version
    })
    .await;
}

#[tokio::test]
async fn a_change_shows_without_a_list() {
    let api = seeded(&["a"]);
    let c = watching(&api, users::VIEWER_TOKEN);
    until_watched(&api, &c, users::VIEWER).await;
    let requests = api.request_count_of(users::VIEWER);
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.create(&PostParams::default(), &op("b", "c1", "kubernetes", 1))
        .await
        .unwrap();
    eventually("the new operation is listed", async || {
        names(&c).await == ["a", "b"]
    })
    .await;
    ops.patch_status(
        "b",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    eventually("its phase follows", async || {
        let page = c.list_page(&summaries()).await.unwrap();
        page.operations
            .iter()
            .any(|o| o.name == "b" && o.phase == Phase::Running)
    })
    .await;
    ops.delete("a", &DeleteParams::default()).await.unwrap();
    eventually("the deleted one goes", async || names(&c).await == ["b"]).await;
    assert_eq!(
        api.request_count_of(users::VIEWER),
        requests,
        "the watch carried all of it"
    );
}

#[tokio::test]
async fn a_person_who_may_list_but_not_watch_reads_the_api() {
    let api = seeded(&["a", "b"]);
    api.add_token("list-only-token", "list-only", &[]);
    api.add_rule(Rule::new(
        Subject::User("list-only".into()),
        &["get", "list"],
        &["talosoperations", "talosclusters", "machines"],
    ));
    let c = watching(&api, "list-only-token");
    for _ in 0..5 {
        let before = api.request_count_of("list-only");
        assert_eq!(names(&c).await, ["a", "b"]);
        assert!(
            api.request_count_of("list-only") > before,
            "without a watch, each poll lists"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(api.watch_count(), 0);
    // What the next poll reads is the API's, as it is now.
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    for name in ["c", "d"] {
        ops.create(&PostParams::default(), &op(name, "c1", "talos", 1))
            .await
            .unwrap();
        assert!(names(&c).await.contains(&name.to_string()));
    }
}

#[tokio::test]
async fn a_watch_too_old_lists_again_and_misses_nothing() {
    let api = seeded(&["a"]);
    let c = watching(&api, users::VIEWER_TOKEN);
    until_watched(&api, &c, users::VIEWER).await;
    // Just before it watches again, a change it has no event for, and the history compacted:
    // its watch is too old (410), and only a new list can show the change.
    api.before(FaultRule::on("watch", "talosoperations"), |api| {
        api.seed(&op("b", "c1", "talos", 1)).unwrap();
        api.compact();
    });
    api.end_watches();
    eventually("the change is listed", async || {
        names(&c).await == ["a", "b"]
    })
    .await;
    until_watched(&api, &c, users::VIEWER).await;
    assert_eq!(names(&c).await, ["a", "b"]);
}

#[tokio::test]
async fn the_watch_ends_with_the_client() {
    let api = seeded(&["a"]);
    let c = watching(&api, users::VIEWER_TOKEN);
    until_watched(&api, &c, users::VIEWER).await;
    assert_eq!(api.watch_count(), 1);
    drop(c);
    eventually("the watch ends", async || api.watch_count() == 0).await;
}
