//! WatchOperations: the page a dashboard holds and the operation it follows, pushed as the
//! store's watch sees them change. One loop for every route: in-process over the person's own
//! watch, and in `serve` over the server's shared watch once the person was authorised.
//!
//! Nothing is queued: the loop waits on the store's revision (a watch channel, which keeps only
//! the latest), and makes an update when the subscriber asks for the next one, so a slow
//! subscriber gets the latest state, coalesced, and a burst of changes (a 10,000-operation
//! relist) is one update.
//!
//! The page comes from the list's [`Feed`]: made once per change for every subscription of the
//! same list, and each update (whole, unchanged, or, for a subscriber that applies deltas, what
//! changed against the version it holds) made once for all that held the same version. What a
//! subscription holds between updates is its request, the version of the page it was last sent
//! (32 characters), the followed operation's resourceVersion, and handles (the store, the feed,
//! two watch receivers): well under a kilobyte with the request's strings; the pages themselves
//! are the feed's, kept once for all (at most [`crate::feed::KEPT_VERSIONS`] of them).

use super::OperationService;
use super::access::Caller;
use super::feed::{Feed, PagePart, Pushed, Pushes, SharedPage};
use super::store::{Health, OperationStore};
use super::validate::{self, NameOf};
use futures::StreamExt as _;
use ichor_model::{ApiError, Code, HEARTBEAT, ListQuery, Updates, View, WatchRequest, WatchUpdate};
use std::sync::Arc;
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
    /// The list's page, shared with every subscription of the same list over the store.
    feed: Arc<Feed>,
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
        let pushes = self.push_operations(caller, store, followed_store, req)?;
        Ok(Box::pin(pushes.map(|p| p.map(Pushed::into_update))))
    }

    /// The updates as serve sends them: each page part shared with the other subscriptions of
    /// the same list (see [`crate::feed`]).
    pub fn push_operations(
        &self,
        caller: Caller,
        store: OperationStore,
        followed_store: Option<OperationStore>,
        req: WatchRequest,
    ) -> Result<Pushes, ApiError> {
        super::list::check(&req.list)?;
        if let Some((ns, name)) = &req.follow {
            validate::namespace(ns)?;
            validate::name(NameOf::Operation, name)?;
        }
        let sub = Subscription {
            service: self.clone(),
            caller,
            changes: store.changes(),
            feed: store.feed(&req.list),
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
    async fn next(&mut self) -> Result<Pushed, ApiError> {
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
            let mut update = Pushed {
                page: Some(self.page().await?),
                ..Pushed::default()
            };
            if self.req.follow.is_some() {
                Box::pin(self.follow(&mut update.own, true)).await;
            }
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
                    let own = WatchUpdate {
                        heartbeat: true,
                        ..WatchUpdate::default()
                    };
                    return Ok(Pushed { page: None, own });
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
                Box::pin(self.listed_again()).await?;
                self.not_stale()?;
            }
            let mut update = Pushed::default();
            let page = self.page().await?;
            if !unchanged(&page) {
                update.page = Some(page);
            }
            if self.req.follow.is_some() {
                Box::pin(self.follow(&mut update.own, false)).await;
            }
            if update.page.is_some() || update.own.followed.is_some() {
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

    /// The page's update: from the feed (unchanged when the subscriber holds its version; what
    /// changed, when it applies deltas and the feed kept its version; else whole). The watch
    /// keeps summaries: a full view (as ListOperations gives it) reads the page's operations
    /// whole from the API as the caller, only when the page changed, and is never shared.
    async fn page(&mut self) -> Result<Arc<SharedPage>, ApiError> {
        let full = self.req.list.view == View::Full;
        let deltas = self.req.page_deltas && !full;
        let held = self.page_version.as_deref();
        let update = match self.feed.update(&self.store, held, deltas) {
            Some(update) => {
                let update = update?;
                match update.part() {
                    PagePart::Whole(page) if full && !page.unchanged => {
                        Box::pin(self.read(Some(page.clone()))).await?
                    }
                    _ => update,
                }
            }
            None => Box::pin(self.read(None)).await?,
        };
        self.page_version = Some(
            match update.part() {
                PagePart::Whole(page) => &page.version,
                PagePart::Delta(delta) => &delta.version,
            }
            .clone(),
        );
        Ok(update)
    }

    /// The page read from the API as the caller: `summaries`' operations whole (a full view),
    /// or, without them (the store cannot make the page), the page listed. Boxed where it is
    /// awaited: a subscription waits between updates on a future that would otherwise hold
    /// this one's state (kilobytes) for every subscriber.
    async fn read(
        &self,
        summaries: Option<ichor_model::OperationPage>,
    ) -> Result<Arc<SharedPage>, ApiError> {
        let page = match summaries {
            Some(page) => {
                self.service
                    .read_whole(&self.caller, page, View::Full)
                    .await?
            }
            None => {
                let query = ListQuery {
                    known_version: self.page_version.clone(),
                    ..self.req.list.clone()
                };
                self.service.list_page(&self.caller, &query).await?
            }
        };
        Ok(Arc::new(SharedPage::new(PagePart::Whole(page))))
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

/// Whether a page's update only says the subscriber holds it.
fn unchanged(update: &SharedPage) -> bool {
    matches!(update.part(), PagePart::Whole(page) if page.unchanged)
}
