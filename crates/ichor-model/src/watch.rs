//! WatchOperations: what a dashboard holds, pushed as it changes instead of polled.
//!
//! A subscription names the list page the dashboard shows (the same query as ListOperations)
//! and, when it follows one, an operation. The first update carries both whole; each later one
//! carries what changed (the page, the followed operation with its latest events), and a
//! heartbeat comes when nothing has changed for [`HEARTBEAT`]. A slow subscriber gets the latest
//! state coalesced: an update is made when the subscriber is ready for it, never queued.
//!
//! A client that applies deltas ([`WatchRequest::page_deltas`]: the remote client sets it on the
//! wire) may get a change of the page as a [`PageDelta`] against the page it last received
//! instead of the page whole; the remote client applies it, so what its streams hand on always
//! carries the page whole.

use crate::{ApiError, ListQuery, Operation, OperationEvents, OperationPage, PageDelta};
use std::pin::Pin;
use std::time::Duration;

/// How often a stream with nothing to say says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// A client that has heard nothing (no update, no heartbeat) for this long takes the stream for
/// broken, says live updates are off, and reconnects: a heartbeat's interval and a margin for
/// an update that takes the server a while to make (it reads the followed operation).
pub const SILENCE_LIMIT: Duration = Duration::from_secs(HEARTBEAT.as_secs() + 10);

/// What a dashboard holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatchRequest {
    /// The list page; its `known_version` (after a reconnect, the version last received) makes
    /// the first update say "unchanged" instead of sending the page again.
    pub list: ListQuery,
    /// The operation followed (its page is open): namespace and name.
    pub follow: Option<(String, String)>,
    /// The subscriber applies [`PageDelta`]s: a later change of the page may come as what
    /// changed against the page it holds (see [`WatchUpdate::delta`]).
    pub page_deltas: bool,
}

/// One message of the stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WatchUpdate {
    /// The page, when it changed (or the first time).
    pub page: Option<OperationPage>,
    /// Instead of `page`, for a subscriber that applies deltas: the page's change against the
    /// page it last received (whole or by a delta).
    pub delta: Option<PageDelta>,
    /// The followed operation in its full view, when it changed; an error when it cannot be
    /// read (NotFound once deleted).
    pub followed: Option<Result<Operation, ApiError>>,
    /// The followed operation's latest events (the newest), sent with it.
    pub events: Option<Result<OperationEvents, ApiError>>,
    /// Nothing changed; the stream is alive.
    pub heartbeat: bool,
}

/// The updates of one subscription, until it fails or is dropped.
pub type Updates =
    Pin<Box<dyn futures_core::Stream<Item = Result<WatchUpdate, ApiError>> + Send + 'static>>;
