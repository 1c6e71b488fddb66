//! `demo-cluster --kubeconfig-out` writes one context per demo user: kubectl and the
//! dashboard's own client (kube-rs) act as that person with `--context NAME`, with that
//! person's permissions, and the admin's is the current context.

use crate::common::process::Process;
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

struct Demo {
    _process: Process,
    kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

fn demo() -> Demo {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let (process, _) = Process::demo_cluster(&kubeconfig, &dir.path().join("log"));
    Demo {
        _process: process,
        kubeconfig,
        _dir: dir,
    }
}

fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn kubectl(kc: &Path, args: &[&str]) -> (bool, String) {
    crate::common::process::kubectl_says(kc, args, None)
}

#[test]
fn kubectl_with_a_demo_context_acts_as_that_user() {
    if !crate::common::process::kubectl_available() {
        return;
    }
    let d = demo();
    let kc = d.kubeconfig.as_path();
    let (ok, out) = kubectl(kc, &["config", "get-contexts", "-o", "name"]);
    assert!(ok, "{out}");
    let mut contexts: Vec<&str> = out.lines().collect();
    contexts.sort();
    assert_eq!(
        contexts,
        [
            "cluster-editor",
            "ichor-demo",
            "operations-reader",
            "operator",
            "viewer"
        ]
    );
    let (_, current) = kubectl(kc, &["config", "current-context"]);
    assert_eq!(current.trim(), "ichor-demo");
    for (context, user, may_patch) in [
        (None, "admin", "yes"),
        (Some("viewer"), "viewer", "no"),
        (Some("operator"), "operator", "yes"),
        (Some("cluster-editor"), "cluster-editor", "no"),
    ] {
        let ctx: Vec<&str> = context.map(|c| vec!["--context", c]).unwrap_or_default();
        let (ok, out) = kubectl(kc, &[&ctx[..], &["auth", "whoami"]].concat());
        assert!(ok, "{out}");
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["Username", user]),
            "{context:?}: {out}"
        );
        let can_i = [
            "auth",
            "can-i",
            "patch",
            "talosoperations.ichor.maesh.dev",
            "-n",
            "default",
        ];
        let (_, out) = kubectl(kc, &[&ctx[..], &can_i].concat());
        assert_eq!(out.trim(), may_patch, "{context:?}");
    }
}

#[test]
fn the_dashboards_client_with_a_demo_context_has_that_users_permissions() {
    let d = demo();
    let home = tempfile::tempdir().unwrap();
    let verb = |context: &str, args: &[&str]| {
        run(Command::new(BIN)
            .args(args)
            .arg("--kubeconfig")
            .arg(&d.kubeconfig)
            .args([
                "--context",
                context,
                "--backend",
                "in-process",
                "--lang",
                "en",
            ])
            .env("HOME", home.path())
            .env_remove("KUBECONFIG")
            .env("NO_COLOR", "1"))
    };
    let (ok, list) = verb("viewer", &["operation", "list"]);
    assert!(ok, "the viewer reads: {list}");
    // A finished operation of the demo (it stays as it is), deleted by whom may.
    let done = list
        .lines()
        .find(|l| l.contains("Completed"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("a completed operation in {list}"))
        .to_string();
    let (ok, out) = verb("viewer", &["operation", "delete", &done, "--yes"]);
    assert!(!ok, "{out}");
    assert!(
        out.contains(r#"User "viewer" cannot delete resource "talosoperations""#),
        "{out}"
    );
    let (ok, out) = verb("operator", &["operation", "delete", &done, "--yes"]);
    assert!(ok, "the operator may delete: {out}");
}
