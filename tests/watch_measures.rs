//! What watches cost the demo cluster: the memory of each change the history keeps (bytes
//! counted by the allocator, not a timing). Figures printed (`cargo test --test service watch_measures
//! -- --nocapture`). The CPU of idle watches is a benchmark figure (`cargo bench --bench
//! watches`): a CPU ceiling asserted in a test fails on a loaded machine.

use ichor_demo::apiserver::EmbeddedApi;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

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
