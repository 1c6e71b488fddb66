//! Every call of the API's table (`ichor_server::wire::Rpc`) goes through the dashboard's
//! client, is routed by serve and counted under its own name in serve's metrics, over Connect
//! and over gRPC. A call added to the proto and the table but not to the client (or to this
//! list of its methods) fails here: the metrics lack it.

use super::common::server::{Options, client_over, start};
use super::world;
use futures::StreamExt as _;
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::auth::users;
use ichor_model::{
    EventsWanted, ListQuery, OperationClient, OperationKind, OperationRequest, WatchRequest,
};
use ichor_server::wire::Rpc;

/// One call of each of the client's methods; the writes name a cluster and an operation that
/// do not exist, so each is refused and nothing is written.
async fn call_each(c: &dyn OperationClient) {
    let list = ListQuery {
        namespace: Some("default".into()),
        ..ListQuery::default()
    };
    let nowhere = OperationRequest::new("default", Some("no-such-cluster"), OperationKind::Talos);
    c.list_page(&list).await.unwrap();
    c.get_operation("default", "no-such-op").await.unwrap_err();
    c.plan_operation(&nowhere).await.unwrap_err();
    c.create_operation(&nowhere).await.unwrap_err();
    c.set_operation_paused("default", "no-such-op", true, None)
        .await
        .unwrap_err();
    c.delete_operation("default", "no-such-op", None)
        .await
        .unwrap_err();
    c.permissions("default").await.unwrap();
    c.list_events("default", "no-such-op", EventsWanted::Newest)
        .await
        .unwrap_err();
    c.list_clusters(Some("default")).await.unwrap();
    c.get_cluster("default", "c1").await.unwrap();
    let watch = WatchRequest {
        list,
        follow: None,
        page_deltas: false,
    };
    let mut updates = c.watch_operations(&watch).await.unwrap();
    updates.next().await.unwrap().unwrap();
}

#[tokio::test]
async fn every_call_of_the_table_is_the_clients_routed_and_counted_by_name() {
    let api = world();
    let server = start(&api, Options::default()).await;
    for protocol in [Protocol::Connect, Protocol::Grpc] {
        let c = client_over(&server.url(false), Some(users::ADMIN_TOKEN), protocol);
        call_each(&c).await;
    }
    assert!(api.write_log().is_empty(), "{:?}", api.write_log());
    // A call is counted when its answer ends: a stream's, once the server sees it dropped.
    let labels: Vec<String> = Rpc::ALL
        .iter()
        .flat_map(|rpc| {
            ["connect", "grpc"].map(|protocol| {
                format!(
                    "service=\"{}\",method=\"{}\",protocol=\"{protocol}\"",
                    rpc.service(),
                    rpc.method()
                )
            })
        })
        .collect();
    let counted = |l: &String| server.metrics.encode().contains(l.as_str());
    super::common::eventually("every call counted under its name", || {
        labels.iter().all(counted)
    })
    .await;
    let text = server.metrics.encode();
    assert!(!text.contains("method=\"unknown\""), "{text}");
}
