//! Bytes per list poll, measured in the benchmark's process: the dashboard's own clients
//! asking what its list asks (the first page of summaries, then the same page with the version
//! held, which comes back `unchanged`), and the old full-view list for comparison.
//!
//! - Over gRPC and Connect: `serve` on loopback against an embedded API with `n` operations,
//!   its bytes counted each way by a relay (headers and framing included), on an open
//!   connection; and the API requests each poll costs `serve`'s Kubernetes API.
//! - In-process: the in-process client (with its watch-fed store) against the same API served
//!   over HTTP as `demo-cluster` serves it, the bytes the Kubernetes API sends counted by a
//!   relay; which path answered the poll (the store, or a list from the API) is read from
//!   the API's own counts of the polls' requests.

use super::common::relay::Relay;
use super::common::{self, world::world};
use super::server;
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient;
use ichor_model::{ListQuery, OperationPage, View};
use prost::Message as _;
use std::time::Duration;
use tokio::runtime::Runtime;

/// The rows a page of the list screen holds (`app::update::list::PAGE`).
pub const PAGE: u32 = 100;

/// What the list screen's poll asks: the first page of summaries, with the version held.
pub fn summary_query(known_version: Option<String>) -> ListQuery {
    ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        page_size: PAGE,
        known_version,
        ..ListQuery::default()
    }
}

/// The old clients' list: every operation, whole.
fn full_query() -> ListQuery {
    ListQuery::everything(Some("default"))
}

/// The binary message of an answer (what Connect's binary body and gRPC's message carry).
fn body_len(page: &OperationPage) -> usize {
    ichor_server::wire::page_to_proto(page).encoded_len()
}

/// Requests the API has served `user` (all users: `None`), by verb and resource.
fn requests_of(api: &EmbeddedApi, user: Option<&str>) -> u64 {
    api.requests_by()
        .iter()
        .filter(|c| user.is_none_or(|u| c.user == u))
        .map(|c| c.count)
        .sum()
}

/// Bytes each way per call and API requests per call, on an open connection: one call to open
/// it, then `calls` counted.
fn per_call(
    relay: &Relay,
    api: &EmbeddedApi,
    calls: u64,
    call: &dyn Fn() -> OperationPage,
) -> ((u64, u64), f64) {
    call();
    std::thread::sleep(Duration::from_millis(20));
    relay.reset();
    let before = requests_of(api, None);
    for _ in 0..calls {
        call();
    }
    std::thread::sleep(Duration::from_millis(20));
    let (up, down) = relay.counts();
    let reqs = (requests_of(api, None) - before) as f64 / calls as f64;
    ((up / calls, down / calls), reqs)
}

fn report(n: usize, path: &str, what: &str, body: Option<usize>, wire: (u64, u64), reqs: f64) {
    let body = body.map(|b| format!("answer {b} B; ")).unwrap_or_default();
    common::report(
        &format!("poll bytes, {n} operations, {path}, {what}"),
        format!(
            "{body}wire {} B up, {} B down; {reqs:.1} API requests a poll",
            wire.0, wire.1
        ),
    );
}

/// Over gRPC and Connect to `serve` on loopback.
fn remote(rt: &Runtime, api: &EmbeddedApi, n: usize, calls: u64) {
    let srv = rt.block_on(server::start(api, server::Options::default()));
    let relay = rt.block_on(Relay::start(srv.addr.to_string()));
    for (protocol, label) in [(Protocol::Grpc, "gRPC"), (Protocol::Connect, "Connect")] {
        let url = format!("http://{}", relay.addr);
        let c = server::client_over(&url, Some(users::VIEWER_TOKEN), protocol);
        let ask = |q: ListQuery| rt.block_on(c.list_page(&q)).expect("listing");
        let first = ask(summary_query(None));
        assert_eq!(
            (first.total, first.operations.len()),
            (n, n.min(PAGE as usize))
        );
        let (wire, reqs) = per_call(&relay, api, calls, &|| ask(summary_query(None)));
        report(
            n,
            label,
            "first page of summaries",
            Some(body_len(&first)),
            wire,
            reqs,
        );
        let known = Some(first.version.clone());
        let same = ask(summary_query(known.clone()));
        assert!(same.unchanged, "the second poll is unchanged");
        let (wire, reqs) = per_call(&relay, api, calls, &|| ask(summary_query(known.clone())));
        report(
            n,
            label,
            "unchanged poll",
            Some(body_len(&same)),
            wire,
            reqs,
        );
        let whole = ask(full_query());
        assert_eq!(whole.operations.len(), n);
        let (wire, reqs) = per_call(&relay, api, calls.min(3), &|| ask(full_query()));
        report(
            n,
            label,
            "old full-view list",
            Some(body_len(&whole)),
            wire,
            reqs,
        );
    }
    drop(srv);
}

/// The in-process client as the dashboard makes it, through a kubeconfig naming `addr`.
fn in_process_client(rt: &Runtime, addr: &str) -> ichor_client::inprocess::InProcessClient {
    use ichor_service::OperationService;
    use ichor_service::access::{Caller, KubeAccess};
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("kubeconfig");
    super::common::procs::write_kubeconfig(&path, addr, users::ADMIN_TOKEN);
    let loaded = ichor_tui::kubeconfig::read(Some(&path)).expect("reading the kubeconfig");
    let (kube, _) = rt
        .block_on(loaded.client("demo"))
        .expect("a Kubernetes client");
    let service = OperationService::new(KubeAccess::new(kube.clone(), "ichor-tui"));
    ichor_client::inprocess::InProcessClient::new(service, Caller::in_process())
        .with_watch(kube, Some("default".into()))
}

/// In-process: what the Kubernetes API sends per poll.
fn in_process(rt: &Runtime, api: &EmbeddedApi, n: usize, calls: u64) {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("binding the API's port");
    let addr = listener
        .local_addr()
        .expect("the API's address")
        .to_string();
    let served = rt.spawn(ichor_demo::apiserver::server::serve(api.clone(), listener));
    let relay = rt.block_on(Relay::start(addr));
    let c = in_process_client(rt, &relay.addr);
    // Time for the watch's first list (and, where watches are served, its watch).
    std::thread::sleep(Duration::from_secs(if n > 1_000 { 5 } else { 2 }));
    let ask = |q: ListQuery| rt.block_on(c.list_page(&q)).expect("listing");
    let first = ask(summary_query(None));
    assert_eq!(first.total, n);
    let (wire, reqs) = per_call(&relay, api, calls, &|| ask(summary_query(None)));
    let answered = if reqs >= 1.0 {
        "answered by API lists (the watch is not serving)"
    } else {
        "answered by the watch-fed store"
    };
    report(
        n,
        &format!("in-process, {answered}"),
        "first page of summaries",
        None,
        wire,
        reqs,
    );
    let known = Some(first.version.clone());
    let (wire, reqs) = per_call(&relay, api, calls, &|| ask(summary_query(known.clone())));
    report(n, "in-process", "unchanged poll", None, wire, reqs);
    let (wire, reqs) = per_call(&relay, api, calls.min(3), &|| ask(full_query()));
    report(
        n,
        "in-process",
        "old full-view list (reads the API)",
        None,
        wire,
        reqs,
    );
    drop(c);
    served.abort();
}

/// Every poll measure at `n` operations.
pub fn measure(rt: &Runtime, n: usize, full: bool) {
    let api = world(n - 7);
    let calls = if full { 5 } else { 1 };
    remote(rt, &api, n, calls);
    in_process(rt, &api, n, calls);
}
