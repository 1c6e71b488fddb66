//! Watches on the embedded API, as kube-apiserver serves them: through the real kube client and
//! kube-runtime's watcher (kubectl's side is in tests/kubectl.rs).

use crate::common;

use common::{op, small_cluster};
use futures::{Stream, StreamExt};
use ichor_demo::apiserver::auth::users;
use ichor_demo::apiserver::{EmbeddedApi, FaultRule};
use ichor_resources::*;
use k8s_openapi::api::core::v1::Event as CoreEvent;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::watcher;
use serde_json::json;
use std::time::Duration;

fn api() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

fn ops(api: &EmbeddedApi, token: &str) -> Api<TalosOperation> {
    Api::namespaced(api.client(token), "default")
}

/// The next event within 5 s (a test that waits longer is broken).
/// The names a kube-runtime watcher lists (from Init to InitDone), in order.
async fn listed<S>(w: &mut S) -> Vec<String>
where
    S: Stream<Item = Result<watcher::Event<TalosOperation>, watcher::Error>> + Unpin,
{
    let mut names = Vec::new();
    loop {
        match next(w).await.unwrap() {
            watcher::Event::Init => {}
            watcher::Event::InitApply(o) => names.push(o.metadata.name.unwrap()),
            watcher::Event::InitDone => return names,
            other => panic!("unexpected {other:?}"),
        }
    }
}

async fn next<S, T>(s: &mut S) -> T
where
    S: Stream<Item = T> + Unpin,
{
    tokio::time::timeout(Duration::from_secs(5), s.next())
        .await
        .expect("an event within 5 s")
        .expect("the stream goes on")
}

/// Whether the stream yields nothing while 200 ms pass on the paused clock (tests with
/// `start_paused` only): the clock moves only when every task waits, the API's included, so
/// whatever it would send by then (a bookmark due every 50 ms) it has sent, and no real time
/// is waited. Where a later change can say it instead, a test asserts that the watch's next
/// event is that change ([`next_is`]): a watch sends in order, so anything it should not have
/// sent would come first.
async fn nothing_due<S: Stream + Unpin>(s: &mut S) -> bool {
    tokio::time::timeout(Duration::from_millis(200), s.next())
        .await
        .is_err()
}

/// Asserts that the watch's next event is `marker`'s change (its name and resourceVersion):
/// made after what the watch must not send, it comes after anything the watch sent wrongly.
async fn next_is<S>(w: &mut S, marker: &TalosOperation)
where
    S: Stream<Item = Result<WatchEvent<TalosOperation>, kube::Error>> + Unpin,
{
    let (t, name, version) = summary(&next(w).await.unwrap());
    assert_eq!(
        (name.as_str(), version),
        (
            marker.metadata.name.as_deref().unwrap_or_default(),
            rv(marker)
        ),
        "the next event ({t}) is the marker's"
    );
}

/// (type, name, resourceVersion) of a watch event.
fn summary(e: &WatchEvent<TalosOperation>) -> (String, String, String) {
    let (t, o) = match e {
        WatchEvent::Added(o) => ("ADDED", o),
        WatchEvent::Modified(o) => ("MODIFIED", o),
        WatchEvent::Deleted(o) => ("DELETED", o),
        WatchEvent::Bookmark(b) => {
            return (
                "BOOKMARK".into(),
                String::new(),
                b.metadata.resource_version.clone(),
            );
        }
        WatchEvent::Error(e) => return ("ERROR".into(), e.reason.clone(), e.code.to_string()),
    };
    (
        t.into(),
        o.metadata.name.clone().unwrap_or_default(),
        o.metadata.resource_version.clone().unwrap_or_default(),
    )
}

fn rv(o: &TalosOperation) -> String {
    o.metadata.resource_version.clone().unwrap_or_default()
}

/// Pauses or resumes the operation `name`: a change of it.
async fn set_paused(ops: &Api<TalosOperation>, name: &str, paused: bool) -> TalosOperation {
    let patch = Patch::Merge(json!({"spec": {"paused": paused}}));
    ops.patch(name, &PatchParams::default(), &patch)
        .await
        .unwrap()
}

