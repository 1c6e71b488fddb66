//! No one can take what others need: one person with a viewer's token attacks `serve` as a
//! person could (raw HTTP/2 frames where no client library would send them:
//! [`crate::common::attacks`]), and another person is served all the same, within what their
//! own client waits (the dashboard's [`ichor_model::SILENCE_LIMIT`] for a stream, the client's
//! call deadline for a call): calls whose bodies never come, thousands of connections each
//! holding one, subscriptions whose bodies never come, garbage tokens while those wait, a
//! namespace's distinct lists, and reads that fill every seat while a write and a probe come.
//! Every bound here is a share by person (`crates/ichor-server/src/pools.rs`).

use super::common::attacks::{self, LIST, Tally, WATCH};
use super::common::server::{Options, Running, client, client_over, start};
use super::world;
use futures::StreamExt as _;
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::{ListQuery, OperationClient as _, SILENCE_LIMIT, View, WatchRequest};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A generous bound for what must happen: only a hang reaches it.
const NEVER: Duration = Duration::from_secs(120);

/// A gauge or counter of the server's metrics (0 when not there yet).
fn metric(server: &Running, line_start: &str) -> f64 {
    server
        .metrics
        .encode()
        .lines()
        .find_map(|l| l.strip_prefix(line_start))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// The dashboard's list.
fn the_list(page_size: u32) -> WatchRequest {
    WatchRequest {
        list: ListQuery {
            namespace: Some("default".into()),
            view: View::Summary,
            page_size,
            ..ListQuery::default()
        },
        follow: None,
        page_deltas: false,
    }
}

/// `token`'s subscription to `req` and its first update, within what the dashboard waits for
/// one ([`SILENCE_LIMIT`]): the stream, or why not.
async fn first_update(
    url: &str,
    token: &str,
    req: &WatchRequest,
) -> Result<ichor_model::Updates, String> {
    let c = client_over(url, Some(token), Protocol::Grpc);
    let subscribed = async {
        let mut updates = c
            .watch_operations(req)
            .await
            .map_err(|e| format!("{e:?}"))?;
        match updates.next().await {
            Some(Ok(_)) => Ok(updates),
            Some(Err(e)) => Err(format!("{e:?}")),
            None => Err("the stream ended before its first update".into()),
        }
    };
    tokio::time::timeout(SILENCE_LIMIT, subscribed)
        .await
        .unwrap_or_else(|_| Err(format!("no first update within {SILENCE_LIMIT:?}")))
}

fn seeded() -> EmbeddedApi {
    let api = world();
    api.seed(&super::common::op("c1-talos-a", "c1", "talos", 1))
        .unwrap();
    api
}

/// Starts `n` attackers, each [`attacks::hold_bodiless`] on a connection of its own.
fn attack(
    server: &Running,
    path: &'static str,
    connections: usize,
    calls: usize,
) -> (Arc<Tally>, Vec<tokio::task::JoinHandle<()>>) {
    let tally = Arc::new(Tally::default());
    let tasks = (0..connections)
        .map(|_| {
            tokio::spawn(attacks::hold_bodiless(
                server.addr,
                path,
                users::VIEWER_TOKEN.to_string(),
                calls,
                tally.clone(),
            ))
        })
        .collect();
    (tally, tasks)
}

fn stop(tally: &Tally, tasks: Vec<tokio::task::JoinHandle<()>>) {
    tally.stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.abort();
    }
}

/// 270 ListOperations by the viewer, 90 on each of 3 connections, whose bodies never come (each
/// sent again when answered): they hold the viewer's share of bodies being read (the rest wait
/// in its queue, or are refused when it is full), never a call in flight; the operator's
/// ListOperations is answered. (Before: every
/// other person's call was refused `calls_in_flight`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_whose_bodies_never_come_leave_others_their_calls() {
    let api = seeded();
    let server = start(&api, Options::default()).await;
    let (tally, tasks) = attack(&server, LIST, 3, 90);
    super::common::eventually("every attacker's call is sent", || {
        tally.sent.load(Ordering::SeqCst) >= 270
    })
    .await;
    let operator = client(&server.url(false), Some(users::OPERATOR_TOKEN));
    for _ in 0..5 {
        let ops = operator.list_operations(Some("default")).await;
        assert!(ops.is_ok(), "the operator's list: {ops:?}");
    }
    assert_eq!(tally.got(tonic::Code::Ok), 0, "no attacker's call ran");
    stop(&tally, tasks);
    assert!(api.write_log().is_empty());
}

