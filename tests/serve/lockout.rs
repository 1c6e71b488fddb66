//! No one can lock every caller out without a token: 2,100 connections, each holding a
//! `grpc.health.v1.Health/Watch` stream (health needs no token), more than the server's 2,048
//! connections. Health streams have a small bound of their own, and a connection that carries
//! no authenticated call is closed within seconds, so a viewer's ListOperations still answers.

use super::common::server::{Options, client, start};
use super::world;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// The attack's connections: more than the server takes at once.
const ATTACKERS: usize = 2100;

/// A generous bound for what must happen: only a lockout reaches it.
const NEVER: Duration = Duration::from_secs(90);

/// What the attackers got.
#[derive(Default)]
struct Tally {
    /// Their Watch was answered: a stream, or a refusal.
    answered: AtomicUsize,
    streams: AtomicUsize,
}

/// One attacker: its own connection and a Watch stream on it, held until the task ends.
async fn attacker(url: String, tally: Arc<Tally>) {
    let Ok(endpoint) = tonic::transport::Endpoint::from_shared(url) else {
        return;
    };
    let Ok(channel) = endpoint.connect().await else {
        return;
    };
    let mut health = HealthClient::new(channel);
    let watched = health
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await;
    tally.answered.fetch_add(1, Ordering::SeqCst);
    if let Ok(stream) = watched {
        tally.streams.fetch_add(1, Ordering::SeqCst);
        let mut stream = stream.into_inner();
        while let Ok(Some(_)) = stream.message().await {}
    }
    std::future::pending::<()>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_holding_health_streams_without_a_token_do_not_lock_callers_out() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let tally = Arc::new(Tally::default());
    let attack: Vec<_> = (0..ATTACKERS)
        .map(|_| tokio::spawn(attacker(server.url(false), tally.clone())))
        .collect();
    // Every connection the server took has its Watch answered.
    tokio::time::timeout(NEVER, async {
        while tally.answered.load(Ordering::SeqCst) < 2048 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the server takes the attackers' connections");
    assert!(
        tally.streams.load(Ordering::SeqCst) <= ichor_server::MAX_HEALTH_STREAMS,
        "health streams are bounded"
    );
    let viewer = client(&server.url(false), Some(users::VIEWER_TOKEN));
    let answered = tokio::time::timeout(NEVER, async {
        loop {
            match viewer.list_operations(Some("default")).await {
                Ok(ops) => return ops,
                // As a dashboard does: a call that timed out waiting is asked again.
                Err(e) if e.code.is_transient() => continue,
                Err(e) => panic!("the viewer's list: {e:?}"),
            }
        }
    })
    .await;
    assert!(answered.is_ok(), "the viewer's ListOperations answers");
    for a in attack {
        a.abort();
    }
    assert!(api.write_log().is_empty());
}
