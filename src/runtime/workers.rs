//! What the loop's workers hold: the live subscription, and the read still waiting for each
//! thing shown. A read that a later read of the same thing replaces is stopped, its retries
//! with it: during an outage the dashboard keeps one retry loop for each thing on screen, not
//! one for every key that read (writes are never stopped: they run to their end).

use ichor_app::action::Slot;
use std::collections::HashMap;
use tokio::task::AbortHandle;

#[derive(Default)]
pub(crate) struct Workers {
    pub(crate) live: super::live::Subscription,
    reads: HashMap<Slot, AbortHandle>,
}

impl Workers {
    /// `task` now reads `slot`: the read it replaces, if still waiting, is stopped.
    pub(crate) fn read(&mut self, slot: Slot, task: AbortHandle) {
        if let Some(earlier) = self.reads.insert(slot, task) {
            earlier.abort();
        }
        // Finished reads are forgotten (the map holds at most one per slot anyway).
        self.reads.retain(|_, t| !t.is_finished());
    }

    /// How many reads are still waiting.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.reads.values().filter(|t| !t.is_finished()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_later_read_of_the_same_thing_stops_the_earlier_one() {
        let mut w = Workers::default();
        let forever = || tokio::spawn(std::future::pending::<()>());
        let first = forever();
        let first_handle = first.abort_handle();
        w.read(Slot::Operations { more: false }, first.abort_handle());
        w.read(Slot::Operations { more: false }, forever().abort_handle());
        w.read(Slot::Clusters, forever().abort_handle());
        assert!(first.await.is_err_and(|e| e.is_cancelled()));
        assert!(first_handle.is_finished());
        assert_eq!(w.waiting(), 2, "one read for each thing");
    }
}
