//! The pages the subscriptions of one list share. Every subscription of the same query (its
//! namespace, filters, order and size; not the version it holds) over the same store reads one
//! [`Feed`]: the first to ask after a change makes the page from the store's rows, and every
//! other reads it; the update each one is sent (the page whole, unchanged, or what changed
//! against the version it holds) is made once for all that held the same version, as one
//! [`SharedPage`] that the server encodes once for all of them (kube-apiserver's watch cache
//! does the same for its watchers: KEP-1152).
//!
//! What a feed keeps is bounded: the last [`KEPT_VERSIONS`] versions of its page, and the
//! updates made from them to the newest. A subscriber holding a version older than those gets
//! the page whole. The feed lives while a subscription holds it.

use crate::store::OperationStore;
use bytes::Bytes;
use ichor_model::{ApiError, ListQuery, OperationPage, PageDelta, WatchUpdate};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// How many versions of its page a feed keeps to make deltas from: a subscriber that missed
/// more changes than this (stalled, or slow) gets the page whole. Each is a page of summaries
/// (about 40 KiB at the dashboard's 100 rows), so a feed keeps at most about 320 KiB.
pub const KEPT_VERSIONS: usize = 8;

/// How many encodings of an update the server may keep beside it (protobuf, and Connect's JSON).
pub const ENCODINGS: usize = 2;

/// What a page update carries.
#[derive(Debug)]
pub enum PagePart {
    /// The page whole (or, `unchanged`, only its version: the subscriber holds it).
    Whole(OperationPage),
    /// What changed against the version the subscriber holds.
    Delta(PageDelta),
}

/// One page update, shared by every subscriber it is sent to, with the encodings the server
/// made of it (each made once, then its bytes cloned).
#[derive(Debug)]
pub struct SharedPage {
    part: PagePart,
    encoded: [OnceLock<Bytes>; ENCODINGS],
}

impl SharedPage {
    /// An update of its own (a full view, read as its caller; a page listed from the API).
    pub fn new(part: PagePart) -> SharedPage {
        SharedPage {
            part,
            encoded: Default::default(),
        }
    }

    pub fn part(&self) -> &PagePart {
        &self.part
    }

    /// The encoding number `form` (below [`ENCODINGS`]) of this update: made by `make` the
    /// first time, the same bytes every time after.
    pub fn encoded(&self, form: usize, make: impl FnOnce(&PagePart) -> Bytes) -> Bytes {
        match self.encoded.get(form) {
            Some(slot) => slot.get_or_init(|| make(&self.part)).clone(),
            None => make(&self.part),
        }
    }
}

/// One update of a subscription as the loop makes it: its page part shared (see the module's
/// description), the rest its own.
#[derive(Debug, Default)]
pub struct Pushed {
    /// The page's update, when the page changed (always in the first update).
    pub page: Option<Arc<SharedPage>>,
    /// The followed operation, its events and the heartbeat (`page` and `delta` unset).
    pub own: WatchUpdate,
}

impl Pushed {
    /// The update as a caller without a wire reads it: the page or the delta copied out.
    pub fn into_update(self) -> WatchUpdate {
        let mut update = self.own;
        match self.page.as_deref().map(SharedPage::part) {
            Some(PagePart::Whole(page)) => update.page = Some(page.clone()),
            Some(PagePart::Delta(delta)) => update.delta = Some(delta.clone()),
            None => {}
        }
        update
    }
}

/// The updates of one subscription as serve sends them, until it fails or is dropped.
pub type Pushes =
    std::pin::Pin<Box<dyn futures::Stream<Item = Result<Pushed, ApiError>> + Send + 'static>>;

/// The feeds of one store, by query (a few: serve bounds the distinct queries kept live); each
/// lives while a subscription holds it.
#[derive(Default)]
pub(crate) struct Feeds {
    by_query: Mutex<Vec<(ListQuery, Weak<Feed>)>>,
    /// Pages made for the subscriptions, over every feed.
    made: AtomicU64,
}

impl Feeds {
    /// The feed of `query`'s page (the version held aside), made when none lives.
    pub(crate) fn feed(self: &Arc<Self>, query: &ListQuery) -> Arc<Feed> {
        let key = ListQuery {
            known_version: None,
            ..query.clone()
        };
        let mut feeds = self.by_query.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(feed) = feeds
            .iter()
            .find(|(q, _)| *q == key)
            .and_then(|(_, f)| f.upgrade())
        {
            return feed;
        }
        feeds.retain(|(_, f)| f.strong_count() > 0);
        let feed = Arc::new(Feed {
            key: key.clone(),
            feeds: Arc::downgrade(self),
            kept: Mutex::default(),
        });
        feeds.push((key, Arc::downgrade(&feed)));
        feed
    }

