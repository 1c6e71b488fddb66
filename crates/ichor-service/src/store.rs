//! In-process, a watch instead of repeated lists: the operations in the dashboard's scope, kept
//! as list rows (summaries) by a Kubernetes watch made with the person's own credentials (RBAC
//! decides, as for a list), so a poll of the list reads memory and an idle dashboard makes no
//! request beyond the watch. The watch ([`follow`]) lists, then watches with bookmarks, and
//! trusts its rows only while data arrives: heard nothing past the bookmark interval, a
//! version the server has not reached or no longer has, a broken watch: it lists again. Each
//! object is decoded on its own, so one that cannot be read is a row that says so.
//!
//! Only the list screen's summaries come from here: the full view, and every read a write or
//! its refusal depends on, read the API (a write decision never trusts a cache).

mod follow;

pub use follow::{BOOKMARK_INTERVAL, SILENCE};

use crate::row::{Interner, Row};
use crate::watched::Watched;
use ichor_model::{ApiError, ListQuery, OperationPage};
use kube::api::Api;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The rows by namespace, then name (a name looked up by `&str`, without a copy). Boxed: a
/// table sized for 10,000 rows has about 16,000 slots.
#[derive(Default)]
struct Rows {
    by_namespace: HashMap<Arc<str>, HashMap<Arc<str>, Box<Row>>>,
    count: usize,
    /// The strings the rows share.
    strings: Interner,
}

impl Rows {
    fn insert(&mut self, row: Row) {
        let (ns, name) = row.key();
        let known = self.by_namespace.entry(ns).or_default();
        if known.insert(name, Box::new(row)).is_none() {
            self.count += 1;
        }
    }

    fn remove(&mut self, ns: &str, name: &str) {
        let Some(known) = self.by_namespace.get_mut(ns) else {
            return;
        };
        if known.remove(name).is_some() {
            self.count -= 1;
        }
        if known.is_empty() {
            self.by_namespace.remove(ns);
        }
        self.forget_strings();
    }

    /// The shared strings no row holds are forgotten once they outnumber the rows well.
    fn forget_strings(&mut self) {
        if self.strings.len() > 8 * self.count + 1024 {
            self.strings.prune();
        }
    }

    fn get(&self, ns: &str, name: &str) -> Option<&Row> {
        self.by_namespace.get(ns)?.get(name).map(|r| &**r)
    }

    fn all(&self) -> impl Iterator<Item = &Row> {
        self.by_namespace
            .values()
            .flat_map(|m| m.values().map(|r| &**r))
    }

    fn of_namespace(&self, ns: &str) -> impl Iterator<Item = &Row> {
        self.by_namespace
            .get(ns)
            .into_iter()
            .flat_map(|m| m.values().map(|r| &**r))
    }
}

#[derive(Default)]
struct Shared {
    rows: Rows,
    /// A complete list has arrived and the watch follows it: false until the first list, and
    /// from a failed watch until the next list (the rows may have fallen behind).
    ready: bool,
    /// The watch has failed since it started (forbidden, say): a first poll does not wait for
    /// it.
    failed: bool,
    /// Why the watch last failed, until it lists again.
    failure: Option<String>,
    /// How many times the rows were found possibly stale (heard nothing, a version the server
    /// has not reached or went back): a subscription that began before ends.
    stale: u64,
    /// Counts the changes to the rows.
    revision: u64,
    /// The last pages made (at most [`KEPT_PAGES`], of the current revision), each for its
    /// query without the version the caller knows: an idle poll at 10,000 rows is answered
    /// without ordering them again, and the streams that share a query share its page at each
    /// change, though other queries are kept up to date beside it.
    pages: Vec<(ListQuery, u64, OperationPage)>,
}

/// How many pages of distinct queries a store keeps for its current revision: as many as the
/// distinct queries serve's streams may keep up to date in one namespace, so that streams
/// sharing a query never make its page twice.
pub const KEPT_PAGES: usize = 8;

/// The operations of one scope, as a watch keeps them.
#[derive(Clone)]
pub struct OperationStore {
    /// The namespace watched; `None`: every namespace.
    scope: Option<String>,
    shared: Arc<Mutex<Shared>>,
    /// Woken when the first list has arrived or the watch has failed.
    settled: Arc<tokio::sync::Notify>,
    /// The revision of the rows, sent on every change and every failure of the watch: what
    /// subscriptions wait on (a watch channel keeps only the latest, so bursts coalesce).
    changes: tokio::sync::watch::Sender<u64>,
    task: Arc<tokio::task::AbortHandle>,
    /// The pages its subscriptions share, by query.
    feeds: Arc<crate::feed::Feeds>,
}

/// Whether the rows can be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// The first list has not arrived yet.
    Starting,
    /// The rows follow the watch.
    Ready,
    /// The watch failed (or its rows were found stale) and it has not listed since: why
    /// (bounded, inert).
    Failed(String),
}

impl Drop for OperationStore {
    fn drop(&mut self) {
        // The last handle stops the watch.
        if Arc::strong_count(&self.task) == 1 {
            self.task.abort();
        }
    }
}

impl OperationStore {
    /// Starts watching `scope` with `kube`'s credentials.
    pub fn watch(kube: kube::Client, scope: Option<String>) -> OperationStore {
        OperationStore::watch_with(kube, scope, SILENCE)
    }

