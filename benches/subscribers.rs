//! Push at scale: `serve` with 20, 200 and 1,000 subscribed dashboards at 10,000 operations,
//! each a different person (serve bounds the streams of one), half over gRPC and half over the
//! Connect protocol, each holding the first page of 100 summaries. `serve` and the Kubernetes
//! API (`demo-cluster`, with its simulated controller) run as processes of their own, so each
//! one's CPU is its own. Two windows for each count: idle (heartbeats only), then one new
//! operation a second. Printed: the CPU a minute of serve and of the API, serve's peak
//! resident memory (VmHWM, reset at each window's start), and the time from each creation to
//! each subscriber's update that holds it (median, 99th percentile, over every subscriber).
//! Then serve is restarted under the fleet: the time until every dashboard has its page
//! again, and how many subscriptions a bound refused on the way. A figure, never an assertion.
//!
//!     cargo bench --bench subscribers
//!
//! Knobs: `ICHOR_SUBSCRIBERS` (the counts, `0,20,200,1000`: 0 is the API's own baseline, its
//! simulated controller included), `ICHOR_SUBSCRIBERS_WINDOW_S` (20),
//! `ICHOR_SUBSCRIBERS_OPERATIONS` (10,000), `ICHOR_SUBSCRIBERS_PAGE` (the page each dashboard
//! holds, 100). Under `cargo test` (no `--bench`) a tiny pass: 2 subscribers, 100 operations,
//! 1 s windows.

#[path = "common/mod.rs"]
mod common;
#[path = "../tests/common/server.rs"]
mod server;

use common::procs::{self, Proc};
use futures::StreamExt as _;
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient as _;
use ichor_model::{ListQuery, View, WatchRequest};
use ichor_resources::TalosOperation;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// What the subscribers share: when each operation was created, and how long each took to
/// reach each subscriber.
#[derive(Default)]
struct Tally {
    created: Mutex<HashMap<String, Instant>>,
    latencies: Mutex<Vec<Duration>>,
    /// Subscribers that have their first page.
    ready: AtomicUsize,
    errors: AtomicUsize,
    /// Subscriptions that got their first page, every one (a subscriber's again after a break
    /// too).
    pages: AtomicUsize,
    /// Subscriptions refused by one of serve's bounds (RESOURCE_EXHAUSTED).
    refused: AtomicUsize,
}

/// One dashboard: subscribes as the `i`th bench viewer after `start_after` (a fleet joins over
/// a while), subscribes again after a refusal (serve sheds load past its in-flight limit while
/// a thousand subscriptions are authorised at once) or a broken stream after the dashboard's
/// own waits ([`ichor_runtime::reopen_waits`], from the first again once a page came), and
/// notes when each created operation first shows in its page.
async fn subscriber(
    url: String,
    i: usize,
    page_size: u32,
    start_after: Duration,
    tally: Arc<Tally>,
) {
    let protocol = if i.is_multiple_of(2) {
        Protocol::Grpc
    } else {
        Protocol::Connect
    };
    let token = ichor_demo::demo::bench_token(i);
    let c = server::client_over(&url, Some(&token), protocol);
    let req = WatchRequest {
        list: ListQuery {
            namespace: Some("default".into()),
            view: View::Summary,
            page_size,
            ..ListQuery::default()
        },
        follow: None,
        page_deltas: false,
    };
    tokio::time::sleep(start_after).await;
    let mut seen = HashSet::new();
    let mut counted = false;
    let refused = |e: &ichor_model::ApiError| {
        if e.code == ichor_model::Code::ResourceExhausted {
            tally.refused.fetch_add(1, Ordering::SeqCst);
        }
    };
    let mut waits = ichor_runtime::reopen_waits();
    loop {
        match c.watch_operations(&req).await {
            Err(e) => refused(&e),
            Ok(mut updates) => {
                let mut first = true;
                while let Some(u) = updates.next().await {
                    let u = match u {
                        Ok(u) => u,
                        Err(e) => {
                            if first {
                                refused(&e);
                            }
                            break;
                        }
                    };
                    let Some(page) = u.page else { continue };
                    if first {
                        first = false;
                        waits = ichor_runtime::reopen_waits();
                        tally.pages.fetch_add(1, Ordering::SeqCst);
                    }
                    if !counted {
                        counted = true;
                        tally.ready.fetch_add(1, Ordering::SeqCst);
                    }
                    let now = Instant::now();
                    let created = tally.created.lock().map(|c| c.clone()).unwrap_or_default();
                    for op in &page.operations {
                        if let Some(at) = created.get(&op.name)
                            && seen.insert(op.name.clone())
                            && let Ok(mut l) = tally.latencies.lock()
                        {
                            l.push(now - *at);
                        }
                    }
                }
            }
        }
        tally.errors.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(waits.next().unwrap_or(Duration::from_secs(30))).await;
    }
}

