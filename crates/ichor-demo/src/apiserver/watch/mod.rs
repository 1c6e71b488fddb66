//! Watches, as kube-apiserver serves them: `?watch=true` (or `1`) on a list URL answers a
//! chunked stream of newline-delimited JSON WatchEvents (`ADDED`, `MODIFIED`, `DELETED`,
//! `BOOKMARK`, `ERROR`), for every resource served.
//!
//! - Where it starts: `resourceVersion` unset or `0` starts with a synthetic `ADDED` for each
//!   object (as the apiserver's cache answers "any"); `N` sends every change after N, from the
//!   [`history`] (the newest 1,000 changes of each resource); an N older than that is too old,
//!   answered as the apiserver does: 200, then one `ERROR` event whose Status is 410 Expired
//!   ("too old resource version"), then the end. `sendInitialEvents=true` (streaming lists)
//!   sends the objects first, then a bookmark marked `k8s.io/initial-events-end`.
//! - `allowWatchBookmarks=true`: a `BOOKMARK` carrying only `metadata.resourceVersion` every
//!   minute ([`EmbeddedApi::set_bookmark_interval`]) and two seconds before the watch's
//!   deadline (`timeoutSeconds`), as kube-apiserver schedules them, the newest version of the whole API, so
//!   a quiet watcher restarts from a version that is not too old. (kube-apiserver sends none
//!   at the version the watcher already has; the demo does, as its version stands still while
//!   nothing changes, where a real cluster's moves every few seconds with its Leases.)
//! - A version the API has not reached ([`fresh`]): a plain watch from it is accepted and
//!   silent, no bookmark either, until the API passes it; a streaming list from it waits 3 s,
//!   then one `ERROR` event, 504 "Too large resource version".
//! - `timeoutSeconds` ends the stream; so does the client going away (the stream is the
//!   response body: no task of its own to leak) and, in tests, [`EmbeddedApi::end_watches`].
//! - `labelSelector` and `fieldSelector` filter as for lists; an object that stops matching
//!   is `DELETED` for the watch, one that starts is `ADDED`.
//! - `Accept: application/json;as=Table` (kubectl's `get -w`): each event's object is a
//!   `meta.k8s.io/v1` Table of one row, the column definitions in the first event only.
//!
//! An idle watch waits on its resource's wake channel, its bookmark timer and its deadline:
//! no polling. [`EmbeddedApi::watch_count`] counts the open ones apart from
//! [`EmbeddedApi::request_count`].

mod fresh;
mod history;
mod stream;

pub(crate) use self::fresh::{required, too_large, too_large_status};
pub use self::history::HistorySize;
pub(crate) use self::history::{ChangeType, Selectable};
pub(crate) use self::stream::{Watch, query_bool};

use self::history::{Change, History};
use super::fields::fields_of;
use super::responses::Body;
use super::selector::labels_of;
use super::store::Key;
use super::{ApiState, BoxError, EmbeddedApi};
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::watch;

/// How often a watch that allows bookmarks gets one, unless told otherwise (as
/// kube-apiserver's watch cache, about once a minute).
const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// The watches' side of the API: the change history, the open watches, the bookmark interval.
pub(crate) struct Hub {
    history: History,
    open: Arc<AtomicUsize>,
    bookmark_interval: Duration,
    /// Bumped to end every open watch.
    epoch: watch::Sender<u64>,
    /// The API's resourceVersion, sent as it moves: what a read from a version not reached
    /// yet waits on.
    version: watch::Sender<u64>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            history: History::default(),
            open: Arc::default(),
            bookmark_interval: DEFAULT_BOOKMARK_INTERVAL,
            epoch: watch::channel(0).0,
            version: watch::channel(0).0,
        }
    }
}

impl Hub {
    /// The API moved to resourceVersion `rv`.
    pub(crate) fn moved_to(&self, rv: u64) {
        self.version.send_replace(rv);
    }

