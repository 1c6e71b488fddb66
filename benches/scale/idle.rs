//! Programs idle in a pty (120×36), measured side by side over one window: the dashboard on
//! the Operations screen (a poll every 3 s while the demo's paused operation is unfinished)
//! over a server and in-process at each size, and kdash beside the 7-operation dashboard. For
//! each: CPU per idle minute, memory, the bytes written to the terminal, the bytes on its wire,
//! and, in-process, the requests it makes of the Kubernetes API (counted by `demo-cluster`, by
//! user).
//!
//! - over a server: `--server` (gRPC) to `serve --demo`, through a counting relay;
//! - in-process: `--kubeconfig` (the demo admin) to a `demo-cluster` process, through a
//!   counting relay, `--backend in-process`;
//! - through the tunnel: `--kubeconfig` to a `demo-cluster` whose ichor-ui port-forwards go to a
//!   `serve` process of its own (`--ichor-ui-forward`), through a counting relay,
//!   `--backend remote` (the wire counted is the port-forward's; the API's requests are not
//!   counted: serve's own, as the same user, would be among them).
//!
//! Each subject has its own processes and its own home; they share the machine's cores, and
//! CPU is counted per process, so one window measures them all.

use super::common::procs::{self, Cpu, Proc};
use super::common::relay::Relay;
use super::pty;
use ichor_demo::apiserver::auth::users;
use ichor_demo::apiserver::requests::RequestCount;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// How the dashboard reaches the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Server,
    InProcess,
    Tunnel,
}

impl Reach {
    pub fn name(self) -> &'static str {
        match self {
            Reach::Server => "--server (gRPC) to serve --demo",
            Reach::InProcess => "in-process, --kubeconfig to demo-cluster",
            Reach::Tunnel => "through the tunnel to demo-cluster's ichor-ui (serve)",
        }
    }
}

/// What one idle window measured of one subject.
pub struct Idle {
    pub cpu_s: f64,
    pub peak_kb: u32,
    pub rss_kb: u32,
    pub terminal_bytes: usize,
    /// Bytes on the dashboard's wire (to the server, or to the Kubernetes API): up, down.
    pub wire: (u64, u64),
    /// In-process: the dashboard's requests to the Kubernetes API in the window, by
    /// "verb resource".
    pub requests: BTreeMap<String, u64>,
}

/// The requests a `demo-cluster` at `addr` has served, by user, verb and resource.
pub fn requests(rt: &Runtime, addr: &str) -> Vec<RequestCount> {
    use http_body_util::BodyExt as _;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let req = http::Request::get(format!(
        "http://{addr}{}",
        ichor_demo::apiserver::requests::PATH
    ))
    .header("authorization", format!("Bearer {}", users::ADMIN_TOKEN))
    .body(http_body_util::Full::default())
    .expect("a request");
    let body = rt.block_on(async {
        let resp = client.request(req).await.expect("asking for the counts");
        resp.into_body()
            .collect()
            .await
            .expect("the counts")
            .to_bytes()
    });
    #[derive(serde::Deserialize)]
    struct Doc {
        requests: Vec<RequestCount>,
    }
    let doc: Doc = serde_json::from_slice(&body).expect("the counts as JSON");
    doc.requests
}

/// The counts of `who` (a filter on the user) by "verb resource".
pub fn counts_of(rows: &[RequestCount], who: &dyn Fn(&str) -> bool) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for r in rows.iter().filter(|r| who(&r.user)) {
        *out.entry(format!("{} {}", r.verb, r.resource)).or_default() += r.count;
    }
    out
}

