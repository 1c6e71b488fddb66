//! `serve`'s read model: one watch per namespace in use, kept with the server's own identity
//! and shared by every caller, so a poll or a subscription reads memory instead of listing
//! 10,000 operations from the API. A caller reads from it only once Kubernetes said, through a
//! SelfSubjectAccessReview made as that person (impersonated), that they may list and watch
//! TalosOperations there; the answer is asked again after [`RECHECK`].
//!
//! A watch is opened only for a namespace that exists (asked once, as the server), and given
//! back [`LINGER`] after the last list or stream used it; at most [`MAX_WATCHES`] are open, and
//! a namespace a stream needs takes the place of the one no stream holds that was used least
//! recently, so lists (any caller's, in any namespace) can never take the watches streams need.

use super::OperationService;
use super::access::Caller;
use super::feed::{Pushed, Pushes};
use super::store::OperationStore;
use futures::StreamExt as _;
use ichor_model::{ApiError, Code, Reason, Updates, WatchRequest};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// How long an answer of Kubernetes about a caller holds.
pub const RECHECK: Duration = Duration::from_secs(60);

/// At most this many namespaces are watched at once: a caller allowed everywhere could
/// otherwise make serve open a watch for every namespace there is. Past it, the watch no stream
/// holds that was used least recently is given back; when streams hold them all, lists read the
/// API as the caller and a new subscription is refused RESOURCE_EXHAUSTED.
pub const MAX_WATCHES: usize = 64;

/// How long a watch no stream holds stays open after a list last read it: a polling dashboard
/// (every 3 to 10 s) keeps its namespace's watch; one that went away gives it back.
pub const LINGER: Duration = Duration::from_secs(30);

/// One namespace's watch and when it was last used.
struct Watch {
    store: OperationStore,
    used: Instant,
}

/// At most this many answers are kept; past it the oldest half is forgotten (asked again).
const MAX_VERDICTS: usize = 4096;

/// Who asks, and where: the identity (user and groups) and the namespace (`None`: all).
type Key = (String, Vec<String>, Option<String>);

/// The watches and the answers about callers.
#[derive(Clone)]
pub struct SharedReads {
    service: OperationService,
    stores: Arc<Mutex<HashMap<Option<String>, Watch>>>,
    verdicts: Arc<Mutex<HashMap<Key, (Instant, bool)>>>,
    recheck: Duration,
    linger: Duration,
}

impl SharedReads {
    /// Kubernetes' answers about a caller hold for `recheck` ([`RECHECK`] in `serve`).
    pub fn new(service: OperationService, recheck: Duration) -> SharedReads {
        SharedReads::lingering(service, recheck, LINGER)
    }

