//! WatchOperations: the page a dashboard holds and the operation it follows, pushed as the
//! store's watch sees them change. One loop for every route: in-process over the person's own
//! watch, and in `serve` over the server's shared watch once the person was authorised.
//!
//! Nothing is queued: the loop waits on the store's revision (a watch channel, which keeps only
//! the latest), and makes an update when the subscriber asks for the next one, so a slow
//! subscriber gets the latest state, coalesced, and a burst of changes (a 10,000-operation
//! relist) is one update.

use super::OperationService;
use super::access::Caller;
use super::store::{Health, OperationStore};
use super::validate::{self, NameOf};
use ichor_model::{ApiError, Code, HEARTBEAT, Updates, WatchRequest, WatchUpdate};
use std::time::Duration;

/// How long a change waits for the rest of its burst before the update is made: the controller
/// writes a machine's phase and the operation's status a few milliseconds apart.
const BURST: Duration = Duration::from_millis(15);

/// How long a failed watch has to list again before a stream over it ends: a relist after a
/// 410 takes about a second at 10,000 operations; longer would say "live" about a dead API.
const RELIST_GRACE: Duration = Duration::from_secs(5);

/// One subscription's state between updates.
struct Subscription {
    service: OperationService,
    caller: Caller,
    store: OperationStore,
    /// The watch of the followed operation's namespace, when it is not the list's (serve's
    /// shared watch, for a caller who may list and watch there).
    followed_store: Option<(OperationStore, tokio::sync::watch::Receiver<u64>)>,
    req: WatchRequest,
    changes: tokio::sync::watch::Receiver<u64>,
    /// The page version the subscriber holds.
    page_version: Option<String>,
    /// The followed operation's resourceVersion as last sent (`Some("")`: sent as missing).
    followed_version: Option<String>,
    first: bool,
    /// The store's count of stale rows when the subscription began: once it moves, what was
    /// sent may have been out of date, and the stream ends (the dashboard says so).
    stale_count: u64,
}

impl OperationService {
    /// The updates of `req` over `store`, as `caller` reads: the first whole, then changes and
    /// heartbeats. The request is checked before anything is read.
    pub fn watch_operations(
        &self,
        caller: Caller,
        store: OperationStore,
        req: WatchRequest,
    ) -> Result<Updates, ApiError> {
        self.watch_operations_following(caller, store, None, req)
    }

    /// As [`OperationService::watch_operations`], the followed operation's changes seen in
    /// `followed_store` (the watch of its namespace, when that is not the list's): it is read
    /// again only when it changed, as one in the list's namespace is.
    pub fn watch_operations_following(
        &self,
        caller: Caller,
        store: OperationStore,
        followed_store: Option<OperationStore>,
        req: WatchRequest,
    ) -> Result<Updates, ApiError> {
        super::list::check(&req.list)?;
        if let Some((ns, name)) = &req.follow {
            validate::namespace(ns)?;
            validate::name(NameOf::Operation, name)?;
        }
        let sub = Subscription {
            service: self.clone(),
            caller,
            changes: store.changes(),
            stale_count: store.stale_count(),
            store,
            followed_store: followed_store.map(|f| {
                let changes = f.changes();
                (f, changes)
            }),
            page_version: req.list.known_version.clone(),
            req,
            followed_version: None,
            first: true,
        };
        Ok(Box::pin(futures::stream::unfold(
            Some(sub),
            |sub| async move {
                let mut sub = sub?;
                match sub.next().await {
                    Ok(update) => Some((Ok(update), Some(sub))),
                    // The stream ends after its error.
                    Err(e) => Some((Err(e), None)),
                }
            },
        )))
    }
}

impl Subscription {
    /// The next update: the first whole; then the next change, or a heartbeat.
    async fn next(&mut self) -> Result<WatchUpdate, ApiError> {
        if self.first {
            self.first = false;
            self.store.settled(Duration::from_secs(5)).await;
            self.changes.borrow_and_update();
            if let Some((store, followed)) = &mut self.followed_store {
                store.settled(Duration::from_secs(5)).await;
                followed.borrow_and_update();
            }
            // Nothing is pushed over a watch that does not follow: polls read the API.
            if let Health::Failed(why) = self.store.health() {
                return Err(ApiError::new(
                    Code::Unavailable,
                    format!("no live updates: the operations watch is not following: {why}"),
                ));
            }
            self.stale_count = self.store.stale_count();
            let mut update = WatchUpdate {
                page: Some(self.page().await?),
                ..WatchUpdate::default()
            };
            self.follow(&mut update, true).await;
            return Ok(update);
        }
        loop {
            let changed = async {
                match &mut self.followed_store {
                    Some((_, followed)) => tokio::select! {
                        r = self.changes.changed() => r,
                        r = followed.changed() => r,
                    },
                    None => self.changes.changed().await,
                }
            };
            match tokio::time::timeout(HEARTBEAT, changed).await {
                // A heartbeat says the data is still the latest: only while the watch follows.
                Err(_) if self.store.health() == Health::Ready => {
                    return Ok(WatchUpdate {
                        heartbeat: true,
                        ..WatchUpdate::default()
                    });
                }
                Err(_) => {}
                Ok(Err(_)) => return Err(ApiError::new(Code::Unavailable, "the watch ended")),
                Ok(Ok(())) => tokio::time::sleep(BURST).await,
            }
            self.changes.borrow_and_update();
            if let Some((_, followed)) = &mut self.followed_store {
                followed.borrow_and_update();
            }
            self.not_stale()?;
            if self.store.health() != Health::Ready {
                self.listed_again().await?;
                self.not_stale()?;
            }
            let mut update = WatchUpdate::default();
            let page = self.page().await?;
            if !page.unchanged {
                update.page = Some(page);
            }
            self.follow(&mut update, false).await;
            if update.page.is_some() || update.followed.is_some() {
                return Ok(update);
            }
        }
    }

