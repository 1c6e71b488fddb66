//! The one retry loop of every read-check-write: a write that conflicts (someone wrote between
//! our read and our write) reads again and re-checks everything, a bounded number of times.
//!
//! ```ignore
//! let mut conflicts = Conflicts::new();
//! while conflicts.another() {
//!     let current = read().await?;
//!     match write(&current).await {
//!         Ok(o) => return Ok(o),
//!         Err(e) => conflicts.absorb(e)?,
//!     }
//! }
//! Err(conflicts.exhausted("pausing the operation"))
//! ```

use ichor_model::{ApiError, Code};

/// How many passes a write makes before it gives up on conflicts, each with a fresh read.
pub(crate) const PASSES: usize = 5;

/// The passes of one write, and the last conflict seen.
#[derive(Debug, Default)]
pub(crate) struct Conflicts {
    passes: usize,
    last: Option<ApiError>,
}

/// Whether `e` says another writer got there first: the object changed or was replaced since
/// our read (a precondition or resourceVersion conflict).
pub(crate) fn is_conflict(e: &ApiError) -> bool {
    e.code == Code::Aborted
}

impl Conflicts {
    pub(crate) fn new() -> Conflicts {
        Conflicts::default()
    }

    /// Whether another pass may run; counts it.
    pub(crate) fn another(&mut self) -> bool {
        self.passes += 1;
        self.passes <= PASSES
    }

    /// Keeps a conflict for the next pass; returns any other error.
    pub(crate) fn absorb(&mut self, e: ApiError) -> Result<(), ApiError> {
        if is_conflict(&e) {
            self.saw(e);
            Ok(())
        } else {
            Err(e)
        }
    }

    /// Notes a conflict the caller recognised itself.
    pub(crate) fn saw(&mut self, e: ApiError) {
        self.last = Some(e);
    }

    /// The answer once every pass conflicted: the last conflict, as Kubernetes said it.
    pub(crate) fn exhausted(self, what: &str) -> ApiError {
        self.last
            .unwrap_or_else(|| ApiError::new(Code::Aborted, format!("{what}: conflict")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_makes_at_most_its_passes_and_ends_with_the_last_conflict() {
        let mut c = Conflicts::new();
        let mut passes = 0;
        while c.another() {
            passes += 1;
            let e = ApiError::new(Code::Aborted, format!("conflict {passes}"));
            assert!(c.absorb(e).is_ok());
        }
        assert_eq!(passes, PASSES);
        assert_eq!(c.exhausted("pausing").message, format!("conflict {PASSES}"));
    }

    #[test]
    fn anything_but_a_conflict_ends_the_write_at_once() {
        let mut c = Conflicts::new();
        assert!(c.another());
        let e = c
            .absorb(ApiError::new(Code::Unavailable, "down"))
            .unwrap_err();
        assert_eq!(e.code, Code::Unavailable);
        assert_eq!(Conflicts::new().exhausted("x").message, "x: conflict");
    }
}
