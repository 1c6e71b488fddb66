//! `serve` under hostile load, on loopback only, bounded in counts and time: 200 dashboards (each
//! its own person) polling one `serve` at 10,000 operations (the list's poll: the first page of summaries with
//! the version it holds, every 3 s, half over gRPC and half over the Connect protocol), then
//! the same with 1,000 unauthenticated slow uploads (a 1 MiB body sent 16 KiB at a time,
//! without a token; each attacker starts again a second after the server answers) and 1,000
//! slow-header connections (a header line a second, never ending; started again when closed)
//! beside them, then the dashboards alone again. `serve` runs as its own process against a
//! `demo-cluster` process, so its memory and CPU are its own.
//!
//! Printed: serve's resident memory idle (no call yet), its peak (VmHWM, reset with
//! /proc/PID/clear_refs at each phase's start) and its CPU in each phase, the dashboards' answer
//! times (median, 99th percentile) and errors, and what the attackers got. Then one person with
//! a viewer's token attacks as issue 44 tells ([`viewer`]: calls whose bodies never come,
//! thousands of connections, subscriptions whose bodies never come, garbage tokens, a
//! namespace's distinct lists), each in a window of its own after a quiet one, while another
//! person (the operator) calls and subscribes: their figures, quiet and under each attack.
//!
//!     cargo bench --bench hostile
//!
//! Knobs (environment): `ICHOR_HOSTILE_WINDOW_S` (each phase, 20), `ICHOR_HOSTILE_OPERATIONS`
//! (10,000), `ICHOR_HOSTILE_DASHBOARDS` (200), `ICHOR_HOSTILE_ATTACKERS` (1,000 of each kind).
//! Under `cargo test` (no `--bench`) a tiny pass: 4 dashboards, 4 attackers of each kind, 100
//! operations, 1 s phases.

#[path = "../tests/common/attacks.rs"]
mod attacks;
#[path = "common/mod.rs"]
mod common;
#[path = "../tests/common/server.rs"]
mod server;
#[path = "hostile/viewer.rs"]
mod viewer;

use common::procs::{self, Cpu, Proc};
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient as _;
use ichor_model::{ListQuery, View};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// The measured windows.
const PHASES: usize = 4;

/// The dashboards' poll interval (the list's, while an operation is unfinished).
const POLL: Duration = Duration::from_secs(3);

/// How big a run is.
struct Size {
    operations: usize,
    dashboards: usize,
    attackers: usize,
    window: Duration,
    /// Until every dashboard has polled twice (the page, then unchanged).
    warmup: Duration,
    /// The dashboards join one after another over this long.
    ramp: Duration,
    /// Until the demo's rollout is over, from the demo cluster's start (as `scale` waits).
    rollout: Duration,
    /// The one viewer's attacks.
    viewer: viewer::Sizes,
}

/// What the load generators count; `phase` says which phase a poll's time belongs to.
#[derive(Default)]
struct Tally {
    stop: AtomicBool,
    attack: AtomicBool,
    phase: AtomicUsize,
    errors: [AtomicU64; PHASES + 1],
    latencies: Mutex<[Vec<Duration>; PHASES + 1]>,
    unauthenticated: AtomicU64,
    uploads_cut: AtomicU64,
    headers_closed: AtomicU64,
}

