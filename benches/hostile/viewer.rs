//! One person with a viewer's token against `serve` (issue 44's attacks, as `tests/serve/shares.rs`
//! makes them: [`attacks`]), while another person, the operator, asks ListOperations every
//! 100 ms and subscribes anew every second (each on a new connection): the operator's unary
//! median and p99 and time to a subscription's first update, quiet and under each attack, what
//! was refused to the operator, and serve's CPU and peak RSS in each window.

use super::attacks::{self, LIST, Tally, WATCH};
use super::common::procs::{self, Cpu, Proc};
use super::server;
use futures::StreamExt as _;
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::auth::users;
use ichor_model::{ListQuery, OperationClient as _, View, WatchRequest};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How big the attacks are: the issue's, or a tiny pass under `cargo test`.
#[derive(Clone, Copy)]
pub(crate) struct Sizes {
    pub(crate) calls: (usize, usize),
    pub(crate) connections: usize,
    pub(crate) subscriptions: (usize, usize),
    pub(crate) garbage: usize,
}

impl Sizes {
    pub(crate) const ISSUE: Sizes = Sizes {
        calls: (3, 90),
        connections: 2100,
        subscriptions: (5, 100),
        garbage: 300,
    };
    pub(crate) const TINY: Sizes = Sizes {
        calls: (1, 10),
        connections: 20,
        subscriptions: (1, 20),
        garbage: 5,
    };
}

/// The attacks, in the order they run.
#[derive(Clone, Copy, Debug)]
enum Attack {
    Calls,
    Connections,
    Subscriptions,
    GarbageTokens,
    LiveQueries,
}

impl Attack {
    const ALL: [Attack; 5] = [
        Attack::Calls,
        Attack::Connections,
        Attack::Subscriptions,
        Attack::GarbageTokens,
        Attack::LiveQueries,
    ];

    fn name(self, s: &Sizes) -> String {
        match self {
            Attack::Calls => format!(
                "{} body-less ListOperations on {} connections",
                s.calls.0 * s.calls.1,
                s.calls.0
            ),
            Attack::Connections => {
                format!("{} connections, a body-less Watch each", s.connections)
            }
            Attack::Subscriptions => format!(
                "{} body-less WatchOperations on {} connections",
                s.subscriptions.0 * s.subscriptions.1,
                s.subscriptions.0
            ),
            Attack::GarbageTokens => format!("… and {} garbage-token connections", s.garbage),
            Attack::LiveQueries => "2 people, 4 distinct lists each in default".into(),
        }
    }
}

/// One window's figures.
pub(crate) struct Window {
    name: String,
    cpu_s: f64,
    peak_kb: u32,
    unary: Vec<Duration>,
    first: Vec<Duration>,
    refused: usize,
    first_refusal: Option<String>,
}

/// The operator's list.
fn the_list(page_size: u32) -> ListQuery {
    ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        page_size,
        ..ListQuery::default()
    }
}

