//! ListOperations: the operations a query names, filtered, in the list's order, one page at a
//! time (AIP-158), whole or summarised; an answer the caller already holds comes back empty.
//!
//! A page token names the last operation of its page (its creation time, name, namespace and
//! phase: what the orders read)
//! and the query it belongs to (its order included), so the next page starts after that operation even when newer
//! ones arrived in between, and a token cannot be used with another query.

use super::access::Caller;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ichor_model::{
    ApiError, DEFAULT_PAGE_SIZE, ListQuery, ListRow, MAX_FILTER_CHARS, MAX_PAGE_SIZE, Operation,
    OperationPage, Phase, SortBy, View,
};
use sha2::{Digest, Sha256};
use std::cmp::Ordering;

/// The longest page token taken (ours are well under 200 bytes).
pub(crate) const MAX_PAGE_TOKEN: usize = 1024;

/// The longest `known_version` taken: a page version this server gives is 32 hex characters.
pub(crate) const MAX_KNOWN_VERSION: usize = 64;

/// The query's arguments, checked before anything is read.
pub fn check(q: &ListQuery) -> Result<(), ApiError> {
    super::validate::list_scope(q.namespace.as_deref())?;
    if let Some(c) = &q.cluster {
        super::validate::name(super::validate::NameOf::Cluster, c)?;
    }
    if let Some(p) = q
        .phases
        .iter()
        .find(|p| matches!(p, Phase::Unknown | Phase::Other(_)))
    {
        return Err(ApiError::invalid(
            "phases",
            format!(
                "phase \"{}\" is not one of Pending, Running, Paused, Completed, Failed",
                super::validate::shown(p.as_str())
            ),
        ));
    }
    if q.text.chars().count() > MAX_FILTER_CHARS {
        return Err(ApiError::invalid(
            "filter",
            format!("the filter is longer than {MAX_FILTER_CHARS} characters"),
        ));
    }
    if q.text.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            "filter",
            "the filter holds control characters",
        ));
    }
    if let Some(v) = q
        .known_version
        .as_deref()
        .filter(|v| v.len() > MAX_KNOWN_VERSION)
    {
        return Err(ApiError::invalid(
            "known_version",
            format!(
                "known_version \"{}\" is longer than {MAX_KNOWN_VERSION} characters: it is not a version this server gave (send the one a page carried, or none)",
                super::validate::shown(v)
            ),
        ));
    }
    match &q.page_token {
        Some(t) if t.len() > MAX_PAGE_TOKEN => Err(bad_token()),
        Some(t) => decode_token(q, t).map(drop),
        None => Ok(()),
    }
}

fn bad_token() -> ApiError {
    ApiError::invalid(
        "page_token",
        "the page token is not one this server gave for this query (ask for the first page again)",
    )
}

/// What a token carries.
#[derive(serde::Serialize, serde::Deserialize)]
struct Token {
    /// The query's digest.
    q: String,
    /// The last operation of the page: creation time (RFC 3339, empty when none), name,
    /// namespace.
    c: String,
    n: String,
    s: String,
    /// Its phase, in the state order only (the one that reads it; the others' tokens are made
    /// of metadata alone, as before orders).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    p: String,
}

/// A digest of what selects and orders the operations (not the page size or the view, which
/// may change from page to page).
fn query_digest(q: &ListQuery) -> String {
    let mut h = Sha256::new();
    for part in [
        q.namespace.as_deref().unwrap_or("\u{0}all"),
        q.cluster.as_deref().unwrap_or(""),
        &q.text.to_lowercase(),
        q.order.to_order_by(),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for p in &q.phases {
        h.update(p.as_str().as_bytes());
        h.update([1]);
    }
    hex(&h.finalize()[..12])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn encode_token<R: ListRow + ?Sized>(q: &ListQuery, last: &R) -> String {
    let t = Token {
        q: query_digest(q),
        c: last.created_at().map(|t| t.to_string()).unwrap_or_default(),
        n: last.name().to_string(),
        s: last.namespace().to_string(),
        p: match q.order.by {
            SortBy::State => last.phase().as_str().to_string(),
            SortBy::Age | SortBy::Name => String::new(),
        },
    };
    // A struct of strings always serialises.
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&t).unwrap_or_default())
}

