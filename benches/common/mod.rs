//! A small benchmark harness (no criterion: CI compiles every target, and criterion's build
//! costs more than these measures need). `cargo bench` passes `--bench`: the full measure runs.
//! `cargo test --all-targets` runs the same binary without it: a quick smoke run that only
//! proves the measure still works.
#![allow(dead_code)]

pub mod data;
pub mod procs;
pub mod relay;
pub mod tty;
pub mod world;
pub mod wrap_before;

use std::time::{Duration, Instant};

/// A knob from the environment, or `default` when unset or unreadable.
pub fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The benches' runtime: two worker threads, as many as the machine the figures come from has.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Whether `cargo bench` started us (rather than `cargo test`).
pub fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median<T: Copy + Ord + Into<f64>>(values: &[T]) -> f64 {
    let mut v = values.to_vec();
    v.sort();
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2].into(),
        n => (v[n / 2 - 1].into() + v[n / 2].into()) / 2.0,
    }
}

/// The median of durations, in microseconds.
pub fn median_us(values: &[Duration]) -> f64 {
    let us: Vec<u32> = values
        .iter()
        .map(|d| u32::try_from(d.as_micros()).unwrap_or(u32::MAX))
        .collect();
    median(&us)
}

/// The median of durations, in nanoseconds.
pub fn median_ns(values: &[Duration]) -> f64 {
    let ns: Vec<u64> = values
        .iter()
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .collect();
    let mut v = ns;
    v.sort_unstable();
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2] as f64,
        n => (v[n / 2 - 1] as f64 + v[n / 2] as f64) / 2.0,
    }
}

/// Runs `f` `iters` times per run, `runs` times, after one warm-up run; returns each run's time
/// per iteration.
pub fn time_runs(runs: usize, iters: usize, mut f: impl FnMut()) -> Vec<Duration> {
    for _ in 0..iters {
        f();
    }
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed() / u32::try_from(iters.max(1)).unwrap_or(u32::MAX)
        })
        .collect()
}

/// Prints a line of the report.
pub fn report(name: &str, value: String) {
    println!("{name:<60} {value}");
}

/// The median of floating-point values (NaN when there are none).
pub fn median_f(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}
