//! WatchOperations on every path that pushes (in-process over the person's own watch; gRPC,
//! Connect and the tunnel over serve's shared watch; impersonated: the service as serve runs it
//! for a caller, without the wire), through the real kube client code against the embedded API:
//! the first state whole, then changes, deletes and a followed operation replaced under its
//! name; a reconnect that resumes; a stalled subscriber that gets the latest state, not a queue;
//! a 410 behind the stream; a caller who may not watch, and one whose permission is revoked
//! mid-way.
//!
//! Every scenario runs on the impersonated path too. What serve adds on top of it and the
//! impersonated path therefore does not see: the per-caller bound on streams and the shutdown
//! that ends streams (both in `crates/ichor-server`, tested below over gRPC).

use crate::common;
use common::op;
use common::paths::{Path, User, connect};
use futures::StreamExt as _;
use ichor_client::inprocess::InProcessClient;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::{Rule, Subject, users};
use ichor_model::{
    ApiError, Code, ListQuery, OperationClient, Updates, View, WatchRequest, WatchUpdate,
};
use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use ichor_service::shared::{RECHECK, SharedReads};
use std::sync::Arc;
use std::time::Duration;

#[path = "push/deltas.rs"]
mod deltas;

/// Longer than any change takes to arrive here; far shorter than a heartbeat.
const ARRIVES: Duration = Duration::from_secs(5);

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    api.seed(&op("c1-talos-a", "c1", "talos", 1)).unwrap();
    api
}

/// What a dashboard on `path` subscribes through: a client, or (impersonated) the service as
/// serve runs it for the caller: its shared watch made with the server's identity, the caller
/// authorised by an impersonated SelfSubjectAccessReview, asked again every recheck.
enum Subscriber {
    Client(Arc<dyn OperationClient>),
    Served(Box<(SharedReads, Caller)>),
}

impl Subscriber {
    async fn watch_operations(&self, req: &WatchRequest) -> Result<Updates, ApiError> {
        match self {
            Subscriber::Client(c) => c.watch_operations(req).await,
            Subscriber::Served(served) => {
                let (reads, caller) = &**served;
                reads.watch_operations(caller, req.clone()).await
            }
        }
    }
}

/// The service as serve runs it (the server's identity), for `caller`, asking Kubernetes again
/// about the caller every `recheck`.
fn served(api: &EmbeddedApi, caller: Caller, recheck: Duration) -> Subscriber {
    let access = KubeAccess::new(api.client(users::SERVER_TOKEN), "ichor-tui");
    let reads = SharedReads::new(OperationService::new(access), recheck);
    Subscriber::Served(Box::new((reads, caller)))
}

/// The client a dashboard on `path` subscribes with: in-process it keeps its own watch.
async fn subscriber(path: Path, api: &EmbeddedApi, user: User) -> Subscriber {
    match path {
        Path::InProcess => {
            let kube = api.client(user.token());
            let service = OperationService::new(KubeAccess::new(kube.clone(), "ichor-tui"));
            let client = InProcessClient::new(service, Caller::in_process())
                .with_watch(kube, Some("default".into()));
            Subscriber::Client(Arc::new(client))
        }
        Path::Impersonated => served(api, Caller::user(user.name(), user.groups()), RECHECK),
        other => Subscriber::Client(connect(other, api, user).await),
    }
}

fn list() -> ListQuery {
    ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        page_size: 100,
        ..ListQuery::default()
    }
}

/// The list page, no operation followed.
fn the_list() -> WatchRequest {
    WatchRequest {
        list: list(),
        follow: None,
        page_deltas: false,
    }
}

/// The next update that is not a heartbeat, within [`ARRIVES`].
async fn next_change(updates: &mut Updates) -> WatchUpdate {
    loop {
        let u = tokio::time::timeout(ARRIVES, updates.next())
            .await
            .expect("a change within the wait")
            .expect("the stream goes on")
            .expect("an update, not an error");
        if !u.heartbeat {
            return u;
        }
    }
}

fn names(u: &WatchUpdate) -> Vec<String> {
    let page = u.page.as_ref().expect("a page");
    page.operations.iter().map(|o| o.name.clone()).collect()
}

async fn the_first_state_then_changes_and_deletes(path: Path) {
    let api = world();
    let c = subscriber(path, &api, User::Viewer).await;
    let req = the_list();
    let mut updates = c.watch_operations(&req).await.unwrap();
    let first = next_change(&mut updates).await;
    assert_eq!(names(&first), ["c1-talos-a"]);
    assert!(first.followed.is_none());
    let mut b = op("c1-talos-b", "c1", "kubernetes", 1);
    b.metadata.creation_timestamp = None;
    api.seed(&b).unwrap();
    let created = next_change(&mut updates).await;
    let mut now = names(&created);
    now.sort();
    assert_eq!(now, ["c1-talos-a", "c1-talos-b"]);
    assert!(api.remove("talosoperations", "default", "c1-talos-a"));
    let deleted = next_change(&mut updates).await;
    assert_eq!(names(&deleted), ["c1-talos-b"]);
    assert!(
        api.write_log().is_empty(),
        "a subscription writes nothing: {:?}",
        api.write_log()
    );
}

