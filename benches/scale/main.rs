//! Cost that grows with what changes, not with history: the list's polls, the idle dashboard
//! and `serve` under many dashboards, at 100, 1,000 and 10,000 operations (the demo's 7 and
//! `ICHOR_DEMO_OPERATIONS` more, finished, in its history).
//!
//! 1. Bytes per list poll (in this process): the first page of summaries, an unchanged poll
//!    and the old full-view list, over gRPC and Connect and in-process (`polls`).
//! 2. `serve` under 20 simulated dashboards polling at 3 s: its CPU and the API server's
//!    requests per minute (`many`; a 30 s window, scaled to a minute).
//! 3. The dashboard idle in a pty, over a server, in-process and through the ichor-ui tunnel,
//!    at the demo's 7 operations
//!    and at each size: CPU per idle minute, peak memory, terminal and wire bytes, and
//!    in-process the Kubernetes API requests it makes (`idle`); beside it kdash, when
//!    `ICHOR_KDASH` names a kdash binary (`kdash`). All of them side by side in one window
//!    (each its own processes; CPU is counted per process), so the run takes a few minutes.
//!
//! In-process, the list's rows come from a watch-fed store once the API serves watches; the
//! reports say whether the polls were answered by the store or by lists from the API, so the
//! same run tells the figures before and after the demo cluster serves watches.
//!
//!     cargo bench --bench scale
//!
//! Knobs (environment): `ICHOR_SCALE_WINDOW_S` (the idle window, 60),
//! `ICHOR_SCALE_SERVE_WINDOW_S` (serve's, 30), `ICHOR_SCALE_RUNS` (idle windows one after
//! another, 1; with more the medians are reported), `ICHOR_SCALE_SIZES` (e.g. `100,10000`),
//! `ICHOR_SCALE_ONLY` (some of `polls,idle,serve,kdash`), `ICHOR_KDASH`, `ICHOR_BIN` (the binary
//! whose idle dashboards are measured).
//! Under `cargo test` only the poll measures run, once, at 100 operations.

#[path = "../common/mod.rs"]
mod common;
#[path = "../../tests/common/pty.rs"]
mod pty;
#[path = "../../tests/common/server.rs"]
mod server;

mod idle;
mod kdash;
mod many;
mod polls;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// The binary whose dashboards are measured: `ICHOR_BIN` when it names one, else the one
/// `cargo bench` built. That one is built with the tests' dev-dependency features, so its
/// symbols are not the release build's and `link/dashboard.order` lays out few of them
/// (docs/install.md): name a copy of a `cargo build --release` binary to measure the
/// product's memory.
fn dashboard_bin() -> PathBuf {
    std::env::var_os("ICHOR_BIN").map_or_else(|| PathBuf::from(BIN), PathBuf::from)
}

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn wanted(part: &str) -> bool {
    std::env::var("ICHOR_SCALE_ONLY").map_or(true, |v| v.split(',').any(|p| p.trim() == part))
}

