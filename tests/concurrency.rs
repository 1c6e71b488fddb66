//! Concurrent starts on one cluster make one operation: fired at once over gRPC at two `serve`
//! replicas of the same API, repeatedly, counting what was written. The losers are refused with
//! a reason that names the winner, and the spec holds the winner's target.

use crate::common;

use common::server::{Options, client, start};
use common::small_cluster;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient;
use ichor_model::{OperationKind, OperationRequest, Reason};

const ROUNDS: usize = 20;
const STARTS: usize = 10;

fn talos(target: &str) -> OperationRequest {
    OperationRequest {
        target: Some(target.to_string()),
        ..OperationRequest::new("default", Some("c1"), OperationKind::Talos)
    }
}

/// One round: `targets[i]` is the target of the i-th start; all are fired at once, alternating
/// between the two replicas. Returns the winner's target.
async fn round(targets: &[String]) -> String {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    let replicas = [
        start(&api, Options::default()).await,
        start(&api, Options::default()).await,
    ];
    let clients: Vec<_> = replicas
        .iter()
        .map(|r| client(&r.url(false), Some(users::ADMIN_TOKEN)))
        .collect();
    let calls = targets.iter().enumerate().map(|(i, t)| {
        let c = clients[i % 2].clone();
        let req = talos(t);
        async move { c.create_operation(&req).await }
    });
    let results = futures::future::join_all(calls).await;
    let won: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "exactly one start goes ahead: {results:#?}");
    let winner = &won[0].operation;
    assert_eq!(common::operations_created(&api), 1, "one operation written");
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(
            matches!(
                e.reason,
                Some(Reason::UnfinishedOperation | Reason::StartInProgress)
            ),
            "a loser is refused for the winner: {e:?}"
        );
        assert_eq!(
            e.param("operation"),
            Some(winner.name.as_str()),
            "the refusal names the winner: {e:?}"
        );
    }
    let spec_writes = api
        .write_log()
        .iter()
        .filter(|w| w.resource == "talosclusters")
        .count();
    assert_eq!(spec_writes, 1, "one spec write");
    let cluster = api.object("talosclusters", "default", "c1").unwrap();
    let target = winner.target.clone().unwrap_or_default();
    assert_eq!(
        cluster["spec"]["talosVersion"], target,
        "the spec holds the winner's target"
    );
    target
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_identical_starts_make_one_operation() {
    let targets = vec!["v1.9.3".to_string(); STARTS];
    for _ in 0..ROUNDS {
        assert_eq!(round(&targets).await, "v1.9.3");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_differing_starts_make_one_operation_with_the_winners_target() {
    let targets: Vec<String> = (3..3 + STARTS).map(|p| format!("v1.9.{p}")).collect();
    let mut winners = std::collections::BTreeSet::new();
    for _ in 0..ROUNDS {
        winners.insert(round(&targets).await);
    }
    assert!(winners.iter().all(|w| targets.contains(w)), "{winners:?}");
}