async fn the_followed_operation_is_pushed_whole_and_replaced_under_its_name(path: Path) {
    let api = world();
    let c = subscriber(path, &api, User::Viewer).await;
    let req = WatchRequest {
        list: list(),
        follow: Some(("default".into(), "c1-talos-a".into())),
        page_deltas: false,
    };
    let mut updates = c.watch_operations(&req).await.unwrap();
    let first = next_change(&mut updates).await;
    let op = first.followed.expect("the followed operation").unwrap();
    assert_eq!(op.name, "c1-talos-a");
    assert!(first.events.is_some(), "its events come with it");
    let uid = op.uid.clone();
    assert!(api.edit("talosoperations", "default", "c1-talos-a", |v| {
        v["status"] = serde_json::json!({"phase": "Running"});
    }));
    let running = loop {
        let u = next_change(&mut updates).await;
        if let Some(op) = u.followed {
            break op.unwrap();
        }
    };
    assert_eq!(running.phase, ichor_model::Phase::Running);
    // Replaced under the same name: the new one is pushed, with its own uid.
    assert!(api.remove("talosoperations", "default", "c1-talos-a"));
    api.seed(&common::op("c1-talos-a", "c1", "talos", 1))
        .unwrap();
    let replaced = loop {
        let u = next_change(&mut updates).await;
        if let Some(Ok(op)) = u.followed
            && op.uid != uid
        {
            break op;
        }
    };
    assert_eq!(replaced.name, "c1-talos-a");
}

async fn a_reconnect_with_the_version_held_resumes_unchanged(path: Path) {
    let api = world();
    let c = subscriber(path, &api, User::Viewer).await;
    let mut req = the_list();
    let mut updates = c.watch_operations(&req).await.unwrap();
    let version = next_change(&mut updates).await.page.unwrap().version;
    drop(updates);
    req.list.known_version = Some(version);
    let mut again = c.watch_operations(&req).await.unwrap();
    let first = next_change(&mut again).await;
    let page = first.page.expect("the page's state");
    assert!(page.unchanged, "the page held is not sent again");
    assert!(page.operations.is_empty());
}

async fn a_stalled_subscriber_gets_the_latest_state_not_a_queue(path: Path) {
    let api = world();
    let c = subscriber(path, &api, User::Viewer).await;
    let req = the_list();
    let mut updates = c.watch_operations(&req).await.unwrap();
    next_change(&mut updates).await;
    // Fifty changes while the subscriber reads nothing.
    for i in 0..50 {
        api.seed(&op(&format!("c1-burst-{i:02}"), "c1", "talos", 1))
            .unwrap();
    }
    // Wait for the changes themselves, not for a while: a second subscription holds all 51.
    let mut witness = c.watch_operations(&req).await.unwrap();
    while next_change(&mut witness)
        .await
        .page
        .map_or(0, |p| p.operations.len())
        < 51
    {}
    drop(witness);
    let mut seen = 0;
    let mut rows = 0;
    while rows < 51 {
        let u = next_change(&mut updates).await;
        rows = u.page.map_or(rows, |p| p.operations.len());
        seen += 1;
    }
    assert!(
        seen <= 3,
        "the latest state in a few updates, not one per change: {seen}"
    );
}

/// A caller Kubernetes does not let list and watch operations is refused.
async fn a_caller_who_may_not_watch_is_refused(path: Path) {
    let api = world();
    api.add_token("nobody-token", "nobody", &["nobody"]);
    let c = match path {
        Path::Grpc | Path::Connect => {
            let running = common::server::start(&api, Default::default()).await;
            let protocol = match path {
                Path::Grpc => ichor_client::remote::Protocol::Grpc,
                _ => ichor_client::remote::Protocol::Connect,
            };
            let mut o = ichor_client::remote::RemoteOptions::new(running.url(false))
                .with_protocol(protocol);
            o.token = Some("nobody-token".into());
            std::mem::forget(running);
            Subscriber::Client(Arc::new(
                ichor_client::remote::RemoteClient::new(o).unwrap(),
            ))
        }
        Path::Impersonated => served(&api, Caller::user("nobody", &["nobody"]), RECHECK),
        _ => unreachable!("the paths that authorise a caller"),
    };
    let req = the_list();
    let e = match c.watch_operations(&req).await {
        Err(e) => e,
        Ok(mut updates) => updates.next().await.unwrap().unwrap_err(),
    };
    assert_eq!(e.code, Code::PermissionDenied, "{e:?}");
    assert!(api.write_log().is_empty());
}

