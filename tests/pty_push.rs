//! Push, end to end: the dashboard (in-process, against the demo cluster over HTTP) shows an
//! operation created with kubectl, and a phase it reaches, while its status bar says "live"
//! (polls are off while it is; a broken stream would say "live updates off" and poll). The
//! failure is said once with the bell and a desktop notification (OSC 9); the operations already
//! finished when the dashboard started are never said.

use crate::common::process::{Process, kubectl};
use crate::common::pty::Spawn;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");
const OP: &str = "staging-pushed-z9q1w";
/// An operation created after the last change of [`OP`], to know that change was seen.
const MARK: &str = "staging-later-m1k2x";

/// Merges `status` into the operation's status, as the controller would.
fn patch_status(kubeconfig: &Path, status: &str) {
    kubectl(
        kubeconfig,
        &[
            "patch",
            "top",
            OP,
            "--subresource=status",
            "--type=merge",
            "-p",
            &format!(r#"{{"status":{status}}}"#),
        ],
        None,
    );
}

/// The status bar's first line: it says "live" while the data is pushed.
fn live(screen: &str) -> bool {
    let bar = screen.lines().next().unwrap_or_default();
    bar.trim_end().ends_with("│ live") && !screen.contains("live updates off")
}

#[test]
fn an_operation_created_and_its_phase_show_while_pushed() {
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = home.path().join("demo.kubeconfig");
    let kubeconfig_arg = kubeconfig.display().to_string();
    let (_demo, _first) = Process::start(
        &[
            "demo-cluster",
            "--listen",
            "127.0.0.1:0",
            "--kubeconfig-out",
            &kubeconfig_arg,
        ],
        &home.path().join("demo.log"),
    );
    let mut tui = Spawn {
        binary: Path::new(BIN),
        args: vec![
            "--kubeconfig".into(),
            kubeconfig_arg.clone(),
            "--backend".into(),
            "in-process".into(),
            "--log-file".into(),
            home.path().join("log").display().to_string(),
        ],
        env: vec![("ICHOR_TUI_NOTIFY".into(), "osc9".into())],
        cols: 120,
        rows: 30,
        home: home.path(),
        answers: Default::default(),
    }
    .start();
    tui.wait_for("the list, pushed", |s| s.contains("staging") && live(s));
    kubectl(
        &kubeconfig,
        &["create", "-f", "-"],
        Some(&format!(
            "apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: {OP}\n  namespace: default\nspec:\n  cluster: staging\n  kind: talos\n  maxUnavailable: 1\n  paused: true\n"
        )),
    );
    let screen = tui.wait_text(OP);
    assert!(live(&screen), "still pushed:\n{screen}");
    patch_status(
        &kubeconfig,
        r#"{"phase":"Failed","failureReason":"pushed"}"#,
    );
    let screen = tui.wait_for("the phase", |s| {
        s.lines().any(|l| l.contains(OP) && l.contains("Failed"))
    });
    assert!(live(&screen), "still pushed:\n{screen}");
    // Another change that keeps it failed is not said again: a later change seen on screen
    // (another operation) comes after it on the same stream.
    patch_status(&kubeconfig, r#"{"failureReason":"pushed again"}"#);
    kubectl(
        &kubeconfig,
        &["create", "-f", "-"],
        Some(&format!(
            "apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: {MARK}\n  namespace: default\nspec:\n  cluster: staging\n  kind: talos\n  maxUnavailable: 1\n  paused: true\n"
        )),
    );
    tui.wait_text(MARK);
    let raw = String::from_utf8_lossy(&tui.raw()).into_owned();
    let said: Vec<&str> = raw.split("\x1b]9;").skip(1).collect();
    let ours = said
        .iter()
        .filter(|n| n.starts_with(&format!("ichor-tui: {OP} ")))
        .count();
    assert_eq!(ours, 1, "said once: {said:?}");
    assert!(
        said.iter().all(|n| !n.contains("staging-cni-p2m8v")),
        "never for the first state seen: {said:?}"
    );
    assert!(raw.contains('\x07'), "the bell rang");
    tui.send("q");
}
