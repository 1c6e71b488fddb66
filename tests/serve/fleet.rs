//! Subscriptions have their own budget, apart from the calls in flight: a thousand dashboards,
//! each its own person, subscribing at once (half over gRPC, half over the Connect protocol)
//! are all accepted without a refusal; anonymous callers share a bound of their own.

use super::common::server::{Options, client_over, start, start_anonymous};
use super::world;
use futures::StreamExt as _;
use ichor_client::remote::Protocol;
use ichor_model::{Code, ListQuery, OperationClient as _, View, WatchRequest};
use std::time::Duration;

/// A generous bound for what must happen: only a hang reaches it.
const NEVER: Duration = Duration::from_secs(120);

fn the_list() -> WatchRequest {
    WatchRequest {
        list: ListQuery {
            namespace: Some("default".into()),
            view: View::Summary,
            page_size: 100,
            ..ListQuery::default()
        },
        follow: None,
        page_deltas: false,
    }
}

fn protocol(i: usize) -> Protocol {
    if i.is_multiple_of(2) {
        Protocol::Grpc
    } else {
        Protocol::Connect
    }
}

/// Subscribes and waits for the first page: the stream, or how it was refused.
async fn subscribed(
    c: &ichor_client::remote::RemoteClient,
) -> Result<ichor_model::Updates, ichor_model::ApiError> {
    let mut updates = c.watch_operations(&the_list()).await?;
    match updates.next().await {
        Some(Ok(u)) if u.page.is_some() => Ok(updates),
        Some(Ok(u)) => panic!("the first update holds the page: {u:?}"),
        Some(Err(e)) => Err(e),
        None => panic!("the stream ended before its first update"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_dashboards_subscribing_at_once_are_all_accepted() {
    const DASHBOARDS: usize = 1000;
    let api = world();
    api.seed(&super::common::op("c1-talos-a", "c1", "talos", 1))
        .unwrap();
    for i in 0..DASHBOARDS {
        api.add_token(
            &format!("fleet-token-{i}"),
            &format!("fleet-{i}"),
            &["ichor:viewers"],
        );
    }
    let server = start(&api, Options::default()).await;
    let clients: Vec<_> = (0..DASHBOARDS)
        .map(|i| {
            client_over(
                &server.url(false),
                Some(&format!("fleet-token-{i}")),
                protocol(i),
            )
        })
        .collect();
    let all = futures::future::join_all(clients.iter().map(subscribed));
    let answers = tokio::time::timeout(NEVER, all)
        .await
        .expect("every subscription is answered");
    let refused: Vec<_> = answers
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            a.as_ref()
                .err()
                .map(|e| (protocol(i), e.code, e.message.clone()))
        })
        .collect();
    assert!(
        refused.is_empty(),
        "{} of {DASHBOARDS} refused, the first: {:?}",
        refused.len(),
        refused.first()
    );
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn anonymous_callers_share_a_bound_of_their_own() {
    use ichor_server::{MAX_ANONYMOUS_STREAMS, MAX_STREAMS_PER_CALLER};
    let api = world();
    let server = start_anonymous(&api).await;
    let mut held = Vec::new();
    for i in 0..MAX_ANONYMOUS_STREAMS {
        let c = client_over(&server.url(false), None, protocol(i));
        let updates = subscribed(&c)
            .await
            .unwrap_or_else(|e| panic!("anonymous stream {i}: {e:?}"));
        held.push(updates);
    }
    const { assert!(MAX_ANONYMOUS_STREAMS > MAX_STREAMS_PER_CALLER) };
    let c = client_over(&server.url(false), None, Protocol::Grpc);
    let e = subscribed(&c).await.err().expect("one more is refused");
    assert_eq!(e.code, Code::ResourceExhausted, "{e:?}");
    assert!(e.message.contains("without a token"), "{}", e.message);
    let named = client_over(
        &server.url(false),
        Some(ichor_demo::apiserver::auth::users::VIEWER_TOKEN),
        Protocol::Grpc,
    );
    let _stream = subscribed(&named)
        .await
        .expect("named people keep their own places");
}

/// Streams with distinct queries cost at most what a bound says: 49 streams, each its own order
/// and page size, by 7 people, in one namespace: serve keeps at most
/// [`ichor_server::MAX_LIVE_QUERIES_PER_NAMESPACE`] distinct lists there (each a page made again
/// at every change), no person brings in more than its share of them
/// ([`ichor_server::pools::LIVE_QUERIES_PER_PERSON`]) nor
/// [`ichor_server::MAX_LIVE_QUERIES_PER_CALLER`] in all, and the rest are refused RESOURCE_EXHAUSTED naming the bound; a stream that joins a list kept
/// already is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_with_distinct_queries_are_bounded() {
    use ichor_model::{Order, Reason, SortBy};
    use ichor_server::{MAX_LIVE_QUERIES_PER_CALLER, MAX_LIVE_QUERIES_PER_NAMESPACE};
    const PEOPLE: usize = 7;
    let api = world();
    api.seed(&super::common::op("c1-talos-a", "c1", "talos", 1))
        .unwrap();
    for p in 0..=PEOPLE {
        api.add_token(
            &format!("query-token-{p}"),
            &format!("query-{p}"),
            &["ichor:viewers"],
        );
    }
    let server = start(&api, Options::default()).await;
    let query = |i: usize| WatchRequest {
        list: ListQuery {
            page_size: 1000 - u32::try_from(i).unwrap(),
            order: Order {
                by: [SortBy::Age, SortBy::Name, SortBy::State][i % 3],
                reversed: (i / 3) % 2 == 1,
            },
            ..the_list().list
        },
        follow: None,
        page_deltas: false,
    };
    let subscribe = |person: usize, req: WatchRequest| {
        let c = client_over(
            &server.url(false),
            Some(&format!("query-token-{person}")),
            protocol(person),
        );
        async move {
            let mut updates = c.watch_operations(&req).await?;
            match updates.next().await {
                Some(Ok(_)) => Ok(updates),
                Some(Err(e)) => Err(e),
                None => panic!("the stream ended before its first update"),
            }
        }
    };
    let all = (0..PEOPLE * 7).map(|i| subscribe(i % PEOPLE, query(i)));
    let answers = tokio::time::timeout(NEVER, futures::future::join_all(all))
        .await
        .expect("every subscription is answered");
    let kept = answers.iter().filter(|a| a.is_ok()).count();
    assert_eq!(kept, MAX_LIVE_QUERIES_PER_NAMESPACE, "distinct lists kept");
    for e in answers.iter().filter_map(|a| a.as_ref().err()) {
        assert_eq!(
            (e.code, e.reason),
            (Code::ResourceExhausted, Some(Reason::LimitReached)),
            "{e:?}"
        );
        let limit = e.param("limit").unwrap_or_default();
        assert!(
            [
                "live_queries_per_namespace",
                "live_queries_per_caller",
                "live_queries_per_caller_in_namespace"
            ]
            .contains(&limit),
            "{e:?}"
        );
    }
    const { assert!(MAX_LIVE_QUERIES_PER_CALLER < 7) };
    let first_kept = answers.iter().position(Result::is_ok).unwrap();
    let _joined = subscribe(PEOPLE, query(first_kept))
        .await
        .expect("joining a kept list costs nothing");
    assert!(api.write_log().is_empty());
}

/// A token under review is not a connection without one: when the Kubernetes API takes longer
/// than [`ichor_server::AUTHENTICATED_WITHIN`] to review a dashboard's token (as it does for the
/// last of 1,000 dashboards connecting at once on a busy server), the connection waits for the
/// review and the stream is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_reviewed_slowly_keeps_its_connection() {
    use ichor_demo::apiserver::{Fault, FaultRule};
    let api = world();
    api.seed(&super::common::op("c1-talos-a", "c1", "talos", 1))
        .unwrap();
    let server = start(&api, Options::default()).await;
    for p in [Protocol::Grpc, Protocol::Connect] {
        // A token of its own each time: a reviewed token is remembered.
        let token = format!("slow-token-{p:?}");
        api.add_token(&token, &format!("slow-{p:?}"), &["ichor:viewers"]);
        api.fail_when(
            FaultRule::on("create", "tokenreviews"),
            Fault::Delay(ichor_server::AUTHENTICATED_WITHIN + Duration::from_secs(2)),
        );
        let c = client_over(&server.url(false), Some(&token), p);
        let stream = tokio::time::timeout(NEVER, subscribed(&c))
            .await
            .expect("answered");
        assert!(stream.is_ok(), "{p:?}: {:?}", stream.err());
    }
    assert!(api.write_log().is_empty());
}

/// The kernel queues a fleet's connections while serve is busy: 1,500 dashboards connecting
/// before serve accepts any (tokio's own `bind` queues 1,024, and the kernel drops the rest's
/// handshakes) all complete their connection at once.
#[tokio::test]
async fn a_fleets_connections_wait_in_the_queue() {
    const FLEET: usize = 1500;
    let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok());
    if somaxconn.is_some_and(|m| m < FLEET) {
        return;
    }
    let listener =
        ichor_server::bind(([127, 0, 0, 1], 0).into(), ichor_server::MAX_CONNECTIONS).unwrap();
    let addr = listener.local_addr().unwrap();
    let connects = (0..FLEET).map(|_| {
        tokio::time::timeout(
            Duration::from_millis(900),
            tokio::net::TcpStream::connect(addr),
        )
    });
    let done = futures::future::join_all(connects).await;
    let failed = done.iter().filter(|r| !matches!(r, Ok(Ok(_)))).count();
    assert_eq!(failed, 0, "{failed} of {FLEET} connections were not queued");
    drop(listener);
}