/// The watch behind the stream (serve's shared one, or in-process its own) comes back too old
/// (410): a change it has no event for, the history compacted. The watch lists again, and the
/// stream goes on with the change, unbroken.
async fn a_watch_too_old_behind_the_stream_lists_again_and_the_stream_goes_on(path: Path) {
    use ichor_demo::apiserver::FaultRule;
    let api = world();
    let c = subscriber(path, &api, User::Viewer).await;
    let mut updates = c.watch_operations(&the_list()).await.unwrap();
    assert_eq!(names(&next_change(&mut updates).await), ["c1-talos-a"]);
    api.before(FaultRule::on("watch", "talosoperations"), |api| {
        api.seed(&op("c1-talos-missed", "c1", "talos", 1)).unwrap();
        api.compact();
    });
    api.end_watches();
    let mut now = names(&next_change(&mut updates).await);
    now.sort();
    assert_eq!(now, ["c1-talos-a", "c1-talos-missed"]);
    // Still the same stream: a later change arrives on it too.
    api.seed(&op("c1-talos-after", "c1", "talos", 1)).unwrap();
    let after = next_change(&mut updates).await;
    assert!(names(&after).contains(&"c1-talos-after".to_string()));
    assert!(api.write_log().is_empty(), "{:?}", api.write_log());
}

/// A full view (what a request that names no view asks for) is pushed as ListOperations gives
/// it: each operation whole, its machines listed; a machine's change comes whole too.
async fn a_full_view_is_pushed_whole(path: Path) {
    let api = world();
    let machine = |phase: &str| serde_json::json!({"phase": "Running", "machines": [{"name": "c1-cp-a", "phase": phase}]});
    assert!(api.edit("talosoperations", "default", "c1-talos-a", |v| {
        v["status"] = machine("Running");
    }));
    let c = subscriber(path, &api, User::Viewer).await;
    let req = WatchRequest {
        list: ListQuery {
            view: View::Full,
            ..list()
        },
        follow: None,
        page_deltas: false,
    };
    let mut updates = c.watch_operations(&req).await.unwrap();
    let first = next_change(&mut updates).await.page.expect("the page");
    let op = &first.operations[0];
    assert_eq!((op.machines.len(), &op.summary), (1, &None), "{op:?}");
    assert!(api.edit("talosoperations", "default", "c1-talos-a", |v| {
        v["status"] = machine("Completed");
    }));
    let changed = next_change(&mut updates).await.page.expect("the page");
    let machines = &changed.operations[0].machines;
    assert_eq!(machines[0].phase, ichor_model::MachinePhase::Completed);
    assert!(api.write_log().is_empty(), "{:?}", api.write_log());
}

crate::matrix!(
    paths: [
        InProcess => in_process,
        Impersonated => impersonated,
        Grpc => grpc,
        Connect => connect,
        Tunnel => tunnel,
    ];
    [
        a_full_view_is_pushed_whole,
        a_watch_too_old_behind_the_stream_lists_again_and_the_stream_goes_on,
        the_first_state_then_changes_and_deletes,
        the_followed_operation_is_pushed_whole_and_replaced_under_its_name,
        a_reconnect_with_the_version_held_resumes_unchanged,
        a_stalled_subscriber_gets_the_latest_state_not_a_queue,
    ]
);

// Not in-process: the person's own watch is made with their own credentials, so Kubernetes
// refuses the watch itself and there is no caller to ask about again (a person who may list
// but not watch: tests/store.rs). The tunnel reaches the same serve as gRPC and Connect.
crate::matrix!(
    paths: [
        Grpc => grpc_refused,
        Connect => connect_refused,
        Impersonated => impersonated_refused,
    ];
    [a_caller_who_may_not_watch_is_refused, a_permission_revoked_mid_stream_ends_it]
);

