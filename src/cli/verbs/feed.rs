//! Where a watching command's next state comes from (`get --watch`, `--follow`, `list
//! --watch`): WatchOperations' stream where the backend pushes; when it breaks or cannot be
//! opened, "live updates off" on standard error, then a read every poll (2 s, ADR 0068's CLI
//! poll) with the stream asked for again after each read. A moment to wake at (a machine
//! turning slow, which no change of the object announces) ends a wait early with nothing new.

use super::Io;
use ichor_model::{
    ApiError, Code, ListQuery, Operation, OperationClient, OperationPage, Updates, WatchRequest,
};
use jiff::Timestamp;

/// The least wait for a moment to wake at.
const WAKE_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// What is watched.
#[derive(Clone, Debug)]
pub(super) enum Watched {
    /// One operation, by namespace and name.
    One { namespace: String, name: String },
    /// A list's first page.
    List(ListQuery),
}

/// What a wait brought.
#[derive(Debug)]
pub(super) enum Seen {
    One(Box<Operation>),
    Page(OperationPage),
    /// The moment to wake at came first.
    Woken,
}

/// The stream while it lives, else reads after a poll.
pub(super) struct Feed {
    watched: Watched,
    updates: Option<Updates>,
    /// Whether to ask for the stream again after a read (it broke, it did not refuse).
    resubscribe: bool,
}

impl Feed {
    /// Asks for the stream of `watched` (where the backend pushes).
    pub(super) async fn open(client: &dyn OperationClient, watched: Watched) -> Feed {
        let mut feed = Feed {
            watched,
            updates: None,
            resubscribe: true,
        };
        feed.subscribe(client).await;
        feed
    }

    /// The stream, when the backend pushes and it opens; one that will not come (refused, not
    /// there) is not asked for again.
    async fn subscribe(&mut self, client: &dyn OperationClient) {
        if !client.pushes() {
            self.resubscribe = false;
            return;
        }
        let req = match &self.watched {
            Watched::One { namespace, name } => {
                // The list page the stream also carries: one row, not read.
                let mut list = ListQuery::everything(Some(namespace));
                list.page_size = 1;
                WatchRequest {
                    list,
                    follow: Some((namespace.clone(), name.clone())),
                    page_deltas: false,
                }
            }
            Watched::List(list) => WatchRequest {
                list: list.clone(),
                follow: None,
                page_deltas: false,
            },
        };
        match client.watch_operations(&req).await {
            Ok(updates) => self.updates = Some(updates),
            Err(e) => {
                tracing::info!(error = %e, "no push: watching by polling");
                self.resubscribe &= e.code.is_transient();
            }
        }
    }

    /// What the stream brings next that concerns the watched; `None` when the stream ends
    /// (said on standard error, unless the backend does not push at all).
    async fn pushed(&mut self, io: &mut Io<'_>) -> Option<Result<Seen, ApiError>> {
        let updates = self.updates.as_mut()?;
        loop {
            let item = std::future::poll_fn(|cx| updates.as_mut().poll_next(cx)).await;
            let u = match item {
                Some(Ok(u)) => u,
                Some(Err(e)) if e.code == Code::Unimplemented => {
                    self.resubscribe = false;
                    break;
                }
                Some(Err(_)) | None => {
                    let line = format!(
                        "{} {}",
                        super::follow::clock(&io.tz),
                        io.texts.t("badge-live-off")
                    );
                    io.warn(&line);
                    break;
                }
            };
            let seen = match (&self.watched, u.followed, u.page) {
                (Watched::One { .. }, Some(r), _) => r.map(|op| Seen::One(Box::new(op))),
                (Watched::List(_), _, Some(page)) if !page.unchanged => Ok(Seen::Page(page)),
                _ => continue,
            };
            return Some(seen);
        }
        self.updates = None;
        None
    }

    /// A read of the watched.
    async fn read(&self, client: &dyn OperationClient) -> Result<Seen, ApiError> {
        match &self.watched {
            Watched::One { namespace, name } => client
                .get_operation(namespace, name)
                .await
                .map(|op| Seen::One(Box::new(op))),
            Watched::List(q) => client.list_page(q).await.map(Seen::Page),
        }
    }

    /// The watched's next state: pushed, else read (at once when `first`, else after a poll);
    /// [`Seen::Woken`] when `wake` comes first.
    pub(super) async fn next(
        &mut self,
        client: &dyn OperationClient,
        io: &mut Io<'_>,
        first: bool,
        wake: Option<Timestamp>,
    ) -> Result<Seen, ApiError> {
        // As of the command's clock; never sooner than WAKE_AFTER, so a moment that has come
        // (a machine slow at this very instant) is not waited for in a loop.
        let now = (io.clock)();
        let until_wake = async move {
            match wake {
                Some(at) => {
                    let d = at.duration_since(now).max(Default::default());
                    tokio::time::sleep(d.unsigned_abs().max(WAKE_AFTER)).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::pin!(until_wake);
        if self.updates.is_some() {
            tokio::select! {
                pushed = self.pushed(io) => if let Some(seen) = pushed {
                    return self.held(seen);
                },
                () = &mut until_wake => return Ok(Seen::Woken),
            }
        } else if !first {
            tokio::select! {
                () = tokio::time::sleep(io.poll) => {}
                () = &mut until_wake => return Ok(Seen::Woken),
            }
        }
        let seen = self.read(client).await;
        if self.resubscribe && self.updates.is_none() {
            self.subscribe(client).await;
        }
        self.held(seen)
    }

    /// Keeps the version of a list's page seen, so that a read or a stream asked for again
    /// answers "unchanged" while it is.
    fn held(&mut self, seen: Result<Seen, ApiError>) -> Result<Seen, ApiError> {
        if let (Watched::List(q), Ok(Seen::Page(page))) = (&mut self.watched, &seen)
            && !page.unchanged
        {
            q.known_version = Some(page.version.clone());
        }
        seen
    }
}
