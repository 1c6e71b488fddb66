//! What watches cost the demo cluster: the memory of each change the history keeps, and the
//! CPU of idle watches. Figures printed (`cargo test --test watch_measures -- --nocapture`),
//! bounds loose: these are measures, not timings.

mod common;

use common::{op, small_cluster};
use futures::StreamExt;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_resources::TalosOperation;
use kube::api::{Api, PostParams, WatchParams};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

/// The system allocator, counting the bytes each thread allocates and frees (tests run in
/// parallel: a thread's own count is not disturbed by the others').
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|c| c.set(c.get() + delta));
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes of heap one kept change of a demo operation costs: `n` edits of one object (the store
/// keeps one copy; the history keeps each), over `n`.
fn bytes_per_change(api: &EmbeddedApi, name: &str, n: usize) -> (f64, usize) {
    let json_len = serde_json::to_vec(&api.object("talosoperations", "default", name).unwrap())
        .unwrap()
        .len();
    // Fill the ring with this object's changes first: the ones measured come on top of them.
    api.set_history_limit(n);
    for i in 0..n {
        api.edit("talosoperations", "default", name, |o| {
            o["metadata"]["annotations"]["n"] = serde_json::json!(i.to_string());
        });
    }
    let before = live();
    api.set_history_limit(2 * n);
    for i in 0..n {
        api.edit("talosoperations", "default", name, |o| {
            o["metadata"]["annotations"]["n"] = serde_json::json!(format!("{i:>9}"));
        });
    }
    let after = live();
    ((after - before) as f64 / n as f64, json_len)
}

#[test]
fn memory_per_kept_change() {
    let api = EmbeddedApi::default();
    ichor_demo::demo::seed(&api, jiff::Timestamp::now()).unwrap();
    let n = 1000;
    for name in ["staging-talos-x7k2p", "prod-eu-kubernetes-9fj3c"] {
        let (per, json) = bytes_per_change(&api, name, n);
        let estimate = api.history_size();
        println!(
            "history: {name}: {per:.0} B per kept change ({json} B of JSON); {} changes kept, {} B by the history's own count",
            estimate.entries, estimate.bytes
        );
        assert!(
            per < (json + 1024) as f64,
            "{per} B per change for {json} B of JSON"
        );
        assert!(per > json as f64 * 0.9, "the measure measures: {per}");
    }
}

/// 100 idle watches (bookmarks on, kube's 290 s timeout) for 2 s: the process's CPU time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_watches_cost_no_cpu() {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.create(&PostParams::default(), &op("a", "c1", "talos", 1))
        .await
        .unwrap();
    let mut watches = Vec::new();
    for _ in 0..100 {
        let mut w = ops
            .watch(&WatchParams::default(), "0")
            .await
            .unwrap()
            .boxed();
        assert!(w.next().await.is_some(), "the synthetic ADDED");
        watches.push(w);
    }
    assert_eq!(api.watch_count(), 100);
    let polls = tokio::spawn(async move {
        // Keep every stream polled, as clients do.
        let mut all = futures::stream::select_all(watches);
        while all.next().await.is_some() {}
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cpu_before = cpu_time();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_time().saturating_sub(cpu_before);
    println!(
        "idle: 100 open watches for 2 s used {} ms of CPU",
        used.as_millis()
    );
    assert!(used < Duration::from_millis(200), "{used:?}");
    polls.abort();
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
