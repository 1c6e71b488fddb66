//! The binary's other processes as the process measures run them (`serve --demo`,
//! `demo-cluster`, `serve` against a demo cluster), and what /proc says of a process: CPU time
//! and resident memory.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A child process, killed (by its pid) and reaped on drop.
pub struct Proc(pub Child);

impl Proc {
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawns `cmd` with its stdout piped and returns it with its first line's text after
/// `prefix` (the address it says it serves on).
fn spawn_saying(mut cmd: Command, prefix: &str) -> (Proc, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawning ichor-tui");
    let stdout = child.stdout.take().expect("the child's stdout");
    let proc = Proc(child);
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("reading the child's first line");
    let rest = line
        .trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("the child said {line:?}"))
        .to_string();
    (proc, rest)
}

/// `BIN serve --demo` with `extra` history operations, on a free loopback port: the process
/// and its URL.
pub fn serve_demo(bin: &Path, home: &Path, extra: usize) -> (Proc, String) {
    let mut cmd = Command::new(bin);
    cmd.args([
        "serve",
        "--demo",
        "--listen",
        "127.0.0.1:0",
        "--allow-anonymous",
    ])
    .arg("--log-file")
    .arg(home.join("serve.log"))
    .env("ICHOR_DEMO_OPERATIONS", extra.to_string());
    let (p, addr) = spawn_saying(cmd, "serving on ");
    (p, format!("http://{addr}"))
}

/// `BIN serve` against the Kubernetes API a kubeconfig names, on a free loopback port.
pub fn serve_kubeconfig(bin: &Path, home: &Path, kubeconfig: &Path) -> (Proc, String) {
    serve_kubeconfig_at(bin, home, kubeconfig, "127.0.0.1:0")
}

/// `BIN serve` against the Kubernetes API a kubeconfig names, listening on `listen`.
pub fn serve_kubeconfig_at(
    bin: &Path,
    home: &Path,
    kubeconfig: &Path,
    listen: &str,
) -> (Proc, String) {
    let mut cmd = Command::new(bin);
    cmd.args(["serve", "--listen", listen, "--kubeconfig"])
        .arg(kubeconfig)
        .arg("--log-file")
        .arg(home.join("serve-kube.log"));
    let (p, addr) = spawn_saying(cmd, "serving on ");
    (p, format!("http://{addr}"))
}

/// `BIN serve` against the Kubernetes API a kubeconfig names, on a free loopback port, with
/// `args` besides (its bounds, say).
pub fn serve_kubeconfig_with(
    bin: &Path,
    home: &Path,
    kubeconfig: &Path,
    args: &[String],
) -> (Proc, String) {
    let mut cmd = Command::new(bin);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(kubeconfig)
        .arg("--log-file")
        .arg(home.join("serve-kube.log"))
        .args(args);
    let (p, addr) = spawn_saying(cmd, "serving on ");
    (p, format!("http://{addr}"))
}

/// `BIN demo-cluster` with `extra` history operations, on a free loopback port: the process
/// and its address (host:port).
pub fn demo_cluster(bin: &Path, home: &Path, extra: usize) -> (Proc, String) {
    demo_cluster_with(Command::new(bin), home, extra)
}

/// [`demo_cluster`] from `cmd` (the binary, with whatever environment the caller set).
pub fn demo_cluster_with(cmd: Command, home: &Path, extra: usize) -> (Proc, String) {
    demo_cluster_forwarding(cmd, home, extra, None)
}

/// `demo_cluster_with`, its ichor-ui's port-forwards sent to `forward` when given (where a
/// `serve` listens: the tunnel's far end).
pub fn demo_cluster_forwarding(
    mut cmd: Command,
    home: &Path,
    extra: usize,
    forward: Option<&str>,
) -> (Proc, String) {
    cmd.args(["demo-cluster", "--listen", "127.0.0.1:0"])
        .args(
            forward
                .map(|f| ["--ichor-ui-forward", f])
                .into_iter()
                .flatten(),
        )
        .arg("--log-file")
        .arg(home.join("demo-cluster.log"))
        .env("ICHOR_DEMO_OPERATIONS", extra.to_string());
    let (p, url) = spawn_saying(cmd, "demo cluster listening on http://");
    (p, url)
}

/// A kubeconfig for the API at `addr` (host:port) with a bearer token.
pub fn write_kubeconfig(path: &Path, addr: &str, token: &str) {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: demo\n  cluster:\n    server: http://{addr}\n\
contexts:\n- name: demo\n  context:\n    cluster: demo\n    user: demo\n    namespace: default\n\
current-context: demo\nusers:\n- name: demo\n  user:\n    token: {token}\n"
    );
    std::fs::write(path, text).expect("writing a kubeconfig");
}

/// CPU time a process has used (all its threads, the ended ones too), in seconds: from
/// /proc/PID/stat, in clock ticks (10 ms).
pub fn cpu_ticks_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(11) + ticks(12)) / hz
}

/// Time on CPU of each live thread of a process, in nanoseconds (/proc/PID/task/*/schedstat).
pub fn thread_cpu_ns(pid: u32) -> std::collections::BTreeMap<u32, u64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let ns = std::fs::read_to_string(entry.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok());
        if let Some(ns) = ns {
            out.insert(tid, ns);
        }
    }
    out
}

/// A reading of a process's CPU time, to take a difference of.
#[derive(Clone)]
pub struct Cpu {
    ticks_s: f64,
    threads: std::collections::BTreeMap<u32, u64>,
}

impl Cpu {
    pub fn read(pid: u32) -> Cpu {
        Cpu {
            ticks_s: cpu_ticks_s(pid),
            threads: thread_cpu_ns(pid),
        }
    }

    /// CPU seconds from `self` to `later`: to the nanosecond when the same threads lived at
    /// both readings (a thread that ended in between took its time with it), else in clock
    /// ticks.
    pub fn since(&self, later: &Cpu) -> f64 {
        let same = self.threads.keys().eq(later.threads.keys());
        if same && !self.threads.is_empty() {
            let ns: u64 = later
                .threads
                .iter()
                .map(|(tid, ns)| ns.saturating_sub(self.threads.get(tid).copied().unwrap_or(0)))
                .sum();
            ns as f64 / 1e9
        } else {
            later.ticks_s - self.ticks_s
        }
    }
}

/// Peak and current resident memory of a process, in kB (VmHWM, VmRSS).
pub fn memory_kb(pid: u32) -> (u32, u32) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (kb("VmHWM:"), kb("VmRSS:"))
}

/// Peak resident memory since the last reset, then reset it (kB).
pub fn take_peak_kb(pid: u32) -> u32 {
    let (peak, _) = memory_kb(pid);
    // Linux: writing 5 resets VmHWM to the current RSS.
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
    peak
}
