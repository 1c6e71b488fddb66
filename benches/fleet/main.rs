//! A fleet of dashboards on one `serve`, from a load client of our own (client.rs): 1,000 and
//! 10,000 subscriptions from one process, each its own person on its own connection (half over
//! gRPC, half over the Connect protocol), each holding the first page of 100 summaries, at
//! 10,007 operations. `serve` and the Kubernetes API (`demo-cluster`, with its simulated
//! controller) are processes of their own, so each one's CPU is its own; the load client runs
//! on the same cores. Once every dashboard has its page, one operation is created each second
//! for the window. Printed for each count: serve's CPU a minute and the API's, serve's peak
//! resident memory over the window and what each dashboard adds to it, the time from each
//! creation to each dashboard's update that holds it (median and 99th percentile over every
//! dashboard) and how many of those updates arrived, and the bytes a message.
//!
//!     cargo bench --bench fleet
//!
//! Knobs: `ICHOR_FLEET` (the counts, `1000,10000`), `ICHOR_FLEET_WINDOW_S` (60),
//! `ICHOR_FLEET_OPERATIONS` (10,007), `ICHOR_FLEET_DELTAS` (1; 0: every dashboard a client
//! from before deltas, sent pages whole), `ICHOR_FLEET_SERVE` (the binary serve runs from, to
//! compare another build; default this one), `ICHOR_FLEET_PROTOCOL` (`grpc` or `connect`: every
//! dashboard; default half each). Under `cargo test` (no `--bench`) a tiny pass: 4
//! dashboards, 100 operations, a 2 s window.

mod client;
#[path = "../common/mod.rs"]
mod common;

use client::{Dashboard, Tally};
use common::procs::{self, Cpu, Proc};
use ichor_demo::apiserver::auth::users;
use ichor_resources::TalosOperation;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

struct Run {
    dashboards: usize,
    /// Which dashboards speak gRPC (the others the Connect protocol).
    grpc: fn(usize) -> bool,
    operations: usize,
    window: Duration,
    deltas: bool,
    serve: PathBuf,
}

/// The open-files limit raised to the hard one: a connection is a file descriptor.
fn raise_open_files() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct that lives here.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// The arrivals' latencies, and for each operation the first arrival's and the time from the
/// first to the last: what the API and serve's first update take, and what the fan-out adds.
fn spreads(
    arrivals: &[(usize, Duration)],
    made: usize,
) -> (Vec<Duration>, Vec<Duration>, Vec<Duration>) {
    let mut bounds = vec![(Duration::MAX, Duration::ZERO); made];
    for (n, d) in arrivals {
        if let Some((lo, hi)) = bounds.get_mut(*n) {
            *lo = (*lo).min(*d);
            *hi = (*hi).max(*d);
        }
    }
    let seen = bounds.iter().filter(|(lo, _)| *lo != Duration::MAX);
    let first = seen.clone().map(|(lo, _)| *lo).collect();
    let spread = seen.map(|(lo, hi)| *hi - *lo).collect();
    (arrivals.iter().map(|(_, d)| *d).collect(), first, spread)
}

fn percentile_ms(values: &mut [Duration], p: f64) -> f64 {
    values.sort();
    match values.len() {
        0 => f64::NAN,
        n => values[((n - 1) as f64 * p) as usize].as_secs_f64() * 1e3,
    }
}

/// Waits (at most `limit`) until `n` dashboards have their first page; how many do.
fn wait_ready(tally: &Tally, n: usize, limit: Duration) -> usize {
    let until = Instant::now() + limit;
    while tally.ready.load(Ordering::Relaxed) < n && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    tally.ready.load(Ordering::Relaxed)
}

