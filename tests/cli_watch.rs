//! The commands that watch, as processes against `demo-cluster` reached through a proxy the
//! test stops and starts: `operation get --watch` says when a machine turns slow, with its
//! cause as the dashboard's slow mark says it, and says when the API answers again after an
//! outage (its waits no longer than its poll); `operation list --watch` prints the table once,
//! then a row for each change, as `kubectl get --watch` does.

use crate::common::lines::{Fd, Lines, NEVER, after_clock};
use crate::common::process::{Process, kubectl, kubectl_available};
use crate::common::proxy::Proxy;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// The demo's running upgrade: staging-w01 under way, staging-w02 next.
const OP: &str = "staging-talos-x7k2p";

/// `demo-cluster` with staging-w02 slow, the proxy in front of it, and a config file whose
/// slow rule is short (twice the pace, at least a second over it), so a machine turns slow
/// seconds into its step.
struct World {
    proxy: Proxy,
    direct: PathBuf,
    proxied: PathBuf,
    config: PathBuf,
    home: tempfile::TempDir,
    _demo: Process,
}

fn world(speed: &str) -> World {
    let home = tempfile::tempdir().unwrap();
    let direct = home.path().join("direct.kubeconfig");
    let env = [("ICHOR_DEMO_SLOW", "staging-w02")];
    let log = home.path().join("demo.log");
    let (demo, upstream) =
        Process::demo_cluster_with("127.0.0.1:0", &direct, &log, &env, &["--demo-speed", speed]);
    let proxy = Proxy::new(upstream);
    let proxied = home.path().join("proxied.kubeconfig");
    proxy.kubeconfig(&direct, &proxied);
    let config = home.path().join("config.toml");
    std::fs::write(&config, "[timing]\nslow-factor = 2\nslow-margin = \"1s\"\n").unwrap();
    World {
        proxy,
        direct,
        proxied,
        config,
        home,
        _demo: demo,
    }
}

/// `ichor-tui ARGS` in-process through the world's proxy, with its config file.
fn watching(w: &World, args: &[&str]) -> Lines {
    Lines::spawn(
        Command::new(BIN)
            .args(args)
            .arg("--kubeconfig")
            .arg(&w.proxied)
            .args(["--backend", "in-process", "--config"])
            .arg(&w.config)
            .arg("--log-file")
            .arg(w.home.path().join("cli.log"))
            .env("LANG", "en_US.UTF-8")
            .env("HOME", w.home.path())
            .env_remove("ICHOR_SERVER"),
    )
}

/// `get --watch` says the machine that turns slow, at the moment it turns, as the dashboard's
/// slow mark says it: its time in the step, its role's pace and the bound (its last Warning,
/// when it has one, on the next line).
#[test]
fn get_watch_says_when_a_machine_turns_slow_and_why() {
    let w = world("4");
    let mut get = watching(&w, &["op", "get", OP, "--watch"]);
    get.wait(Fd::Out, "the operation", |l| l.starts_with("Name "));
    let slow = get.wait(Fd::Out, "staging-w02 slow", |l| l.contains("⚠ staging-w02"));
    let said = after_clock(&slow, "   ⚠ ");
    assert!(
        said.starts_with("staging-w02 is slow: ")
            && said.contains(" in this step; the pace so far is ")
            && said.contains(", slow past "),
        "{slow}"
    );
}

/// The API goes away while `get --watch` follows: the watch retries its read at its poll's
/// pace (each wait at most 2 s and its jitter, as its log records them: a backoff doubling to
/// 30 s would leave it blind that long after the API is back), says so once, and says when the
/// API answers again.
#[test]
fn get_watch_says_when_the_api_answers_again() {
    let mut w = world("1");
    let mut get = watching(&w, &["op", "get", OP, "--watch"]);
    get.wait(Fd::Out, "the operation", |l| l.starts_with("Name "));
    w.proxy.stop();
    get.wait(Fd::Err, "a retry", |l| l.contains("retrying in"));
    // Four waits: the fourth of a doubling backoff would be 8 s.
    let waits = retry_waits(&w.home.path().join("cli.log"), 4);
    assert!(
        waits.iter().all(|ms| *ms <= 2_400),
        "waits longer than the poll: {waits:?} ms"
    );
    w.proxy.start();
    let back = get.wait(Fd::Err, "the API back", |l| l.contains("answers again"));
    assert!(
        after_clock(&back, " ")
            .starts_with("Kubernetes API answers again (it did not answer from "),
        "{back}"
    );
    let retries = get.said(Fd::Err);
    let said_waits: Vec<&&str> = retries
        .iter()
        .filter(|l| l.contains("retrying in"))
        .collect();
    assert!(said_waits.len() <= 2, "each wait said once: {retries:#?}");
}

/// The waits (in ms) of the retrying client's first `n` retries of a read, from the log at
/// `path`, once it has recorded that many.
fn retry_waits(path: &std::path::Path, n: usize) -> Vec<u64> {
    let until = std::time::Instant::now() + NEVER;
    loop {
        let log = std::fs::read_to_string(path).unwrap_or_default();
        let waits: Vec<u64> = log
            .lines()
            .filter(|l| l.contains("transient fault, retrying") && l.contains("reading the"))
            .filter_map(|l| l.split("delay_ms=").nth(1)?.split(' ').next()?.parse().ok())
            .collect();
        if waits.len() >= n {
            return waits;
        }
        assert!(
            std::time::Instant::now() < until,
            "{n} retries logged: {log}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `list --watch`: the table once, then a row for each operation whose row changes (its
/// progress, its state turning Slow), and a deleted one once more as Gone.
#[test]
fn list_watch_prints_the_table_once_then_a_row_per_change() {
    if !kubectl_available() {
        return;
    }
    let w = world("1");
    let mut list = watching(&w, &["op", "list", "--watch"]);
    let header = list.wait(Fd::Out, "the header", |l| l.starts_with("NAME"));
    for col in [
        "KIND",
        "TARGET",
        "STATE",
        "PROGRESS",
        "LEFT",
        "AGE",
        "STARTED BY",
    ] {
        assert!(header.contains(col), "{header}");
    }
    let first = list.wait(Fd::Out, "the running upgrade", |l| l.starts_with(OP));
    let slow = list.wait(Fd::Out, "its row turning slow", |l| {
        l.starts_with(OP) && l.contains(" Slow ")
    });
    assert_ne!(first, slow);
    let gone = "staging-shutdown-k3r7d";
    kubectl(&w.direct, &["delete", "top", gone], None);
    let row = list.wait(Fd::Out, "the deleted one", |l| l.starts_with(gone));
    assert!(row.contains(" Gone "), "{row}");
    let headers = list
        .said(Fd::Out)
        .iter()
        .filter(|l| l.starts_with("NAME"))
        .count();
    assert_eq!(headers, 1, "{:#?}", list.seen);
    // Each row keeps the first table's columns: the state under STATE.
    let at = header.find("STATE").unwrap_or_default();
    let under: String = slow.chars().skip(at).take(4).collect();
    assert_eq!(under, "Slow", "{header}\n{slow}");
}