/// `later - earlier`, by key (keys with no change left out).
pub fn difference(
    earlier: &BTreeMap<String, u64>,
    later: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    later
        .iter()
        .map(|(k, v)| (k.clone(), v - earlier.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// A subject's own home (HOME, its logs), under `home`.
pub fn own_home(home: &Path, name: &str) -> PathBuf {
    let dir = home.join(name);
    std::fs::create_dir_all(&dir).expect("a subject's home");
    dir
}

/// The dashboard's pty, 120×36, its log in `home`, with `args`.
pub fn dashboard<'a>(bin: &'a Path, home: &'a Path, args: &[&str]) -> pty::Spawn<'a> {
    let mut s = pty::Spawn::demo(bin, home).size(120, 36);
    s.args = vec![
        "--log-file".into(),
        home.join("dashboard.log").display().to_string(),
    ];
    s.args(args)
}

/// A `demo-cluster` with `extra` more operations whose ichor-ui port-forwards reach a `serve` of
/// its own (both pushed to `backends`); returns the cluster's address.
fn tunnel_far_end(bin: &Path, home: &Path, extra: usize, backends: &mut Vec<Proc>) -> String {
    let far = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port for the tunnel's serve")
        .to_string();
    let (cluster, addr) =
        procs::demo_cluster_forwarding(std::process::Command::new(bin), home, extra, Some(&far));
    let kubeconfig = home.join("kubeconfig-serve");
    procs::write_kubeconfig(&kubeconfig, &addr, users::ADMIN_TOKEN);
    let (serve, _) = procs::serve_kubeconfig_at(bin, home, &kubeconfig, &far);
    backends.extend([cluster, serve]);
    addr
}

/// One program in a pty and what it reaches.
pub struct Subject {
    pub label: String,
    pty: pty::Pty,
    /// The dashboard's server or Kubernetes API, and the tunnel's serve (killed on drop).
    _backends: Vec<Proc>,
    relay: Option<Relay>,
    /// In-process: the `demo-cluster` whose counts hold the dashboard's requests.
    counted_at: Option<String>,
    /// What the screen says once the list has loaded (none for kdash).
    loaded: Option<String>,
}

/// A reading at the start of a window.
struct Reading {
    cpu: Cpu,
    bytes: usize,
    requests: BTreeMap<String, u64>,
}

impl Subject {
    /// The dashboard with `n` operations in all, reaching its own backend.
    pub fn dashboard(rt: &Runtime, bin: &Path, home: &Path, n: usize, reach: Reach) -> Subject {
        let tag = match reach {
            Reach::Server => "server",
            Reach::InProcess => "in-process",
            Reach::Tunnel => "tunnel",
        };
        let home = own_home(home, &format!("idle-{tag}-{n}"));
        let mut backends = Vec::new();
        let target = match reach {
            Reach::Server => {
                let (p, url) = procs::serve_demo(bin, &home, n - 7);
                backends.push(p);
                url.trim_start_matches("http://").to_string()
            }
            Reach::InProcess => {
                let (p, addr) = procs::demo_cluster(bin, &home, n - 7);
                backends.push(p);
                addr
            }
            Reach::Tunnel => tunnel_far_end(bin, &home, n - 7, &mut backends),
        };
        let relay = rt.block_on(Relay::start(target.clone()));
        let kubeconfig = home.join("kubeconfig-relay");
        let server_url = format!("http://{}", relay.addr);
        let args: Vec<&str> = match reach {
            Reach::Server => vec!["--server", &server_url, "--protocol", "grpc"],
            Reach::InProcess | Reach::Tunnel => {
                procs::write_kubeconfig(&kubeconfig, &relay.addr, users::ADMIN_TOKEN);
                let backend = if reach == Reach::Tunnel {
                    "remote"
                } else {
                    "in-process"
                };
                vec![
                    "--kubeconfig",
                    kubeconfig.to_str().unwrap_or_default(),
                    "--backend",
                    backend,
                ]
            }
        };
        let pty = dashboard(bin, &home, &args).start();
        Subject {
            label: format!("idle, {n} operations, {}", reach.name()),
            pty,
            _backends: backends,
            relay: Some(relay),
            counted_at: (reach == Reach::InProcess).then_some(target),
            loaded: Some(format!("Operations ({n})")),
        }
    }

    /// Any program in a 120×36 pty, reaching nothing we count.
    pub fn other(label: &str, spawn: pty::Spawn<'_>) -> Subject {
        Subject {
            label: label.to_string(),
            pty: spawn.size(120, 36).start(),
            _backends: Vec::new(),
            relay: None,
            counted_at: None,
            loaded: None,
        }
    }

    /// Waits (at most `limit`) until the list has loaded and the demo's rollout has finished
    /// on screen: no row says Running, so the polls answer `unchanged` from then on.
    fn settle(&self, limit: Duration) {
        let Some(loaded) = &self.loaded else {
            return;
        };
        let _ = self.pty.try_wait_for(limit, &|s| {
            s.contains(loaded.as_str()) && !s.contains("Running")
        });
    }

    fn read(&self, rt: &Runtime) -> Reading {
        let admin = |u: &str| u == users::ADMIN;
        Reading {
            cpu: Cpu::read(self.pty.pid()),
            bytes: self.pty.raw_len(),
            requests: self
                .counted_at
                .as_ref()
                .map(|at| counts_of(&requests(rt, at), &admin))
                .unwrap_or_default(),
        }
    }

    fn since(&self, rt: &Runtime, start: &Reading) -> Idle {
        let end = self.read(rt);
        let (peak_kb, rss_kb) = procs::memory_kb(self.pty.pid());
        Idle {
            cpu_s: start.cpu.since(&end.cpu),
            peak_kb,
            rss_kb,
            terminal_bytes: end.bytes - start.bytes,
            wire: self.relay.as_ref().map(Relay::counts).unwrap_or_default(),
            requests: difference(&start.requests, &end.requests),
        }
    }

    /// Whether this is an ichor-tui dashboard (which exits on `q` with 0).
    fn quits_cleanly(&self) -> bool {
        self.loaded.is_some()
    }

    /// Ends it: `q`, and for the dashboard its exit status checked.
    fn end(mut self) {
        self.pty.send("q");
        if self.quits_cleanly() {
            assert_eq!(self.pty.wait_exit(), 0, "{} exits with 0", self.label);
        }
    }
}

/// Settles every subject, then measures them over `runs` windows of `window`; returns each
/// subject's label and its windows, and ends the subjects.
pub fn measure(
    rt: &Runtime,
    subjects: Vec<Subject>,
    runs: usize,
    window: Duration,
) -> Vec<(String, Vec<Idle>)> {
    let t = Instant::now();
    for s in &subjects {
        s.settle(Duration::from_secs(120).saturating_sub(t.elapsed()));
    }
    // The poll after the last change, and its frame.
    std::thread::sleep(Duration::from_secs(4));
    let mut out: Vec<(String, Vec<Idle>)> = subjects
        .iter()
        .map(|s| (s.label.clone(), Vec::new()))
        .collect();
    for _ in 0..runs {
        for s in &subjects {
            if let Some(r) = &s.relay {
                r.reset();
            }
        }
        let start: Vec<Reading> = subjects.iter().map(|s| s.read(rt)).collect();
        std::thread::sleep(window);
        for ((s, r), (_, windows)) in subjects.iter().zip(&start).zip(out.iter_mut()) {
            windows.push(s.since(rt, r));
        }
    }
    for s in subjects {
        s.end();
    }
    out
}
