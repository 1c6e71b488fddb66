//! In-process, a watch instead of repeated lists: the operations in the dashboard's scope, kept
//! as list rows (summaries) by a Kubernetes watch made with the person's own credentials (RBAC
//! decides, as for a list), so a poll of the list reads memory and an idle dashboard makes no
//! request beyond the watch. kube-runtime's watcher lists, then watches from that list's
//! resourceVersion, takes bookmarks, and lists again when the API says the version is too old
//! (410); each object is decoded on its own, so one that cannot be read is a row that says so.
//!
//! Only the list screen's summaries come from here: the full view, and every read a write or
//! its refusal depends on, read the API (a write decision never trusts a cache).

use crate::model::Operation;
use crate::service::{convert, tolerant};
use futures::StreamExt as _;
use ichor_resources::TalosOperation;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::watcher::{self, Event};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The rows by namespace and name.
type Rows = HashMap<(String, String), Operation>;

#[derive(Default)]
struct Shared {
    rows: Rows,
    /// A complete list has arrived and the watch follows it: false until the first list, and
    /// from a failed watch until the watch delivers again (the rows may have fallen behind).
    ready: bool,
}

/// The operations of one scope, as a watch keeps them.
#[derive(Clone)]
pub struct OperationStore {
    /// The namespace watched; `None`: every namespace.
    scope: Option<String>,
    shared: Arc<Mutex<Shared>>,
    task: Arc<tokio::task::AbortHandle>,
}

impl Drop for OperationStore {
    fn drop(&mut self) {
        // The last handle stops the watch.
        if Arc::strong_count(&self.task) == 1 {
            self.task.abort();
        }
    }
}

/// A row from a watched object: the operation, or the row that says it cannot be read.
fn row(obj: DynamicObject) -> Option<((String, String), Operation)> {
    let value = serde_json::to_value(&obj).ok()?;
    let op = match tolerant::decode::<TalosOperation>(value) {
        Ok(op) => convert::operation(&op),
        Err(u) => convert::unreadable_operation(&u),
    };
    Some(((op.namespace.clone(), op.name.clone()), op.summarized()))
}

impl OperationStore {
    /// Starts watching `scope` with `kube`'s credentials.
    pub fn watch(kube: kube::Client, scope: Option<String>) -> OperationStore {
        let resource = ApiResource::erase::<TalosOperation>(&());
        let api: Api<DynamicObject> = match &scope {
            Some(ns) => Api::namespaced_with(kube, ns, &resource),
            None => Api::all_with(kube, &resource),
        };
        let shared = Arc::new(Mutex::new(Shared::default()));
        let task = tokio::spawn(follow(api, shared.clone()));
        OperationStore {
            scope,
            shared,
            task: Arc::new(task.abort_handle()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The rows of `namespace` (`None`: every namespace), when this store holds that scope
    /// and its first list has arrived; else `None` (the caller lists from the API).
    pub fn operations(&self, namespace: Option<&str>) -> Option<Vec<Operation>> {
        let shared = self.lock();
        if !shared.ready {
            return None;
        }
        match (&self.scope, namespace) {
            (None, None) => Some(shared.rows.values().cloned().collect()),
            (Some(s), Some(ns)) if s == ns => Some(shared.rows.values().cloned().collect()),
            (None, Some(ns)) => Some(
                shared
                    .rows
                    .iter()
                    .filter(|((n, _), _)| n == ns)
                    .map(|(_, o)| o.clone())
                    .collect(),
            ),
            (Some(_), _) => None,
        }
    }

    /// Whether the first list has arrived.
    pub fn ready(&self) -> bool {
        self.lock().ready
    }
}

/// Follows the watch for as long as the store lives; errors are retried with kube-runtime's
/// backoff. From an error until the watch delivers again the rows are not used (lists read
/// the API): they may have fallen behind.
async fn follow(api: Api<DynamicObject>, shared: Arc<Mutex<Shared>>) {
    use kube::runtime::WatchStreamExt as _;
    let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
    futures::pin_mut!(stream);
    let mut pending: Option<Rows> = None;
    let mut said_error = false;
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                // Said once per outage, bounded: the list falls back to reading the API.
                if !said_error {
                    let detail = crate::text::truncate(&crate::text::sanitize(&e.to_string()), 200);
                    tracing::info!(error = %detail, "the operations watch failed; lists read the API until it is back");
                    said_error = true;
                }
                shared.lock().unwrap_or_else(|p| p.into_inner()).ready = false;
                continue;
            }
        };
        said_error = false;
        let lock = || shared.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Event::Init => pending = Some(Rows::new()),
            Event::InitApply(obj) => {
                if let (Some(rows), Some((k, op))) = (pending.as_mut(), row(obj)) {
                    rows.insert(k, op);
                }
            }
            Event::InitDone => {
                let mut s = lock();
                s.rows = pending.take().unwrap_or_default();
                s.ready = true;
            }
            Event::Apply(obj) => {
                let mut s = lock();
                if let Some((k, op)) = row(obj) {
                    s.rows.insert(k, op);
                }
                // A watch that delivers after an error follows again (it resumed from the
                // version it had; a version too old would have listed anew).
                s.ready = s.ready || pending.is_none();
            }
            Event::Delete(obj) => {
                let key = (
                    obj.metadata.namespace.clone().unwrap_or_default(),
                    obj.metadata.name.clone().unwrap_or_default(),
                );
                let mut s = lock();
                s.rows.remove(&key);
                s.ready = s.ready || pending.is_none();
            }
        }
    }
}