    /// [`OperationStore::watch`], taking its rows for stale after `silence` without an event
    /// or a bookmark (tests of a server with a shorter bookmark interval).
    pub fn watch_with(
        kube: kube::Client,
        scope: Option<String>,
        silence: Duration,
    ) -> OperationStore {
        let api: Api<Watched> = match &scope {
            Some(ns) => Api::namespaced(kube, ns),
            None => Api::all(kube),
        };
        let shared = Arc::new(Mutex::new(Shared::default()));
        let settled = Arc::new(tokio::sync::Notify::new());
        let (changes, _) = tokio::sync::watch::channel(0);
        let signals = Signals {
            settled: settled.clone(),
            changes: changes.clone(),
        };
        let follower = follow::Follower {
            api,
            shared: shared.clone(),
            signals,
            silence,
        };
        let task = tokio::spawn(follower.run());
        OperationStore {
            scope,
            shared,
            settled,
            changes,
            task: Arc::new(task.abort_handle()),
            feeds: Arc::default(),
        }
    }

    /// How many handles of this store there are (the watch stops with the last).
    pub fn holders(&self) -> usize {
        Arc::strong_count(&self.task)
    }

    /// The page of `query` as every subscription of it over this store shares it.
    pub fn feed(&self, query: &ListQuery) -> Arc<crate::feed::Feed> {
        self.feeds.feed(query)
    }

    /// How many pages the subscriptions' feeds have made: one per change of the rows for each
    /// query held, however many subscriptions hold it.
    pub fn pages_made(&self) -> u64 {
        self.feeds.made()
    }

    /// The revision of the rows: it counts their changes (and the watch's failures).
    pub fn revision(&self) -> u64 {
        self.lock().revision
    }

    /// The namespace watched; `None`: every namespace.
    pub fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// Wakes on every change of the rows and every failure of the watch.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Whether the rows can be used, and why not.
    pub fn health(&self) -> Health {
        let s = self.lock();
        match (&s.failure, s.ready) {
            (_, true) => Health::Ready,
            (Some(why), false) => Health::Failed(why.clone()),
            (None, false) => Health::Starting,
        }
    }

    /// How many times the rows were found possibly stale since the store began: a change of it
    /// means what was read from the store before may have been out of date.
    pub fn stale_count(&self) -> u64 {
        self.lock().stale
    }

    /// The resourceVersion of `namespace/name` as the watch last saw it; `None` when it is not
    /// among the rows.
    pub fn resource_version(&self, namespace: &str, name: &str) -> Option<String> {
        let s = self.lock();
        s.rows
            .get(namespace, name)
            .map(|o| ichor_model::ListRow::resource_version(o).to_string())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The page `query` names, from the rows of its namespace (`None`: every namespace), when
    /// this store holds that scope and its first list has arrived; else `None` (the caller
    /// lists from the API). The rows are read in place: only the page is copied.
    pub fn page(&self, query: &ListQuery) -> Option<Result<OperationPage, ApiError>> {
        let mut shared = self.lock();
        if !shared.ready {
            return None;
        }
        let key = ListQuery {
            known_version: None,
            ..query.clone()
        };
        let revision = shared.revision;
        if let Some((_, _, page)) = shared
            .pages
            .iter()
            .find(|(q, rev, _)| *q == key && *rev == revision)
        {
            return Some(Ok(as_known(page, query)));
        }
        let rows = &shared.rows;
        let page = |rows: Vec<&Row>| crate::list::page_of(rows, &key, Row::summary);
        let made = match (&self.scope, query.namespace.as_deref()) {
            (None, None) => page(rows.all().collect()),
            (Some(s), Some(ns)) if s == ns => page(rows.all().collect()),
            (None, Some(ns)) => page(rows.of_namespace(ns).collect()),
            (Some(_), _) => return None,
        };
        let made = match made {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        let answer = as_known(&made, query);
        shared.pages.retain(|(_, rev, _)| *rev == revision);
        if shared.pages.len() >= KEPT_PAGES {
            shared.pages.remove(0);
        }
        shared.pages.push((key, revision, made));
        Some(Ok(answer))
    }

    /// Waits, at most `limit`, while the watch is starting: until its first list has arrived
    /// or it has failed. So the first poll reads the rows the watch lists instead of listing
    /// everything from the API as well (twice the memory and the API's work at 10,000).
    pub async fn settled(&self, limit: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            // Made before the check, so a wake-up between the two is not lost.
            let woken = self.settled.notified();
            {
                let s = self.lock();
                if s.ready || s.failed {
                    return;
                }
            }
            if tokio::time::timeout_at(deadline, woken).await.is_err() {
                return;
            }
        }
    }
}

/// The page as the caller sees it: only its version when the caller already holds it.
fn as_known(page: &OperationPage, query: &ListQuery) -> OperationPage {
    if query.known_version.as_deref() == Some(page.version.as_str()) {
        return OperationPage {
            operations: Vec::new(),
            unchanged: true,
            next_page_token: page.next_page_token.clone(),
            total: page.total,
            version: page.version.clone(),
        };
    }
    page.clone()
}

/// What the watch task wakes.
struct Signals {
    settled: Arc<tokio::sync::Notify>,
    changes: tokio::sync::watch::Sender<u64>,
}

impl Signals {
    fn changed(&self, revision: u64) {
        self.changes.send_replace(revision);
    }
}
