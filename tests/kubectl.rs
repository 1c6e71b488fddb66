//! The real kubectl against `ichor-tui demo-cluster`, as against a real cluster.

use crate::common::process::{kubectl_available, kubectl_says as kubectl};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

struct DemoCluster {
    child: Child,
    kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for DemoCluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> DemoCluster {
    start_with(&[])
}

fn start_with(extra: &[&str]) -> DemoCluster {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ichor-tui"))
        .args([
            "demo-cluster",
            "--listen",
            "127.0.0.1:0",
            "--demo-speed",
            "20",
            "--kubeconfig-out",
        ])
        .arg(&kubeconfig)
        .arg("--log-file")
        .arg(dir.path().join("log"))
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("demo cluster listening on http://127.0.0.1:"),
        "{line}"
    );
    DemoCluster {
        child,
        kubeconfig,
        _dir: dir,
    }
}

const OPERATION: &str = "apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosOperation
metadata:
  name: prod-eu-kubernetes-manual
spec:
  cluster: prod-eu
  kind: kubernetes
";

#[test]
fn kubectl_get_create_patch_delete() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let (ok, out) = kubectl(kc, &["get", "talosoperations", "-A"], None);
    assert!(ok, "{out}");
    assert!(
        out.contains("staging-talos-x7k2p") && out.contains("edge-tokyo-talos-m4q9z"),
        "{out}"
    );
    // Server-side printing: the kind's columns, as kubectl shows them for a real CRD.
    let header = out.lines().next().unwrap_or_default();
    for col in ["NAMESPACE", "NAME", "CLUSTER", "KIND", "PHASE", "AGE"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        out.lines()
            .any(|l| l.contains("edge-tokyo-talos-m4q9z") && l.contains("Paused")),
        "{out}"
    );
    let (ok, out) = kubectl(kc, &["get", "top"], None);
    assert!(
        ok && out.contains("prod-eu-ca-rotation-2hd8w"),
        "short name: {out}"
    );
    let (ok, out) = kubectl(kc, &["get", "taloscluster", "prod-eu", "-o", "yaml"], None);
    assert!(ok, "{out}");
    assert!(
        out.contains("talosVersion: v1.9.2") && out.contains("argocd.argoproj.io/tracking-id"),
        "{out}"
    );

    let (ok, out) = kubectl(kc, &["create", "-f", "-"], Some(OPERATION));
    assert!(ok, "{out}");
    assert!(
        out.contains("talosoperation.ichor.maesh.dev/prod-eu-kubernetes-manual created"),
        "{out}"
    );
    let (ok, out) = kubectl(
        kc,
        &[
            "patch",
            "talosoperation",
            "prod-eu-kubernetes-manual",
            "--type=merge",
            "-p",
            r#"{"spec":{"paused":true}}"#,
        ],
        None,
    );
    assert!(ok && out.contains("patched"), "{out}");
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "top",
            "prod-eu-kubernetes-manual",
            "-o",
            "jsonpath={.spec.paused}",
        ],
        None,
    );
    assert!(ok && out == "true", "{out}");
    let (ok, out) = kubectl(
        kc,
        &["delete", "talosoperation", "prod-eu-kubernetes-manual"],
        None,
    );
    assert!(ok && out.contains("deleted"), "{out}");
    let (ok, out) = kubectl(kc, &["get", "top", "prod-eu-kubernetes-manual"], None);
    assert!(!ok && out.contains("NotFound"), "{out}");

    // The admission policy and RBAC answer kubectl as a real apiserver would.
    let (ok, out) = kubectl(
        kc,
        &[
            "patch",
            "tc",
            "prod-eu",
            "--type=merge",
            "-p",
            r#"{"spec":{"cni":{"kubeProxy":"replaced"}}}"#,
        ],
        None,
    );
    assert!(!ok && out.contains("ValidatingAdmissionPolicy"), "{out}");
    let (ok, out) = kubectl(
        kc,
        &[
            "delete",
            "top",
            "staging-cni-p2m8v",
            "--as",
            "viewer",
            "--as-group",
            "ichor:viewers",
        ],
        None,
    );
    assert!(
        !ok && out.contains("User \"viewer\" cannot delete resource \"talosoperations\""),
        "{out}"
    );
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "top",
            "--as",
            "viewer",
            "--as-group",
            "ichor:viewers",
        ],
        None,
    );
    assert!(ok && out.contains("staging-cni-p2m8v"), "{out}");
}

