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
