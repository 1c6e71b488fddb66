//! What the binary says about itself: `version` (the commit, the route, the server's
//! version), and `RUST_LOG` beside `ICHOR_TUI_LOG` (the manual pages: `man_pages.rs`).

use super::*;

#[test]
fn version_names_the_commit_and_the_route_and_the_servers_version() {
    let d = Demo::new();
    let k = d.kubeconfig.as_str();
    let commit = git_commit();
    let (code, out, err) = d.run(&["version", "--client"], &[]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!("Client Version: {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(lines[1], format!("Commit: {commit}"));
    assert!(lines[2].starts_with("Build Date: 20"), "{out}");
    assert_eq!(lines.len(), 3, "nothing contacted: {out}");
    let (_, flag, _) = d.run(&["--version"], &[]);
    assert!(
        flag.starts_with(&format!(
            "ichor-tui {} (commit {commit}, built 20",
            env!("CARGO_PKG_VERSION")
        )),
        "{flag}"
    );
    // In-process: the service is this binary; the Kubernetes API says its own version.
    let (code, out, err) = d.run(
        &[
            "--kubeconfig",
            k,
            "--backend",
            "in-process",
            "version",
            "-o",
            "json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["clientVersion"]["commit"], commit.as_str());
    assert_eq!(v["serverVersion"]["route"]["kind"], "in-process");
    assert_eq!(v["serverVersion"]["route"]["context"], "ichor-demo");
    assert_eq!(v["serverVersion"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        v["serverVersion"]["kubernetesVersion"]
            .as_str()
            .is_some_and(|s| s.starts_with('v')),
        "{out}"
    );
    // A server names its version in every answer.
    let log = d.home.path().join("serve.log");
    let (_serve, first) = crate::common::process::Process::start(
        &[
            "serve",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--allow-anonymous",
        ],
        &log,
    );
    let url = format!(
        "http://{}",
        first.trim().strip_prefix("serving on ").unwrap()
    );
    let (code, out, err) = d.run(&["version", "--server", &url, "-o", "yaml"], &[]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
    assert_eq!(
        v["serverVersion"]["route"],
        serde_json::json!({"kind": "server", "url": url})
    );
    assert_eq!(
        v["serverVersion"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{out}"
    );
    assert_eq!(
        v["serverVersion"]["kubernetesVersion"],
        serde_json::Value::Null
    );
    // Nothing answers: the client's part, then the error, exit 1.
    let (code, out, err) = d.run(
        &[
            "version",
            "--server",
            "http://127.0.0.1:9",
            "--call-timeout",
            "2",
        ],
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Client Version: ") && !out.contains("Server Version"),
        "{out}"
    );
    assert!(
        err.starts_with("ichor-tui: the server's version: not reached: "),
        "{err}"
    );
}

/// This checkout's commit as build.rs gives it: "unknown" outside a git checkout.
fn git_commit() -> String {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => "unknown".into(),
    }
}

#[test]
fn rust_log_is_honoured_beside_ichor_tui_log() {
    let home = tempfile::tempdir().unwrap();
    let lines = |env: &[(&str, &str)], name: &str| {
        let log = home.path().join(name);
        let log_arg = log.display().to_string();
        let (code, _, err) = run_in(
            home.path(),
            &["--demo", "op", "list", "--log-file", &log_arg],
            env,
        );
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(&log).unwrap_or_default()
    };
    let default = lines(&[], "default.log");
    assert!(default.contains(" INFO "), "{default}");
    assert!(!default.contains(" DEBUG "), "{default}");
    let quiet = lines(&[("RUST_LOG", "error")], "quiet.log");
    assert!(!quiet.contains(" INFO "), "{quiet}");
    let debug = lines(&[("RUST_LOG", "debug")], "debug.log");
    assert!(debug.contains(" DEBUG "), "RUST_LOG=debug");
    let ours = lines(
        &[("RUST_LOG", "error"), ("ICHOR_TUI_LOG", "info")],
        "ours.log",
    );
    assert!(ours.contains(" INFO "), "ICHOR_TUI_LOG wins: {ours}");
}
