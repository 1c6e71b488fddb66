//! `serve` under many dashboards: 20 simulated dashboards, each a client of its own (its own
//! HTTP/2 connection) asking every 3 s for the first page of summaries with the version it
//! holds, as the list screen's poll does. `serve` runs as its own process against a
//! `demo-cluster` process (as against a real API server, with the server's identity: each
//! call's token reviewed, cached 30 s, and the list read as the caller by impersonation), so
//! its CPU is its own and the API server's requests are counted at the API server, by user
//! (the demo's simulated controller left out).
//!
//! The demo clusters start first ([`Backend::start`]), so their rollouts finish while the
//! benchmark does other things (the poll measures count bytes, not time); the dashboards start
//! once the rollout is over, and the window opens after their first two polls.

use super::common::procs::{self, Cpu, Proc};
use super::idle::own_home;
use super::idle::{counts_of, difference, requests};
use super::polls::summary_query;
use super::server;
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient as _;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// The dashboards' poll interval (the list's, while an operation is unfinished).
const POLL: Duration = Duration::from_secs(3);

/// What a window under `dashboards` dashboards measured.
pub struct Many {
    pub serve_cpu_s: f64,
    pub requests: BTreeMap<String, u64>,
    pub polls: u64,
    pub errors: u64,
    pub median_ms: f64,
    pub serve_peak_kb: u32,
}

#[derive(Default)]
struct Tally {
    polls: AtomicU64,
    errors: AtomicU64,
    counting: AtomicBool,
    stop: AtomicBool,
    latencies: Mutex<Vec<Duration>>,
}

/// One simulated dashboard: polls until told to stop (bounded by the window).
async fn dashboard(url: String, start_after: Duration, tally: Arc<Tally>) {
    let c = server::client_over(&url, Some(users::VIEWER_TOKEN), Protocol::Grpc);
    tokio::time::sleep(start_after).await;
    let mut known: Option<String> = None;
    while !tally.stop.load(Ordering::SeqCst) {
        let t = Instant::now();
        match c.list_page(&summary_query(known.clone())).await {
            Ok(page) => {
                if !page.unchanged {
                    known = Some(page.version);
                }
                if tally.counting.load(Ordering::SeqCst) {
                    tally.polls.fetch_add(1, Ordering::SeqCst);
                    if let Ok(mut l) = tally.latencies.lock() {
                        l.push(t.elapsed());
                    }
                }
            }
            Err(_) => {
                tally.errors.fetch_add(1, Ordering::SeqCst);
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

/// How long the demo's rollout takes to finish from the demo cluster's start, with margin.
const ROLLOUT: Duration = Duration::from_secs(25);

/// A `demo-cluster` with `n` operations in all, for `serve` to reach.
pub struct Backend {
    pub n: usize,
    _api: Proc,
    addr: String,
    home: std::path::PathBuf,
    started: Instant,
}

impl Backend {
    pub fn start(bin: &Path, home: &Path, n: usize) -> Backend {
        let home = own_home(home, &format!("serve-{n}"));
        let (api, addr) = procs::demo_cluster(bin, &home, n - 7);
        Backend {
            n,
            _api: api,
            addr,
            home,
            started: Instant::now(),
        }
    }
}

/// `dashboards` dashboards on `serve` against `backend`, measured over `window`.
pub fn many(
    rt: &Runtime,
    bin: &Path,
    backend: Backend,
    dashboards: usize,
    window: Duration,
) -> Many {
    std::thread::sleep(ROLLOUT.saturating_sub(backend.started.elapsed()));
    let (home, addr) = (&backend.home, &backend.addr);
    let kubeconfig = home.join("kubeconfig-server");
    procs::write_kubeconfig(&kubeconfig, addr, users::SERVER_TOKEN);
    let (serve, url) = procs::serve_kubeconfig(bin, home, &kubeconfig);
    let tally = Arc::new(Tally::default());
    let tasks: Vec<_> = (0..dashboards)
        .map(|i| {
            let spread =
                POLL * u32::try_from(i).unwrap_or(0) / u32::try_from(dashboards).unwrap_or(1);
            rt.spawn(dashboard(url.clone(), spread, tally.clone()))
        })
        .collect();
    // Every dashboard's first poll (the page) and its second (unchanged).
    std::thread::sleep(POLL * 2 + Duration::from_secs(1));
    let not_controller = |u: &str| u != users::CONTROLLER;
    let (cpu0, req0) = (
        Cpu::read(serve.pid()),
        counts_of(&requests(rt, addr), &not_controller),
    );
    tally.counting.store(true, Ordering::SeqCst);
    std::thread::sleep(window);
    tally.counting.store(false, Ordering::SeqCst);
    let (cpu1, req1) = (
        Cpu::read(serve.pid()),
        counts_of(&requests(rt, addr), &not_controller),
    );
    let (serve_peak_kb, _) = procs::memory_kb(serve.pid());
    tally.stop.store(true, Ordering::SeqCst);
    for t in tasks {
        let _ = rt.block_on(t);
    }
    let latencies = tally
        .latencies
        .lock()
        .map(|l| l.clone())
        .unwrap_or_default();
    Many {
        serve_cpu_s: cpu0.since(&cpu1),
        requests: difference(&req0, &req1),
        polls: tally.polls.load(Ordering::SeqCst),
        errors: tally.errors.load(Ordering::SeqCst),
        median_ms: super::common::median_us(&latencies) / 1000.0,
        serve_peak_kb,
    }
}
