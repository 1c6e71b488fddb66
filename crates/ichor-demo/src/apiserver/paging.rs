//! Lists in pages, as kube-apiserver serves `limit` and `continue`: at most `limit` items in
//! the store's order (namespace, name), and a `metadata.continue` token for the rest. The
//! token names the last key sent and the resourceVersion of the first page, which every page
//! of the list answers with, so a watch from it sees whatever changed between the pages.

use super::responses::{Failure, fail};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use std::borrow::Borrow;

/// One page of `items` (already in the store's order) and what its list answers with.
pub(crate) struct Page<T> {
    pub(crate) items: Vec<T>,
    /// The list's `metadata`: its resourceVersion, and `continue` when there is more.
    pub(crate) metadata: Value,
}

fn key(v: &Value) -> (&str, &str) {
    let m = &v["metadata"];
    (
        m["namespace"].as_str().unwrap_or(""),
        m["name"].as_str().unwrap_or(""),
    )
}

fn bad_continue() -> Failure {
    fail(
        400,
        "BadRequest",
        "continue key is not valid: the token does not name a position in this list",
    )
}

/// The token for the rest of a list read at `rv` whose last item sent was `last`.
fn token(rv: &str, last: &Value) -> String {
    let (ns, name) = key(last);
    URL_SAFE_NO_PAD.encode(json!({"rv": rv, "ns": ns, "name": name}).to_string())
}

/// The resourceVersion and the last key a token names.
fn decode(token: &str) -> Result<(String, String, String), Failure> {
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| bad_continue())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad_continue())?;
    let s = |k: &str| v[k].as_str().map(str::to_string).ok_or_else(bad_continue);
    Ok((s("rv")?, s("ns")?, s("name")?))
}

/// The resourceVersion of the list a continue token continues.
pub(crate) fn token_version(token: &str) -> Result<u64, Failure> {
    let (rv, _, _) = decode(token)?;
    rv.parse().map_err(|_| bad_continue())
}

/// The page `limit` and `continue` ask for, of a list read now at resourceVersion `rv`.
pub(crate) fn page<T: Borrow<Value>>(
    mut items: Vec<T>,
    limit: Option<&str>,
    cont: Option<&str>,
    rv: &str,
) -> Result<Page<T>, Failure> {
    let limit = match limit.filter(|l| !l.is_empty()) {
        None => 0,
        Some(l) => l.parse::<usize>().map_err(|_| {
            fail(
                400,
                "BadRequest",
                format!("limit must be a number (got {:.20})", l),
            )
        })?,
    };
    let mut list_rv = rv.to_string();
    if let Some(t) = cont.filter(|c| !c.is_empty()) {
        let (first_rv, ns, name) = decode(t)?;
        items.retain(|v| key(v.borrow()) > (ns.as_str(), name.as_str()));
        list_rv = first_rv;
    }
    let mut metadata = json!({"resourceVersion": list_rv});
    if limit > 0 && items.len() > limit {
        let rest = items.len() - limit;
        items.truncate(limit);
        if let Some(last) = items.last() {
            metadata["continue"] = json!(token(&list_rv, last.borrow()));
            metadata["remainingItemCount"] = json!(rest);
        }
    }
    Ok(Page { items, metadata })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(ns: &str, name: &str) -> Value {
        json!({"metadata": {"namespace": ns, "name": name}})
    }

    #[test]
    fn pages_walk_the_list_and_keep_the_first_version() {
        let all: Vec<Value> = (0..5).map(|i| obj("default", &format!("o{i}"))).collect();
        let refs: Vec<&Value> = all.iter().collect();
        let p = page(refs.clone(), Some("2"), None, "10").unwrap();
        assert_eq!(p.items.len(), 2);
        assert_eq!(p.metadata["remainingItemCount"], 3);
        let t = p.metadata["continue"].as_str().unwrap().to_string();
        let p = page(refs.clone(), Some("2"), Some(&t), "17").unwrap();
        assert_eq!(key(p.items[0]), ("default", "o2"));
        assert_eq!(
            p.metadata["resourceVersion"], "10",
            "the first page's version"
        );
        let t = p.metadata["continue"].as_str().unwrap().to_string();
        let p = page(refs, Some("2"), Some(&t), "17").unwrap();
        assert_eq!(p.items.len(), 1);
        assert!(p.metadata.get("continue").is_none());
    }

    #[test]
    fn a_bad_token_or_limit_is_a_bad_request() {
        assert_eq!(
            page(Vec::<&Value>::new(), None, Some("%%"), "1")
                .err()
                .unwrap()
                .0,
            400
        );
        assert_eq!(
            page(Vec::<&Value>::new(), Some("x"), None, "1")
                .err()
                .unwrap()
                .0,
            400
        );
    }
}