/// 2,100 connections by the viewer, each holding one WatchOperations whose body never comes
/// (made again a second after the server closes it): the viewer holds its share of
/// connections; the operator's new connection is served, a call and a subscription. (Before:
/// the viewer held all 2,048 and everyone else's connection waited in the kernel's queue.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_connections_leave_others_theirs() {
    const ATTACKERS: usize = 2100;
    let api = seeded();
    let server = start(&api, Options::default()).await;
    let (tally, tasks) = attack(&server, WATCH, ATTACKERS, 1);
    super::common::eventually("every attacker has connected once", || {
        tally.started.load(Ordering::SeqCst) >= ATTACKERS
    })
    .await;
    super::common::eventually("the server holds what it lets the attackers hold", || {
        tally.sent.load(Ordering::SeqCst) >= ichor_server::pools::CONNECTIONS_PER_PERSON
    })
    .await;
    let operator = client(&server.url(false), Some(users::OPERATOR_TOKEN));
    let ops = operator.list_operations(Some("default")).await;
    assert!(ops.is_ok(), "the operator's list: {ops:?}");
    let stream = first_update(&server.url(false), users::OPERATOR_TOKEN, &the_list(100)).await;
    assert!(
        stream.is_ok(),
        "the operator's subscription: {:?}",
        stream.err()
    );
    let refused = metric(
        &server,
        "ichor_serve_refused_total{limit=\"connections_per_person\"} ",
    );
    assert!(refused > 0.0, "the viewer's connections past its share");
    stop(&tally, tasks);
    assert!(api.write_log().is_empty());
}

/// 500 WatchOperations by the viewer on 5 connections whose bodies never come: the viewer holds
/// its share of the subscriptions' bodies, never a turn to subscribe; the operator's
/// subscription has its first update within what a dashboard waits. (Before: 64 of them held
/// every turn while their bodies were awaited, and the operator's waited behind the rest.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_whose_bodies_never_come_leave_others_their_turn() {
    let api = seeded();
    let server = start(&api, Options::default()).await;
    let (tally, tasks) = attack(&server, WATCH, 5, 100);
    super::common::eventually("every attacker's subscription is sent", || {
        tally.sent.load(Ordering::SeqCst) >= 500
    })
    .await;
    let stream = first_update(&server.url(false), users::OPERATOR_TOKEN, &the_list(100)).await;
    assert!(
        stream.is_ok(),
        "the operator's subscription: {:?}",
        stream.err()
    );
    assert_eq!(tally.got(tonic::Code::Ok), 0, "no attacker's stream began");
    stop(&tally, tasks);
    assert!(api.write_log().is_empty());
}