#[test]
fn a_non_loopback_listen_address_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_ichor-tui"))
        .args([
            "demo-cluster",
            "--listen",
            "0.0.0.0:0",
            "--log-file",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0") && err.contains("--allow-remote"),
        "{err}"
    );
}

#[test]
fn kubectl_lists_the_core_resources_and_reads_ichor_ui() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let (ok, out) = kubectl(kc, &["api-resources"], None);
    assert!(ok && !out.contains("error"), "{out}");
    for line in [
        ["services", "svc", "v1"],
        ["endpoints", "ep", "v1"],
        ["pods", "po", "v1"],
    ] {
        assert!(
            out.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.starts_with(&line)
            }),
            "{line:?} in {out}"
        );
    }
    let (ok, out) = kubectl(
        kc,
        &["get", "svc,pods,endpoints", "-n", "ichor-system"],
        None,
    );
    assert!(ok, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("service/ichor-ui") && l.contains("8080/TCP")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("pod/ichor-ui-") && l.contains("1/1") && l.contains("Running")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("endpoints/ichor-ui") && l.contains(":8080")),
        "{out}"
    );
    // Read only, and RBAC for the demo users: they read ichor-system, not other namespaces.
    let (ok, out) = kubectl(
        kc,
        &["delete", "svc", "ichor-ui", "-n", "ichor-system"],
        None,
    );
    assert!(!ok && out.contains("MethodNotAllowed"), "{out}");
    let viewer = ["--as", "viewer", "--as-group", "ichor:viewers"];
    let (ok, out) = kubectl(
        kc,
        &[&["get", "pods", "-n", "ichor-system"][..], &viewer].concat(),
        None,
    );
    assert!(ok && out.contains("ichor-ui-"), "{out}");
    let (ok, out) = kubectl(
        kc,
        &[&["get", "pods", "-n", "default"][..], &viewer].concat(),
        None,
    );
    assert!(!ok && out.contains("Forbidden"), "{out}");
}