fn sizes() -> Vec<usize> {
    std::env::var("ICHOR_SCALE_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty() && v.iter().all(|n| *n >= 7))
        .unwrap_or_else(|| vec![100, 1_000, 10_000])
}

fn per_minute(x: f64, window: Duration) -> f64 {
    x * 60.0 / window.as_secs_f64()
}

fn requests_line(r: &BTreeMap<String, u64>, window: Duration) -> String {
    if r.is_empty() {
        return "none".into();
    }
    r.iter()
        .map(|(k, v)| format!("{k} {:.0}", per_minute(*v as f64, window)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The idle subjects: the dashboard over a server, in-process and through the tunnel, at the
/// demo's 7 operations and at each size, and kdash when `ICHOR_KDASH` names it.
fn idle_subjects(rt: &tokio::runtime::Runtime, home: &Path) -> Vec<idle::Subject> {
    let bin = &dashboard_bin();
    match std::env::var_os("ICHOR_BIN") {
        Some(_) => println!("scale: the dashboards run {}", bin.display()),
        None => println!(
            "scale: the dashboards run the bench's own build, {} (the tests' features, few of \
             the link order's names: its memory is not the product's; ICHOR_BIN names a release \
             binary)",
            bin.display()
        ),
    }
    let reaches = [
        idle::Reach::Server,
        idle::Reach::InProcess,
        idle::Reach::Tunnel,
    ];
    let mut out: Vec<idle::Subject> = reaches
        .iter()
        .map(|reach| idle::Subject::dashboard(rt, bin, home, 7, *reach))
        .collect();
    match std::env::var_os("ICHOR_KDASH") {
        Some(k) if wanted("kdash") => out.push(kdash::subject(Path::new(&k), home)),
        _ => println!("scale: kdash skipped (ICHOR_KDASH names its binary)"),
    }
    for reach in reaches {
        for n in sizes() {
            out.push(idle::Subject::dashboard(rt, bin, home, n, reach));
        }
    }
    out
}

fn idle_measures(rt: &tokio::runtime::Runtime, home: &Path, runs: usize, window: Duration) {
    let measured = idle::measure(rt, idle_subjects(rt, home), runs, window);
    let mut cpu_of = BTreeMap::new();
    for (label, r) in &measured {
        let m =
            |f: &dyn Fn(&idle::Idle) -> f64| common::median_f(&r.iter().map(f).collect::<Vec<_>>());
        let cpu = m(&|i| per_minute(i.cpu_s, window));
        cpu_of.insert(label.clone(), cpu);
        common::report(
            label,
            format!(
                "CPU {cpu:.3} s/min (windows: {}); peak RSS {:.1} MiB (RSS {:.1}); terminal {:.0} B/min; wire {:.0} B up, {:.0} B down a minute; API requests a minute: {}",
                r.iter()
                    .map(|i| format!("{:.3}", per_minute(i.cpu_s, window)))
                    .collect::<Vec<_>>()
                    .join(" "),
                m(&|i| f64::from(i.peak_kb)) / 1024.0,
                m(&|i| f64::from(i.rss_kb)) / 1024.0,
                m(&|i| per_minute(i.terminal_bytes as f64, window)),
                m(&|i| per_minute(i.wire.0 as f64, window)),
                m(&|i| per_minute(i.wire.1 as f64, window)),
                if label.contains("in-process") {
                    requests_line(&r[r.len() / 2].requests, window)
                } else if label.contains("tunnel") {
                    "not counted (serve's, as the same user, would be among them)".to_string()
                } else {
                    "(none of its own)".to_string()
                },
            ),
        );
    }
    let alone = cpu_of
        .iter()
        .find(|(l, _)| l.starts_with("idle, 7 operations, --server"));
    if let (Some((_, i)), Some(k)) = (alone, cpu_of.get(kdash::LABEL)) {
        common::report(
            "idle beside kdash, one window",
            format!(
                "ichor-tui {i:.3} s/min, kdash {k:.3} s/min: 1/{:.0} of kdash's",
                k / i
            ),
        );
    }
}

fn serve_measures(rt: &tokio::runtime::Runtime, backends: Vec<many::Backend>, window: Duration) {
    for b in backends {
        let n = b.n;
        let m = many::many(rt, Path::new(BIN), b, 20, window);
        common::report(
            &format!("serve, 20 dashboards at 3 s, {n} operations"),
            format!(
                "serve CPU {:.2} s/min; {:.0} polls/min ({} errors), median poll {:.1} ms; serve peak RSS {:.1} MiB; API requests a minute: {}",
                per_minute(m.serve_cpu_s, window),
                per_minute(m.polls as f64, window),
                m.errors,
                m.median_ms,
                f64::from(m.serve_peak_kb) / 1024.0,
                requests_line(&m.requests, window),
            ),
        );
    }
}

fn main() {
    let full = common::full();
    let rt = common::runtime();
    // tonic's lazy channel is made inside the runtime.
    let _inside = rt.enter();
    if !full {
        polls::measure(&rt, 100, false);
        println!("scale: the process measures are skipped (run `cargo bench --bench scale`)");
        return;
    }
    let home = tempfile::tempdir().expect("a temporary directory");
    let window = Duration::from_secs(env_or("ICHOR_SCALE_WINDOW_S", 60));
    let serve_window = Duration::from_secs(env_or("ICHOR_SCALE_SERVE_WINDOW_S", 30));
    let runs = env_or("ICHOR_SCALE_RUNS", 1usize).max(1);
    // serve's demo clusters first: their rollouts finish while the polls are counted.
    let backends: Vec<many::Backend> = if wanted("serve") {
        sizes()
            .into_iter()
            .map(|n| many::Backend::start(Path::new(BIN), home.path(), n))
            .collect()
    } else {
        Vec::new()
    };
    let mut took = Vec::new();
    let t = Instant::now();
    if wanted("polls") {
        for n in sizes() {
            polls::measure(&rt, n, true);
        }
    }
    took.push(("polls", t.elapsed()));
    let t = Instant::now();
    serve_measures(&rt, backends, serve_window);
    took.push(("serve", t.elapsed()));
    let t = Instant::now();
    if wanted("idle") {
        idle_measures(&rt, home.path(), runs, window);
    }
    took.push(("idle", t.elapsed()));
    println!(
        "scale: {}",
        took.iter()
            .map(|(part, d)| format!("{part} {:.0} s", d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
