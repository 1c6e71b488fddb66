//! `kubectl port-forward` to ichor-ui: over WebSockets and SPDY, nothing left open when it ends,
//! and the dashboard's own client through the port it forwards.

use super::*;

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
    crate::common::eventually_blocking("the target's connections close after the clients'", || {
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
    crate::common::eventually_blocking("the demo cluster closes kubectl's connections", || {
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