/// A TCP echo server on a thread of its own; counts its open connections.
struct Echo {
    port: u16,
    open: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

fn echo() -> Echo {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let open = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = open.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let count = count.clone();
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 || conn.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                count.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    Echo { port, open }
}

/// Waits up to 10 s for `done`.
fn eventually(what: &str, done: impl Fn() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{what}");
}

/// kubectl's client minor version (`32` for v1.32.4), if it says.
fn kubectl_minor() -> Option<u32> {
    let out = Command::new("kubectl")
        .args(["version", "--client", "-o", "json"])
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let minor = v.pointer("/clientVersion/minor")?.as_str()?;
    minor
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()
}

/// The open file descriptors of a process (sockets included).
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// `kubectl port-forward -n ichor-system svc/ichor-ui 0:api` (over WebSockets or SPDY when
/// `websockets` says, with its log at -v=6 on stderr; else kubectl's default, stderr dropped):
/// the child, the local port and the line it printed. Its stdout is read to the end meanwhile,
/// so it never blocks on a full pipe.
fn forward_ichor_ui(kubeconfig: &Path, websockets: Option<bool>) -> (Child, u16, String) {
    let mut cmd = Command::new("kubectl");
    cmd.env("KUBECONFIG", kubeconfig)
        .args([
            "port-forward",
            "-n",
            "ichor-system",
            "svc/ichor-ui",
            "0:api",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(ws) = websockets {
        cmd.env(
            "KUBECTL_PORT_FORWARD_WEBSOCKETS",
            if ws { "true" } else { "false" },
        )
        .arg("-v=6")
        .stderr(Stdio::piped());
    }
    let mut pf = cmd.spawn().unwrap();
    let mut out = BufReader::new(pf.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let local: u16 = line
        .strip_prefix("Forwarding from 127.0.0.1:")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("kubectl printed {line:?}"));
    std::thread::spawn(move || {
        let mut sink = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut sink);
    });
    (pf, local, line)
}

/// `kubectl port-forward -n ichor-system svc/ichor-ui 0:api` against `demo-cluster
/// --ichor-ui-forward` an echo server: two connections round-trip their bytes; when kubectl is
/// killed, neither the demo cluster nor the target keeps anything open. `websockets: false`
/// makes kubectl use SPDY itself rather than SPDY tunneled in a WebSocket.
fn port_forward_round_trips(websockets: bool) {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;
    if !kubectl_available() {
        return;
    }
    let echo = echo();
    let target = format!("127.0.0.1:{}", echo.port);
    let dc = start_with(&["--ichor-ui-forward", &target]);
    let pid = dc.child.id();
    let baseline = open_fds(pid);
    let (mut pf, local, line) = forward_ichor_ui(&dc.kubeconfig, Some(websockets));
    assert!(line.trim_end().ends_with("-> 8080"), "{line}");
    let stderr = pf.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        text
    });
    for i in 0..2u8 {
        let payload: Vec<u8> = (0..100_000u32).map(|n| (n % 251) as u8 ^ i).collect();
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", local)).unwrap();
        conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let writer = {
            let mut conn = conn.try_clone().unwrap();
            let payload = payload.clone();
            std::thread::spawn(move || conn.write_all(&payload).unwrap())
        };
        let mut got = vec![0u8; payload.len()];
        conn.read_exact(&mut got).unwrap();
        writer.join().unwrap();
        assert!(got == payload, "connection {i}: the bytes differ");
    }
    eventually("the target's connections close after the clients'", || {
        echo.open.load(Ordering::SeqCst) == 0
    });
    let _ = pf.kill();
    let _ = pf.wait();
    let log = log.join().unwrap();
    // The protocol asked for is the one used: the tunnel's WebSocket GET, or SPDY's POST.
    // kubectl tunnels by default from 1.31 on (and logs as read here); an older one (Debian
    // ships 1.20) speaks SPDY whatever it is asked, which the round trips above covered.
    if kubectl_minor().is_some_and(|m| m >= 31) {
        let (method, other) = if websockets {
            ("verb=\"GET\"", "verb=\"POST\"")
        } else {
            ("verb=\"POST\"", "verb=\"GET\"")
        };
        let upgrade = |verb: &str| {
            log.lines().any(|l| {
                l.contains(verb)
                    && l.contains("/portforward")
                    && l.contains("101 Switching Protocols")
            })
        };
        assert!(upgrade(method) && !upgrade(other), "{log}");
        assert_eq!(
            log.contains("negotiated protocol: portforward.k8s.io"),
            websockets,
            "{log}"
        );
    } else {
        eprintln!("kubectl older than 1.31: the protocol it used is not checked");
    }
    eventually("the demo cluster closes kubectl's connections", || {
        open_fds(pid) <= baseline
    });
    assert_eq!(echo.open.load(Ordering::SeqCst), 0);
}

#[test]
fn kubectl_port_forward_through_the_websocket_tunnel() {
    port_forward_round_trips(true);
}

#[test]
fn kubectl_port_forward_over_spdy() {
    port_forward_round_trips(false);
}

