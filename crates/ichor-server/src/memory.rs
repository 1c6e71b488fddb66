//! What serve's memory gives back. glibc's malloc keeps a heap arena per thread that contended
//! for one (up to 8 per core) and returns little to the system after a burst: serve caps the
//! arenas at two and trims the heap every [`TRIM_EVERY`], so a burst of callers (or of
//! attackers) costs memory while it lasts, not after.

use std::time::Duration;

/// How often the heap's free memory is given back.
pub const TRIM_EVERY: Duration = Duration::from_secs(10);

/// At most two malloc arenas. Call it before the runtime's threads start.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; M_ARENA_MAX takes any positive count.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Gives the heap's free memory back to the system every [`TRIM_EVERY`], for as long as the
/// runtime runs.
pub fn trim_periodically() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    tokio::spawn(async {
        let mut every = tokio::time::interval(TRIM_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            every.tick().await;
            // SAFETY: malloc_trim has no preconditions; it only releases free pages.
            unsafe {
                libc::malloc_trim(0);
            }
        }
    });
}