/// Takes the machine `name`'s approval back: a change of another kind.
async fn unapprove(machines: &Api<Machine>, name: &str) -> Machine {
    let patch = Patch::Merge(json!({"spec": {"approved": false}}));
    machines
        .patch(name, &PatchParams::default(), &patch)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_watch_from_zero_starts_with_the_objects_then_follows_every_change() {
    let api = api();
    let ops = ops(&api, users::ADMIN_TOKEN);
    ops.create(&PostParams::default(), &op("a", "c1", "talos", 1))
        .await
        .unwrap();
    let wp = WatchParams::default().disable_bookmarks();
    let mut w = ops.watch(&wp, "0").await.unwrap().boxed();
    assert_eq!(summary(&next(&mut w).await.unwrap()).0, "ADDED");
    assert_eq!(api.watch_count(), 1);
    // One object, one synthetic ADDED: the next event is b's below.

    let b = ops
        .create(&PostParams::default(), &op("b", "c1", "kubernetes", 1))
        .await
        .unwrap();
    let patched = set_paused(&ops, "b", true).await;
    ops.delete("a", &DeleteParams::default()).await.unwrap();
    let got = [
        summary(&next(&mut w).await.unwrap()),
        summary(&next(&mut w).await.unwrap()),
        summary(&next(&mut w).await.unwrap()),
    ];
    assert_eq!(got[0], ("ADDED".into(), "b".into(), rv(&b)));
    assert_eq!(got[1], ("MODIFIED".into(), "b".into(), rv(&patched)));
    assert_eq!((got[2].0.as_str(), got[2].1.as_str()), ("DELETED", "a"));
    // A delete is a change of its own, with a resourceVersion after the patch's.
    let deleted_rv: u64 = got[2].2.parse().unwrap();
    assert!(deleted_rv > rv(&patched).parse().unwrap());
    // Changes to other kinds are not this watch's.
    let machines: Api<Machine> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    unapprove(&machines, "c1-w-a").await;
    let marker = set_paused(&ops, "b", false).await;
    next_is(&mut w, &marker).await;
    drop(w);
    common::eventually("the watch ends with its client", || api.watch_count() == 0).await;
}

#[tokio::test]
async fn a_watch_from_a_resource_version_sends_the_changes_after_it() {
    let api = api();
    let ops = ops(&api, users::ADMIN_TOKEN);
    let a = ops
        .create(&PostParams::default(), &op("a", "c1", "talos", 1))
        .await
        .unwrap();
    let b = ops
        .create(&PostParams::default(), &op("b", "c1", "talos", 1))
        .await
        .unwrap();
    let wp = WatchParams::default().disable_bookmarks();
    let mut w = ops.watch(&wp, &rv(&a)).await.unwrap().boxed();
    // Nothing before or at the version named: a's ADDED would have come first.
    assert_eq!(
        summary(&next(&mut w).await.unwrap()),
        ("ADDED".into(), "b".into(), rv(&b))
    );
    let c = ops
        .create(&PostParams::default(), &op("c", "c1", "talos", 1))
        .await
        .unwrap();
    next_is(&mut w, &c).await;
}

#[tokio::test]
async fn a_version_older_than_the_history_is_gone() {
    let api = api();
    let ops = ops(&api, users::ADMIN_TOKEN);
    let a = ops
        .create(&PostParams::default(), &op("a", "c1", "talos", 1))
        .await
        .unwrap();
    ops.create(&PostParams::default(), &op("b", "c1", "talos", 1))
        .await
        .unwrap();
    api.compact();
    let wp = WatchParams::default().disable_bookmarks();
    let mut w = ops.watch(&wp, &rv(&a)).await.unwrap().boxed();
    match next(&mut w).await.unwrap() {
        WatchEvent::Error(e) => {
            assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));
            assert!(e.message.starts_with("too old resource version"), "{e:?}");
        }
        other => panic!("expected 410 Gone, got {:?}", summary(&other)),
    }
    assert!(
        tokio::time::timeout(Duration::from_secs(5), w.next())
            .await
            .expect("the stream ends")
            .is_none()
    );
    // From the newest version the watch is served.
    let list = ops.list(&Default::default()).await.unwrap();
    let newest = list.metadata.resource_version.unwrap();
    let mut w = ops.watch(&wp, &newest).await.unwrap().boxed();
    ops.delete("a", &DeleteParams::default()).await.unwrap();
    // Nothing of the history before it: the delete is the first event.
    let (t, name, _) = summary(&next(&mut w).await.unwrap());
    assert_eq!((t.as_str(), name.as_str()), ("DELETED", "a"));
}