/// A kubectl that runs until killed (`get -w`), its output read line by line as it comes.
struct Follower {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Follower {
    fn start(kubeconfig: &Path, args: &[&str]) -> Follower {
        let mut child = Command::new("kubectl")
            .env("KUBECONFIG", kubeconfig)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let (tx, lines) = std::sync::mpsc::channel();
        for out in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { return };
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        Follower {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits up to 20 s for a line that `want` accepts; panics with everything seen.
    fn until(&mut self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if want(&line) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("{what}: kubectl printed\n{}", self.seen.join("\n"));
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn operation_yaml(name: &str, cluster: &str, kind: &str) -> String {
    format!(
        "apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: {name}\nspec:\n  cluster: {cluster}\n  kind: {kind}\n"
    )
}

/// `kubectl get top -w`: the list, then a row for an operation created while it watches,
/// and rows as the controller moves it on. With a name, the watch is that object's only.
#[test]
fn kubectl_get_watch_prints_rows_for_changes() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let mut all = Follower::start(kc, &["get", "top", "-w"]);
    all.until("the list", |l| l.contains("staging-cni-p2m8v"));
    let mut one = Follower::start(kc, &["get", "top", "edge-tokyo-ichor-b5n2s", "-w"]);
    one.until("the object", |l| l.contains("edge-tokyo-ichor-b5n2s"));
    let (ok, out) = kubectl(
        kc,
        &["create", "-f", "-"],
        Some(&operation_yaml(
            "prod-eu-kubernetes-watched",
            "prod-eu",
            "kubernetes",
        )),
    );
    assert!(ok, "{out}");
    let row = all.until("a row for the new operation", |l| {
        l.starts_with("prod-eu-kubernetes-watched")
    });
    assert!(
        row.contains("prod-eu") && row.contains("kubernetes"),
        "{row}"
    );
    all.until("the controller starting it", |l| {
        l.starts_with("prod-eu-kubernetes-watched") && l.contains("Running")
    });
    assert!(
        !all.seen
            .iter()
            .any(|l| l.contains("error") || l.contains("Table")),
        "{:?}",
        all.seen
    );
    // The named watch saw nothing of it: a change of its own object, made after, comes to it
    // after anything the creation would have brought.
    let (ok, out) = kubectl(
        kc,
        &[
            "annotate",
            "top",
            "edge-tokyo-ichor-b5n2s",
            "ichor-test/marker=1",
        ],
        None,
    );
    assert!(ok, "{out}");
    one.until("its own object's change", |l| {
        l.starts_with("edge-tokyo-ichor-b5n2s")
    });
    assert!(
        !one.seen
            .iter()
            .any(|l| l.contains("prod-eu-kubernetes-watched")),
        "{:?}",
        one.seen
    );
}

/// `kubectl get top -w -o json`: each change printed as the object itself.
#[test]
fn kubectl_get_watch_as_json() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let mut w = Follower::start(kc, &["get", "top", "-w", "-o", "json"]);
    w.until("the objects", |l| {
        l.contains("\"name\": \"staging-cni-p2m8v\"")
    });
    let (ok, out) = kubectl(
        kc,
        &["create", "-f", "-"],
        Some(&operation_yaml("prod-eu-ichor-json", "prod-eu", "ichor")),
    );
    assert!(ok, "{out}");
    w.until("the new operation as JSON", |l| {
        l.contains("\"name\": \"prod-eu-ichor-json\"")
    });
    w.until("its status as the controller writes it", |l| {
        l.contains("\"phase\": \"Completed\"")
    });
}

/// Waits up to 20 s for `kubectl get top NAME -o jsonpath={.status.phase}` to say `phase`.
fn wait_for_phase(kc: &Path, name: &str, phase: &str) {
    for _ in 0..200 {
        let (_, out) = kubectl(
            kc,
            &["get", "top", name, "-o", "jsonpath={.status.phase}"],
            None,
        );
        if out == phase {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{name} never reached {phase}");
}

/// The controller's Events: `kubectl get events` (with a field selector, and `-w`) and
/// `kubectl describe top NAME`, as for a real controller's.
#[test]
fn kubectl_shows_the_controllers_events() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let mut w = Follower::start(kc, &["get", "events", "-w"]);
    let (ok, out) = kubectl(
        kc,
        &["create", "-f", "-"],
        Some(&operation_yaml(
            "prod-eu-kubernetes-events",
            "prod-eu",
            "kubernetes",
        )),
    );
    assert!(ok, "{out}");
    w.until("the Started event, as it is recorded", |l| {
        l.contains("Started") && l.contains("talosoperation/prod-eu-kubernetes-events")
    });
    wait_for_phase(kc, "prod-eu-kubernetes-events", "Completed");

    let (ok, out) = kubectl(kc, &["get", "events"], None);
    assert!(ok, "{out}");
    let header = out.lines().next().unwrap_or_default();
    for col in ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        out.lines().any(|l| l.contains("Normal")
            && l.contains("StepCompleted")
            && l.contains("machine/prod-eu-cp1")),
        "{out}"
    );
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=prod-eu-kubernetes-events",
        ],
        None,
    );
    assert!(ok, "{out}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert!(
        rows.iter()
            .all(|l| l.contains("talosoperation/prod-eu-kubernetes-events")),
        "{out}"
    );
    for reason in ["Started", "Completed"] {
        assert!(rows.iter().any(|l| l.contains(reason)), "{reason}: {out}");
    }