    /// Changes with every resourceVersion the API moves to.
    pub(crate) fn versions(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// Records a change of the object under `key`: `obj` as it is now (its resourceVersion
    /// the change's), `before` as it was (for a modification).
    pub(crate) fn record(
        &mut self,
        kind: ChangeType,
        key: &Key,
        rv: u64,
        obj: &Value,
        before: Option<&Value>,
    ) {
        let (plural, namespace, name) = key;
        let object = match serde_json::to_vec(obj) {
            // Kept exactly as long as it is: a growing Vec has up to twice its length.
            Ok(v) => Bytes::from(v.into_boxed_slice()),
            Err(e) => {
                tracing::warn!(error = %e, "a change that cannot be encoded is not recorded");
                return;
            }
        };
        let selectable = |o: &Value| Selectable {
            labels: labels_of(o),
            fields: fields_of(plural, o),
        };
        let now = selectable(obj);
        // The object before the change: the previous change's JSON when the ring holds it
        // (shared, no copy), else encoded now.
        let shared = before.and_then(|_| self.history.last_object(plural, namespace, name));
        let prior_shared = shared.is_some();
        let prior = shared.or_else(|| {
            before
                .and_then(|b| serde_json::to_vec(b).ok())
                .map(|v| Bytes::from(v.into_boxed_slice()))
        });
        // Kept only when a selector could see the change differently.
        let before = before.map(selectable).filter(|b| *b != now);
        let change = Change {
            rv,
            kind,
            namespace: namespace.clone(),
            object,
            now,
            before,
            name: name.clone(),
            prior,
            prior_shared,
        };
        self.history.record(plural, change);
    }
}

impl Hub {
    /// The changes of `plural` after `rv`, oldest first; `Err` when the history no longer
    /// reaches back to `rv`.
    pub(crate) fn changes_since(
        &self,
        plural: &str,
        rv: u64,
    ) -> Result<Vec<Arc<Change>>, history::TooOld> {
        self.history.since(plural, rv)
    }
}

impl ApiState {
    /// Stores `obj` under `key` and records the change; its resourceVersion must be `rv`.
    pub(crate) fn put_object(&mut self, key: Key, obj: Value, rv: u64) {
        let old = self.objects.get(&key);
        let kind = match old {
            Some(_) => ChangeType::Modified,
            None => ChangeType::Added,
        };
        self.watches.record(kind, &key, rv, &obj, old.map(|o| &**o));
        self.objects.insert(key, Arc::new(obj));
    }

    /// Removes the object under `key`, a change of its own under a new resourceVersion.
    /// Returns it as it was.
    pub(crate) fn take_object(&mut self, key: &Key) -> Option<Value> {
        let obj = Arc::unwrap_or_clone(self.objects.remove(key)?);
        let rv = self.next_resource_version();
        let mut gone = obj.clone();
        if let Some(meta) = gone.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
        }
        self.watches
            .record(ChangeType::Deleted, key, rv, &gone, Some(&obj));
        Some(obj)
    }
}

/// The response body of a watch: its events as they come, one chunk each.
pub(crate) fn body(watch: Watch) -> Body {
    let events = futures_util::stream::unfold(watch, |mut w| async move {
        let line = w.next().await?;
        Some((Ok::<_, BoxError>(hyper::body::Frame::data(line)), w))
    });
    StreamBody::new(events).boxed_unsync()
}

/// Counts itself among the open watches while it lives.
pub(crate) struct OpenGuard(Arc<AtomicUsize>);

impl OpenGuard {
    fn new(open: &Arc<AtomicUsize>) -> OpenGuard {
        open.fetch_add(1, Ordering::SeqCst);
        OpenGuard(open.clone())
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl EmbeddedApi {
    /// How many watches are open now (each also counted once by `request_count` when it
    /// started).
    pub fn watch_count(&self) -> usize {
        self.lock().watches.open.load(Ordering::SeqCst)
    }

    /// How often a watch that allows bookmarks gets one (default one minute); applies to the
    /// watches opened from now on.
    pub fn set_bookmark_interval(&self, every: Duration) {
        self.lock().watches.bookmark_interval = every.max(Duration::from_millis(1));
    }

    /// Keeps at most `limit` changes of each resource for watches that resume (default
    /// 1,000); a watch from an older version is too old.
    pub fn set_history_limit(&self, limit: usize) {
        self.lock().watches.history.set_limit(limit);
    }

    /// How much the change history holds now.
    pub fn history_size(&self) -> HistorySize {
        self.lock().watches.history.size()
    }
}

/// Tests' instruments for watches. With the `faults` feature only.
#[cfg(feature = "faults")]
impl EmbeddedApi {
    /// Forgets the change history up to now, as an etcd compaction does: a watch from any
    /// older version is answered 410 Gone.
    pub fn compact(&self) {
        let mut st = self.lock();
        let now = st.resource_version;
        st.watches.history.compact(now);
    }

    /// Ends every open watch, as an apiserver restart would; clients watch again.
    pub fn end_watches(&self) {
        self.lock().watches.epoch.send_modify(|e| *e += 1);
    }
}