    pub(crate) fn made(&self) -> u64 {
        self.made.load(Ordering::Relaxed)
    }
}

/// One query's page as its subscriptions share it.
pub struct Feed {
    key: ListQuery,
    feeds: Weak<Feeds>,
    kept: Mutex<Kept>,
}

/// The versions kept and the updates made to the newest.
#[derive(Default)]
struct Kept {
    /// The store's revision the newest page was made at.
    revision: Option<u64>,
    /// Newest last, each version once.
    pages: VecDeque<Arc<OperationPage>>,
    /// The updates to the newest, made so far: whole, unchanged, and from each older version
    /// (`None`: that version gets it whole).
    whole: Option<Arc<SharedPage>>,
    unchanged: Option<Arc<SharedPage>>,
    from: HashMap<String, Option<Arc<SharedPage>>>,
}

impl Kept {
    /// `page` as the newest, made at `revision`: the same version again changes nothing else.
    fn newest(&mut self, revision: u64, page: OperationPage) {
        self.revision = Some(revision);
        if self.pages.back().is_some_and(|p| p.version == page.version) {
            return;
        }
        self.pages.retain(|p| p.version != page.version);
        if self.pages.len() >= KEPT_VERSIONS {
            self.pages.pop_front();
        }
        self.pages.push_back(Arc::new(page));
        self.whole = None;
        self.unchanged = None;
        self.from.clear();
    }
}

impl Feed {
    /// The update that brings a subscriber holding `held` (a page version, or none) to the
    /// newest page of `store`: what changed, when `deltas` and the feed keeps that version;
    /// only the version, when it holds the newest; else the page whole. `None` when the store
    /// cannot make the page (its watch is not following: the caller lists from the API).
    pub fn update(
        &self,
        store: &OperationStore,
        held: Option<&str>,
        deltas: bool,
    ) -> Option<Result<Arc<SharedPage>, ApiError>> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        // Read before the page: a change between the two makes the page again next time.
        let revision = store.revision();
        if kept.revision != Some(revision) || kept.pages.is_empty() {
            let page = match store.page(&self.key)? {
                Ok(page) => page,
                Err(e) => return Some(Err(e)),
            };
            if let Some(feeds) = self.feeds.upgrade() {
                feeds.made.fetch_add(1, Ordering::Relaxed);
            }
            kept.newest(revision, page);
        }
        let newest = kept.pages.back()?.clone();
        let update = match held {
            Some(v) if v == newest.version => unchanged(&mut kept, &newest),
            Some(v) if deltas => {
                from(&mut kept, v, &newest).unwrap_or_else(|| whole(&mut kept, &newest))
            }
            _ => whole(&mut kept, &newest),
        };
        Some(Ok(update))
    }
}

/// The newest page whole, made once.
fn whole(kept: &mut Kept, newest: &OperationPage) -> Arc<SharedPage> {
    kept.whole
        .get_or_insert_with(|| Arc::new(SharedPage::new(PagePart::Whole(newest.clone()))))
        .clone()
}

/// The newest page's version alone, for subscribers that hold it, made once.
fn unchanged(kept: &mut Kept, newest: &OperationPage) -> Arc<SharedPage> {
    kept.unchanged
        .get_or_insert_with(|| {
            Arc::new(SharedPage::new(PagePart::Whole(OperationPage {
                operations: Vec::new(),
                unchanged: true,
                next_page_token: newest.next_page_token.clone(),
                total: newest.total,
                version: newest.version.clone(),
            })))
        })
        .clone()
}

/// What changed from the kept version `held` to the newest, made once; `None` when that
/// version is not kept, or the delta would not be smaller than the page.
fn from(kept: &mut Kept, held: &str, newest: &OperationPage) -> Option<Arc<SharedPage>> {
    if let Some(made) = kept.from.get(held) {
        return made.clone();
    }
    let base = kept.pages.iter().find(|p| p.version == held)?.clone();
    let made = PageDelta::between(&base, newest)
        .filter(|d| d.rows.len() < newest.operations.len())
        .map(|d| Arc::new(SharedPage::new(PagePart::Delta(d))));
    kept.from.insert(held.to_string(), made.clone());
    made
}
