//! What a caller can hold of serve's shared namespace watches, over gRPC: a list in a namespace
//! that does not exist opens no watch; lists in more namespaces than the bound never take the
//! watch a stream needs; a watch no one uses is given back after its linger.

use super::common::server::{Options, client, start};
use super::world;
use futures::StreamExt as _;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::{ListQuery, OperationClient as _, Updates, View, WatchRequest};
use ichor_service::shared::MAX_WATCHES;
use std::time::Duration;

/// A generous bound for what must happen: only a hang reaches it.
const NEVER: Duration = Duration::from_secs(60);

fn summaries(ns: Option<&str>) -> ListQuery {
    ListQuery {
        namespace: ns.map(str::to_string),
        view: View::Summary,
        ..ListQuery::default()
    }
}

fn watch(ns: Option<&str>) -> WatchRequest {
    WatchRequest {
        list: summaries(ns),
        follow: None,
        page_deltas: false,
    }
}

/// The stream's first update holds its page.
async fn first_page(updates: &mut Updates) -> ichor_model::OperationPage {
    let first = tokio::time::timeout(NEVER, updates.next())
        .await
        .expect("the first update comes")
        .expect("the stream goes on")
        .expect("an update, not an error");
    first.page.expect("the first update holds the page")
}

/// Waits until `f` holds of the API ([`super::common::eventually`]).
async fn until(api: &EmbeddedApi, what: &str, f: impl Fn(&EmbeddedApi) -> bool) {
    super::common::eventually(what, || f(api)).await;
}

