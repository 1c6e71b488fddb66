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
    req: WatchRequest,
    changes: tokio::sync::watch::Receiver<u64>,
    /// The page version the subscriber holds.
    page_version: Option<String>,
    /// The followed operation's resourceVersion as last sent (`Some("")`: sent as missing).
    followed_version: Option<String>,
    first: bool,
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
        super::list::check(&req.list)?;
        if let Some((ns, name)) = &req.follow {
            validate::namespace(ns)?;
            validate::name(NameOf::Operation, name)?;
        }
        let sub = Subscription {
            service: self.clone(),
            caller,
            changes: store.changes(),
            store,
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
            let mut update = WatchUpdate {
                page: Some(self.page().await?),
                ..WatchUpdate::default()
            };
            self.follow(&mut update, true).await;
            return Ok(update);
        }
        loop {
            match tokio::time::timeout(HEARTBEAT, self.changes.changed()).await {
                Err(_) => {
                    return Ok(WatchUpdate {
                        heartbeat: true,
                        ..WatchUpdate::default()
                    });
                }
                Ok(Err(_)) => return Err(ApiError::new(Code::Unavailable, "the watch ended")),
                Ok(Ok(())) => {}
            }
            tokio::time::sleep(BURST).await;
            self.changes.borrow_and_update();
            if let Health::Failed(_) = self.store.health() {
                self.listed_again().await?;
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

    /// The watch failed. A watch too old (410) lists again by itself within a second or two
    /// (kube-runtime's backoff), and the stream goes on with what it lists; a watch that does
    /// not deliver again within [`RELIST_GRACE`] ends the stream (the dashboard polls, and
    /// subscribes again).
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

    /// The followed operation and its events, read whole when the watch saw it change (or the
    /// first time, or always when the store does not hold its namespace).
    async fn follow(&mut self, update: &mut WatchUpdate, first: bool) {
        let Some((ns, name)) = self.req.follow.clone() else {
            return;
        };
        let held = self.store.scope().is_none_or(|s| s == ns);
        let version = self.store.resource_version(&ns, &name).unwrap_or_default();
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
