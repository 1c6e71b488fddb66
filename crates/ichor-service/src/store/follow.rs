//! The watch that keeps a store's rows, as client-go's reflector keeps a cache, with one rule
//! more: the rows are trusted only while data arrives.
//!
//! - It lists (pages of 500, the most recent version), then watches from the list's version
//!   with bookmarks (`allowWatchBookmarks`), and watches again from the last version it saw
//!   when the server ends a watch (`timeoutSeconds`).
//! - **Heard nothing**: kube-apiserver sends a bookmark about once a minute
//!   ([`BOOKMARK_INTERVAL`]) to a watch that allows them; a watch that has brought no event and
//!   no bookmark for longer than that, with a margin ([`SILENCE`]), is not taken for a quiet
//!   one: the API may have restarted behind it (a watch from a version the server has not
//!   reached is accepted and says nothing until it gets there), been restored from a backup,
//!   or the connection may hang. The rows are marked stale and listed again.
//! - **A version the server has not reached, or one that went back**: an `ERROR` 504 "Too large
//!   resource version" (the cause `ResourceVersionTooLarge`), or an event whose version is
//!   older than one already seen: the rows are stale, listed again at once. A 410 "too old
//!   resource version" lists again at once too (as client-go's reflector does for both).
//! - **A broken watch** (an error, not the server's end of it), or one that cannot be opened:
//!   the server may be a new one, so the rows are stale too (no data arrives meanwhile), and
//!   listed again after a backoff (1 s doubling to 30 s, with jitter), never resumed from a
//!   version the new server may not have.

use super::{Rows, Shared, Signals};
use crate::row::Row;
use crate::watched::Watched;
use futures::StreamExt as _;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// How often kube-apiserver sends a bookmark to a watch that allows them (its watch cache's
/// `defaultBookmarkFrequency`; the demo API's default too).
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// How long a watch may bring nothing (no event, no bookmark) before its rows are taken for
/// stale: the bookmark interval and a quarter of it (kube-apiserver keeps 75 s of events for
/// the same reason).
pub const SILENCE: Duration = Duration::from_secs(75);

/// The server ends each watch after this long (kube-runtime's and kubectl's 290 s are close);
/// the store then watches again from where it was.
const WATCH_TIMEOUT_SECS: u32 = 290;

/// Objects per list page.
const PAGE: u32 = 500;

/// Why a watch ended.
#[derive(Debug)]
enum Ended {
    /// The server ended it: watch again from where it was.
    Closed,
    /// The rows may be out of date (heard nothing, a version not reached, one gone back):
    /// list again now.
    Stale(String),
    /// The server no longer has the version watched from (410): list again now. The rows
    /// were the latest until the watch before ended.
    Expired(String),
    /// It broke or could not be opened: list again after the backoff.
    Broke(String),
}

/// What the task keeps between watches.
pub(super) struct Follower {
    pub(super) api: Api<Watched>,
    pub(super) shared: std::sync::Arc<Mutex<Shared>>,
    pub(super) signals: Signals,
    pub(super) silence: Duration,
}

impl Follower {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lists and watches for as long as the store lives.
    pub(super) async fn run(self) {
        let mut backoff = backoff();
        loop {
            let version = match self.list().await {
                Ok(v) => v,
                Err(why) => {
                    self.failed(why, false);
                    tokio::time::sleep(next(&mut backoff)).await;
                    continue;
                }
            };
            backoff = backoff_after_success(backoff);
            match self.watch_from(version).await {
                Ended::Stale(why) => self.failed(why, true),
                Ended::Expired(why) => self.failed(why, false),
                // The server may be another one now: what was read may be out of date.
                Ended::Broke(why) => {
                    self.failed(why, true);
                    tokio::time::sleep(next(&mut backoff)).await;
                }
                Ended::Closed => {}
            }
        }
    }