/// While the viewer's body-less subscriptions wait, 300 connections each send a
/// WatchOperations with a garbage token: each is answered UNAUTHENTICATED at once (tokens are
/// decided before any queue), before any of the viewer's calls has ended, and each connection
/// is closed by the server. (Before: they waited in the subscriptions' queue as tokens under
/// review, their connections open for as long.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_tokens_are_decided_before_any_queue() {
    const GARBAGE: usize = 300;
    let api = seeded();
    let server = start(&api, Options::default()).await;
    let (tally, tasks) = attack(&server, WATCH, 5, 100);
    super::common::eventually("every attacker's subscription is sent", || {
        tally.sent.load(Ordering::SeqCst) >= 500
    })
    .await;
    let addr = server.addr;
    let garbage = (0..GARBAGE).map(|i| {
        let tally = tally.clone();
        async move {
            let mut sender = attacks::h2(addr).await.expect("a connection");
            let token = format!("garbage-{i}");
            let body = attacks::whole(attacks::frame(0, b"", None));
            let req = attacks::grpc(addr, WATCH, Some(&token), &[], body);
            let resp = sender.send_request(req).await.expect("an answer");
            let code = attacks::code_of(resp).await;
            // Answered before any of the viewer's held calls ended at its body's deadline.
            let viewers_ended = tally.got(tonic::Code::DeadlineExceeded);
            // Then the server closes the connection.
            let closed = tokio::time::timeout(NEVER, async {
                while !sender.is_closed() {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
            .await
            .is_ok();
            (code, viewers_ended, closed)
        }
    });
    let answers = tokio::time::timeout(NEVER, futures::future::join_all(garbage))
        .await
        .expect("every garbage token answered");
    for (code, viewers_ended, closed) in answers {
        assert_eq!(code, Some(tonic::Code::Unauthenticated));
        assert_eq!(
            viewers_ended, 0,
            "answered while the viewer's calls still wait"
        );
        assert!(closed, "the server closes the connection");
    }
    stop(&tally, tasks);
    assert!(api.write_log().is_empty());
}

/// Two people, four streams each in `default` with page sizes 1 to 8 (each a distinct list the
/// server keeps up to date): each keeps its share, and the operator's own list there is served.
/// (Before: the eight filled the namespace's lists, and the operator's was refused
/// `live_queries_per_namespace`.) Page sizes over 1,000 are served as 1,000, and are that list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaces_lists_are_shared_by_person() {
    use ichor_server::pools::LIVE_QUERIES_PER_PERSON;
    let api = seeded();
    api.add_token("mallory-token", "mallory", &["ichor:viewers"]);
    let server = start(&api, Options::default()).await;
    let url = server.url(false);
    let mut held = Vec::new();
    let mut refused = Vec::new();
    for (p, token) in ["mallory-token", users::VIEWER_TOKEN].iter().enumerate() {
        for i in 0..4u32 {
            match first_update(&url, token, &the_list(1 + 4 * p as u32 + i)).await {
                Ok(s) => held.push(s),
                Err(e) => refused.push(e),
            }
        }
    }
    assert_eq!(held.len(), 2 * LIVE_QUERIES_PER_PERSON, "{refused:?}");
    assert!(
        refused
            .iter()
            .all(|e| e.contains("live_queries_per_caller_in_namespace")),
        "{refused:?}"
    );
    let operators = first_update(&url, users::OPERATOR_TOKEN, &the_list(9)).await;
    assert!(
        operators.is_ok(),
        "the operator's list: {:?}",
        operators.err()
    );
    // Past the most a page holds, one list: the operator's second, then the same again.
    let big = first_update(&url, users::OPERATOR_TOKEN, &the_list(1000)).await;
    assert!(big.is_ok(), "{:?}", big.err());
    for size in [1001, 5000, i32::MAX as u32] {
        let same = first_update(&url, users::OPERATOR_TOKEN, &the_list(size)).await;
        assert!(
            same.is_ok(),
            "page size {size} is the list of 1,000: {:?}",
            same.err()
        );
    }
    assert!(api.write_log().is_empty());
}

/// The server's own client, holding every list of clusters until `release` says true (a watch,
/// so no release is lost to a request that arrives as it is said).
fn held_at_api(
    api: &EmbeddedApi,
) -> (
    kube::Client,
    tokio::sync::mpsc::UnboundedReceiver<()>,
    tokio::sync::watch::Sender<bool>,
) {
    let inner = api.client(users::SERVER_TOKEN);
    let (arrived_tx, arrived_rx) = tokio::sync::mpsc::unbounded_channel();
    let (release, released) = tokio::sync::watch::channel(false);
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let (inner, arrived, mut released) = (inner.clone(), arrived_tx.clone(), released.clone());
        let hold =
            req.method() == http::Method::GET && req.uri().path().ends_with("/talosclusters");
        async move {
            if hold {
                let _ = arrived.send(());
                let _ = released.wait_for(|r| *r).await;
            }
            inner.send(req).await
        }
    });
    (kube::Client::new(svc, "default"), arrived_rx, release)
}

/// Eight people hold every read's seat (their ListClusters held at the API); the operator's
/// pause and the health check are answered all the same: writes and probes are levels of
/// their own. (Before: both were refused `calls_in_flight`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_and_probes_are_not_queued_behind_reads() {
    use ichor_server::{MAX_CALLS_IN_FLIGHT, pools::CALLS_PER_PERSON};
    let api = seeded();
    let (kube, mut arrived, release) = held_at_api(&api);
    let people = MAX_CALLS_IN_FLIGHT / CALLS_PER_PERSON;
    for p in 0..people {
        api.add_token(
            &format!("reader-{p}"),
            &format!("reader-{p}"),
            &["ichor:viewers"],
        );
    }
    let listener = ichor_server::bind(([127, 0, 0, 1], 0).into(), 4096).unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(ichor_server::serve(
        ichor_server::ServerConfig::new(kube),
        listener,
        async move {
            let _ = stop_rx.await;
        },
    ));
    let url = format!("http://{addr}");
    let readers: Vec<_> = (0..MAX_CALLS_IN_FLIGHT)
        .map(|i| {
            let c = client(&url, Some(&format!("reader-{}", i % people)));
            tokio::spawn(async move { c.list_clusters(Some("default")).await })
        })
        .collect();
    for _ in 0..MAX_CALLS_IN_FLIGHT {
        arrived.recv().await.unwrap();
    }
    let operator = client(&url, Some(users::OPERATOR_TOKEN));
    let written = operator
        .set_operation_paused("default", "c1-talos-a", true, None)
        .await
        .map(|o| o.paused);
    assert_eq!(written, Ok(true), "the operator's pause is carried out");
    let mut health = tonic_health::pb::health_client::HealthClient::new(
        tonic::transport::Endpoint::from_shared(url.clone())
            .unwrap()
            .connect_lazy(),
    );
    let checked = health
        .check(tonic_health::pb::HealthCheckRequest::default())
        .await;
    assert!(checked.is_ok(), "the health check: {checked:?}");
    let _ = release.send(true);
    for r in readers {
        assert!(r.await.unwrap().is_ok());
    }
    let _ = stop_tx.send(());
    served.await.unwrap().unwrap();
}
