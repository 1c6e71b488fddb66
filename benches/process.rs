//! The binary itself, in a pseudo-terminal:
//!
//! 1. start to first frame in `--demo`: from spawning the binary to the first frame on the
//!    screen (the chrome drawn), and to the first complete frame (the list loaded);
//! 2. peak resident memory (VmHWM) with 10,000 more operations in the demo's history
//!    (`ICHOR_DEMO_OPERATIONS=10000`), read from /proc once the list is on screen.
//!
//! `cargo bench` builds the binary with the release profile. Under `cargo test` these are
//! skipped: they measure a release build, and they take seconds.
//!
//!     cargo bench --bench process
//!     cargo bench --bench process -- startup    (the start-up measures only)

mod common;

#[path = "../tests/common/pty.rs"]
mod pty;

use std::path::Path;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// Times from spawn to the first frame and to the loaded list, in a terminal that answers
/// cursor queries as `answers` says, with `extra` arguments.
fn startup(home: &Path, answers: pty::Answers, extra: &[&str]) -> (Duration, Duration) {
    let t = Instant::now();
    let mut p = pty::Spawn::demo(Path::new(BIN), home)
        .args(extra)
        .answers(answers)
        .start();
    let first = |s: &str| s.contains("ichor-tui ·") && s.contains("Operations");
    let chrome = loop {
        if first(&p.screen()) {
            break t.elapsed();
        }
        assert!(
            t.elapsed() < pty::DEADLINE,
            "no first frame:\n{}",
            p.screen()
        );
        std::thread::sleep(Duration::from_micros(200));
    };
    let loaded = loop {
        if p.screen().contains("Operations (7)") {
            break t.elapsed();
        }
        assert!(t.elapsed() < pty::DEADLINE, "no list:\n{}", p.screen());
        std::thread::sleep(Duration::from_micros(200));
    };
    p.send("q");
    assert_eq!(p.wait_exit(), 0);
    (chrome, loaded)
}

/// Peak and current resident memory (kB) of the dashboard with `extra` history operations,
/// once the list is on screen; and the time until it was. `remote`: the dashboard reaches a
/// separate `serve --demo` over gRPC, so the figure is the dashboard's alone; else `--demo`
/// runs the embedded API and simulated controller in the same process.
fn memory(home: &Path, extra: usize, remote: bool) -> (u32, u32, Duration) {
    let server = remote.then(|| common::procs::serve_demo(Path::new(BIN), home, extra));
    let t = Instant::now();
    let mut spawn =
        pty::Spawn::demo(Path::new(BIN), home).env("ICHOR_DEMO_OPERATIONS", &extra.to_string());
    if let Some((_, url)) = &server {
        spawn.args.retain(|a| a != "--demo");
        spawn = spawn.args(&["--server", url]);
    }
    let mut p = spawn.start();
    p.wait_text(&format!("Operations ({})", extra + 7));
    let shown = t.elapsed();
    let (hwm, rss) = common::procs::memory_kb(p.pid());
    p.send("q");
    assert_eq!(p.wait_exit(), 0);
    (hwm, rss, shown)
}

fn main() {
    if !common::full() {
        println!(
            "process: skipped (run `cargo bench --bench process`: it measures the release binary)"
        );
        return;
    }
    let home = tempfile::tempdir().expect("a temporary directory");
    let runs = 10;
    // `--demo` finds its ichor-ui and reaches it through a port-forward tunnel; with
    // `--backend in-process` it runs the service in this process instead.
    for (label, extra) in [
        ("--demo, ichor-ui through a tunnel", &[][..]),
        (
            "--demo --backend in-process",
            &["--backend", "in-process"][..],
        ),
    ] {
        let (chrome, loaded): (Vec<Duration>, Vec<Duration>) = (0..runs)
            .map(|_| startup(home.path(), pty::Answers::Narrow, extra))
            .unzip();
        common::report(
            &format!("start: spawn to first frame ({label}, 100x30)"),
            format!(
                "{:.1} ms (median of {runs})",
                common::median_us(&chrome) / 1000.0
            ),
        );
        common::report(
            &format!("start: spawn to first complete frame, list loaded ({label})"),
            format!(
                "{:.1} ms (median of {runs})",
                common::median_us(&loaded) / 1000.0
            ),
        );
    }
    ambiguous_width_probe(home.path(), runs);
    if std::env::args().any(|a| a == "startup") {
        return;
    }

    let runs = 5;
    for (extra, remote) in [(0, false), (10_000, false), (0, true), (10_000, true)] {
        let r: Vec<(u32, u32, Duration)> = (0..runs)
            .map(|_| memory(home.path(), extra, remote))
            .collect();
        let hwm: Vec<u32> = r.iter().map(|x| x.0).collect();
        let rss: Vec<u32> = r.iter().map(|x| x.1).collect();
        let shown: Vec<Duration> = r.iter().map(|x| x.2).collect();
        common::report(
            &format!(
                "memory: {} operations listed, {}, peak RSS",
                extra + 7,
                if remote {
                    "--server (dashboard alone)"
                } else {
                    "--demo (all in one)"
                }
            ),
            format!(
                "{:.1} MiB (RSS {:.1} MiB; list on screen after {:.0} ms; median of {runs})",
                common::median(&hwm) / 1024.0,
                common::median(&rss) / 1024.0,
                common::median_us(&shown) / 1000.0
            ),
        );
    }
}

/// What `--ambiguous-width auto` adds to the start: the first frame with the width given
/// (nothing asked), asked of a terminal that answers, and of one that never does (the probe
/// waits out its timeout). Runs interleaved, so a busy machine weighs on each alike.
fn ambiguous_width_probe(home: &Path, runs: usize) {
    let cases: [(&str, pty::Answers, &[&str]); 3] = [
        (
            "--ambiguous-width narrow",
            pty::Answers::Narrow,
            &["--ambiguous-width", "narrow"],
        ),
        ("auto, the terminal answers", pty::Answers::Narrow, &[]),
        (
            "auto, the terminal never answers",
            pty::Answers::Silent,
            &[],
        ),
    ];
    let _ = std::fs::remove_file(home.join("log"));
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    for _ in 0..runs {
        for (i, (_, answers, extra)) in cases.iter().enumerate() {
            times[i].push(startup(home, *answers, extra).0);
        }
    }
    // The probe's own wait, as the dashboard logs it (`waited_ms`), for the answering terminal.
    let log = std::fs::read_to_string(home.join("log")).unwrap_or_default();
    let mut waited: Vec<f64> = log
        .lines()
        .filter(|l| l.contains("the terminal says how wide"))
        .filter_map(|l| {
            l.split("waited_ms=")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect();
    waited.sort_by(f64::total_cmp);
    if let Some(m) = waited.get(waited.len() / 2) {
        common::report(
            "start: the probe's wait for the answer (from the log)",
            format!("{m:.2} ms (median of {})", waited.len()),
        );
    }
    let base = common::median_us(&times[0]) / 1000.0;
    for ((name, _, _), t) in cases.iter().zip(&times) {
        let med = common::median_us(t) / 1000.0;
        common::report(
            &format!("start: spawn to first frame, {name}"),
            format!("{med:.1} ms (+{:.1} ms; median of {runs})", med - base),
        );
    }
}