/// The operation a token says its page ended with (only the fields the order reads).
fn decode_token(q: &ListQuery, token: &str) -> Result<Operation, ApiError> {
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| bad_token())?;
    let t: Token = serde_json::from_slice(&bytes).map_err(|_| bad_token())?;
    if t.q != query_digest(q) {
        return Err(bad_token());
    }
    let created_at = match t.c.as_str() {
        "" => None,
        c => Some(c.parse().map_err(|_| bad_token())?),
    };
    Ok(Operation {
        name: t.n,
        namespace: t.s,
        created_at,
        phase: Phase::parse(&t.p),
        ..Operation::default()
    })
}

/// Names a page: the view, the count, where the next page starts and each operation's identity
/// and resourceVersion (which changes with any change to it, its status included).
fn version<R: ListRow + ?Sized>(
    view: View,
    total: usize,
    next: Option<&str>,
    ops: &[&R],
) -> String {
    let mut h = Sha256::new();
    h.update(format!(
        "{view:?}\u{0}{total}\u{0}{}\u{0}",
        next.unwrap_or("")
    ));
    for o in ops {
        for part in [o.namespace(), o.name(), o.uid(), o.resource_version()] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        // An unreadable object reads the same until its resourceVersion changes.
    }
    hex(&h.finalize()[..16])
}

/// The page a query names, from every operation in its scope.
pub fn page(ops: Vec<Operation>, q: &ListQuery) -> Result<OperationPage, ApiError> {
    page_of(&ops, q, |o: &Operation| match q.view {
        View::Summary => o.clone().summarized(),
        _ => o.clone(),
    })
}

/// The page a query names, from every row in its scope, read in place: only the page's rows
/// are made into operations, by `shown` (a watch-kept list of 10,000 is filtered and ordered
/// by reference).
pub(crate) fn page_of<'a, R: ListRow + ?Sized + 'a>(
    ops: impl IntoIterator<Item = &'a R>,
    q: &ListQuery,
    shown: impl Fn(&R) -> Operation,
) -> Result<OperationPage, ApiError> {
    let after = q
        .page_token
        .as_deref()
        .map(|t| decode_token(q, t))
        .transpose()?;
    let needle = q.text.to_lowercase();
    let mut ops: Vec<&R> = ops
        .into_iter()
        .filter(|o| {
            q.cluster.as_deref().is_none_or(|c| o.cluster() == c)
                && (q.phases.is_empty() || q.phases.contains(o.phase()))
                && o.matches(&needle)
        })
        .collect();
    ops.sort_unstable_by(|a, b| q.order.cmp(*a, *b));
    let total = ops.len();
    let start = match &after {
        Some(a) => ops.partition_point(|o| q.order.cmp(*o, a) != Ordering::Greater),
        None => 0,
    };
    let size = match q.page_size {
        0 => DEFAULT_PAGE_SIZE as usize,
        n => n.min(MAX_PAGE_SIZE) as usize,
    };
    let end = start.saturating_add(size).min(total);
    let on_page = &ops[start.min(end)..end];
    let next_page_token = match end < total {
        true => on_page.last().map(|last| encode_token(q, *last)),
        false => None,
    };
    let version = version(q.view, total, next_page_token.as_deref(), on_page);
    let unchanged = q.known_version.as_deref() == Some(version.as_str());
    let operations = match unchanged {
        true => Vec::new(),
        false => on_page.iter().map(|o| shown(o)).collect(),
    };
    Ok(OperationPage {
        operations,
        next_page_token,
        total,
        version,
        unchanged,
    })
}

/// How many operations' metadata one request of a poll reads: 10,000 operations' metadata is
/// about 3 MB of JSON, so a poll holds at most half of that at once. (kube-runtime's watcher
/// lists 500 at a time; the demo API answers each `continue` from the whole list, about 95 ms
/// at 10,000 operations, so smaller chunks cost polls more time there than they save memory.)
const METADATA_CHUNK: u32 = 5000;

/// Whether the query names no filter and an order of metadata (the metadata alone orders and
/// pages it; the state order reads the status).
pub(super) fn unfiltered(query: &ListQuery) -> bool {
    query.cluster.is_none()
        && query.phases.is_empty()
        && query.text.is_empty()
        && query.order.by != SortBy::State
}

