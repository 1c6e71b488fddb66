//! A page token that expired: kube-apiserver answers 410 Expired to a continue token whose
//! snapshot is compacted, and the service lists again from the start, as a client of a real
//! cluster must (kube's own pager does the same).

use crate::common;

use common::op;
use common::paths::{Path, User, connect};
use ichor_demo::apiserver::{EmbeddedApi, FaultRule};
use ichor_model::{ListQuery, View};

/// `n` operations in `default`.
fn operations(n: usize) -> EmbeddedApi {
    let api = EmbeddedApi::default();
    for i in 0..n {
        api.seed(&op(&format!("op-{i:05}"), "c1", "talos", 1))
            .unwrap();
    }
    api
}

/// The number of lists of operations served so far.
fn lists(api: &EmbeddedApi) -> u64 {
    api.requests_by()
        .iter()
        .filter(|r| r.verb == "list" && r.resource == "talosoperations")
        .map(|r| r.count)
        .sum()
}

/// An operation changes and the history is compacted just before the list of operations
/// number `expiring` (from 0) of a page read: that list's continue token is 410 Expired, and
/// the list is read again from the start, whole.
async fn expired_token_lists_again(query: ListQuery, n: usize, expiring: usize) {
    let api = operations(n);
    let c = connect(Path::InProcess, &api, User::Admin).await;
    let start = lists(&api);
    c.list_page(&query).await.unwrap();
    let undisturbed = lists(&api) - start;
    api.before(
        FaultRule::on("list", "talosoperations").after(expiring),
        |api| {
            api.edit("talosoperations", "default", "op-00000", |o| {
                o["metadata"]["labels"] = serde_json::json!({"changed": "yes"});
            });
            api.compact();
        },
    );
    let start = lists(&api);
    let page = c.list_page(&query).await.unwrap();
    assert_eq!(page.total as usize, n);
    assert_eq!(page.operations.len(), 10.min(n));
    assert_eq!(
        lists(&api) - start,
        undisturbed + 2,
        "the expired chunk and the first chunk again"
    );
}

fn query(cluster: Option<&str>) -> ListQuery {
    ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        page_size: 10,
        cluster: cluster.map(str::to_string),
        ..ListQuery::default()
    }
}

#[tokio::test]
async fn a_whole_list_whose_token_expired_is_read_again() {
    // A filter reads whole operations: more than one chunk of them (2,000); the second list
    // is the second chunk.
    expired_token_lists_again(query(Some("c1")), 2_001, 1).await;
}

#[tokio::test]
async fn a_metadata_list_whose_token_expired_is_read_again() {
    // A first page: one chunk of whole operations, then the metadata in chunks of 5,000; the
    // third list is the metadata's second chunk.
    expired_token_lists_again(query(None), 5_001, 2).await;
}
