//! Streams with distinct queries: `serve` at 10,000 operations while 49 streams, each with its
//! own order and page size (about 1,000 summaries), ask to be kept up to date by 7 people (the
//! per-person stream bound is 8), and an operation is created every 230 ms (about 100 changes in
//! 23 s). Beside them another person polls ListOperations (the first page of 100 summaries)
//! every 50 ms. Two windows: the poller alone with the changes (the baseline), then with the 49
//! streams. `serve` and the Kubernetes API (`demo-cluster`) run as processes of their own.
//! Printed: serve's CPU in each window, the poller's answer times (median, 99th percentile,
//! max), and how many of the 49 streams were accepted (the rest were refused and would poll).
//! A figure, never an assertion.
//!
//!     cargo bench --bench queries
//!
//! Knobs: `ICHOR_QUERIES_WINDOW_S` (23), `ICHOR_QUERIES_OPERATIONS` (10,000),
//! `ICHOR_QUERIES_STREAMS` (49). Under `cargo test` (no `--bench`) a tiny pass: 4 streams, 100
//! operations, 1 s windows.

#[path = "common/mod.rs"]
mod common;
#[path = "../tests/common/server.rs"]
mod server;

use common::procs::{self, Cpu, Proc};
use futures::StreamExt as _;
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient as _;
use ichor_model::{ListQuery, Order, SortBy, View, WatchRequest};
use ichor_resources::TalosOperation;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// The streams' people: bench viewers 0..PEOPLE; the poller is the next.
const PEOPLE: usize = 7;

/// The `i`th stream's query: one of the six orders and a page size of its own, so no two are
/// the same.
fn query(i: usize) -> ListQuery {
    let by = [SortBy::Age, SortBy::Name, SortBy::State][i % 3];
    ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        page_size: 1000 - u32::try_from(i).unwrap_or(0),
        order: Order {
            by,
            reversed: (i / 3) % 2 == 1,
        },
        ..ListQuery::default()
    }
}

/// What the streams count: accepted (their first page came), refused, and updates.
#[derive(Default)]
struct Streams {
    accepted: AtomicUsize,
    refused: AtomicUsize,
    updates: AtomicUsize,
}

/// The `i`th stream, kept until the task is aborted.
async fn stream(url: String, i: usize, tally: Arc<Streams>) {
    let token = ichor_demo::demo::bench_token(i % PEOPLE);
    let c = server::client_over(&url, Some(&token), Protocol::Grpc);
    let req = WatchRequest {
        list: query(i),
        follow: None,
        page_deltas: false,
    };
    let Ok(mut updates) = c.watch_operations(&req).await else {
        tally.refused.fetch_add(1, Ordering::SeqCst);
        return;
    };
    let mut first = true;
    while let Some(u) = updates.next().await {
        match u {
            Ok(_) if first => {
                first = false;
                tally.accepted.fetch_add(1, Ordering::SeqCst);
            }
            Ok(_) => {
                tally.updates.fetch_add(1, Ordering::SeqCst);
            }
            Err(_) if first => {
                tally.refused.fetch_add(1, Ordering::SeqCst);
                return;
            }
            Err(_) => return,
        }
    }
}

