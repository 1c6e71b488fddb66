//! Push, measured: how long a change takes from the API to a subscribed dashboard's client, on
//! each route (in-process over its own watch; gRPC and the Connect protocol to a `serve` over its
//! shared watch), and how many API requests an idle subscribed dashboard makes. The frame that
//! shows an update follows within the runtime's frame interval (16 ms). A figure, never an
//! assertion: under `cargo test` (no `--bench`) a short pass checks that it runs.
//!
//!     cargo bench --bench push

mod common;
#[path = "../tests/common/server.rs"]
mod server;

use futures::StreamExt as _;
use ichor_client::inprocess::InProcessClient;
use ichor_client::remote::{Protocol, RemoteClient, RemoteOptions};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::{ListQuery, OperationClient, Updates, View, WatchRequest};

use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (changes, idle) = if full {
        (200, Duration::from_secs(20))
    } else {
        (5, Duration::from_millis(300))
    };
    let rt = common::runtime();
    rt.block_on(async {
        for route in ["in-process", "grpc", "connect"] {
            let (mut latencies, requests) = measure(route, changes, idle).await;
            latencies.sort();
            let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
            println!(
                "{route:10}: change to client, {} changes: median {:.1} ms, p99 {:.1} ms, max {:.1} ms; idle {} s: {} API requests beyond the watch",
                latencies.len(),
                at(0.5).as_secs_f64() * 1e3,
                at(0.99).as_secs_f64() * 1e3,
                at(1.0).as_secs_f64() * 1e3,
                idle.as_secs(),
                requests
            );
        }
    });
}

async fn client(route: &str, api: &EmbeddedApi) -> Arc<dyn OperationClient> {
    match route {
        "in-process" => {
            let kube = api.client(users::ADMIN_TOKEN);
            let service = OperationService::new(KubeAccess::new(kube.clone(), "ichor-tui"));
            Arc::new(
                InProcessClient::new(service, Caller::in_process())
                    .with_watch(kube, Some("default".into())),
            )
        }
        protocol => {
            let running = server::start(api, Default::default()).await;
            let mut o = RemoteOptions::new(running.url(false)).with_protocol(match protocol {
                "grpc" => Protocol::Grpc,
                _ => Protocol::Connect,
            });
            o.token = Some(users::ADMIN_TOKEN.into());
            std::mem::forget(running);
            Arc::new(RemoteClient::new(o).expect("a client"))
        }
    }
}

/// The time from each of `changes` creations to the update that shows it, and the API requests
/// made while the subscription then sits idle for `idle`.
async fn measure(route: &str, changes: usize, idle: Duration) -> (Vec<Duration>, u64) {
    let api = EmbeddedApi::default();
    ichor_demo::demo::seed(&api, jiff::Timestamp::now()).expect("the demo's objects");
    let c = client(route, &api).await;
    let req = WatchRequest {
        list: ListQuery {
            namespace: Some("default".into()),
            view: View::Summary,
            page_size: 300,
            ..ListQuery::default()
        },
        follow: None,
        page_deltas: false,
    };
    let mut updates = c.watch_operations(&req).await.expect("a subscription");
    next(&mut updates).await;
    let mut latencies = Vec::new();
    for i in 0..changes {
        let name = format!("staging-push-{i:04}");
        let at = Instant::now();
        api.seed(&common::world::paused_operation(&name))
            .expect("seeded");
        loop {
            let u = next(&mut updates).await;
            let shown = u
                .page
                .is_some_and(|p| p.operations.iter().any(|o| o.name == name));
            if shown {
                latencies.push(at.elapsed());
                break;
            }
        }
    }
    let before = api.request_count();
    let quiet = tokio::time::timeout(idle, async {
        while let Some(u) = updates.next().await {
            let _ = u;
        }
    });
    let _ = quiet.await;
    (latencies, api.request_count() - before)
}

async fn next(updates: &mut Updates) -> ichor_model::WatchUpdate {
    loop {
        let u = tokio::time::timeout(Duration::from_secs(10), updates.next())
            .await
            .expect("an update in time")
            .expect("the stream goes on")
            .expect("an update");
        if !u.heartbeat {
            return u;
        }
    }
}
