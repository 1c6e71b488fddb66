//! The outage that broke the first version, end to end: the dashboard (in-process, against the
//! demo cluster over HTTP) asks to delete a Completed operation; the API goes away before the
//! answer `y`; while it is away the operation is replaced by a running one of the same name;
//! the API comes back. The running operation must still exist, and the screen must say what
//! happened. Between the dashboard and the API sits a TCP proxy the test stops and starts, so
//! the API can be "killed" and brought back on the same address while the cluster keeps its
//! state.

use crate::common::process::{Process, kubectl};
use crate::common::proxy::Proxy;
use crate::common::pty;

use pty::{Spawn, keys};
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");
const OP: &str = "staging-cni-p2m8v";

/// The demo cluster as its own process, the proxy in front of it, and the dashboard reaching
/// it through the proxy (in-process, at 120×30): what each test kills and brings back.
struct World {
    tui: pty::Pty,
    proxy: Proxy,
    direct: std::path::PathBuf,
    _demo: Process,
    _home: tempfile::TempDir,
}

fn world() -> World {
    let home = tempfile::tempdir().unwrap();
    let direct = home.path().join("direct.kubeconfig");
    let (demo, upstream) = Process::demo_cluster(&direct, &home.path().join("demo.log"));
    let proxy = Proxy::new(upstream);
    let via_proxy = home.path().join("proxied.kubeconfig");
    proxy.kubeconfig(&direct, &via_proxy);

    let tui = Spawn::kubeconfig(Path::new(BIN), home.path(), &via_proxy).start();
    World {
        tui,
        proxy,
        direct,
        _demo: demo,
        _home: home,
    }
}

#[test]
fn a_delete_confirmed_during_an_outage_never_lands_on_the_operation_that_took_its_name() {
    // Bound whole: the demo cluster and the home live as long as the test.
    let mut w = world();
    let (tui, proxy, direct) = (&mut w.tui, &mut w.proxy, w.direct.clone());
    tui.wait_text("kube-proxy");
    // Select it by filtering on its name, and ask to delete it: it is Completed.
    tui.send("/");
    tui.send(OP);
    tui.wait_text("1 shown");
    tui.send(keys::ENTER);
    tui.send("d");
    tui.wait_text(&format!("Delete {OP}?"));
    let before = kubectl(
        &direct,
        &["get", "top", OP, "-o", "jsonpath={.metadata.uid}"],
        None,
    );

    // The API goes away; the person answers y.
    proxy.stop();
    tui.send("y");
    tui.wait_for(
        "the delete waiting for its answer, then the read retried",
        |s| s.contains("Kubernetes API not answering, retrying"),
    );
    // Meanwhile the operation is replaced by a running one of the same name.
    kubectl(&direct, &["delete", "top", OP], None);
    kubectl(
        &direct,
        &["create", "-f", "-"],
        Some(&format!(
            "apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: {OP}\n  namespace: default\nspec:\n  cluster: staging\n  kind: talos\n  maxUnavailable: 1\n  paused: true\n"
        )),
    );
    kubectl(
        &direct,
        &[
            "patch",
            "top",
            OP,
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"phase":"Running"}}"#,
        ],
        None,
    );
    let theirs = kubectl(
        &direct,
        &["get", "top", OP, "-o", "jsonpath={.metadata.uid}"],
        None,
    );
    assert_ne!(before, theirs);

    // The API comes back: the dashboard finds out, and says so.
    proxy.start();
    let screen = tui.wait_for("what happened to the delete", |s| {
        s.contains("no longer the operation you confirmed")
    });
    assert!(screen.contains("which was not touched"), "{screen}");
    // Nothing is sent again on its own: after a refresh the dashboard has read since, and
    // after it has quit, the running operation of the same name is still there.
    tui.send("R");
    tui.wait_text("Refreshed.");
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0);
    let uid = kubectl(
        &direct,
        &["get", "top", OP, "-o", "jsonpath={.metadata.uid}"],
        None,
    );
    assert_eq!(uid, theirs, "the running operation of the same name exists");
}

#[test]
fn the_status_bar_says_the_time_of_the_data_and_who_does_not_answer() {
    let mut w = world();
    let (tui, proxy) = (&mut w.tui, &mut w.proxy);
    tui.wait_text("user admin");
    tui.wait_text("live");
    proxy.stop();
    // The data's time and the side that does not answer; the user stays.
    let screen = tui.wait_for("the stale status bar", |s| {
        s.contains("Kubernetes API not answering") && s.contains("data from ")
    });
    let bar = screen.lines().next().unwrap_or_default();
    assert!(bar.contains("user admin"), "{bar}");
    assert!(bar.contains("data from "), "{bar}");
    assert!(!bar.contains("updated just now"), "{bar}");
    // A key's answer during the outage (hidden under the banner) is not said after it.
    tui.send(":");
    tui.send("nosuchcommand");
    tui.wait_text(":nosuchcommand");
    tui.send(keys::ENTER);
    // The command is answered (its line closed) before the API comes back.
    tui.wait_for("the command answered", |s| !s.contains("nosuchcommand"));
    proxy.start();
    let screen = tui.wait_for("live again", |s| {
        s.lines()
            .next()
            .is_some_and(|bar| bar.contains("│ live") && !bar.contains("data from"))
    });
    assert!(!screen.contains("nosuchcommand"), "{screen}");
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0);
}
