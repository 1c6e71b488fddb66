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

/// Waits until the watch holds the list: polls stop reaching the API.
async fn until_watched(api: &EmbeddedApi, c: &InProcessClient, user: &str) {
    common::eventually_async("the watch holds the list", async || {
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
    common::eventually_async("the watch is open", async || api.watch_count() == 1).await;
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
    common::eventually_async("the change is a new page", async || {
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
    common::eventually_async("the new operation is listed", async || {
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
    common::eventually_async("its phase follows", async || {
        let page = c.list_page(&summaries()).await.unwrap();
        page.operations
            .iter()
            .any(|o| o.name == "b" && o.phase == Phase::Running)
    })
    .await;
    ops.delete("a", &DeleteParams::default()).await.unwrap();
    common::eventually_async("the deleted one goes", async || names(&c).await == ["b"]).await;
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
    common::eventually_async("the change is listed", async || {
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
    common::eventually_async("the watch ends", async || api.watch_count() == 0).await;
}

/// A kube client whose API can be replaced under it, as a restarted API server is: the same
/// address, another server behind it. A restart breaks what the old one was still sending (a
/// watch), as a connection that goes does.
#[derive(Clone)]
struct Restartable {
    client: std::sync::Arc<std::sync::Mutex<kube::Client>>,
    restarts: tokio::sync::watch::Sender<u64>,
}

type Broken = Box<dyn std::error::Error + Send + Sync>;
type Frames = http_body_util::StreamBody<
    futures::stream::BoxStream<'static, Result<hyper::body::Frame<bytes::Bytes>, Broken>>,
>;

impl Restartable {
    fn new(api: &EmbeddedApi) -> Restartable {
        Restartable {
            client: std::sync::Arc::new(std::sync::Mutex::new(api.client(users::VIEWER_TOKEN))),
            restarts: tokio::sync::watch::channel(0).0,
        }
    }

    /// The new server is behind the address; what the old one still sends breaks.
    fn restart_as(&self, api: &EmbeddedApi) {
        self.swap_to(api);
        self.restarts.send_modify(|n| *n += 1);
    }

    /// The new server is behind the address for the requests from now on.
    fn swap_to(&self, api: &EmbeddedApi) {
        *self.client.lock().unwrap() = api.client(users::VIEWER_TOKEN);
    }

    fn client(&self) -> kube::Client {
        kube::Client::new(self.clone(), "default")
    }
}

impl tower::Service<http::Request<kube::client::Body>> for Restartable {
    type Response = http::Response<Frames>;
    type Error = kube::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, kube::Error>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), kube::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<kube::client::Body>) -> Self::Future {
        use futures::StreamExt as _;
        use http_body_util::BodyExt as _;
        let client = self.client.lock().unwrap().clone();
        let mut restarted = self.restarts.subscribe();
        restarted.borrow_and_update();
        Box::pin(async move {
            let resp = client.send(req).await?;
            Ok(resp.map(|body| {
                let frames = futures::stream::unfold(Some(body), move |body| {
                    let mut restarted = restarted.clone();
                    async move {
                        let mut body = body?;
                        tokio::select! {
                            frame = body.frame() => {
                                let frame = frame?.map_err(|e| Box::new(e) as Broken);
                                Some((frame, Some(body)))
                            }
                            _ = restarted.changed() => {
                                Some((Err("the connection was reset".into()), None))
                            }
                        }
                    }
                });
                http_body_util::StreamBody::new(frames.boxed())
            }))
        })
    }
}

/// The names the store holds, once it holds a list.
fn held(store: &ichor_service::store::OperationStore) -> Option<Vec<String>> {
    let page = store.page(&summaries())?.ok()?;
    let mut names: Vec<String> = page.operations.into_iter().map(|o| o.name).collect();
    names.sort();
    Some(names)
}

/// The API before a restart, far ahead of the one after it (which starts with its own data,
/// at a few resourceVersions).
fn far_ahead() -> EmbeddedApi {
    let api = seeded(&["a"]);
    for i in 0..50 {
        api.edit("talosoperations", "default", "a", |o| {
            o["metadata"]["labels"] = json!({"n": i.to_string()})
        });
    }
    api
}

/// The API server restarts behind the store's watch and ends it cleanly: the watch resumes
/// from a version the new server has not reached, which it accepts and says nothing on.
/// Nothing, not a bookmark, past the bookmark interval and its margin: the rows are taken for
/// stale and listed again, from the new server.
#[tokio::test(start_paused = true)]
async fn a_watch_that_says_nothing_past_the_bookmark_interval_lists_again() {
    let old = far_ahead();
    let reach = Restartable::new(&old);
    let store = ichor_service::store::OperationStore::watch(reach.client(), Some("default".into()));
    common::eventually_async("the first list", async || held(&store).is_some()).await;
    assert_eq!(held(&store).unwrap(), ["a"]);

    let new = seeded(&["x", "y"]);
    // The old server ends its watch (as one that stops gracefully does); the new one is
    // behind the address when the watch resumes.
    reach.swap_to(&new);
    let restarted = tokio::time::Instant::now();
    old.end_watches();
    common::eventually_async("the watch is open on the new server", async || {
        new.watch_count() == 1
    })
    .await;
    // It cannot know yet: the rows are the old server's until the silence says otherwise.
    assert_eq!(held(&store).unwrap(), ["a"]);
    assert_eq!(store.stale_count(), 0);
    tokio::time::sleep(ichor_service::store::SILENCE - std::time::Duration::from_secs(1)).await;
    assert_eq!(store.stale_count(), 0, "not before the silence limit");
    common::eventually("the new server's list", || {
        held(&store).as_deref() == Some(&["x".to_string(), "y".to_string()][..])
    })
    .await;
    assert_eq!(store.stale_count(), 1, "the rows were said stale once");
    let took = restarted.elapsed();
    assert!(
        took >= ichor_service::store::SILENCE
            && took < ichor_service::store::SILENCE + Duration::from_secs(5),
        "listed again {took:?} after the restart"
    );
}

/// A restart that breaks the watch (the connection goes): the rows are stale (subscriptions
/// over them end), and the new server's list comes after the backoff, not a watch resumed from
/// a version it may not have.
#[tokio::test(start_paused = true)]
async fn a_broken_watch_lists_again_instead_of_resuming() {
    let old = far_ahead();
    let reach = Restartable::new(&old);
    let store = ichor_service::store::OperationStore::watch(reach.client(), Some("default".into()));
    common::eventually_async("the first list", async || held(&store).is_some()).await;
    let new = seeded(&["x", "y"]);
    reach.restart_as(&new);
    common::eventually_async("the new server's list", async || {
        held(&store).as_deref() == Some(&["x".to_string(), "y".to_string()][..])
    })
    .await;
    assert_eq!(
        store.stale_count(),
        1,
        "a broken watch's rows were said stale: nothing arrived while it was down"
    );
}

/// A healthy, quiet API that sends a bookmark every minute (kube-apiserver's interval, the
/// demo's default) is never taken for a silent one: ten minutes, no relist.
#[tokio::test(start_paused = true)]
async fn bookmarks_keep_a_quiet_watch_trusted() {
    let api = seeded(&["a"]);
    let store = ichor_service::store::OperationStore::watch(
        api.client(users::VIEWER_TOKEN),
        Some("default".into()),
    );
    common::eventually_async("the first list", async || held(&store).is_some()).await;
    let lists = || api.request_count_of(users::VIEWER);
    let before = lists();
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(store.stale_count(), 0);
    assert_eq!(held(&store).unwrap(), ["a"]);
    // Only watches again as each ends (290 s): two in ten minutes, no list.
    assert_eq!(lists() - before, 2);
}

/// The dashboard's stream over a watch found silent: heartbeats while the store trusts its
/// rows, then the stream ends, saying what was pushed may have been out of date (the dashboard
/// says "live updates off" and polls); a new subscription starts from the new server's list.
#[tokio::test(start_paused = true)]
async fn a_stream_over_a_watch_found_silent_ends_and_the_next_one_is_the_new_truth() {
    use futures::StreamExt as _;
    let old = far_ahead();
    let reach = Restartable::new(&old);
    let service = OperationService::new(KubeAccess::new(reach.client(), "ichor-tui"));
    let c = InProcessClient::new(service, Caller::in_process())
        .with_watch(reach.client(), Some("default".into()));
    let req = ichor_model::WatchRequest {
        list: summaries(),
        follow: None,
        page_deltas: false,
    };
    let mut updates = c.watch_operations(&req).await.unwrap();
    let first = updates.next().await.unwrap().unwrap();
    assert_eq!(first.page.unwrap().operations[0].name, "a");

    let new = seeded(&["x", "y"]);
    reach.swap_to(&new);
    old.end_watches();
    let mut heartbeats = 0;
    let ended = loop {
        match updates.next().await {
            Some(Ok(u)) if u.heartbeat => heartbeats += 1,
            Some(Ok(u)) => panic!("an update from nowhere: {u:?}"),
            Some(Err(e)) => break e,
            None => panic!("the stream ended without saying why"),
        }
    };
    assert_eq!(ended.code, ichor_model::Code::Unavailable);
    assert!(ended.message.contains("out of date"), "{}", ended.message);
    assert!(
        heartbeats >= 4,
        "{heartbeats} heartbeats before the silence limit"
    );

    let mut again = c.watch_operations(&req).await.unwrap();
    let page = again.next().await.unwrap().unwrap().page.unwrap();
    let mut names: Vec<String> = page.operations.into_iter().map(|o| o.name).collect();
    names.sort();
    assert_eq!(names, ["x", "y"]);
}

/// The first update of a subscription, by the names its page holds.
async fn first_names(updates: &mut ichor_model::Updates) -> Vec<String> {
    use futures::StreamExt as _;
    let page = updates.next().await.unwrap().unwrap().page.unwrap();
    let mut names: Vec<String> = page.operations.into_iter().map(|o| o.name).collect();
    names.sort();
    names
}

/// How a subscription ends, past its heartbeats.
async fn ending(updates: &mut ichor_model::Updates) -> ichor_model::ApiError {
    use futures::StreamExt as _;
    loop {
        match updates.next().await {
            Some(Ok(u)) if u.heartbeat => {}
            Some(Ok(u)) => panic!("an update from nowhere: {u:?}"),
            Some(Err(e)) => return e,
            None => panic!("the stream ended without saying why"),
        }
    }
}

/// serve's shared watch, behind an API server that restarted from an older history: every
/// subscriber of it is told (the stream ends: what was pushed may have been out of date), the
/// watch lists again from the new server, and the next subscriber starts from its truth.
#[tokio::test(start_paused = true)]
async fn serves_shared_watch_found_silent_tells_every_subscriber_and_lists_again() {
    use ichor_service::shared::{RECHECK, SharedReads};
    use ichor_service::store::Health;
    let old = far_ahead();
    let reach = Restartable::new(&old);
    let service = OperationService::new(KubeAccess::new(reach.client(), "ichor-tui"));
    let reads = SharedReads::new(service, RECHECK);
    let req = ichor_model::WatchRequest {
        list: summaries(),
        follow: None,
        page_deltas: false,
    };
    // Two dashboards on the server's one watch of `default`.
    let serve = Caller::in_process();
    let mut a = reads.watch_operations(&serve, req.clone()).await.unwrap();
    let mut b = reads.watch_operations(&serve, req.clone()).await.unwrap();
    assert_eq!(first_names(&mut a).await, ["a"]);
    assert_eq!(first_names(&mut b).await, ["a"]);
    assert_eq!(old.watch_count(), 1, "one watch, shared");

    let new = seeded(&["x", "y"]);
    reach.swap_to(&new);
    old.end_watches();
    for stream in [&mut a, &mut b] {
        let e = ending(stream).await;
        assert_eq!(e.code, ichor_model::Code::Unavailable);
        assert!(e.message.contains("out of date"), "{}", e.message);
    }
    common::eventually_async("the shared watch follows the new server", async || {
        reads.watches() == [(Some("default".to_string()), Health::Ready)]
    })
    .await;
    let mut again = reads.watch_operations(&serve, req).await.unwrap();
    assert_eq!(first_names(&mut again).await, ["x", "y"]);
}