fn percentile_ms(values: &mut [Duration], p: f64) -> f64 {
    values.sort();
    match values.len() {
        0 => f64::NAN,
        n => values[((n - 1) as f64 * p) as usize].as_secs_f64() * 1e3,
    }
}

/// CPU seconds a minute of `pid` over `window`, from `before` (seconds used then).
fn per_minute(pid: u32, before: f64, window: Duration) -> f64 {
    (procs::cpu_ticks_s(pid) - before) * 60.0 / window.as_secs_f64()
}

struct Run {
    subscribers: usize,
    operations: usize,
    window: Duration,
    /// The page each dashboard holds (100: the dashboard's first page).
    page_size: u32,
}

fn run(rt: &tokio::runtime::Runtime, size: &Run) {
    let home = tempfile::tempdir().expect("a temporary directory");
    let started = Instant::now();
    let mut cmd = std::process::Command::new(BIN);
    cmd.env(ichor_demo::demo::USERS_ENV, size.subscribers.to_string());
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
    let tally = Arc::new(Tally::default());
    let _inside = rt.enter();
    // They join over 10 s (a tenth of that in the short pass).
    let ramp = size.window / 2;
    let tasks: Vec<_> = (0..size.subscribers)
        .map(|i| {
            let after = ramp.mul_f64(i as f64 / size.subscribers.max(1) as f64);
            rt.spawn(subscriber(
                url.clone(),
                i,
                size.page_size,
                after,
                tally.clone(),
            ))
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(120);
    while tally.ready.load(Ordering::SeqCst) < size.subscribers && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    let subscribed = tally.ready.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_secs(2));
    let refused = tally.errors.swap(0, Ordering::SeqCst);
    let phase = |name: &str, create: bool| {
        let _ = procs::take_peak_kb(serve.pid());
        let (serve_cpu, api_cpu) = (
            procs::cpu_ticks_s(serve.pid()),
            procs::cpu_ticks_s(api.pid()),
        );
        let t0 = Instant::now();
        let mut made = 0;
        while t0.elapsed() < size.window {
            if create {
                let name = format!("staging-push-{:03}-{made:04}", size.subscribers);
                if let Ok(mut c) = tally.created.lock() {
                    c.insert(name.clone(), Instant::now());
                }
                rt.block_on(create_operation(&admin_kubeconfig, &name));
                made += 1;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        // The last creation's updates arrive.
        std::thread::sleep(Duration::from_millis(500));
        let (peak, now) = procs::memory_kb(serve.pid());
        let mut l = tally
            .latencies
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default();
        let expected = made * subscribed;
        println!(
            "subscribers: {n:>5} dashboards, {name:7}: serve {s:.2} s/min, API {a:.2} s/min; serve peak RSS {p:.1} MiB (now {r:.1}); {k} of {expected} updates, median {m:.1} ms, p99 {q:.1} ms; {e} streams broken",
            n = size.subscribers,
            s = per_minute(serve.pid(), serve_cpu, size.window),
            a = per_minute(api.pid(), api_cpu, size.window),
            p = f64::from(peak) / 1024.0,
            r = f64::from(now) / 1024.0,
            k = l.len(),
            m = percentile_ms(&mut l, 0.5),
            q = percentile_ms(&mut l, 0.99),
            e = tally.errors.swap(0, Ordering::SeqCst),
        );
    };
    println!(
        "subscribers: {} subscribed at {} operations ({} subscriptions refused or broken on the way, each tried again)",
        subscribed, size.operations, refused,
    );
    phase("idle", false);
    phase("changes", true);
    let serve = restart(serve, &url, &kubeconfig, home.path(), size, &tally);
    for t in tasks {
        t.abort();
    }
    drop(serve);
    drop::<Proc>(api);
}

/// serve restarted under the fleet: stopped, started again on the same address, and timed
/// until every dashboard has its page again; how many of their subscriptions a bound refused
/// on the way (each dashboard tries again after the dashboard's own waits).
fn restart(
    serve: Proc,
    url: &str,
    kubeconfig: &Path,
    home: &Path,
    size: &Run,
    tally: &Tally,
) -> Proc {
    let listen = url.trim_start_matches("http://").to_string();
    let before = tally.pages.load(Ordering::SeqCst);
    let refused = tally.refused.load(Ordering::SeqCst);
    drop(serve);
    let t0 = Instant::now();
    let (serve, _) = procs::serve_kubeconfig_at(Path::new(BIN), home, kubeconfig, &listen);
    let until = t0 + Duration::from_secs(120);
    while tally.pages.load(Ordering::SeqCst) < before + size.subscribers && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (peak, _) = procs::memory_kb(serve.pid());
    println!(
        "subscribers: {n:>5} dashboards, restart: {k} of {n} subscribed again {t:.1} s after serve started again; {r} subscriptions refused by a bound on the way; serve peak RSS {p:.1} MiB",
        n = size.subscribers,
        k = tally
            .pages
            .load(Ordering::SeqCst)
            .saturating_sub(before)
            .min(size.subscribers),
        t = t0.elapsed().as_secs_f64(),
        r = tally.refused.load(Ordering::SeqCst) - refused,
        p = f64::from(peak) / 1024.0,
    );
    serve
}

/// Creates `name` as the admin, through the API the kubeconfig names.
async fn create_operation(kubeconfig: &Path, name: &str) {
    let Ok(config) = kube::config::Kubeconfig::read_from(kubeconfig) else {
        return;
    };
    let Ok(config) = kube::Config::from_custom_kubeconfig(config, &Default::default()).await else {
        return;
    };
    let Ok(client) = kube::Client::try_from(config) else {
        return;
    };
    let api: kube::Api<TalosOperation> = kube::Api::namespaced(client, "default");
    let _ = api
        .create(&kube::api::PostParams::default(), &{
            // The API server sets the creation time.
            let mut o = common::world::paused_operation(name);
            o.metadata.creation_timestamp = None;
            o
        })
        .await;
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rt = common::runtime();
    let page_size = common::env_or("ICHOR_SUBSCRIBERS_PAGE", 100);
    let (counts, operations, window): (Vec<usize>, usize, Duration) = if full {
        let counts = std::env::var("ICHOR_SUBSCRIBERS")
            .unwrap_or_else(|_| "0,20,200,1000".into())
            .split(',')
            .filter_map(|c| c.trim().parse().ok())
            .collect();
        (
            counts,
            common::env_or("ICHOR_SUBSCRIBERS_OPERATIONS", 10_000),
            Duration::from_secs(common::env_or("ICHOR_SUBSCRIBERS_WINDOW_S", 20)),
        )
    } else {
        (vec![2], 100, Duration::from_secs(1))
    };
    for subscribers in counts {
        run(
            &rt,
            &Run {
                subscribers,
                operations,
                window,
                page_size,
            },
        );
    }
}