    /// Ends the stream when the store found its rows stale since the subscription began
    /// (heard nothing past the bookmark interval, a version the server has not reached, a
    /// broken watch): what this stream said was live may not have been.
    fn not_stale(&self) -> Result<(), ApiError> {
        if self.store.stale_count() == self.stale_count {
            return Ok(());
        }
        let why = match self.store.health() {
            Health::Failed(why) => why,
            _ => "the operations watch listed again".to_string(),
        };
        Err(ApiError::new(
            Code::Unavailable,
            format!("live updates stopped: what was pushed may have been out of date: {why}"),
        ))
    }

    /// The watch failed, or has not listed yet. One that lists again within [`RELIST_GRACE`]
    /// (a watch too old, 410, lists again at once) goes on with what it lists; else the stream
    /// ends (the dashboard polls, and subscribes again). A broken watch ended the stream
    /// already (`not_stale`): nothing arrived while it was down.
    async fn listed_again(&mut self) -> Result<(), ApiError> {
        let until = tokio::time::Instant::now() + RELIST_GRACE;
        loop {
            match self.store.health() {
                Health::Ready => return Ok(()),
                Health::Failed(why) if tokio::time::Instant::now() >= until => {
                    return Err(ApiError::new(
                        Code::Unavailable,
                        format!("live updates stopped: the operations watch failed: {why}"),
                    ));
                }
                _ => {}
            }
            match tokio::time::timeout_at(until, self.changes.changed()).await {
                Ok(Err(_)) => return Err(ApiError::new(Code::Unavailable, "the watch ended")),
                Ok(Ok(())) => {
                    tokio::time::sleep(BURST).await;
                    self.changes.borrow_and_update();
                }
                // Past the grace: the health says the last word.
                Err(_) if self.store.health() == Health::Ready => return Ok(()),
                Err(_) => {
                    return Err(ApiError::new(
                        Code::Unavailable,
                        "live updates stopped: the operations watch did not list again",
                    ));
                }
            }
        }
    }

    /// The page, as "unchanged" when the subscriber holds its version. The watch keeps
    /// summaries: a full view (as ListOperations gives it) reads the page's operations whole
    /// from the API as the caller, only when the page changed.
    async fn page(&mut self) -> Result<ichor_model::OperationPage, ApiError> {
        let query = ichor_model::ListQuery {
            known_version: self.page_version.clone(),
            ..self.req.list.clone()
        };
        let page = match self.store.page(&query) {
            Some(page) => {
                let page = page?;
                match query.view {
                    ichor_model::View::Full if !page.unchanged => {
                        self.service
                            .read_whole(&self.caller, page, query.view)
                            .await?
                    }
                    _ => page,
                }
            }
            None => self.service.list_page(&self.caller, &query).await?,
        };
        self.page_version = Some(page.version.clone());
        Ok(page)
    }

    /// The followed operation and its events, read whole when a watch saw it change (or the
    /// first time, or always when no watch that follows holds its namespace).
    async fn follow(&mut self, update: &mut WatchUpdate, first: bool) {
        let Some((ns, name)) = self.req.follow.clone() else {
            return;
        };
        let (held, version) = match &self.followed_store {
            Some((store, _)) => (
                store.health() == Health::Ready,
                store.resource_version(&ns, &name),
            ),
            None => (
                self.store.scope().is_none_or(|s| s == ns),
                self.store.resource_version(&ns, &name),
            ),
        };
        let version = version.unwrap_or_default();
        if !first && held && self.followed_version.as_deref() == Some(version.as_str()) {
            return;
        }
        self.followed_version = Some(version);
        let op = self.service.get_operation(&self.caller, &ns, &name).await;
        let events = match &op {
            Ok(_) => Some(
                self.service
                    .list_operation_events(&self.caller, &ns, &name, Default::default())
                    .await,
            ),
            Err(_) => None,
        };
        update.followed = Some(op);
        update.events = events;
    }
}
