//! Where serve's log goes: stderr, which a container runtime collects (`kubectl logs`), unless
//! `--log-file` names a file; one it cannot write is said on stderr and the log goes on there.
//! The dashboard's log is `log_secrets.rs`'s and `pty.rs`'s (a file; never the terminal).

use super::Proc;
use std::process::{Command, Stdio};

/// `serve --demo` on a free port with `extra` args, its stderr in a file: the process, and the
/// path of that file.
fn serve(extra: &[&str], dir: &std::path::Path) -> (Proc, std::path::PathBuf) {
    let stderr = dir.join("stderr");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ichor-tui"));
    cmd.args(["serve", "--demo", "--listen", "127.0.0.1:0"])
        .args(extra)
        .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
    let (p, _) = Proc::start_saying(cmd, &["serving on "]);
    (p, stderr)
}

/// Waits (up to 10 s) for `path` to hold a line containing `want`; all its text.
fn wait_for(path: &std::path::Path, want: &str) -> String {
    for _ in 0..200 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(want) {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!(
        "{want:?} not in {}",
        std::fs::read_to_string(path).unwrap_or_default()
    );
}

#[test]
fn a_servers_log_is_on_stderr_in_json_lines_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (p, stderr) = serve(&["--log-format", "json"], dir.path());
    let text = wait_for(&stderr, "serving OperationService");
    drop(p);
    for line in text.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        for field in ["timestamp", "level", "target", "message"] {
            assert!(v.get(field).is_some(), "{field} in {line}");
        }
    }
}

#[test]
fn a_server_that_cannot_write_its_log_file_says_so_and_logs_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the log's folder would be: no one, root included, can create it.
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, "").unwrap();
    let log = blocker.join("serve.log");
    let (p, stderr) = serve(&["--log-file", log.to_str().unwrap()], dir.path());
    let text = wait_for(&stderr, "serving OperationService");
    drop(p);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("ichor-tui: creating log directory ")
            && first.ends_with("; logging to stderr instead"),
        "{text}"
    );
    assert!(!log.exists());

    // A file it can write takes the log; stderr stays empty.
    let log = dir.path().join("serve.log");
    let (p, stderr) = serve(&["--log-file", log.to_str().unwrap()], dir.path());
    wait_for(&log, "serving OperationService");
    drop(p);
    assert_eq!(std::fs::read_to_string(stderr).unwrap(), "");
}

/// An API that takes each connection and closes it at once (every request to it fails as in an
/// outage), counting the connections.
fn api_in_outage() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let taken = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = taken.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(conn);
        }
    });
    (url, taken)
}

#[test]
fn an_api_outage_is_one_line_however_often_readiness_asks() {
    use std::sync::atomic::Ordering;
    if !super::present("curl", &["--version"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (api, taken) = api_in_outage();
    let config = dir.path().join("kubeconfig");
    std::fs::write(&config, super::kubeconfig(&api, "serve-token")).unwrap();
    let stderr = dir.path().join("stderr");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ichor-tui"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--log-format", "json"])
        .arg("--kubeconfig")
        .arg(&config)
        .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
    let (mut serving, said) = Proc::start_saying(cmd, &["serving on "]);
    let readyz = format!(
        "http://{}/readyz",
        said[0].trim_start_matches("serving on ")
    );
    // Readiness asked as a kubelet asks it, until the API has been asked five times (the
    // answer is kept 2 s, so that is five checks at least 2 s apart).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while taken.load(Ordering::SeqCst) < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "the API was not asked"
        );
        assert_eq!(super::get(None, &readyz).0, 500);
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    // SIGTERM: serve stops and its log is written out.
    let pid = libc::pid_t::try_from(serving.0.id()).unwrap();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    assert!(serving.0.wait().unwrap().success());
    let log = std::fs::read_to_string(&stderr).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let outage: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["message"] == "a health check fails")
        .collect();
    assert_eq!(outage.len(), 1, "one line for the outage: {log}");
    assert_eq!(outage[0]["check"], "kubernetes-api");
    let reason = outage[0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("GET /readyz: "),
        "kube's error is in it: {reason}"
    );
    let others: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| {
            l["level"] == "ERROR" || l["target"].as_str().is_some_and(|t| t.starts_with("kube"))
        })
        .collect();
    assert!(others.is_empty(), "nothing more of the outage: {others:?}");
}