/// Revoked mid-stream: the next check (a second on, here; a minute in serve) ends the stream
/// with PermissionDenied.
async fn a_permission_revoked_mid_stream_ends_it(path: Path) {
    let api = world();
    // Granted to the user (serve impersonates only the groups its role names).
    api.add_token("temp-token", "temp", &[]);
    api.add_rule(Rule::new(
        Subject::User("temp".into()),
        &["get", "list", "watch"],
        &["talosoperations"],
    ));
    let recheck = Duration::from_secs(1);
    let mut running = None;
    let c = match path {
        Path::Impersonated => served(&api, Caller::user("temp", &[]), recheck),
        _ => {
            let opts = common::server::Options {
                recheck: Some(recheck),
                ..Default::default()
            };
            let server = common::server::start(&api, opts).await;
            let protocol = match path {
                Path::Grpc => ichor_client::remote::Protocol::Grpc,
                _ => ichor_client::remote::Protocol::Connect,
            };
            let mut o =
                ichor_client::remote::RemoteOptions::new(server.url(false)).with_protocol(protocol);
            o.token = Some("temp-token".into());
            running = Some(server);
            Subscriber::Client(Arc::new(
                ichor_client::remote::RemoteClient::new(o).unwrap(),
            ))
        }
    };
    let req = the_list();
    let mut updates = c.watch_operations(&req).await.unwrap();
    next_change(&mut updates).await;
    api.remove_rules_of(&Subject::User("temp".into()));
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match updates.next().await {
                Some(Ok(_)) => continue,
                Some(Err(e)) => return e,
                None => panic!("the stream ended without saying why"),
            }
        }
    })
    .await
    .expect("cut off at the next check");
    assert_eq!(ended.code, Code::PermissionDenied, "{ended:?}");
    drop(running);
}

/// A caller allowed everywhere cannot make serve open a watch for every namespace: once streams
/// hold the bound's watches a new subscription is refused, and lists still answer (from the
/// API).
#[tokio::test]
async fn serve_watches_a_bounded_number_of_namespaces() {
    use ichor_server::MAX_LIVE_QUERIES_PER_CALLER;
    use ichor_service::shared::MAX_WATCHES;
    let api = world();
    let running = common::server::start(&api, Default::default()).await;
    let watch = |ns: String| WatchRequest {
        list: ListQuery {
            namespace: Some(ns),
            ..list()
        },
        follow: None,
        page_deltas: false,
    };
    for i in 0..=MAX_WATCHES {
        let mut o = op(&format!("op-{i}"), "c1", "talos", 1);
        o.metadata.namespace = Some(format!("ns-{i}"));
        api.seed(&o).unwrap();
    }
    // Streams held in every namespace, by as many people as that takes.
    let mut held = Vec::new();
    for i in 0..MAX_WATCHES {
        // Each person's streams bring in as many distinct lists as one may.
        let person = i / MAX_LIVE_QUERIES_PER_CALLER;
        let token = format!("holder-token-{person}");
        api.add_token(&token, &format!("holder-{person}"), &["ichor:viewers"]);
        let c = common::server::client(&running.url(false), Some(&token));
        let mut updates = c.watch_operations(&watch(format!("ns-{i}"))).await.unwrap();
        next_change(&mut updates).await;
        held.push(updates);
    }
    let c = common::server::client(&running.url(false), Some(users::ADMIN_TOKEN));
    let one_too_many = format!("ns-{MAX_WATCHES}");
    let e = match c.watch_operations(&watch(one_too_many.clone())).await {
        Err(e) => e,
        Ok(mut updates) => updates.next().await.unwrap().unwrap_err(),
    };
    assert_eq!(e.code, Code::ResourceExhausted, "{e:?}");
    assert_eq!(e.param("limit"), Some("watches"), "{e:?}");
    let page = c
        .list_page(&ListQuery {
            namespace: Some(one_too_many),
            ..list()
        })
        .await
        .unwrap();
    assert_eq!(page.operations.len(), 1, "read from the API");
    let mut known = c.watch_operations(&watch("ns-0".into())).await.unwrap();
    next_change(&mut known).await;
}

/// A live stream is never done by itself: serve's shutdown ends it at once with UNAVAILABLE
/// (the dashboard polls and subscribes again), instead of holding the drain to its 30 s limit.
#[tokio::test]
async fn a_stopping_server_ends_its_streams_at_once() {
    let api = world();
    let running = common::server::start(&api, Default::default()).await;
    let mut o = ichor_client::remote::RemoteOptions::new(running.url(false));
    o.token = Some(User::Viewer.token().into());
    let c = ichor_client::remote::RemoteClient::new(o).unwrap();
    let mut updates = c.watch_operations(&the_list()).await.unwrap();
    next_change(&mut updates).await;
    // Well under the drain's 30 s limit.
    tokio::time::timeout(Duration::from_secs(10), running.stop())
        .await
        .expect("the server stops without waiting for the stream")
        .unwrap();
    let ended = loop {
        match updates.next().await {
            Some(Ok(_)) => continue,
            Some(Err(e)) => break e,
            None => panic!("the stream ended without saying why"),
        }
    };
    assert_eq!(ended.code, Code::Unavailable, "{ended:?}");
}
