//! A read from a resourceVersion the API has not reached, answered as kube-apiserver's watch
//! cache answers it (k8s.io/apiserver `storage/cacher`, `storage/errors.go`):
//!
//! - a get or a list with `resourceVersion=N` (not `0`), and a streaming list
//!   (`sendInitialEvents=true`) from N, wait up to [`BLOCK_TIMEOUT`] (3 s, `blockTimeout`) for
//!   the API to reach N; past it, a get or a list is 504 Timeout, "Timeout: Too large resource
//!   version: N, current: C", with the cause `ResourceVersionTooLarge` and
//!   `retryAfterSeconds` 1 (also the `Retry-After` header); a streaming list gets the same
//!   Status as one `ERROR` event on its 200 stream;
//! - a plain watch from N is accepted at once (the client may wait for events without
//!   blocking): it sends nothing, no bookmark either, until the API passes N, then every
//!   change after N.
//!
//! This is what an API server that restarted empty (the demo's) or an etcd restored from a
//! backup answers a client that remembers a later version: a list says so; a watch is silent.

use super::super::EmbeddedApi;
use super::super::responses::{Failure, status_body};
use super::super::routing::Query;
use serde_json::{Value, json};
use std::time::Duration;

/// How long a read from a version the API has not reached waits for it (kube-apiserver's
/// `blockTimeout`).
pub(crate) const BLOCK_TIMEOUT: Duration = Duration::from_secs(3);

/// What the answer tells the client to wait before asking again
/// (`resourceVersionTooHighRetrySeconds`).
pub(crate) const RETRY_AFTER_SECONDS: u32 = 1;

/// The Status of a read from `wanted` when the API is at `current`.
pub(crate) fn too_large_status(wanted: u64, current: u64) -> Value {
    let details = json!({
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": RETRY_AFTER_SECONDS,
    });
    let message = format!("Timeout: Too large resource version: {wanted}, current: {current}");
    status_body(504, "Timeout", &message, Some(details))
}

/// The failure of a get or list from `wanted` when the API is at `current`.
pub(crate) fn too_large(wanted: u64, current: u64) -> Failure {
    (504, too_large_status(wanted, current))
}

/// The resourceVersion a read must wait for before it is answered: a get or list with
/// `resourceVersion=N` (N > 0; a continue token reads its own snapshot), or a streaming list
/// from N. A plain watch waits for nothing.
pub(crate) fn required(method: &http::Method, query: &Query) -> Option<u64> {
    if method != http::Method::GET || query.get("continue").is_some_and(|c| !c.is_empty()) {
        return None;
    }
    let watch = super::query_bool(query.get("watch"));
    if watch && !super::query_bool(query.get("sendInitialEvents")) {
        return None;
    }
    query
        .get("resourceVersion")?
        .parse::<u64>()
        .ok()
        .filter(|v| *v > 0)
}

impl EmbeddedApi {
    /// Waits at most [`BLOCK_TIMEOUT`] for the API to reach `rv`; the version it is at.
    pub(crate) async fn wait_until_fresh(&self, rv: u64) -> u64 {
        let mut versions = self.lock().watches.versions();
        let reached = tokio::time::timeout(BLOCK_TIMEOUT, versions.wait_for(|v| *v >= rv)).await;
        match reached {
            Ok(Ok(v)) => *v,
            // Past the wait (or the API gone): the version it is at now.
            _ => self.lock().resource_version,
        }
    }
}
