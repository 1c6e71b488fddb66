//! `serve`'s read model: one watch per namespace in use, kept with the server's own identity
//! and shared by every caller, so a poll or a subscription reads memory instead of listing
//! 10,000 operations from the API. A caller reads from it only once Kubernetes said, through a
//! SelfSubjectAccessReview made as that person (impersonated), that they may list and watch
//! TalosOperations there; the answer is asked again after [`RECHECK`].

use super::OperationService;
use super::access::Caller;
use super::store::OperationStore;
use futures::StreamExt as _;
use ichor_model::{ApiError, Code, Reason, Updates, WatchRequest};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// How long an answer of Kubernetes about a caller holds.
pub const RECHECK: Duration = Duration::from_secs(60);

/// At most this many namespaces are watched: a caller allowed everywhere could otherwise make
/// serve open a watch for every name it cares to ask about. Past it, lists read the API as the
/// caller and a new subscription is refused RESOURCE_EXHAUSTED.
pub const MAX_WATCHES: usize = 64;

/// At most this many answers are kept; past it the oldest half is forgotten (asked again).
const MAX_VERDICTS: usize = 4096;

/// Who asks, and where: the identity (user and groups) and the namespace (`None`: all).
type Key = (String, Vec<String>, Option<String>);

/// The watches and the answers about callers.
#[derive(Clone)]
pub struct SharedReads {
    service: OperationService,
    stores: Arc<Mutex<HashMap<Option<String>, OperationStore>>>,
    verdicts: Arc<Mutex<HashMap<Key, (Instant, bool)>>>,
    recheck: Duration,
}

impl SharedReads {
    /// Kubernetes' answers about a caller hold for `recheck` ([`RECHECK`] in `serve`).
    pub fn new(service: OperationService, recheck: Duration) -> SharedReads {
        SharedReads {
            service,
            stores: Arc::default(),
            verdicts: Arc::default(),
            recheck,
        }
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
    /// stream with PermissionDenied.
    pub async fn watch_operations(
        &self,
        caller: &Caller,
        req: WatchRequest,
    ) -> Result<Updates, ApiError> {
        let scope = req.list.namespace.clone();
        let store = self.store(caller, scope.as_deref()).await?;
        let updates = self.service.watch_operations(caller.clone(), store, req)?;
        Ok(self.rechecked(updates, caller.clone(), scope))
    }

    /// `updates`, with Kubernetes asked again every recheck whether `caller` may still list
    /// and watch in `scope`.
    fn rechecked(&self, updates: Updates, caller: Caller, scope: Option<String>) -> Updates {
        struct S {
            updates: Updates,
            reads: SharedReads,
            caller: Caller,
            scope: Option<String>,
            next_check: Instant,
        }
        let state = S {
            updates,
            reads: self.clone(),
            caller,
            scope,
            next_check: Instant::now() + self.recheck,
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
                    () = tokio::time::sleep_until(s.next_check) => {
                        s.next_check = Instant::now() + s.reads.recheck;
                        if let Err(e) = s.reads.authorize(&s.caller, s.scope.as_deref()).await {
                            return Some((Err(e), None));
                        }
                    }
                }
            }
        }))
    }

    /// Each shared watch's scope and whether its rows can be used (serve's readiness).
    pub fn watches(&self) -> Vec<(Option<String>, crate::store::Health)> {
        let stores = self.stores.lock().unwrap_or_else(|p| p.into_inner());
        stores
            .iter()
            .map(|(k, s)| (k.clone(), s.health()))
            .collect()
    }

    fn store_of(&self, scope: Option<&str>) -> Result<OperationStore, ApiError> {
        let mut stores = self.stores.lock().unwrap_or_else(|p| p.into_inner());
        let key = scope.map(str::to_string);
        if let Some(store) = stores.get(&key) {
            return Ok(store.clone());
        }
        if stores.len() >= MAX_WATCHES {
            return Err(ApiError::new(
                Code::ResourceExhausted,
                format!("the server follows {MAX_WATCHES} namespaces already: poll this one"),
            ));
        }
        let store = OperationStore::watch(self.service.access.own(), key.clone());
        stores.insert(key, store.clone());
        Ok(store)
    }

    fn lock_verdicts(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (Instant, bool)>> {
        self.verdicts.lock().unwrap_or_else(|p| p.into_inner())
    }
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
    let place = match scope {
        Some(ns) => format!("in namespace {ns}"),
        None => "in every namespace".to_string(),
    };
    ApiError::refused(
        Code::PermissionDenied,
        Reason::NotPermitted,
        &[
            ("verb", "watch"),
            ("resource", "talosoperations"),
            ("namespace", scope.unwrap_or("*")),
        ],
        format!("you may not list and watch talosoperations {place} (Kubernetes RBAC)"),
    )
}
