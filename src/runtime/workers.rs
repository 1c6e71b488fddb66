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
    /// `:ctx`: the context being reached.
    reaching: Option<(String, super::Reaching)>,
}

impl Drop for Workers {
    /// The reads of a connection given up stop with it.
    fn drop(&mut self) {
        for t in self.reads.values() {
            t.abort();
        }
    }
}

impl Workers {
    /// Starts reaching `context` (one at a time: the app asks for no second one meanwhile).
    pub(crate) fn reach(&mut self, context: String, reaching: super::Reaching) {
        self.reaching = Some((context, reaching));
    }

    pub(crate) fn is_reaching(&self) -> bool {
        self.reaching.is_some()
    }

    /// The context reached, or why not; pending while none is being reached.
    pub(crate) async fn reaching(&mut self) -> (String, Result<super::Reached, String>) {
        match self.reaching.as_mut() {
            Some((_, fut)) => {
                let reached = fut.await;
                let context = self.reaching.take().map(|(c, _)| c).unwrap_or_default();
                (context, reached)
            }
            None => std::future::pending().await,
        }
    }

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
