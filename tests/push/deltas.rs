//! What a change costs serve, whatever the fleet: the subscribers of one list share one page a
//! change and one update for all that held the same version, and a subscriber that applies
//! deltas is sent what changed. On every path, a subscriber that missed updates ends up holding
//! exactly the page a fresh subscriber is given.

use super::*;
use ichor_model::OperationPage;
use ichor_service::feed::{KEPT_VERSIONS, PagePart, Pushed};

/// The page a subscriber holds, applying what it is sent as a client that asked for deltas.
#[derive(Default)]
struct Held {
    page: Option<OperationPage>,
    deltas: usize,
}

impl Held {
    fn take(&mut self, u: WatchUpdate) {
        if let Some(delta) = u.delta {
            let base = self.page.as_ref().expect("a page before a delta");
            self.page = Some(delta.apply(base).expect("a delta applies to the page held"));
            self.deltas += 1;
        } else if let Some(page) = u.page.filter(|p| !p.unchanged) {
            self.page = Some(page);
        }
    }

    fn version(&self) -> &str {
        self.page.as_ref().map_or("", |p| p.version.as_str())
    }

    fn holds(&self, name: &str) -> bool {
        let ops = self.page.as_ref().map_or(&[][..], |p| &p.operations[..]);
        ops.iter().any(|o| o.name == name)
    }
}

fn with_deltas() -> WatchRequest {
    WatchRequest {
        page_deltas: true,
        ..the_list()
    }
}

/// A witness reads every change as it comes (so the list's feed makes a page for each, more
/// than it keeps), while another subscriber reads nothing; then it reads again.
async fn a_subscriber_that_missed_updates_holds_the_page_a_fresh_one_holds(path: Path) {
    let api = world();
    let c = subscriber(path, &api, User::Viewer).await;
    let mut stalled = c.watch_operations(&with_deltas()).await.unwrap();
    let mut held = Held::default();
    held.take(next_change(&mut stalled).await);
    let mut witness = c.watch_operations(&with_deltas()).await.unwrap();
    let mut seen = Held::default();
    seen.take(next_change(&mut witness).await);
    for i in 0..KEPT_VERSIONS + 2 {
        let name = format!("c1-missed-{i:02}");
        api.seed(&op(&name, "c1", "talos", 1)).unwrap();
        while !seen.holds(&name) {
            seen.take(next_change(&mut witness).await);
        }
    }
    // A row changed and one removed, too.
    assert!(api.edit("talosoperations", "default", "c1-missed-03", |v| {
        v["status"] = serde_json::json!({"phase": "Running"});
    }));
    assert!(api.remove("talosoperations", "default", "c1-talos-a"));
    while seen.holds("c1-talos-a") {
        seen.take(next_change(&mut witness).await);
    }
    let mut fresh = c.watch_operations(&the_list()).await.unwrap();
    let fresh = next_change(&mut fresh).await.page.expect("the page whole");
    while seen.version() != fresh.version {
        seen.take(next_change(&mut witness).await);
    }
    while held.version() != fresh.version {
        held.take(next_change(&mut stalled).await);
    }
    assert_eq!(
        held.page.as_ref(),
        Some(&fresh),
        "the stalled subscriber's page"
    );
    assert_eq!(seen.page.as_ref(), Some(&fresh), "the witness's page");
    assert!(seen.deltas > 0, "the witness was sent what changed");
    assert!(api.write_log().is_empty(), "{:?}", api.write_log());
}

crate::matrix!(a_subscriber_that_missed_updates_holds_the_page_a_fresh_one_holds);

/// The next update of serve's loop that carries a page.
async fn next_page(pushes: &mut ichor_service::feed::Pushes) -> Pushed {
    loop {
        let p = tokio::time::timeout(ARRIVES, pushes.next())
            .await
            .expect("an update within the wait")
            .expect("the stream goes on")
            .expect("an update, not an error");
        if p.page.is_some() {
            return p;
        }
    }
}

