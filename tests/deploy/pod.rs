//! The Deployment's container run as a kubelet runs it: the binary with exactly the
//! container's args and env (and nothing else of this process's environment), plus what a pod's
//! service account gives it, here a kubeconfig naming a `demo-cluster` with serve's token; then
//! its probes asked at their paths and ports, as the kubelet asks them (HTTP GET, 200), and a
//! dashboard's call through the tunnel to its loopback API port. In a network namespace of its
//! own, so the manifest's fixed ports cannot clash with anything on this machine.

use super::{Manifests, Proc, get, kubeconfig, present};
use ichor_demo::apiserver::auth::users;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether the loopback (of `netns`, else this host's) has ::1: `ip -6 addr show lo` says it
/// (curl's words for a refused connection differ between its versions).
fn loopback_has_ipv6(netns: Option<&Path>) -> bool {
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("nsenter");
            c.arg(format!("--net={}", ns.display())).arg("--").arg("ip");
            c
        }
        None => Command::new("ip"),
    };
    cmd.args(["-6", "addr", "show", "lo"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("inet6 ::1/128"))
}

/// A network namespace with its loopback up, held by a process of its own.
struct Netns {
    _holder: Proc,
    path: PathBuf,
}

impl Netns {
    /// `None` where one cannot be made (`unshare --net` needs root; `ip` sets loopback up).
    fn new() -> Option<Netns> {
        if !present("unshare", &["--net", "true"]) || !present("ip", &["-V"]) {
            return None;
        }
        let cmd = {
            let mut c = Command::new("unshare");
            c.args([
                "--net",
                "--",
                "sh",
                "-c",
                "ip link set lo up && echo up && exec sleep 3600",
            ]);
            c
        };
        let (holder, _) = Proc::start_saying(cmd, &["up"]);
        let path = PathBuf::from(format!("/proc/{}/ns/net", holder.0.id()));
        Some(Netns {
            _holder: holder,
            path,
        })
    }

    /// `program`, run inside.
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new("nsenter");
        c.arg(format!("--net={}", self.path.display()))
            .arg("--")
            .arg(program);
        c
    }
}

fn in_netns(netns: Option<&Netns>, program: &Path) -> Command {
    match netns {
        Some(ns) => ns.command(program),
        None => Command::new(program),
    }
}

#[test]
fn the_deployments_container_answers_its_probes_and_the_tunnel() {
    let m = Manifests::read();
    let c = m.container();
    let bin = Path::new(env!("CARGO_BIN_EXE_ichor-tui"));
    let netns = Netns::new();
    if netns.is_none() {
        eprintln!("running on this machine's own network: ports 8080 and 9090 must be free");
    }
    let ns_path = netns.as_ref().map(|n| n.path.as_path());
    let home = tempfile::tempdir().unwrap();
    let demo_config = home.path().join("demo-kubeconfig");

    // The cluster: its ichor-ui pod's api port leads to the container's.
    let mut demo = in_netns(netns.as_ref(), bin);
    demo.args([
        "demo-cluster",
        "--listen",
        "127.0.0.1:0",
        "--ichor-ui-forward",
    ])
    .arg(format!("127.0.0.1:{}", m.port("api")))
    .arg("--kubeconfig-out")
    .arg(&demo_config)
    .arg("--log-file")
    .arg(home.path().join("demo.log"));
    let (_demo, said) = Proc::start_saying(demo, &["demo cluster listening on "]);
    let api_url = said[0]
        .trim_start_matches("demo cluster listening on ")
        .to_string();
    let serve_config = home.path().join("serve-kubeconfig");
    std::fs::write(&serve_config, kubeconfig(&api_url, users::SERVER_TOKEN)).unwrap();

    // The container: exactly its args and env; its service account's credentials as a
    // kubeconfig (in a pod: the token mount and KUBERNETES_SERVICE_HOST).
    let mut serve = in_netns(netns.as_ref(), bin);
    serve.args(c.args.clone().unwrap_or_default()).env_clear();
    for var in c.env.iter().flatten() {
        serve.env(&var.name, var.value.clone().unwrap_or_default());
    }
    let stderr = home.path().join("serve.stderr");
    serve
        .env("KUBECONFIG", &serve_config)
        .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
    let (api, metrics) = (m.port("api"), m.port("metrics"));
    let (serving, said) = Proc::start_saying(serve, &["serving on ", "metrics on "]);
    assert_eq!(said[0], format!("serving on 127.0.0.1:{api}"));
    assert_eq!(said[1], format!("metrics on http://[::]:{metrics}/metrics"));

    // The probes, as the kubelet asks them (at the pod's address: here its loopbacks), over
    // IPv4 and IPv6: a dual-stack or IPv6 cluster probes the pod's IPv6 address.
    let has_ipv6 = loopback_has_ipv6(ns_path);
    assert!(
        has_ipv6 || std::env::var_os("CI").is_none(),
        "no IPv6 on the loopback, and CI is set"
    );
    for (what, probe) in [
        ("liveness", &c.liveness_probe),
        ("readiness", &c.readiness_probe),
    ] {
        let http = probe.as_ref().and_then(|p| p.http_get.as_ref()).unwrap();
        let port = match &http.port {
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(name) => m.port(name),
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => {
                u16::try_from(*n).unwrap()
            }
        };
        for host in ["127.0.0.1", "[::1]"] {
            if host == "[::1]" && !has_ipv6 {
                eprintln!("no IPv6 on the loopback here: {what} asked on IPv4 alone");
                continue;
            }
            for port in [port, api] {
                let url = format!("http://{host}:{port}{}", http.path.as_deref().unwrap());
                assert_eq!(get(ns_path, &url), (200, "ok".to_string()), "{what}: {url}");
            }
        }
    }
    let (code, verbose) = get(
        ns_path,
        &format!("http://127.0.0.1:{metrics}/readyz?verbose"),
    );
    assert_eq!(code, 200, "{verbose}");
    assert!(verbose.contains("[+]kubernetes-api ok"), "{verbose}");
    let (code, scraped) = get(ns_path, &format!("http://127.0.0.1:{metrics}/metrics"));
    assert_eq!(code, 200);
    assert!(
        scraped.contains("ichor_serve_connections_open"),
        "{scraped}"
    );

    // A dashboard's call through the tunnel (the Service's api port, port-forwarded to the
    // pod's loopback) is answered by this container, as the viewer.
    let mut verb = in_netns(netns.as_ref(), bin);
    verb.args(["op", "list", "--backend", "remote", "--kubeconfig"])
        .arg(&demo_config)
        .args(["--context", users::VIEWER, "--log-file"])
        .arg(home.path().join("verb.log"));
    let out = verb.output().unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{listed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(listed.lines().count() > 1, "operations listed: {listed}");

    // Its log: JSON lines on stderr, as `--log-format json` asks.
    drop(serving);
    let log = std::fs::read_to_string(&stderr).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(
        lines.iter().any(
            |l| l["message"] == "serving OperationService and ClusterService"
                && l["level"] == "INFO"
        ),
        "{log}"
    );
    drop(netns);
}