/// The demo API with a person for each dashboard, and serve over it with room for them all:
/// both processes, serve's address, and the admin's kubeconfig.
fn start(home: &Path, size: &Run) -> (Proc, Proc, std::net::SocketAddr, PathBuf) {
    let started = Instant::now();
    let mut cmd = std::process::Command::new(BIN);
    cmd.env(ichor_demo::demo::USERS_ENV, size.dashboards.to_string());
    let (api, api_addr) = procs::demo_cluster_with(cmd, home, size.operations.saturating_sub(7));
    // The demo's own rollout ends within 25 s of its start.
    let rollout = if size.operations > 1000 { 25 } else { 0 };
    std::thread::sleep(Duration::from_secs(rollout).saturating_sub(started.elapsed()));
    let kubeconfig = home.join("kubeconfig-server");
    procs::write_kubeconfig(&kubeconfig, &api_addr, users::SERVER_TOKEN);
    // Room for the fleet past serve's default bounds (2,048): flags a build from before them
    // (to compare) is not given below them.
    let room = (size.dashboards + 64).to_string();
    let bounds: Vec<String> = match size.dashboards + 64 > ichor_server::MAX_STREAMS {
        true => ["--max-streams", &room, "--max-connections", &room]
            .map(String::from)
            .into(),
        false => Vec::new(),
    };
    let (serve, url) = procs::serve_kubeconfig_with(&size.serve, home, &kubeconfig, &bounds);
    let addr = url
        .trim_start_matches("http://")
        .parse()
        .expect("serve's address");
    let admin = home.join("kubeconfig-admin");
    procs::write_kubeconfig(&admin, &api_addr, users::ADMIN_TOKEN);
    (api, serve, addr, admin)
}