    /// Every object, page by page, made into rows that replace the store's; the list's
    /// version.
    async fn list(&self) -> Result<String, String> {
        let mut rows = Rows::default();
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(PAGE);
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let page = self.api.list(&lp).await.map_err(|e| e.to_string())?;
            for obj in page.items {
                let r = Row::of(*obj.op, &mut rows.strings);
                rows.insert(r);
            }
            token = page.metadata.continue_.filter(|c| !c.is_empty());
            if token.is_none() {
                let version = page.metadata.resource_version.unwrap_or_default();
                if version.is_empty() {
                    return Err("the list carries no resourceVersion".into());
                }
                let revision = {
                    let mut s = self.lock();
                    s.rows = rows;
                    s.ready = true;
                    s.failure = None;
                    s.revision += 1;
                    s.revision
                };
                tracing::debug!(version, "the operations are listed; watching from there");
                self.signals.settled.notify_waiters();
                self.signals.changed(revision);
                return Ok(version);
            }
        }
    }

    /// Watches from `version`, and again from the last version seen each time the server ends
    /// a watch, until the rows are stale or a watch breaks.
    async fn watch_from(&self, mut version: String) -> Ended {
        // The list was heard.
        let mut heard = Instant::now();
        loop {
            match self.watch_once(&mut version, &mut heard).await {
                Ended::Closed => continue,
                other => return other,
            }
        }
    }

    /// One watch, to its end.
    async fn watch_once(&self, version: &mut String, heard: &mut Instant) -> Ended {
        let quiet = |at: Instant| {
            Ended::Stale(format!(
                "the watch brought nothing, not even a bookmark, for {} s since {}",
                self.silence.as_secs(),
                at.elapsed().as_secs()
            ))
        };
        let wp = WatchParams::default().timeout(WATCH_TIMEOUT_SECS);
        let opened = tokio::time::timeout_at(*heard + self.silence, self.api.watch(&wp, version));
        let stream = match opened.await {
            Err(_) => return quiet(*heard),
            Ok(Err(e)) => return Ended::Broke(e.to_string()),
            Ok(Ok(s)) => s,
        };
        futures::pin_mut!(stream);
        loop {
            let event = match tokio::time::timeout_at(*heard + self.silence, stream.next()).await {
                Err(_) => return quiet(*heard),
                Ok(None) => return Ended::Closed,
                Ok(Some(Err(e))) => return Ended::Broke(e.to_string()),
                Ok(Some(Ok(e))) => e,
            };
            let seen = match &event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                    use kube::Resource as _;
                    o.meta().resource_version.clone().unwrap_or_default()
                }
                WatchEvent::Bookmark(b) => b.metadata.resource_version.clone(),
                WatchEvent::Error(s) => return ended_by(s),
            };
            if went_back(version, &seen) {
                return Ended::Stale(format!(
                    "the watch went back from resourceVersion {version} to {seen}"
                ));
            }
            *heard = Instant::now();
            if !seen.is_empty() {
                *version = seen;
            }
            self.apply(event);
        }
    }

    /// One event of the watch, applied to the rows; the subscriptions are woken.
    fn apply(&self, event: WatchEvent<Watched>) {
        let revision = {
            let mut s = self.lock();
            match event {
                WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                    let r = Row::of(*obj.op, &mut s.rows.strings);
                    s.rows.insert(r);
                    s.rows.forget_strings();
                }
                WatchEvent::Deleted(obj) => {
                    use kube::Resource as _;
                    let ns = obj.meta().namespace.as_deref().unwrap_or_default();
                    let name = obj.meta().name.as_deref().unwrap_or_default();
                    s.rows.remove(ns, name);
                }
                // Heard: nothing changed.
                WatchEvent::Bookmark(_) | WatchEvent::Error(_) => return,
            }
            s.revision += 1;
            s.revision
        };
        self.signals.changed(revision);
    }

    /// The watch failed (`stale`: its rows may be out of date); lists read the API until a
    /// new list arrives. Said in the log once per outage, bounded.
    fn failed(&self, why: String, stale: bool) {
        let why = ichor_model::inert::truncate(&ichor_model::inert::sanitize(&why), 200);
        let revision = {
            let mut s = self.lock();
            if s.failure.is_none() {
                tracing::info!(error = %why, stale, "the operations watch failed; lists read the API until it lists again");
            }
            s.ready = false;
            s.failed = true;
            s.stale += u64::from(stale);
            s.failure = Some(why);
            s.revision += 1;
            s.revision
        };
        self.signals.settled.notify_waiters();
        self.signals.changed(revision);
    }
}

/// How an `ERROR` event ends a watch: a version the server has not reached (504
/// `ResourceVersionTooLarge`) means the rows may be stale; one it no longer has (410), that
/// the watch must list again; anything else is a broken watch.
fn ended_by(s: &kube::core::Status) -> Ended {
    let too_large = s.code == 504
        && s.details.as_ref().is_some_and(|d| {
            d.causes
                .iter()
                .any(|c| c.reason == "ResourceVersionTooLarge")
        });
    let why = format!("{} ({})", s.message, s.code);
    match s.code {
        _ if too_large => Ended::Stale(why),
        410 => Ended::Expired(why),
        _ => Ended::Broke(why),
    }
}

/// Whether `seen` is older than `held`: both numbers (etcd's revisions, as every API server
/// in use has them; an opaque version is never taken for one gone back).
fn went_back(held: &str, seen: &str) -> bool {
    match (held.parse::<u64>(), seen.parse::<u64>()) {
        (Ok(h), Ok(s)) => s < h,
        _ => false,
    }
}

/// The waits between failed lists: 1 s, doubling to 30 s, each with jitter (backon's
/// exponential backoff).
fn backoff() -> backon::ExponentialBackoff {
    use backon::BackoffBuilder as _;
    backon::ExponentialBuilder::new()
        .with_min_delay(Duration::from_secs(1))
        .with_max_delay(Duration::from_secs(30))
        .with_jitter()
        .without_max_times()
        .build()
}

fn next(b: &mut backon::ExponentialBackoff) -> Duration {
    b.next().unwrap_or(Duration::from_secs(30))
}

/// After a list that worked, the waits start again from the first.
fn backoff_after_success(_: backon::ExponentialBackoff) -> backon::ExponentialBackoff {
    backoff()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, cause: &str) -> kube::core::Status {
        kube::core::Status {
            code,
            message: "m".into(),
            details: Some(kube::core::response::StatusDetails {
                name: String::new(),
                group: String::new(),
                kind: String::new(),
                uid: String::new(),
                causes: vec![kube::core::response::StatusCause {
                    reason: cause.into(),
                    message: String::new(),
                    field: String::new(),
                }],
                retry_after_seconds: 1,
            }),
            ..kube::core::Status::default()
        }
    }

    #[test]
    fn a_version_not_reached_or_too_old_is_stale_anything_else_broke() {
        assert!(matches!(
            ended_by(&status(504, "ResourceVersionTooLarge")),
            Ended::Stale(_)
        ));
        assert!(matches!(ended_by(&status(410, "")), Ended::Expired(_)));
        assert!(matches!(ended_by(&status(504, "")), Ended::Broke(_)));
        assert!(matches!(ended_by(&status(500, "")), Ended::Broke(_)));
    }

    #[test]
    fn a_version_goes_back_only_when_both_are_numbers_and_it_is_older() {
        assert!(went_back("120", "40"));
        assert!(!went_back("120", "120"));
        assert!(!went_back("120", "121"));
        assert!(!went_back("abc", "1"));
        assert!(!went_back("", "1"));
    }
}