    /// As [`SharedReads::new`], a watch no one uses given back after `linger` ([`LINGER`] in
    /// `serve`). Within a tokio runtime, a task looks for such watches every `linger`.
    pub fn lingering(
        service: OperationService,
        recheck: Duration,
        linger: Duration,
    ) -> SharedReads {
        let reads = SharedReads {
            service,
            stores: Arc::default(),
            verdicts: Arc::default(),
            recheck,
            linger,
        };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let stores = Arc::downgrade(&reads.stores);
            rt.spawn(async move {
                let mut tick = tokio::time::interval(linger.max(Duration::from_millis(10)));
                loop {
                    tick.tick().await;
                    let Some(stores) = stores.upgrade() else {
                        return;
                    };
                    let mut stores = stores.lock().unwrap_or_else(|p| p.into_inner());
                    give_back_unused(&mut stores, linger);
                }
            });
        }
        reads
    }

    /// How long an answer about a caller holds.
    pub fn recheck(&self) -> Duration {
        self.recheck
    }

    /// The watch of `scope` for `caller`, when Kubernetes says they may list and watch
    /// TalosOperations there; PermissionDenied when it says no.
    pub async fn store(
        &self,
        caller: &Caller,
        scope: Option<&str>,
    ) -> Result<OperationStore, ApiError> {
        self.authorize(caller, scope).await?;
        if let Some(store) = self.open_store(scope) {
            return Ok(store);
        }
        if let Some(ns) = scope {
            self.service.namespace_exists(ns).await?;
        }
        self.store_of(scope)
    }

    /// Asks Kubernetes (or remembers, for the recheck time) whether `caller` may list and watch
    /// TalosOperations in `scope`. The server's own identity (an anonymous caller of a server
    /// that allows it) reads as itself.
    pub async fn authorize(&self, caller: &Caller, scope: Option<&str>) -> Result<(), ApiError> {
        let Some(id) = &caller.identity else {
            return Ok(());
        };
        let key = (
            id.user.clone(),
            id.groups.clone(),
            scope.map(str::to_string),
        );
        let known = self.lock_verdicts().get(&key).copied();
        let allowed = match known {
            Some((at, allowed)) if at.elapsed() < self.recheck => allowed,
            _ => {
                let allowed = self.service.may_list_and_watch(caller, scope).await?;
                let mut verdicts = self.lock_verdicts();
                if verdicts.len() >= MAX_VERDICTS {
                    forget_oldest_half(&mut verdicts);
                }
                verdicts.insert(key, (Instant::now(), allowed));
                allowed
            }
        };
        match allowed {
            true => Ok(()),
            false => Err(denied(scope)),
        }
    }

    /// WatchOperations as `serve` runs it for `caller`: authorised as above, read from the
    /// shared watch of the request's namespace, and asked again every recheck; a no ends the
    /// stream with PermissionDenied. An operation followed in another namespace is read again
    /// only when the shared watch of its namespace saw it change, when the caller may list and
    /// watch there (else at every change of the list, from the API).
    pub async fn watch_operations(
        &self,
        caller: &Caller,
        req: WatchRequest,
    ) -> Result<Updates, ApiError> {
        let pushes = self.pushes(caller, req).await?;
        Ok(Box::pin(pushes.map(|p| p.map(Pushed::into_update))))
    }

    /// As [`SharedReads::watch_operations`], each update's page part shared with the other
    /// subscriptions of the same list (serve encodes it once for all: [`crate::feed`]).
    pub async fn pushes(&self, caller: &Caller, req: WatchRequest) -> Result<Pushes, ApiError> {
        let scope = req.list.namespace.clone();
        let store = self.store(caller, scope.as_deref()).await?;
        let followed_store = match (&req.follow, store.scope()) {
            (Some((ns, _)), Some(listed)) if ns != listed => {
                self.store(caller, Some(ns)).await.ok()
            }
            _ => None,
        };
        let updates = self
            .service
            .push_operations(caller.clone(), store, followed_store, req)?;
        Ok(self.rechecked(updates, caller.clone(), scope))
    }

    /// `updates`, with Kubernetes asked again every recheck whether `caller` may still list
    /// and watch in `scope`.
    fn rechecked(&self, updates: Pushes, caller: Caller, scope: Option<String>) -> Pushes {
        type Check = std::pin::Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send>>;
        /// The next check, a recheck from now: asked while the updates go on, so a slow
        /// answer of Kubernetes never holds a change back.
        fn next_check(reads: SharedReads, caller: Caller, scope: Option<String>) -> Check {
            Box::pin(async move {
                tokio::time::sleep(reads.recheck).await;
                // Boxed while it runs: every stream waits on this future between checks.
                Box::pin(reads.authorize(&caller, scope.as_deref())).await
            })
        }
        struct S {
            updates: Pushes,
            check: Check,
            reads: SharedReads,
            caller: Caller,
            scope: Option<String>,
        }
        let state = S {
            updates,
            check: next_check(self.clone(), caller.clone(), scope.clone()),
            reads: self.clone(),
            caller,
            scope,
        };
        Box::pin(futures::stream::unfold(Some(state), |s| async move {
            let mut s = s?;
            loop {
                tokio::select! {
                    next = s.updates.next() => {
                        let item = next?;
                        let goes_on = item.is_ok();
                        return Some((item, goes_on.then_some(s)));
                    }
                    verdict = &mut s.check => match verdict {
                        Ok(()) => {
                            s.check = next_check(s.reads.clone(), s.caller.clone(), s.scope.clone());
                        }
                        Err(e) => return Some((Err(e), None)),
                    },
                }
            }
        }))
    }

    /// Each shared watch's scope and whether its rows can be used (serve's readiness).
    pub fn watches(&self) -> Vec<(Option<String>, crate::store::Health)> {
        self.lock_stores()
            .iter()
            .map(|(k, w)| (k.clone(), w.store.health()))
            .collect()
    }

    fn lock_stores(&self) -> std::sync::MutexGuard<'_, HashMap<Option<String>, Watch>> {
        self.stores.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The watch of `scope` if it is open, marked used.
    fn open_store(&self, scope: Option<&str>) -> Option<OperationStore> {
        let mut stores = self.lock_stores();
        let watch = stores.get_mut(&scope.map(str::to_string))?;
        watch.used = Instant::now();
        Some(watch.store.clone())
    }

    /// The watch of `scope`, opened if need be (in the place of the one no stream holds that
    /// was used least recently, when [`MAX_WATCHES`] are open).
    fn store_of(&self, scope: Option<&str>) -> Result<OperationStore, ApiError> {
        let mut stores = self.lock_stores();
        let key = scope.map(str::to_string);
        let now = Instant::now();
        if let Some(watch) = stores.get_mut(&key) {
            watch.used = now;
            return Ok(watch.store.clone());
        }
        give_back_unused(&mut stores, self.linger);
        if stores.len() >= MAX_WATCHES {
            let unheld = stores
                .iter()
                .filter(|(_, w)| w.store.holders() == 1)
                .min_by_key(|(_, w)| w.used)
                .map(|(k, _)| k.clone());
            match unheld {
                Some(k) => {
                    stores.remove(&k);
                }
                None => {
                    return Err(ApiError::said(
                        Code::ResourceExhausted,
                        Reason::LimitReached,
                        &[("limit", "watches"), ("max", &MAX_WATCHES.to_string())],
                    ));
                }
            }
        }
        let store = OperationStore::watch(self.service.access.own(), key.clone());
        let watch = Watch {
            store: store.clone(),
            used: now,
        };
        stores.insert(key, watch);
        Ok(store)
    }

    /// How many namespace watches are open (for tests and the metrics).
    pub fn watches_open(&self) -> usize {
        self.lock_stores().len()
    }

    fn lock_verdicts(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (Instant, bool)>> {
        self.verdicts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Gives back the watches no stream holds that no list used for `linger`.
fn give_back_unused(stores: &mut HashMap<Option<String>, Watch>, linger: Duration) {
    stores.retain(|_, w| w.store.holders() > 1 || w.used.elapsed() < linger);
}

fn forget_oldest_half(verdicts: &mut HashMap<Key, (Instant, bool)>) {
    let mut ages: Vec<Instant> = verdicts.values().map(|(at, _)| *at).collect();
    ages.sort();
    if let Some(cut) = ages.get(ages.len() / 2).copied() {
        verdicts.retain(|_, (at, _)| *at > cut);
    }
}

/// The refusal of a caller who may not list and watch operations in `scope`.
fn denied(scope: Option<&str>) -> ApiError {
    ApiError::said(
        Code::PermissionDenied,
        Reason::NotPermitted,
        &[
            ("verb", "watch"),
            ("resource", "talosoperations"),
            ("namespace", scope.unwrap_or("*")),
            ("scope", if scope.is_some() { "namespace" } else { "all" }),
        ],
    )
}