/// Twenty people hold the same list, half of them applying deltas: a change makes its page
/// once, one delta for the ten that apply them and one page whole for the others (the same
/// value each: serve encodes it once).
#[tokio::test]
async fn the_subscribers_of_one_list_share_one_page_a_change() {
    let api = world();
    let access = KubeAccess::new(api.client(users::SERVER_TOKEN), "ichor-tui");
    let reads = SharedReads::new(OperationService::new(access), RECHECK);
    let person = |i: usize| Caller::user(&format!("viewer-{i}"), User::Viewer.groups());
    let mut subscribers = Vec::new();
    for i in 0..20 {
        let req = WatchRequest {
            page_deltas: i % 2 == 0,
            ..the_list()
        };
        let mut pushes = reads.pushes(&person(i), req).await.unwrap();
        next_page(&mut pushes).await;
        subscribers.push(pushes);
    }
    let store = reads.store(&person(0), Some("default")).await.unwrap();
    let before = store.pages_made();
    api.seed(&op("c1-talos-b", "c1", "talos", 1)).unwrap();
    let mut sent = Vec::new();
    for pushes in &mut subscribers {
        sent.push(next_page(pushes).await.page.expect("the page's update"));
    }
    assert_eq!(
        store.pages_made() - before,
        1,
        "one page made for twenty subscribers"
    );
    let (deltas, wholes): (Vec<_>, Vec<_>) = sent
        .iter()
        .partition(|p| matches!(p.part(), PagePart::Delta(_)));
    assert_eq!((deltas.len(), wholes.len()), (10, 10));
    assert!(deltas.iter().all(|p| Arc::ptr_eq(p, deltas[0])));
    assert!(wholes.iter().all(|p| Arc::ptr_eq(p, wholes[0])));
    let PagePart::Delta(delta) = deltas[0].part() else {
        unreachable!()
    };
    let names: Vec<_> = delta.rows.iter().map(|(_, o)| o.name.as_str()).collect();
    assert_eq!(names, ["c1-talos-b"], "only the new row is sent");
}

/// A client from before deltas (it does not set page_deltas: the request's previous shape)
/// is sent every change whole; one that sets it is sent what changed.
#[tokio::test]
async fn a_client_from_before_deltas_is_sent_pages_whole() {
    use ichor_server::wire::proto;
    let api = world();
    let running = common::server::start_anonymous(&api).await;
    let channel = tonic::transport::Endpoint::from_shared(running.url(false))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut raw = proto::operation_service_client::OperationServiceClient::new(channel);
    let request = |page_deltas| proto::WatchOperationsRequest {
        list: Some(ichor_server::wire::list_query_to_proto(&list())),
        page_deltas,
        ..Default::default()
    };
    let mut old = raw
        .watch_operations(request(false))
        .await
        .unwrap()
        .into_inner();
    let mut new = raw
        .watch_operations(request(true))
        .await
        .unwrap()
        .into_inner();
    for stream in [&mut old, &mut new] {
        let first = stream.message().await.unwrap().unwrap();
        assert_eq!(
            first.page.unwrap().operations.len(),
            1,
            "the first page whole"
        );
    }
    api.seed(&op("c1-talos-b", "c1", "talos", 1)).unwrap();
    let changed = |m: &proto::WatchOperationsResponse| !m.heartbeat;
    let old = loop {
        let m = old.message().await.unwrap().unwrap();
        if changed(&m) {
            break m;
        }
    };
    assert!(old.page_delta.is_none(), "{old:?}");
    assert_eq!(old.page.unwrap().operations.len(), 2, "the page whole");
    let new = loop {
        let m = new.message().await.unwrap().unwrap();
        if changed(&m) {
            break m;
        }
    };
    assert!(new.page.is_none(), "{new:?}");
    let delta = new.page_delta.expect("what changed");
    assert_eq!(delta.rows.len(), 1);
    assert_eq!(delta.rows[0].name, "c1-talos-b");
    assert_eq!(delta.size, 2);
}