/// One dashboard, the `i`th person of the demo's bench viewers (serve shares its pools by
/// person): polls the first page of summaries, with the version it holds, until stopped.
async fn dashboard(
    url: String,
    (i, protocol): (usize, Protocol),
    start_after: Duration,
    tally: Arc<Tally>,
) {
    let token = ichor_demo::demo::bench_token(i);
    let c = server::client_over(&url, Some(&token), protocol);
    tokio::time::sleep(start_after).await;
    let mut known: Option<String> = None;
    while !tally.stop.load(Ordering::SeqCst) {
        let query = ListQuery {
            namespace: Some("default".into()),
            view: View::Summary,
            page_size: 100,
            known_version: known.clone(),
            ..ListQuery::default()
        };
        let t = Instant::now();
        // Polls outside a window are counted apart (the last slot).
        let phase = tally.phase.load(Ordering::SeqCst).min(PHASES);
        match c.list_page(&query).await {
            Ok(page) => {
                if !page.unchanged {
                    known = Some(page.version);
                }
                if let Ok(mut l) = tally.latencies.lock() {
                    l[phase].push(t.elapsed());
                }
            }
            Err(_) => {
                tally.errors[phase].fetch_add(1, Ordering::SeqCst);
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

const UPLOAD_HEAD: &str = "POST /ichor.v1alpha1.OperationService/ListOperations HTTP/1.1\r\nHost: ichor\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n";

/// One attacker: a 1 MiB body without a token, 16 KiB every 50 ms, until the server answers
/// or closes; again a second later.
async fn slow_upload(addr: SocketAddr, tally: Arc<Tally>) {
    let chunk = vec![b' '; 16 * 1024];
    while tally.attack.load(Ordering::SeqCst) {
        let Ok(mut s) = TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut sent = 0usize;
        let mut answer = [0u8; 16];
        if s.write_all(UPLOAD_HEAD.as_bytes()).await.is_ok() {
            loop {
                tokio::select! {
                    r = s.read(&mut answer) => {
                        match r {
                            Ok(n) if answer[..n].starts_with(b"HTTP/1.1 401") => {
                                tally.unauthenticated.fetch_add(1, Ordering::SeqCst);
                            }
                            _ => {
                                tally.uploads_cut.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        break;
                    }
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {
                        let stalled = sent + chunk.len() >= 1024 * 1024 - 1;
                        if stalled || !tally.attack.load(Ordering::SeqCst) {
                            continue;
                        }
                        if s.write_all(&chunk).await.is_err() {
                            tally.uploads_cut.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                        sent += chunk.len();
                    }
                }
            }
        }
        drop(s);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// One attacker: a request whose headers never end, a line a second; again when closed.
async fn slow_headers(addr: SocketAddr, tally: Arc<Tally>) {
    while tally.attack.load(Ordering::SeqCst) {
        let Ok(mut s) = TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut buf = [0u8; 256];
        if s.write_all(b"POST /ichor.v1alpha1.OperationService/ListOperations HTTP/1.1\r\n")
            .await
            .is_ok()
        {
            while tally.attack.load(Ordering::SeqCst) {
                tokio::select! {
                    _ = s.read(&mut buf) => {
                        tally.headers_closed.fetch_add(1, Ordering::SeqCst);
                        break;
                    }
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {
                        if s.write_all(b"X-Slow: a\r\n").await.is_err() {
                            tally.headers_closed.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                    }
                }
            }
        }
    }
}

fn percentile_ms(values: &[Duration], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort();
    match v.len() {
        0 => f64::NAN,
        n => {
            let i = ((n as f64 - 1.0) * p).round() as usize;
            v[i.min(n - 1)].as_secs_f64() * 1000.0
        }
    }
}

/// One phase's figures.
struct Phase {
    name: String,
    cpu_s: f64,
    peak_kb: u32,
    rss_kb: u32,
}

fn measure_phase(serve: &Proc, tally: &Tally, i: usize, name: String, window: Duration) -> Phase {
    tally.phase.store(i, Ordering::SeqCst);
    procs::take_peak_kb(serve.pid());
    let cpu0 = Cpu::read(serve.pid());
    std::thread::sleep(window);
    let cpu1 = Cpu::read(serve.pid());
    tally.phase.store(PHASES, Ordering::SeqCst);
    let (_, rss_kb) = procs::memory_kb(serve.pid());
    Phase {
        name,
        cpu_s: cpu0.since(&cpu1),
        peak_kb: procs::take_peak_kb(serve.pid()),
        rss_kb,
    }
}

fn mib(kb: u32) -> f64 {
    f64::from(kb) / 1024.0
}

fn report(phases: &[Phase], idle_kb: u32, tally: &Tally, size: &Size) {
    println!(
        "hostile: serve at {} operations, {} dashboards every {} s; phases of {} s; idle RSS {:.1} MiB",
        size.operations,
        size.dashboards,
        POLL.as_secs(),
        size.window.as_secs(),
        mib(idle_kb)
    );
    let latencies = tally
        .latencies
        .lock()
        .map(|l| l.clone())
        .unwrap_or_default();
    for (i, p) in phases.iter().enumerate() {
        let l = &latencies[i.min(PHASES)];
        println!(
            "hostile: {:<40} serve CPU {:.2} s ({:.2} s/min), peak RSS {:.1} MiB (idle +{:.1}), RSS at the end {:.1} MiB; polls {}, median {:.1} ms, p99 {:.1} ms, errors {}",
            p.name,
            p.cpu_s,
            p.cpu_s * 60.0 / size.window.as_secs_f64(),
            mib(p.peak_kb),
            mib(p.peak_kb) - mib(idle_kb),
            mib(p.rss_kb),
            l.len(),
            percentile_ms(l, 0.5),
            percentile_ms(l, 0.99),
            tally.errors[i.min(PHASES)].load(Ordering::SeqCst),
        );
    }
    println!(
        "hostile: the attackers got: {} answers 401 at once (no body read), {} uploads cut otherwise, {} slow-header connections closed by the server",
        tally.unauthenticated.load(Ordering::SeqCst),
        tally.uploads_cut.load(Ordering::SeqCst),
        tally.headers_closed.load(Ordering::SeqCst),
    );
    let peak = |i: usize| phases.get(i).map_or(0.0, |p| mib(p.peak_kb));
    let attackers_alone = peak(0) - mib(idle_kb);
    let attackers_beside = peak(2) - peak(1);
    let worst = phases.iter().map(|p| mib(p.peak_kb)).fold(0.0, f64::max) - mib(idle_kb);
    let met = |mib: f64| if mib <= 64.0 { "met" } else { "NOT met" };
    println!(
        "hostile: goal (peak within 64 MiB of idle): the attackers alone {} ({attackers_alone:+.1} MiB); the attackers beside the dashboards, over the dashboards alone {} ({attackers_beside:+.1} MiB); the worst phase over idle {} ({worst:+.1} MiB)",
        met(attackers_alone),
        met(attackers_beside),
        met(worst),
    );
}

fn run(size: &Size) {
    let rt = common::runtime();
    let _inside = rt.enter();
    let home = tempfile::tempdir().expect("a temporary directory");
    let started = Instant::now();
    // A viewer for each dashboard (each its own person); the first is also the second person
    // of the attack on a namespace's lists.
    let mut demo = std::process::Command::new(BIN);
    demo.env(
        ichor_demo::demo::USERS_ENV,
        size.dashboards.max(1).to_string(),
    );
    let (_api, api_addr) =
        procs::demo_cluster_with(demo, home.path(), size.operations.saturating_sub(7));
    std::thread::sleep(size.rollout.saturating_sub(started.elapsed()));
    let kubeconfig = home.path().join("kubeconfig-server");
    procs::write_kubeconfig(&kubeconfig, &api_addr, users::SERVER_TOKEN);
    let (serve, url) = procs::serve_kubeconfig(Path::new(BIN), home.path(), &kubeconfig);
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .parse()
        .expect("serve's address");
    std::thread::sleep(Duration::from_millis(500));
    let (_, idle_kb) = procs::memory_kb(serve.pid());
    let tally = Arc::new(Tally::default());
    let mut phases = Vec::new();
    // The attackers alone, then the dashboards alone, then both, then the dashboards after.
    tally.phase.store(PHASES, Ordering::SeqCst);
    let attackers = attack(&rt, addr, &tally, size.attackers);
    let alone = format!(
        "{n} slow uploads and {n} slow headers alone",
        n = size.attackers
    );
    phases.push(measure_phase(&serve, &tally, 0, alone, size.window));
    stop(&tally, attackers);
    let dashboards: Vec<_> = (0..size.dashboards)
        .map(|i| {
            let protocol = match i % 2 {
                0 => Protocol::Grpc,
                _ => Protocol::Connect,
            };
            let joins = size.ramp * u32::try_from(i).unwrap_or(0)
                / u32::try_from(size.dashboards).unwrap_or(1);
            rt.spawn(dashboard(url.clone(), (i, protocol), joins, tally.clone()))
        })
        .collect();
    // They join one after another, as a fleet does, and each polls twice (the page, then
    // unchanged) before the window opens.
    std::thread::sleep(size.ramp + size.warmup);
    let alone = format!("{} dashboards alone", size.dashboards);
    phases.push(measure_phase(&serve, &tally, 1, alone, size.window));
    let attackers = attack(&rt, addr, &tally, size.attackers);
    let both = format!(
        "… with {n} slow uploads and {n} slow headers",
        n = size.attackers
    );
    phases.push(measure_phase(&serve, &tally, 2, both, size.window));
    stop(&tally, attackers);
    phases.push(measure_phase(
        &serve,
        &tally,
        3,
        "… after them".into(),
        size.window,
    ));
    tally.stop.store(true, Ordering::SeqCst);
    for d in dashboards {
        d.abort();
    }
    report(&phases, idle_kb, &tally, size);
    let windows = viewer::run(&rt, &serve, (addr, &url), &size.viewer, size.window);
    viewer::report(&windows, size.window);
}

/// `n` attackers of each kind.
fn attack(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    tally: &Arc<Tally>,
    n: usize,
) -> Vec<tokio::task::JoinHandle<()>> {
    tally.attack.store(true, Ordering::SeqCst);
    (0..n)
        .flat_map(|_| {
            [
                rt.spawn(slow_upload(addr, tally.clone())),
                rt.spawn(slow_headers(addr, tally.clone())),
            ]
        })
        .collect()
}

fn stop(tally: &Tally, attackers: Vec<tokio::task::JoinHandle<()>>) {
    tally.attack.store(false, Ordering::SeqCst);
    for a in attackers {
        a.abort();
    }
    std::thread::sleep(Duration::from_secs(2));
}

fn main() {
    let size = if common::full() {
        Size {
            operations: common::env_or("ICHOR_HOSTILE_OPERATIONS", 10_000),
            dashboards: common::env_or("ICHOR_HOSTILE_DASHBOARDS", 200),
            attackers: common::env_or("ICHOR_HOSTILE_ATTACKERS", 1_000),
            window: Duration::from_secs(common::env_or("ICHOR_HOSTILE_WINDOW_S", 20)),
            warmup: POLL * 2 + Duration::from_secs(1),
            rollout: Duration::from_secs(25),
            ramp: Duration::from_secs(common::env_or("ICHOR_HOSTILE_RAMP_S", 60)),
            viewer: viewer::Sizes::ISSUE,
        }
    } else {
        Size {
            operations: 100,
            dashboards: 4,
            attackers: 4,
            window: Duration::from_secs(1),
            warmup: Duration::from_secs(1),
            rollout: Duration::ZERO,
            ramp: Duration::ZERO,
            viewer: viewer::Sizes::TINY,
        }
    };
    run(&size);
}
