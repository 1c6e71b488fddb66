//! The built binary as a child process, killed when the test ends.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `ichor-tui`; killed on drop unless it was waited for.
pub struct Process(Option<Child>);

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Process {
    /// Starts `ichor-tui ARGS` (logging to a temporary file) and returns it with the first
    /// line it prints, waiting at most a minute for that line.
    pub fn start(args: &[&str], log: &std::path::Path) -> (Process, String) {
        Process::start_with_env(args, log, &[])
    }

    /// [`Process::start`] with `env` set for the child.
    pub fn start_with_env(
        args: &[&str],
        log: &std::path::Path,
        env: &[(&str, &str)],
    ) -> (Process, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ichor-tui"))
            .args(args)
            .envs(env.iter().copied())
            .arg("--log-file")
            .arg(log)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next());
            for _ in lines {}
        });
        let first = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the process prints a first line")
            .expect("the process's stdout is open")
            .unwrap();
        (Process(Some(child)), first)
    }

    /// `ichor-tui demo-cluster` on a loopback port of its choosing, writing its kubeconfig (a
    /// context per demo user) to `kubeconfig` and logging to `log`: the process, and its port.
    pub fn demo_cluster(kubeconfig: &Path, log: &Path) -> (Process, u16) {
        Process::demo_cluster_at("127.0.0.1:0", kubeconfig, log)
    }

    /// [`Process::demo_cluster`] listening on `listen` (a port given: a restart on the same
    /// address).
    pub fn demo_cluster_at(listen: &str, kubeconfig: &Path, log: &Path) -> (Process, u16) {
        Process::demo_cluster_with(listen, kubeconfig, log, &[], &[])
    }

    /// [`Process::demo_cluster_at`] with `env` set (`ICHOR_DEMO_SLOW`) and `more` flags
    /// (`--demo-speed`).
    pub fn demo_cluster_with(
        listen: &str,
        kubeconfig: &Path,
        log: &Path,
        env: &[(&str, &str)],
        more: &[&str],
    ) -> (Process, u16) {
        let out = kubeconfig.display().to_string();
        let mut args = vec!["demo-cluster", "--listen", listen, "--kubeconfig-out", &out];
        args.extend(more);
        let (process, line) = Process::start_with_env(&args, log, env);
        assert!(line.starts_with("demo cluster listening on"), "{line}");
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("a port in {line:?}"));
        (process, port)
    }

    pub fn id(&self) -> u32 {
        self.0.as_ref().map(Child::id).unwrap_or_default()
    }

    /// Sends SIGTERM and waits (at most `limit`) for the exit.
    pub fn terminate(mut self, limit: Duration) -> ExitStatus {
        let kill = Command::new("kill")
            .args(["-TERM", &self.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let mut child = self.0.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        rx.recv_timeout(limit)
            .expect("the process exits after SIGTERM")
            .unwrap()
    }
}

/// Runs `kubectl ARGS` with `kubeconfig`, `stdin` fed to it.
fn kubectl_output(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    let mut child = Command::new("kubectl")
        .env("KUBECONFIG", kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

/// Runs `kubectl ARGS` with `kubeconfig` (and `stdin` fed to it); fails the test with its
/// stderr when it fails; returns its stdout.
pub fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let out = kubectl_output(kubeconfig, args, stdin);
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `kubectl ARGS` with `kubeconfig` (and `stdin` fed to it): whether it succeeded, and
/// what it printed (stdout, then stderr).
pub fn kubectl_says(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String) {
    let out = kubectl_output(kubeconfig, args, stdin);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Whether kubectl is installed: `.ci/run` installs it, so CI never skips; a developer machine
/// without it skips, saying so.
pub fn kubectl_available() -> bool {
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok();
    if !found {
        assert!(std::env::var_os("CI").is_none(), "kubectl is missing in CI");
        eprintln!("kubectl not found: skipping");
    }
    found
}