/// The other person for `window`: what it got.
async fn probe(url: String, window: Duration) -> (Vec<Duration>, Vec<Duration>, Vec<String>) {
    let until = Instant::now() + window;
    let unary = {
        let url = url.clone();
        tokio::spawn(async move {
            let c = server::client_over(&url, Some(users::OPERATOR_TOKEN), Protocol::Grpc);
            let (mut times, mut refused) = (Vec::new(), Vec::new());
            while Instant::now() < until {
                let t = Instant::now();
                match c.list_page(&the_list(100)).await {
                    Ok(_) => times.push(t.elapsed()),
                    Err(e) => refused.push(format!("ListOperations: {}", e.message)),
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (times, refused)
        })
    };
    let mut first = Vec::new();
    let mut refused = Vec::new();
    while Instant::now() < until {
        let c = server::client_over(&url, Some(users::OPERATOR_TOKEN), Protocol::Grpc);
        let req = WatchRequest {
            list: the_list(100),
            follow: None,
            page_deltas: true,
        };
        let t = Instant::now();
        let got = tokio::time::timeout(ichor_model::SILENCE_LIMIT, async {
            let mut updates = c.watch_operations(&req).await?;
            updates.next().await.unwrap_or_else(|| {
                Err(ichor_model::ApiError::new(
                    ichor_model::Code::Unavailable,
                    "ended",
                ))
            })
        })
        .await;
        match got {
            Ok(Ok(_)) => first.push(t.elapsed()),
            Ok(Err(e)) => refused.push(format!("WatchOperations: {}", e.message)),
            Err(_) => refused.push("WatchOperations: no first update in time".into()),
        }
        tokio::time::sleep(Duration::from_secs(1).saturating_sub(t.elapsed())).await;
    }
    let (times, more) = unary.await.unwrap_or_default();
    refused.extend(more);
    (times, first, refused)
}

/// A running attack: stopped by [`Running::stop`].
struct Running {
    tally: Arc<Tally>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    fn stop(self) {
        self.tally.stop.store(true, Ordering::SeqCst);
        for t in self.tasks {
            t.abort();
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// `n` connections each holding `calls` body-less calls of `path` by the viewer.
fn bodiless(
    rt: &tokio::runtime::Runtime,
    tally: &Arc<Tally>,
    addr: SocketAddr,
    path: &'static str,
    (n, calls): (usize, usize),
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..n)
        .map(|_| {
            rt.spawn(attacks::hold_bodiless(
                addr,
                path,
                users::VIEWER_TOKEN.to_string(),
                calls,
                tally.clone(),
            ))
        })
        .collect()
}

/// One connection after another, each a WatchOperations with a garbage token, held until the
/// server closes it.
async fn garbage(addr: SocketAddr, i: usize, tally: Arc<Tally>) {
    while !tally.stop.load(Ordering::SeqCst) {
        let Ok(mut sender) = attacks::h2(addr).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let body = attacks::whole(attacks::frame(0, b"", None));
        let req = attacks::grpc(addr, WATCH, Some(&format!("garbage-{i}")), &[], body);
        tally.sent.fetch_add(1, Ordering::SeqCst);
        if let Ok(resp) = sender.send_request(req).await {
            let _ = attacks::code_of(resp).await;
        }
        while !sender.is_closed() && !tally.stop.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tally.closed.fetch_add(1, Ordering::SeqCst);
    }
}

/// Two people's streams, four distinct lists each in `default`, held until stopped.
async fn lists(url: String, person: usize, tally: Arc<Tally>) {
    let token = match person {
        0 => users::VIEWER_TOKEN.to_string(),
        _ => ichor_demo::demo::bench_token(0),
    };
    let c = server::client_over(&url, Some(&token), Protocol::Grpc);
    let mut held = Vec::new();
    for i in 0..4u32 {
        let req = WatchRequest {
            list: the_list(1 + 4 * u32::try_from(person).unwrap_or(0) + i),
            follow: None,
            page_deltas: true,
        };
        tally.sent.fetch_add(1, Ordering::SeqCst);
        if let Ok(updates) = c.watch_operations(&req).await {
            held.push(tokio::spawn(updates.for_each(|_| async {})));
        }
    }
    while !tally.stop.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for h in held {
        h.abort();
    }
}

fn start(
    attack: Attack,
    rt: &tokio::runtime::Runtime,
    (addr, url): (SocketAddr, &str),
    s: &Sizes,
) -> Running {
    let tally = Arc::new(Tally::default());
    let tasks = match attack {
        Attack::Calls => bodiless(rt, &tally, addr, LIST, s.calls),
        Attack::Connections => bodiless(rt, &tally, addr, WATCH, (s.connections, 1)),
        Attack::Subscriptions => bodiless(rt, &tally, addr, WATCH, s.subscriptions),
        Attack::GarbageTokens => {
            let mut t = bodiless(rt, &tally, addr, WATCH, s.subscriptions);
            t.extend((0..s.garbage).map(|i| rt.spawn(garbage(addr, i, tally.clone()))));
            t
        }
        Attack::LiveQueries => (0..2)
            .map(|p| rt.spawn(lists(url.to_string(), p, tally.clone())))
            .collect(),
    };
    // Under way before the window opens.
    std::thread::sleep(Duration::from_secs(2));
    Running { tally, tasks }
}

/// The operator probed for `window` while serve's CPU and peak RSS are read.
fn measure(
    rt: &tokio::runtime::Runtime,
    serve: &Proc,
    url: &str,
    name: String,
    window: Duration,
) -> Window {
    procs::take_peak_kb(serve.pid());
    let cpu0 = Cpu::read(serve.pid());
    let (unary, first, refused) = rt.block_on(probe(url.to_string(), window));
    let cpu1 = Cpu::read(serve.pid());
    Window {
        name,
        cpu_s: cpu0.since(&cpu1),
        peak_kb: procs::take_peak_kb(serve.pid()),
        unary,
        first,
        refused: refused.len(),
        first_refusal: refused.into_iter().next(),
    }
}

/// Quiet, then each attack: the windows.
pub(crate) fn run(
    rt: &tokio::runtime::Runtime,
    serve: &Proc,
    (addr, url): (SocketAddr, &str),
    sizes: &Sizes,
    window: Duration,
) -> Vec<Window> {
    let mut windows = vec![measure(rt, serve, url, "quiet".into(), window)];
    for attack in Attack::ALL {
        let running = start(attack, rt, (addr, url), sizes);
        windows.push(measure(rt, serve, url, attack.name(sizes), window));
        running.stop();
    }
    windows
}

fn ms(values: &[Duration], p: f64) -> f64 {
    super::percentile_ms(values, p)
}

/// Prints each window, and whether the goal is met: the operator's figures within twice the
/// quiet ones, nothing refused to them, serve's peak RSS within 64 MiB of quiet.
pub(crate) fn report(windows: &[Window], window: Duration) {
    let Some(quiet) = windows.first() else {
        return;
    };
    let per_min = 60.0 / window.as_secs_f64();
    for w in windows {
        println!(
            "hostile (one viewer): {:<48} the operator's ListOperations median {:.2} ms, p99 {:.2} ms ({} calls); first update median {:.1} ms, p99 {:.1} ms ({}); refused {}{}; serve CPU {:.2} s/min, peak RSS {:.1} MiB ({:+.1} over quiet)",
            w.name,
            ms(&w.unary, 0.5),
            ms(&w.unary, 0.99),
            w.unary.len(),
            ms(&w.first, 0.5),
            ms(&w.first, 0.99),
            w.first.len(),
            w.refused,
            w.first_refusal
                .as_deref()
                .map(|r| format!(" (the first: {r})"))
                .unwrap_or_default(),
            w.cpu_s * per_min,
            super::mib(w.peak_kb),
            super::mib(w.peak_kb) - super::mib(quiet.peak_kb),
        );
    }
    for w in windows.iter().skip(1) {
        let within = |a: &[Duration], b: &[Duration], p: f64| ms(a, p) <= 2.0 * ms(b, p);
        let figures = within(&w.unary, &quiet.unary, 0.5)
            && within(&w.unary, &quiet.unary, 0.99)
            && within(&w.first, &quiet.first, 0.5)
            && within(&w.first, &quiet.first, 0.99);
        let rss = super::mib(w.peak_kb) - super::mib(quiet.peak_kb) <= 64.0;
        let met = |b: bool| if b { "met" } else { "NOT met" };
        println!(
            "hostile (one viewer): goal under {}: figures within twice quiet {}, nothing refused {}, RSS within 64 MiB of quiet {}",
            w.name,
            met(figures),
            met(w.refused == 0),
            met(rss),
        );
    }
}