#[tokio::test]
async fn the_history_keeps_only_the_newest_changes() {
    let api = api();
    api.set_history_limit(3);
    let ops = ops(&api, users::ADMIN_TOKEN);
    let first = ops
        .create(&PostParams::default(), &op("a", "c1", "talos", 1))
        .await
        .unwrap();
    for paused in [true, false, true] {
        set_paused(&ops, "a", paused).await;
    }
    let wp = WatchParams::default().disable_bookmarks();
    let mut w = ops.watch(&wp, &rv(&first)).await.unwrap().boxed();
    // The three patches after the create are kept: the create's version is still served.
    for _ in 0..3 {
        assert_eq!(summary(&next(&mut w).await.unwrap()).0, "MODIFIED");
    }
    set_paused(&ops, "a", false).await;
    let mut w = ops.watch(&wp, &rv(&first)).await.unwrap().boxed();
    assert_eq!(summary(&next(&mut w).await.unwrap()).0, "ERROR");
}

#[tokio::test(start_paused = true)]
async fn bookmarks_carry_only_the_resource_version() {
    let api = api();
    api.set_bookmark_interval(Duration::from_millis(50));
    let ops = ops(&api, users::ADMIN_TOKEN);
    let list = ops.list(&Default::default()).await.unwrap();
    let at = list.metadata.resource_version.unwrap();
    let mut w = ops
        .watch(&WatchParams::default(), &at)
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        summary(&next(&mut w).await.unwrap()),
        ("BOOKMARK".into(), String::new(), at.clone())
    );
    // A change to another kind moves the bookmarks on: a watcher restarting from one is not
    // sent that change, and is not too old after a compaction.
    let machines: Api<Machine> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let m = unapprove(&machines, "c1-w-a").await;
    let later = m.metadata.resource_version.unwrap();
    loop {
        let (t, _, v) = summary(&next(&mut w).await.unwrap());
        assert_eq!(t, "BOOKMARK");
        if v == later {
            break;
        }
    }
    // Without allowWatchBookmarks, none.
    let wp = WatchParams::default().disable_bookmarks();
    let mut quiet_watch = ops.watch(&wp, &later).await.unwrap().boxed();
    assert!(nothing_due(&mut quiet_watch).await);
}

#[tokio::test]
async fn timeout_seconds_ends_the_stream() {
    let api = api();
    let ops = ops(&api, users::ADMIN_TOKEN);
    let wp = WatchParams::default().disable_bookmarks().timeout(1);
    let started = std::time::Instant::now();
    let mut w = ops.watch(&wp, "0").await.unwrap().boxed();
    let end = tokio::time::timeout(Duration::from_secs(5), async {
        while w.next().await.is_some() {}
    })
    .await;
    assert!(end.is_ok(), "the stream ended");
    assert!(started.elapsed() >= Duration::from_millis(900));
    common::eventually("nothing left open", || api.watch_count() == 0).await;
}