#[tokio::test]
async fn lists_in_namespaces_that_do_not_exist_open_no_watch_and_streams_still_get_theirs() {
    let api = world();
    api.seed(&super::common::op("c1-talos-a", "c1", "talos", 1))
        .unwrap();
    let server = start(&api, Options::default()).await;
    let viewer = client(&server.url(false), Some(users::VIEWER_TOKEN));
    let idle = api.watch_count();
    for i in 0..MAX_WATCHES + 6 {
        let ns = format!("nowhere-{i}");
        let page = viewer.list_page(&summaries(Some(&ns))).await.unwrap();
        assert!(page.operations.is_empty(), "{ns}");
    }
    assert_eq!(
        api.watch_count(),
        idle,
        "no watch for a namespace that does not exist"
    );
    let e = match viewer.watch_operations(&watch(Some("nowhere-0"))).await {
        Err(e) => e,
        Ok(mut u) => u.next().await.unwrap().unwrap_err(),
    };
    assert_eq!(e.code, ichor_model::Code::NotFound, "{e:?}");
    let admin = client(&server.url(false), Some(users::ADMIN_TOKEN));
    for (who, ns) in [(&viewer, Some("default")), (&admin, None)] {
        let mut updates = who.watch_operations(&watch(ns)).await.unwrap();
        let page = first_page(&mut updates).await;
        assert!(page.total > 0, "{ns:?}: live updates for everyone");
    }
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn lists_in_more_namespaces_than_the_bound_leave_streams_a_watch_and_give_theirs_back() {
    let api = world();
    for i in 0..MAX_WATCHES + 6 {
        let mut o = super::common::op(&format!("op-{i}"), "c1", "talos", 1);
        o.metadata.namespace = Some(format!("team-{i}"));
        api.seed(&o).unwrap();
    }
    let opts = Options {
        linger: Some(Duration::from_millis(300)),
        ..Options::default()
    };
    let server = start(&api, opts).await;
    let idle = api.watch_count();
    let viewer = client(&server.url(false), Some(users::VIEWER_TOKEN));
    for i in 0..MAX_WATCHES + 6 {
        let ns = format!("team-{i}");
        let page = viewer.list_page(&summaries(Some(&ns))).await.unwrap();
        assert_eq!(page.total, 1, "{ns}");
        assert!(
            api.watch_count() <= idle + MAX_WATCHES,
            "{ns}: within the bound"
        );
    }
    let mut updates = viewer
        .watch_operations(&watch(Some("default")))
        .await
        .expect("a stream takes the place of a watch only lists used");
    first_page(&mut updates).await;
    until(
        &api,
        "the lists' watches are given back after their linger",
        |a| a.watch_count() == idle + 1,
    )
    .await;
    drop(updates);
    until(
        &api,
        "the stream's watch is given back after it ends",
        |a| a.watch_count() == idle,
    )
    .await;
    assert!(api.write_log().is_empty());
}

/// The next error of `updates` (updates and heartbeats before it pass), within [`NEVER`].
async fn ended(updates: &mut Updates) -> ichor_model::ApiError {
    tokio::time::timeout(NEVER, async {
        loop {
            match updates.next().await {
                Some(Ok(_)) => continue,
                Some(Err(e)) => return e,
                None => panic!("the stream ended without saying why"),
            }
        }
    })
    .await
    .expect("the stream ends")
}

#[tokio::test]
async fn a_revoked_token_ends_its_streams_unauthenticated_on_every_protocol() {
    use ichor_client::remote::Protocol;
    let api = world();
    api.seed(&super::common::op("c1-talos-a", "c1", "talos", 1))
        .unwrap();
    api.add_token("revocable-token", "revocable", &["ichor:viewers"]);
    let opts = Options {
        recheck: Some(Duration::from_millis(300)),
        ..Options::default()
    };
    let server = start(&api, opts).await;
    let mut streams = Vec::new();
    for protocol in [Protocol::Grpc, Protocol::Connect] {
        let c = super::common::server::client_over(
            &server.url(false),
            Some("revocable-token"),
            protocol,
        );
        let mut updates = c.watch_operations(&watch(Some("default"))).await.unwrap();
        first_page(&mut updates).await;
        streams.push((protocol, c, updates));
    }
    api.remove_token("revocable-token");
    for (protocol, c, mut updates) in streams {
        let e = ended(&mut updates).await;
        assert_eq!(
            (e.code, e.reason),
            (
                ichor_model::Code::Unauthenticated,
                Some(ichor_model::Reason::Unauthenticated)
            ),
            "{protocol:?}: {e:?}"
        );
        let e = c.list_operations(Some("default")).await.unwrap_err();
        assert_eq!(e.code, ichor_model::Code::Unauthenticated, "{protocol:?}");
    }
    assert!(api.write_log().is_empty());
}

/// The next update that is not a heartbeat, within [`NEVER`].
async fn next_change(updates: &mut Updates) -> ichor_model::WatchUpdate {
    loop {
        let u = tokio::time::timeout(NEVER, updates.next())
            .await
            .expect("a change comes")
            .expect("the stream goes on")
            .expect("an update, not an error");
        if !u.heartbeat {
            return u;
        }
    }
}

/// A list in one namespace that follows an operation in another: changes to the list cost the
/// API nothing as the caller (the followed operation is read again only when the shared watch of
/// its namespace saw it change), and its own change arrives.
#[tokio::test]
async fn an_operation_followed_in_another_namespace_is_read_again_only_when_it_changes() {
    let api = world();
    api.seed(&super::common::op("c1-talos-a", "c1", "talos", 1))
        .unwrap();
    let in_team = |name: &str| {
        let mut o = super::common::op(name, "c1", "talos", 1);
        o.metadata.namespace = Some("team".into());
        o
    };
    api.seed(&in_team("team-op-0")).unwrap();
    let server = start(&api, Options::default()).await;
    let viewer = client(&server.url(false), Some(users::VIEWER_TOKEN));
    let req = WatchRequest {
        list: summaries(Some("team")),
        follow: Some(("default".into(), "c1-talos-a".into())),
        page_deltas: false,
    };
    let mut updates = viewer.watch_operations(&req).await.unwrap();
    let first = next_change(&mut updates).await;
    assert!(matches!(first.followed, Some(Ok(_))), "{first:?}");
    let asked = api.request_count_of(users::VIEWER);
    for i in 1..=20 {
        api.seed(&in_team(&format!("team-op-{i}"))).unwrap();
        loop {
            let u = next_change(&mut updates).await;
            assert!(
                u.followed.is_none(),
                "the followed operation did not change"
            );
            if u.page.is_some_and(|p| p.total == i + 1) {
                break;
            }
        }
    }
    assert_eq!(
        api.request_count_of(users::VIEWER),
        asked,
        "20 changes of the list, no request as the caller"
    );
    assert!(api.edit("talosoperations", "default", "c1-talos-a", |o| {
        o["status"] = serde_json::json!({"phase": "Running"});
    }));
    let changed = loop {
        let u = next_change(&mut updates).await;
        if let Some(followed) = u.followed {
            break followed.expect("the followed operation reads");
        }
    };
    assert_eq!(changed.phase, ichor_model::Phase::Running);
    assert!(api.write_log().is_empty());
}
