//! Cost that grows with what changes, not with history: the list's polls, the idle dashboard
//! and `serve` under many dashboards, at 100, 1,000 and 10,000 operations (the demo's 7 and
//! `ICHOR_DEMO_OPERATIONS` more, finished, in its history).
//!
//! 1. Bytes per list poll (in this process): the first page of summaries, an unchanged poll
//!    and the old full-view list, over gRPC and Connect and in-process (`polls`).
//! 2. The dashboard idle in a pty, over a server and in-process: CPU per idle minute, peak
//!    memory, terminal and wire bytes, and in-process the Kubernetes API requests it makes
//!    (`idle`).
//! 3. `serve` under 20 simulated dashboards polling at 3 s: its CPU and the API server's
//!    requests per minute (`many`).
//! 4. The dashboard's idle CPU beside kdash's in one run, when `ICHOR_KDASH` names a kdash
//!    binary (`kdash`).
//!
//! In-process, the list's rows come from a watch-fed store once the API serves watches; the
//! reports say whether the polls were answered by the store or by lists from the API, so the
//! same run tells the figures before and after the demo cluster serves watches.
//!
//!     cargo bench --bench scale
//!
//! Knobs (environment): `ICHOR_SCALE_WINDOW_S` (the idle window, 60), `ICHOR_SCALE_RUNS`
//! (runs of each process measure, 3; the medians are reported), `ICHOR_SCALE_SIZES` (e.g.
//! `100,10000`), `ICHOR_SCALE_ONLY` (some of `polls,idle,serve,kdash`), `ICHOR_KDASH`.
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
use std::path::Path;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

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

fn idle_measures(rt: &tokio::runtime::Runtime, home: &Path, runs: usize, window: Duration) {
    for reach in [idle::Reach::Server, idle::Reach::InProcess] {
        for n in sizes() {
            let r: Vec<idle::Idle> = (0..runs)
                .map(|_| idle::idle(rt, Path::new(BIN), home, n, reach, window))
                .collect();
            let m = |f: &dyn Fn(&idle::Idle) -> f64| {
                common::median_f(&r.iter().map(f).collect::<Vec<_>>())
            };
            common::report(
                &format!("idle, {n} operations, {}", reach.name()),
                format!(
                    "CPU {:.3} s/min (runs: {}); peak RSS {:.1} MiB (RSS {:.1}); terminal {:.0} B/min; wire {:.0} B up, {:.0} B down a minute; API requests a minute: {}",
                    m(&|i| per_minute(i.cpu_s, window)),
                    r.iter()
                        .map(|i| format!("{:.3}", per_minute(i.cpu_s, window)))
                        .collect::<Vec<_>>()
                        .join(" "),
                    m(&|i| f64::from(i.peak_kb)) / 1024.0,
                    m(&|i| f64::from(i.rss_kb)) / 1024.0,
                    m(&|i| per_minute(i.terminal_bytes as f64, window)),
                    m(&|i| per_minute(i.wire.0 as f64, window)),
                    m(&|i| per_minute(i.wire.1 as f64, window)),
                    match reach {
                        idle::Reach::Server => "(serve's, see below)".to_string(),
                        idle::Reach::InProcess => requests_line(&r[r.len() / 2].requests, window),
                    },
                ),
            );
        }
    }
}

fn serve_measures(rt: &tokio::runtime::Runtime, home: &Path, window: Duration) {
    for n in sizes() {
        let m = many::many(rt, Path::new(BIN), home, n, 20, window);
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

fn kdash_measures(home: &Path, kdash: &Path, runs: usize, window: Duration) {
    let r: Vec<kdash::SideBySide> = (0..runs)
        .map(|_| kdash::side_by_side(Path::new(BIN), kdash, home, window))
        .collect();
    let m = |f: &dyn Fn(&kdash::SideBySide) -> f64| {
        common::median_f(&r.iter().map(f).collect::<Vec<_>>())
    };
    let (i, k) = (
        m(&|s| per_minute(s.ichor_cpu_s, window)),
        m(&|s| per_minute(s.kdash_cpu_s, window)),
    );
    common::report(
        "idle beside kdash, 7 operations, 120x36, one window",
        format!(
            "ichor-tui {i:.3} s/min, kdash {k:.3} s/min (1/{:.0}); runs: {}; terminal {:.0} B/min vs {:.0} B/min",
            k / i,
            r.iter()
                .map(|s| format!(
                    "{:.3}/{:.3}",
                    per_minute(s.ichor_cpu_s, window),
                    per_minute(s.kdash_cpu_s, window)
                ))
                .collect::<Vec<_>>()
                .join(" "),
            m(&|s| per_minute(s.ichor_bytes as f64, window)),
            m(&|s| per_minute(s.kdash_bytes as f64, window)),
        ),
    );
}

fn main() {
    let full = common::full();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    // tonic's lazy channel is made inside the runtime.
    let _inside = rt.enter();
    if !full {
        polls::measure(&rt, 100, false);
        println!("scale: the process measures are skipped (run `cargo bench --bench scale`)");
        return;
    }
    if wanted("polls") {
        for n in sizes() {
            polls::measure(&rt, n, true);
        }
    }
    let home = tempfile::tempdir().expect("a temporary directory");
    let window = Duration::from_secs(env_or("ICHOR_SCALE_WINDOW_S", 60));
    let runs = env_or("ICHOR_SCALE_RUNS", 3usize).max(1);
    if wanted("idle") {
        idle_measures(&rt, home.path(), runs, window);
    }
    if wanted("serve") {
        serve_measures(&rt, home.path(), window);
    }
    match std::env::var_os("ICHOR_KDASH") {
        Some(k) if wanted("kdash") => kdash_measures(home.path(), Path::new(&k), runs, window),
        _ => println!("scale: kdash skipped (ICHOR_KDASH names its binary)"),
    }
}
