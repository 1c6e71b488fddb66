//! The log of stored writes, for tests that check what was written and as whom. Kept only with
//! the `faults` feature: without it nothing is recorded, so a long-running demo cluster does
//! not grow a log that nobody reads.

#[cfg(feature = "faults")]
pub(crate) use self::kept::WriteLog;
#[cfg(feature = "faults")]
pub use self::kept::WriteRecord;
#[cfg(not(feature = "faults"))]
pub(crate) use self::stand_in::WriteLog;

#[cfg(feature = "faults")]
mod kept {
    use crate::apiserver::EmbeddedApi;
    use crate::apiserver::auth::Identity;
    use crate::apiserver::routing::Target;

    /// A write that was stored (dry runs and refused requests are never logged).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct WriteRecord {
        /// `create`, `update`, `patch` or `delete`.
        pub verb: String,
        /// The resource plural, with `/status` for the status subresource.
        pub resource: String,
        pub namespace: String,
        pub name: String,
        /// The user the write was made as (after impersonation).
        pub user: String,
    }

    /// The stored writes, oldest first.
    #[derive(Default)]
    pub(crate) struct WriteLog(Vec<WriteRecord>);

    impl WriteLog {
        /// Logs a stored write of `verb` on the object `name` of `t`, made as `who`.
        pub(crate) fn record(&mut self, verb: &str, t: &Target, name: &str, who: &Identity) {
            self.0.push(WriteRecord {
                verb: verb.to_string(),
                resource: t.resource(),
                namespace: t.namespace.clone().unwrap_or_default(),
                name: name.to_string(),
                user: who.user.clone(),
            });
        }
    }

    impl EmbeddedApi {
        /// The stored writes, oldest first.
        pub fn write_log(&self) -> Vec<WriteRecord> {
            self.lock().write_log.0.clone()
        }

        /// The stored writes made by `user`.
        pub fn writes_by(&self, user: &str) -> Vec<WriteRecord> {
            self.write_log()
                .into_iter()
                .filter(|w| w.user == user)
                .collect()
        }

        /// Forgets the write log.
        pub fn clear_write_log(&self) {
            self.lock().write_log.0.clear();
        }
    }
}

#[cfg(not(feature = "faults"))]
mod stand_in {
    use crate::apiserver::auth::Identity;
    use crate::apiserver::routing::Target;

    /// No log to keep.
    #[derive(Default)]
    pub(crate) struct WriteLog;

    impl WriteLog {
        /// Records nothing.
        #[inline]
        pub(crate) fn record(&mut self, _verb: &str, _t: &Target, _name: &str, _who: &Identity) {}
    }
}