/// Polls the first page of 100 summaries every 50 ms until `stop`; each answer's time.
async fn poller(url: String, stop: Arc<AtomicBool>, times: Arc<Mutex<Vec<Duration>>>) {
    let token = ichor_demo::demo::bench_token(PEOPLE);
    let c = server::client_over(&url, Some(&token), Protocol::Grpc);
    let q = ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        page_size: 100,
        ..ListQuery::default()
    };
    while !stop.load(Ordering::SeqCst) {
        let t = Instant::now();
        if c.list_page(&q).await.is_ok()
            && let Ok(mut l) = times.lock()
        {
            l.push(t.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Creates `name` as the admin, through the API the kubeconfig names.
async fn create_operation(client: &kube::Client, name: &str) {
    let api: kube::Api<TalosOperation> = kube::Api::namespaced(client.clone(), "default");
    let mut o = common::world::paused_operation(name);
    o.metadata.creation_timestamp = None;
    let _ = api.create(&kube::api::PostParams::default(), &o).await;
}

async fn admin_client(kubeconfig: &Path) -> kube::Client {
    let config = kube::config::Kubeconfig::read_from(kubeconfig).expect("the kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(config, &Default::default())
        .await
        .expect("its config");
    kube::Client::try_from(config).expect("a client")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Size {
    operations: usize,
    streams: usize,
    window: Duration,
}

/// One window: the poller (and whatever else runs) while an operation is created every 230 ms.
fn window(
    rt: &tokio::runtime::Runtime,
    serve: &Proc,
    url: &str,
    admin: &kube::Client,
    size: &Size,
    name: &str,
) {
    let stop = Arc::new(AtomicBool::new(false));
    let times = Arc::new(Mutex::new(Vec::new()));
    let polling = rt.spawn(poller(url.to_string(), stop.clone(), times.clone()));
    let cpu = Cpu::read(serve.pid());
    let t0 = Instant::now();
    let mut made = 0;
    while t0.elapsed() < size.window {
        rt.block_on(create_operation(
            admin,
            &format!("staging-query-{name}-{made:04}"),
        ));
        made += 1;
        std::thread::sleep(Duration::from_millis(230));
    }
    let used = cpu.since(&Cpu::read(serve.pid()));
    stop.store(true, Ordering::SeqCst);
    let _ = rt.block_on(polling);
    let mut t = times.lock().map(|t| t.clone()).unwrap_or_default();
    t.sort();
    let at = |p: f64| {
        t.get(((t.len().max(1) - 1) as f64 * p) as usize)
            .copied()
            .map_or(f64::NAN, ms)
    };
    println!(
        "queries: {name:9} {made} changes in {w:.0} s: serve used {used:.2} s of CPU; another person's ListOperations (page of 100, {n} answers): median {m:.1} ms, p99 {q:.1} ms, max {x:.1} ms",
        w = size.window.as_secs_f64(),
        n = t.len(),
        m = at(0.5),
        q = at(0.99),
        x = t.last().copied().map_or(f64::NAN, ms),
    );
}

fn run(rt: &tokio::runtime::Runtime, size: &Size) {
    let home = tempfile::tempdir().expect("a temporary directory");
    let started = Instant::now();
    let mut cmd = std::process::Command::new(BIN);
    cmd.env(ichor_demo::demo::USERS_ENV, (PEOPLE + 1).to_string());
    let (api, api_addr) =
        procs::demo_cluster_with(cmd, home.path(), size.operations.saturating_sub(7));
    // The demo's own rollout ends within 25 s of its start.
    let rollout = if size.operations > 1000 { 25 } else { 0 };
    std::thread::sleep(Duration::from_secs(rollout).saturating_sub(started.elapsed()));
    let kubeconfig = home.path().join("kubeconfig-server");
    procs::write_kubeconfig(&kubeconfig, &api_addr, users::SERVER_TOKEN);
    let (serve, url) = procs::serve_kubeconfig(Path::new(BIN), home.path(), &kubeconfig);
    let admin_kubeconfig = home.path().join("kubeconfig-admin");
    procs::write_kubeconfig(&admin_kubeconfig, &api_addr, users::ADMIN_TOKEN);
    let admin = rt.block_on(admin_client(&admin_kubeconfig));
    let _inside = rt.enter();
    window(rt, &serve, &url, &admin, size, "baseline");
    let tally = Arc::new(Streams::default());
    let tasks: Vec<_> = (0..size.streams)
        .map(|i| rt.spawn(stream(url.clone(), i, tally.clone())))
        .collect();
    let until = Instant::now() + Duration::from_secs(60);
    while tally.accepted.load(Ordering::SeqCst) + tally.refused.load(Ordering::SeqCst)
        < size.streams
        && Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    println!(
        "queries: {} streams of distinct queries by {PEOPLE} people at {} operations: {} accepted, {} refused",
        size.streams,
        size.operations,
        tally.accepted.load(Ordering::SeqCst),
        tally.refused.load(Ordering::SeqCst),
    );
    window(rt, &serve, &url, &admin, size, "streams");
    println!(
        "queries: the accepted streams got {} updates",
        tally.updates.load(Ordering::SeqCst)
    );
    for t in tasks {
        t.abort();
    }
    drop(serve);
    drop::<Proc>(api);
}

fn main() {
    let full = common::full();
    let rt = common::runtime();
    let size = if full {
        Size {
            operations: common::env_or("ICHOR_QUERIES_OPERATIONS", 10_000),
            streams: common::env_or("ICHOR_QUERIES_STREAMS", 49),
            window: Duration::from_secs(common::env_or("ICHOR_QUERIES_WINDOW_S", 23)),
        }
    } else {
        Size {
            operations: 100,
            streams: 4,
            window: Duration::from_secs(1),
        }
    };
    run(&rt, &size);
}