/// The admin's client of the API, for the creations.
async fn admin_client(kubeconfig: &Path) -> kube::Api<TalosOperation> {
    let config = kube::config::Kubeconfig::read_from(kubeconfig).expect("the kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(config, &Default::default())
        .await
        .expect("a client config");
    let client = kube::Client::try_from(config).expect("a client");
    kube::Api::namespaced(client, "default")
}

/// Creates `name` (the API server sets its creation time).
async fn create(api: &kube::Api<TalosOperation>, name: &str) {
    let mut o = common::world::paused_operation(name);
    o.metadata.creation_timestamp = None;
    let _ = api.create(&kube::api::PostParams::default(), &o).await;
}

/// The fleet subscribes: the first dashboard alone (serve's RSS with the watch and one
/// subscriber), then the others over a ramp. How many have their page, and that RSS (kB).
fn subscribe(
    rt: &tokio::runtime::Runtime,
    size: &Run,
    addr: std::net::SocketAddr,
    serve: &Proc,
    tally: &Arc<Tally>,
) -> (usize, u32) {
    let dashboard = |person: usize| Dashboard {
        addr,
        person,
        grpc: (size.grpc)(person),
        deltas: size.deltas,
        page_size: 100,
    };
    rt.spawn(client::run(dashboard(0), Duration::ZERO, tally.clone()));
    wait_ready(tally, 1, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let (_, one) = procs::memory_kb(serve.pid());
    // A hundred join a second at most (each asks Kubernetes a TokenReview and two reviews).
    let ramp = Duration::from_millis(10 * size.dashboards as u64);
    for person in 1..size.dashboards {
        let after = ramp.mul_f64(person as f64 / size.dashboards as f64);
        rt.spawn(client::run(dashboard(person), after, tally.clone()));
    }
    let limit = ramp + Duration::from_secs(120);
    (wait_ready(tally, size.dashboards, limit), one)
}

fn run(rt: &tokio::runtime::Runtime, size: &Run) {
    let home = tempfile::tempdir().expect("a temporary directory");
    let (api, serve, addr, admin) = start(home.path(), size);
    let admin = rt.block_on(admin_client(&admin));
    let tally = Arc::new(Tally::default());
    let (subscribed, rss_one) = subscribe(rt, size, addr, &serve, &tally);
    std::thread::sleep(Duration::from_secs(2));
    let (_, rss_all) = procs::memory_kb(serve.pid());
    let broken_joining = tally.broken.swap(0, Ordering::Relaxed);
    let (messages, bytes) = (
        tally.messages.load(Ordering::Relaxed),
        tally.bytes.load(Ordering::Relaxed),
    );
    let _ = procs::take_peak_kb(serve.pid());
    let (serve_cpu, api_cpu) = (Cpu::read(serve.pid()), Cpu::read(api.pid()));
    let t0 = Instant::now();
    let mut made = 0;
    while t0.elapsed() < size.window {
        let name = format!("fleet-{:05}-{made:04}", size.dashboards);
        if let Ok(mut c) = tally.created.lock() {
            c.insert(name.clone(), (made, Instant::now()));
        }
        rt.block_on(create(&admin, &name));
        made += 1;
        let next = Duration::from_secs(made as u64);
        std::thread::sleep(next.saturating_sub(t0.elapsed()));
    }
    let window = t0.elapsed();
    let per_minute =
        |before: &Cpu, pid| before.since(&Cpu::read(pid)) * 60.0 / window.as_secs_f64();
    let (serve_min, api_min) = (
        per_minute(&serve_cpu, serve.pid()),
        per_minute(&api_cpu, api.pid()),
    );
    // The last creation's updates arrive (within the 1 s the target allows, and then some).
    std::thread::sleep(Duration::from_secs(2));
    let (peak, now) = procs::memory_kb(serve.pid());
    let arrivals = tally
        .latencies
        .lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default();
    let (mut l, mut first, mut spread) = spreads(&arrivals, made);
    let sent = tally.messages.load(Ordering::Relaxed) - messages;
    let sent_bytes = tally.bytes.load(Ordering::Relaxed) - bytes;
    let mib = |kb: u32| f64::from(kb) / 1024.0;
    let per_dashboard = f64::from(rss_all.saturating_sub(rss_one)) / (subscribed.max(2) - 1) as f64;
    println!(
        "fleet: {n:>6} dashboards ({shape}): {subscribed} subscribed ({broken_joining} refused or broken on the way); \
         serve {serve_min:.1} s/min, API {api_min:.1} s/min; serve peak RSS {peak:.1} MiB (now {now:.1}; {per_dashboard:.1} KiB a dashboard); \
         {k} of {expected} updates, p50 {p50:.0} ms, p99 {p99:.0} ms (the first dashboard to have it: p50 {f50:.0}, p99 {f99:.0} ms; \
         from the first to the last: p50 {s50:.0}, p99 {s99:.0} ms); {avg:.0} bytes a message; {broken} streams broken",
        n = size.dashboards,
        shape = match (size.deltas, (size.grpc)(0), (size.grpc)(1)) {
            (true, true, false) => "deltas",
            (false, true, false) => "pages whole",
            (_, true, true) => "gRPC only",
            _ => "Connect only",
        },
        peak = mib(peak),
        now = mib(now),
        k = l.len(),
        expected = made * subscribed,
        p50 = percentile_ms(&mut l, 0.5),
        p99 = percentile_ms(&mut l, 0.99),
        f50 = percentile_ms(&mut first, 0.5),
        f99 = percentile_ms(&mut first, 0.99),
        s50 = percentile_ms(&mut spread, 0.5),
        s99 = percentile_ms(&mut spread, 0.99),
        avg = sent_bytes as f64 / sent.max(1) as f64,
        broken = tally.broken.load(Ordering::Relaxed),
    );
    drop(serve);
    drop::<Proc>(api);
}

fn main() {
    raise_open_files();
    let full = common::full();
    let rt = common::runtime();
    let serve =
        std::env::var_os("ICHOR_FLEET_SERVE").map_or_else(|| PathBuf::from(BIN), PathBuf::from);
    let deltas = common::env_or("ICHOR_FLEET_DELTAS", 1) != 0;
    let grpc: fn(usize) -> bool = match std::env::var("ICHOR_FLEET_PROTOCOL").as_deref() {
        Ok("grpc") => |_| true,
        Ok("connect") => |_| false,
        _ => |i| i.is_multiple_of(2),
    };
    let (counts, operations, window): (Vec<usize>, usize, Duration) = if full {
        let counts = std::env::var("ICHOR_FLEET")
            .unwrap_or_else(|_| "1000,10000".into())
            .split(',')
            .filter_map(|c| c.trim().parse().ok())
            .collect();
        (
            counts,
            common::env_or("ICHOR_FLEET_OPERATIONS", 10_007),
            Duration::from_secs(common::env_or("ICHOR_FLEET_WINDOW_S", 60)),
        )
    } else {
        (vec![4], 100, Duration::from_secs(2))
    };
    for dashboards in counts {
        let size = Run {
            dashboards,
            grpc,
            operations,
            window,
            deltas,
            serve: serve.clone(),
        };
        run(&rt, &size);
    }
}