#[tokio::test]
async fn selectors_filter_the_events_and_an_object_leaving_them_is_deleted() {
    let api = api();
    let machines: Api<Machine> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let wp = WatchParams::default()
        .disable_bookmarks()
        .labels("ichor.maesh.dev/upgrade-order in (1,2)");
    let mut w = machines.watch(&wp, "0").await.unwrap().boxed();
    let mut initial = Vec::new();
    for _ in 0..3 {
        match next(&mut w).await.unwrap() {
            WatchEvent::Added(m) => initial.push(m.metadata.name.unwrap()),
            _ => panic!("expected ADDED"),
        }
    }
    initial.sort();
    assert_eq!(initial, ["c1-cp-a", "c1-cp-b", "c1-w-unapproved"]);
    // No other machine: the next events are the changes below.
    let set_order = |name: &'static str, order: &'static str| {
        let machines = machines.clone();
        async move {
            machines
                .patch(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"labels": {names::UPGRADE_ORDER: order}}})),
                )
                .await
                .unwrap();
        }
    };
    set_order("c1-cp-b", "9").await;
    set_order("c1-w-b", "2").await;
    set_order("c1-w-c", "8").await;
    let kinds: Vec<(String, String)> = vec![next(&mut w).await, next(&mut w).await]
        .into_iter()
        .map(|e| match e.unwrap() {
            WatchEvent::Deleted(m) => ("DELETED".into(), m.metadata.name.unwrap()),
            WatchEvent::Added(m) => ("ADDED".into(), m.metadata.name.unwrap()),
            _ => ("OTHER".into(), String::new()),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("DELETED".to_string(), "c1-cp-b".to_string()),
            ("ADDED".to_string(), "c1-w-b".to_string())
        ]
    );
    // c1-w-c never matched: the next event is c1-cp-a leaving the selector.
    set_order("c1-cp-a", "9").await;
    match next(&mut w).await.unwrap() {
        WatchEvent::Deleted(m) => assert_eq!(m.metadata.name.as_deref(), Some("c1-cp-a")),
        _ => panic!("expected c1-cp-a DELETED"),
    }

    let wp = WatchParams::default()
        .disable_bookmarks()
        .fields("metadata.name=c1-w-a");
    let mut w = machines.watch(&wp, "0").await.unwrap().boxed();
    assert!(matches!(next(&mut w).await.unwrap(), WatchEvent::Added(_)));
    // Only that machine: the next event is its change.
    let changed = unapprove(&machines, "c1-w-a").await;
    match next(&mut w).await.unwrap() {
        WatchEvent::Modified(m) => assert_eq!(
            m.metadata.resource_version,
            changed.metadata.resource_version
        ),
        _ => panic!("expected c1-w-a MODIFIED"),
    }
    let wp = WatchParams::default().fields("spec.nothing=x");
    let err = machines.watch(&wp, "0").await.err().expect("refused");
    match err {
        kube::Error::Api(s) => assert_eq!(s.code, 400, "{s:?}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn rbac_decides_the_watch_verb_and_impersonation_works_as_for_lists() {
    let api = api();
    let wp = WatchParams::default().disable_bookmarks();
    let viewer = ops(&api, users::VIEWER_TOKEN);
    assert!(viewer.watch(&wp, "0").await.is_ok());
    let events: Api<CoreEvent> =
        Api::namespaced(api.client(users::OPERATIONS_READER_TOKEN), "default");
    match events.watch(&wp, "0").await.err() {
        Some(kube::Error::Api(s)) => {
            assert_eq!(s.code, 403);
            assert!(
                s.message.contains("cannot watch resource \"events\""),
                "{}",
                s.message
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }
    let reader_ops = ops(&api, users::OPERATIONS_READER_TOKEN);
    assert!(
        reader_ops.watch(&wp, "0").await.is_ok(),
        "operations it may watch"
    );
    let viewer_events: Api<CoreEvent> = Api::namespaced(api.client(users::VIEWER_TOKEN), "default");
    assert!(
        viewer_events.watch(&wp, "0").await.is_ok(),
        "viewers read events"
    );
    // `serve`'s identity watching as someone else: that person's rules decide.
    let as_reader: Api<CoreEvent> = Api::namespaced(
        common::impersonating(
            &api,
            users::SERVER_TOKEN,
            users::OPERATIONS_READER,
            &["ichor:operation-readers"],
        ),
        "default",
    );
    assert!(as_reader.watch(&wp, "0").await.is_err());
    let as_viewer: Api<CoreEvent> = Api::namespaced(
        common::impersonating(&api, users::SERVER_TOKEN, users::VIEWER, &["ichor:viewers"]),
        "default",
    );
    assert!(as_viewer.watch(&wp, "0").await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn the_kube_runtime_watcher_lists_then_follows_changes() {
    let api = api();
    let ops = ops(&api, users::ADMIN_TOKEN);
    ops.create(&PostParams::default(), &op("a", "c1", "talos", 1))
        .await
        .unwrap();
    let mut w = watcher(ops.clone(), watcher::Config::default()).boxed();
    let initial = listed(&mut w).await;
    assert_eq!(initial, ["a"]);
    ops.create(&PostParams::default(), &op("b", "c1", "talos", 1))
        .await
        .unwrap();
    match next(&mut w).await.unwrap() {
        watcher::Event::Apply(o) => assert_eq!(o.metadata.name.as_deref(), Some("b")),
        other => panic!("expected b applied, got {other:?}"),
    }
    ops.delete("a", &DeleteParams::default()).await.unwrap();
    match next(&mut w).await.unwrap() {
        watcher::Event::Delete(o) => assert_eq!(o.metadata.name.as_deref(), Some("a")),
        other => panic!("expected a deleted, got {other:?}"),
    }
    // One list and one watch: nothing polls, in four minutes of the paused clock (less than
    // the watch's own 290 s timeout, after which it watches again).
    let before = api.request_count();
    tokio::time::sleep(Duration::from_secs(240)).await;
    assert_eq!(api.request_count(), before);
    assert_eq!(
        api.request_count_of(users::ADMIN),
        5,
        "a create, the list, the watch, a create, a delete"
    );
    assert_eq!(api.watch_count(), 1);
    drop(w);
    common::eventually("the watcher's watch ends with it", || {
        api.watch_count() == 0
    })
    .await;
}

/// The watcher's watch ends; just before it watches again, a change is made and the history
/// compacted: the watch it asks for is too old, and it lists again.
#[tokio::test]
async fn the_kube_runtime_watcher_lists_again_after_410() {
    let api = api();
    let ops = ops(&api, users::ADMIN_TOKEN);
    ops.create(&PostParams::default(), &op("a", "c1", "talos", 1))
        .await
        .unwrap();
    let config = watcher::Config::default().disable_bookmarks();
    let mut w = watcher(ops.clone(), config).boxed();
    while !matches!(next(&mut w).await.unwrap(), watcher::Event::InitDone) {}
    api.before(FaultRule::on("watch", "talosoperations"), |api| {
        let mut b = op("b", "c1", "talos", 1);
        b.metadata.namespace = Some("default".into());
        api.seed(&b).unwrap();
        api.compact();
    });
    api.end_watches();
    match next(&mut w).await {
        Err(watcher::Error::WatchError(e)) => assert_eq!(e.code, 410),
        other => panic!("expected 410, got {other:?}"),
    }
    let relisted = listed(&mut w).await;
    assert_eq!(relisted, ["a", "b"]);
}

/// A watcher that gets bookmarks restarts from the newest version: after a compaction it is
/// not too old, and it does not list again. On the paused clock: its bookmarks are due every
/// 50 ms, and seeing none of them as the watcher's events needs that time to pass.
#[tokio::test(start_paused = true)]
async fn bookmarks_spare_the_kube_runtime_watcher_a_relist() {
    let api = api();
    api.set_bookmark_interval(Duration::from_millis(50));
    let ops = ops(&api, users::ADMIN_TOKEN);
    let mut w = watcher(ops.clone(), watcher::Config::default()).boxed();
    while !matches!(next(&mut w).await.unwrap(), watcher::Event::InitDone) {}
    // Changes elsewhere move the API's version on; a bookmark carries it to the watcher.
    let machines: Api<Machine> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    unapprove(&machines, "c1-w-a").await;
    for _ in 0..2 {
        assert!(
            nothing_due(&mut w).await,
            "bookmarks are not the watcher's events"
        );
    }
    api.compact();
    api.end_watches();
    let requests = api.request_count();
    assert!(nothing_due(&mut w).await, "no relist, no error");
    common::eventually("it watches again", || api.watch_count() == 1).await;
    assert_eq!(api.request_count(), requests + 1, "one watch, no list");
}

#[tokio::test]
async fn the_kube_runtime_watcher_with_streaming_lists() {
    let api = api();
    let ops = ops(&api, users::ADMIN_TOKEN);
    ops.create(&PostParams::default(), &op("a", "c1", "talos", 1))
        .await
        .unwrap();
    let mut w = watcher(ops.clone(), watcher::Config::default().streaming_lists()).boxed();
    let initial = listed(&mut w).await;
    assert_eq!(initial, ["a"]);
    ops.delete("a", &DeleteParams::default()).await.unwrap();
    assert!(matches!(
        next(&mut w).await.unwrap(),
        watcher::Event::Delete(_)
    ));
}
