//! What idle watches cost the demo cluster's API: the process's CPU time while 100 watches on
//! the operations (bookmarks on, kube's 290 s timeout) stay open and idle. A figure, never an
//! assertion: under `cargo test` (no `--bench`) a short pass checks that it runs.

use futures::StreamExt;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_resources::TalosOperation;
use kube::api::{Api, WatchParams};
use std::time::Duration;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (watches, window) = if full {
        (100, Duration::from_secs(10))
    } else {
        (10, Duration::from_millis(200))
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let used = rt.block_on(idle(watches, window));
    println!(
        "idle watches: {watches} open for {} ms used {} ms of CPU ({:.1} ms per second)",
        window.as_millis(),
        used.as_millis(),
        used.as_secs_f64() * 1000.0 / window.as_secs_f64()
    );
}

/// Opens `n` watches, keeps them polled and idle for `window`, and returns the CPU used then.
async fn idle(n: usize, window: Duration) -> Duration {
    let api = EmbeddedApi::default();
    ichor_demo::demo::seed(&api, jiff::Timestamp::now()).expect("the demo's objects");
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let mut streams = Vec::new();
    for _ in 0..n {
        let mut w = ops
            .watch(&WatchParams::default(), "0")
            .await
            .expect("a watch")
            .boxed();
        // The synthetic ADDED events of what is there.
        while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(50), w.next()).await {}
        streams.push(w);
    }
    let polls = tokio::spawn(async move {
        let mut all = futures::stream::select_all(streams);
        while all.next().await.is_some() {}
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = cpu_time();
    tokio::time::sleep(window).await;
    let used = cpu_time().saturating_sub(before);
    polls.abort();
    used
}

/// The process's CPU time so far (user and system).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime are fields 14 and 15, the 12th and 13th after the name.
    let ticks: u64 = fields
        .get(11..13)
        .map(|f| f.iter().filter_map(|t| t.parse::<u64>().ok()).sum())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_millis(ticks * 1000 / per_second)
}
