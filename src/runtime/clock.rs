//! The loop's wall clock: it follows tokio's clock, so a test on a paused clock sees time move,
//! and says when (as tokio's instant) a moment on screen comes.

use jiff::Timestamp;

/// Wall-clock time that follows tokio's clock (so tests on a paused clock see time move).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    base: Timestamp,
    at: tokio::time::Instant,
}

impl Clock {
    pub fn new(base: Timestamp) -> Clock {
        Clock {
            base,
            at: tokio::time::Instant::now(),
        }
    }

    pub fn now(&self) -> Timestamp {
        let elapsed =
            jiff::SignedDuration::try_from(self.at.elapsed()).unwrap_or(jiff::SignedDuration::ZERO);
        self.base + elapsed
    }

    pub(super) fn instant_at(&self, t: Timestamp) -> tokio::time::Instant {
        let d = t.duration_since(self.now());
        let d = std::time::Duration::try_from(d).unwrap_or(std::time::Duration::ZERO);
        tokio::time::Instant::now() + d
    }
}
