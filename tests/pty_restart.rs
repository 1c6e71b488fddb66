//! The API server restarted under a dashboard, end to end: the demo cluster (its own process)
//! is killed and a new one started on the same address, with a history of its own (it starts
//! from its first resourceVersions again, as after an etcd restore). Within the bookmark
//! interval the dashboard shows the new server's truth or says "live updates off"; at no moment
//! after the new server is up does it say "live" over the old server's data.

use crate::common::process::{Process, kubectl};
use crate::common::pty::Spawn;
use std::path::Path;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");
/// Only the first server has it.
const BEFORE: &str = "staging-before-r1x2y";
/// Only the second server has it.
const AFTER: &str = "staging-after-n3w4z";
/// kube-apiserver's bookmark interval (and the demo's).
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

fn create(kubeconfig: &Path, name: &str) {
    kubectl(
        kubeconfig,
        &["create", "-f", "-"],
        Some(&format!(
            "apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  cluster: staging\n  kind: talos\n  maxUnavailable: 1\n  paused: true\n"
        )),
    );
}

/// The status bar says "live" (and not that live updates are off).
fn live(screen: &str) -> bool {
    let bar = screen.lines().next().unwrap_or_default();
    bar.trim_end().ends_with("│ live") && !screen.contains("live updates off")
}

#[test]
fn after_the_api_server_restarts_the_screen_is_the_new_truth_or_says_live_updates_off() {
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = home.path().join("demo.kubeconfig");
    let (demo, port) = Process::demo_cluster(&kubeconfig, &home.path().join("demo.log"));
    let mut tui = Spawn::kubeconfig(Path::new(BIN), home.path(), &kubeconfig)
        .args(&["--backend", "in-process"])
        .size(120, 30)
        .start();
    tui.wait_for("the list, pushed", |s| s.contains("staging") && live(s));
    create(&kubeconfig, BEFORE);
    tui.wait_for("the first server's operation, pushed", |s| {
        s.contains(BEFORE) && live(s)
    });

    // The server is killed, and another starts on the same address with its own history. The
    // dashboard notices the first server gone before the second is up (on a loaded machine the
    // second could be up before the dashboard's process ran at all: the screen it drew last
    // would say "live" over the old data only because nothing was drawn since).
    drop(demo);
    tui.wait_for("the outage noticed", |s| !live(s));
    let listen = format!("127.0.0.1:{port}");
    let (_demo, _) =
        Process::demo_cluster_at(&listen, &kubeconfig, &home.path().join("demo-2.log"));
    let up = Instant::now();
    create(&kubeconfig, AFTER);

    // From now on: never "live" over the first server's data; within the bookmark interval,
    // the new truth or "live updates off".
    let mut said_off = false;
    let mut seen = Vec::new();
    let truth = loop {
        let screen = tui.screen();
        assert!(
            !(live(&screen) && screen.contains(BEFORE)),
            "\"live\" over the old server's data {:?} after it restarted:\n{screen}",
            up.elapsed()
        );
        said_off |= screen.contains("live updates off");
        if screen.contains(AFTER) && !screen.contains(BEFORE) {
            break screen;
        }
        if seen.last() != Some(&screen) {
            seen.push(screen);
        }
        assert!(
            up.elapsed() < BOOKMARK_INTERVAL || said_off,
            "neither the new truth nor \"live updates off\" within {BOOKMARK_INTERVAL:?}:\n{}",
            seen.join("\n----\n")
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(
        up.elapsed() < BOOKMARK_INTERVAL,
        "the new truth came {:?} after the restart:\n{truth}",
        up.elapsed()
    );
    // And it is pushed again.
    tui.wait_for("live again, over the new truth", |s| {
        live(s) && s.contains(AFTER) && !s.contains(BEFORE)
    });
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0);
}