/// How many of a page's operations are read at once.
const PAGE_READS: usize = 16;

impl super::OperationService {
    /// An unfiltered list, answered from the operations' metadata (names, uids,
    /// resourceVersions, creation times: what the order and the version are made of) and then
    /// the page's own operations, read one by one: a first page of 100 at 10,000 operations
    /// reads 100 objects, not 10,000, and a poll whose page is unchanged reads none. `None`
    /// when the query filters (the filters need whole operations) or the page holds every
    /// operation: the whole list is read then.
    pub(super) async fn page_by_metadata(
        &self,
        caller: &Caller,
        query: &ListQuery,
    ) -> Result<Option<OperationPage>, ApiError> {
        if !unfiltered(query) {
            return Ok(None);
        }
        let ops = self.operations_metadata(caller, query).await?;
        let page = page(ops, query)?;
        if page.unchanged {
            return Ok(Some(page));
        }
        if page.operations.len() >= page.total {
            // Every operation is on the page: one list reads them in fewer requests.
            return Ok(None);
        }
        self.read_whole(caller, page, query.view).await.map(Some)
    }

    /// The operations of `page` (named by namespace and name) read from the API as the
    /// caller, one by one ([`PAGE_READS`] at once), in `view`: one deleted since is left out
    /// (the next page no longer has it).
    pub(super) async fn read_whole(
        &self,
        caller: &Caller,
        mut page: OperationPage,
        view: View,
    ) -> Result<OperationPage, ApiError> {
        use futures::{StreamExt as _, TryStreamExt as _};
        let names: Vec<(String, String)> = page
            .operations
            .iter()
            .map(|o| (o.namespace.clone(), o.name.clone()))
            .collect();
        let read = futures::stream::iter(names)
            .map(|(namespace, name)| async move {
                self.get_tolerant::<ichor_resources::TalosOperation>(
                    caller,
                    &namespace,
                    &name,
                    "reading an operation of the page",
                )
                .await
            })
            .buffered(PAGE_READS)
            .try_collect::<Vec<_>>()
            .await?;
        page.operations = read
            .into_iter()
            // Deleted since the metadata was read: the next poll's page no longer has it.
            .flatten()
            .map(|r| match r {
                Ok(op) => super::convert::operation(&op),
                Err(u) => super::convert::unreadable_operation(&u),
            })
            .map(|o| match view {
                View::Summary => o.summarized(),
                _ => o,
            })
            .collect();
        Ok(page)
    }

    /// Every operation in scope, metadata only, read in chunks, as the caller.
    async fn operations_metadata(
        &self,
        caller: &Caller,
        query: &ListQuery,
    ) -> Result<Vec<Operation>, ApiError> {
        let api: kube::Api<ichor_resources::TalosOperation> =
            self.api(caller, query.namespace.as_deref());
        // In chunks, as kube-apiserver pages by limit and continue: a poll holds one chunk's
        // objects at a time, and keeps only what the order and the version are made of.
        let mut ops = Vec::new();
        let mut params = kube::api::ListParams::default().limit(METADATA_CHUNK);
        let mut restarts = 0;
        loop {
            let answer = self
                .access
                .call("listing operations", api.list_metadata(&params))
                .await;
            let with_token = params.continue_token.is_some();
            let list = match answer {
                Err(e) if super::tolerant::token_expired(&e, with_token, &mut restarts) => {
                    ops.clear();
                    params = kube::api::ListParams::default().limit(METADATA_CHUNK);
                    continue;
                }
                other => other?,
            };
            ops.extend(list.items.into_iter().map(|m| Operation {
                namespace: m.metadata.namespace.unwrap_or_default(),
                name: m.metadata.name.unwrap_or_default(),
                uid: m.metadata.uid.unwrap_or_default(),
                resource_version: m.metadata.resource_version.unwrap_or_default(),
                created_at: m.metadata.creation_timestamp.map(|t| t.0),
                ..Operation::default()
            }));
            match list.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => return Ok(ops),
            }
        }
    }
}

#[cfg(test)]
mod tests;
