//! The dashboard itself, idle in a pty (120×36, the Operations screen, a poll every 3 s while
//! the demo's paused operation is unfinished): its CPU per idle minute, its memory, the bytes
//! it writes to the terminal, the bytes on its wire, and, in-process, the requests it makes
//! of the Kubernetes API (counted by `demo-cluster`, by user).
//!
//! - over a server: `--server` (gRPC) to `serve --demo`, through a counting relay;
//! - in-process: `--kubeconfig` (the demo admin) to a `demo-cluster` process, through a
//!   counting relay, `--backend in-process`.

use super::common::procs::{self, Cpu, Proc};
use super::common::relay::Relay;
use super::pty;
use ichor_demo::apiserver::auth::users;
use ichor_demo::apiserver::requests::RequestCount;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// How the dashboard reaches the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Server,
    InProcess,
}

impl Reach {
    pub fn name(self) -> &'static str {
        match self {
            Reach::Server => "--server (gRPC) to serve --demo",
            Reach::InProcess => "in-process, --kubeconfig to demo-cluster",
        }
    }
}

/// What one idle window measured.
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

/// The dashboard's pty: `args` added to the log file, 120×36.
pub fn dashboard<'a>(bin: &'a Path, home: &'a Path, args: &[&str]) -> pty::Spawn<'a> {
    let mut s = pty::Spawn::demo(bin, home).size(120, 36);
    s.args = vec![
        "--log-file".into(),
        home.join("dashboard.log").display().to_string(),
    ];
    s.args(args)
}

/// Waits (at most `limit`) until the demo's rollout has finished on screen: no row says
/// Running, so the polls answer `unchanged` from here on.
pub fn settle(p: &pty::Pty, limit: Duration) {
    let t = Instant::now();
    let _ = p.try_wait_for(limit, &|s| !s.contains("Running"));
    // The poll after the last change, and its frame.
    std::thread::sleep(Duration::from_secs(4).min(limit.saturating_sub(t.elapsed())));
}

/// One idle window of `window` with `n` operations in all.
pub fn idle(
    rt: &Runtime,
    bin: &Path,
    home: &Path,
    n: usize,
    reach: Reach,
    window: Duration,
) -> Idle {
    let (_backend, target): (Proc, String) = match reach {
        Reach::Server => {
            let (p, url) = procs::serve_demo(bin, home, n - 7);
            (p, url.trim_start_matches("http://").to_string())
        }
        Reach::InProcess => procs::demo_cluster(bin, home, n - 7),
    };
    let relay = rt.block_on(Relay::start(target.clone()));
    let kubeconfig = home.join("kubeconfig-relay");
    let server_url = format!("http://{}", relay.addr);
    let args: Vec<&str> = match reach {
        Reach::Server => vec!["--server", &server_url, "--protocol", "grpc"],
        Reach::InProcess => {
            procs::write_kubeconfig(&kubeconfig, &relay.addr, users::ADMIN_TOKEN);
            vec![
                "--kubeconfig",
                kubeconfig.to_str().unwrap_or_default(),
                "--backend",
                "in-process",
            ]
        }
    };
    let mut p = dashboard(bin, home, &args).start();
    p.wait_text(&format!("Operations ({n})"));
    settle(&p, Duration::from_secs(90));
    let admin = |u: &str| u == users::ADMIN;
    let asked = |rt: &Runtime| match reach {
        Reach::InProcess => counts_of(&requests(rt, &target), &admin),
        Reach::Server => BTreeMap::new(),
    };
    let (cpu0, bytes0, req0) = (Cpu::read(p.pid()), p.raw_len(), asked(rt));
    relay.reset();
    std::thread::sleep(window);
    let (cpu1, bytes1, req1) = (Cpu::read(p.pid()), p.raw_len(), asked(rt));
    let wire = relay.counts();
    let (peak_kb, rss_kb) = procs::memory_kb(p.pid());
    p.send("q");
    assert_eq!(p.wait_exit(), 0);
    Idle {
        cpu_s: cpu0.since(&cpu1),
        peak_kb,
        rss_kb,
        terminal_bytes: bytes1 - bytes0,
        wire,
        requests: difference(&req0, &req1),
    }
}