    let (ok, out) = kubectl(kc, &["describe", "top", "prod-eu-kubernetes-events"], None);
    assert!(ok, "{out}");
    let events = out
        .split_once("Events:")
        .map(|(_, e)| e)
        .unwrap_or_else(|| panic!("no Events in\n{out}"));
    for word in ["Started", "Completed", "ichor-controller"] {
        assert!(events.contains(word), "{word}: {out}");
    }
    // A machine that failed: a Warning, on the paused operation and on the machine.
    let (ok, out) = kubectl(kc, &["describe", "top", "edge-tokyo-talos-m4q9z"], None);
    assert!(
        ok && out.contains("Warning") && out.contains("MachineFailed"),
        "{out}"
    );
    let (ok, out) = kubectl(kc, &["describe", "machine", "edge-tokyo-w03"], None);
    assert!(
        ok && out.contains("Warning") && out.contains("StepFailed"),
        "{out}"
    );
    // Who may not read Events is told so.
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "events",
            "--as",
            "operations-reader",
            "--as-group",
            "ichor:operation-readers",
        ],
        None,
    );
    assert!(
        !ok && out.contains("cannot list resource \"events\""),
        "{out}"
    );
}

/// `kubectl port-forward svc/ichor-ui` against `demo-cluster`, whose ichor-ui pod leads to an
/// `ichor-tui serve` of that same cluster: the dashboard's own client, over Connect and over
/// gRPC, lists the demo's operations through the port kubectl forwards.
#[tokio::test]
async fn a_call_through_kubectls_port_forward_lists_the_operations() {
    use ichor_client::remote::{Protocol, RemoteClient, RemoteOptions};
    use ichor_model::OperationClient;
    if !kubectl_available() {
        return;
    }
    // The port serve will listen on, named to demo-cluster first.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let target = format!("127.0.0.1:{port}");
    let dc = start_with(&["--ichor-ui-forward", &target]);
    // serve with the server's own identity against the demo cluster.
    let admin = std::fs::read_to_string(&dc.kubeconfig).unwrap();
    let server_kc = dc._dir.path().join("server-kubeconfig");
    std::fs::write(
        &server_kc,
        admin.replace("demo-admin-token", "demo-server-token"),
    )
    .unwrap();
    // Killed when the test ends, however it ends.
    struct Killed(Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut serve = Command::new(env!("CARGO_BIN_EXE_ichor-tui"))
        .args(["serve", "--listen", &target, "--kubeconfig"])
        .arg(&server_kc)
        .arg("--log-file")
        .arg(dc._dir.path().join("serve.log"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let serve = Killed(serve);
    assert_eq!(line.trim(), format!("serving on {target}"));
    let (pf, local, _) = forward_ichor_ui(&dc.kubeconfig, None);
    let pf = Killed(pf);
    for protocol in [Protocol::Connect, Protocol::Grpc] {
        let mut o = RemoteOptions::new(format!("http://127.0.0.1:{local}")).with_protocol(protocol);
        o.token = Some("demo-admin-token".into());
        let client = RemoteClient::new(o).unwrap();
        let ops = client.list_operations(Some("default")).await.unwrap();
        assert_eq!(ops.len(), 7, "{protocol:?}");
    }
    drop(pf);
    drop(serve);
}

/// kubectl lists in chunks (`--chunk-size`, 500 by default) and follows `continue`: every
/// row is there, once, in Tables and in JSON.
#[test]
fn kubectl_lists_in_chunks() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let (ok, out) = kubectl(kc, &["get", "top", "--chunk-size=2", "--no-headers"], None);
    assert!(ok, "{out}");
    assert_eq!(out.lines().count(), 7, "{out}");
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "top",
            "--chunk-size=3",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        None,
    );
    assert!(ok, "{out}");
    let mut names: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(names.len(), 7, "{out}");
    names.dedup();
    assert_eq!(names.len(), 7, "{out}");
}
