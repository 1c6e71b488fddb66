//! No one can lock every caller out without a token: 2,100 attackers, each on a connection of
//! its own, more than the server's 2,048, ask `grpc.health.v1.Health/Watch` (health needs no
//! token) again and again and hold every stream they get. Health streams have a small bound of
//! their own, and a connection that carries no authenticated call is closed within seconds, its
//! streams with it, so a viewer's ListOperations still answers: grpcio's
//! (tests/interop/hostile.py `list`) and the project's own client's.

use super::common::server::{Options, client, start};
use super::world;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient as _;
use std::future::Future;
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
    /// Streams the server ended.
    ended: AtomicUsize,
}

/// One attacker: its own connection (made again whenever the server closes it), a Watch
/// stream on it held for as long as the server lets it, and after a refusal another try.
async fn attacker(url: String, tally: Arc<Tally>) {
    let Ok(endpoint) = tonic::transport::Endpoint::from_shared(url) else {
        return;
    };
    let channel = endpoint.connect_lazy();
    let mut health = HealthClient::new(channel);
    loop {
        let watched = health
            .watch(HealthCheckRequest {
                service: String::new(),
            })
            .await;
        tally.answered.fetch_add(1, Ordering::SeqCst);
        match watched {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                while let Ok(Some(_)) = stream.message().await {}
                tally.ended.fetch_add(1, Ordering::SeqCst);
            }
            Err(_) => tokio::time::sleep(Duration::from_secs(5)).await,
        }
    }
}

/// Waits until `f` holds of the tally ([`super::common::eventually`]).
async fn until(tally: &Tally, what: &str, f: impl Fn(&Tally) -> bool) {
    super::common::eventually(what, || f(tally)).await;
}

/// The most health streams the server held at once while `until` was pending
/// (`ichor_serve_health_streams`, read every 10 ms).
async fn most_health_streams(
    metrics: &ichor_server::Metrics,
    until: impl Future<Output = ()>,
) -> i64 {
    let read = || {
        metrics
            .encode()
            .lines()
            .find_map(|l| l.strip_prefix("ichor_serve_health_streams "))
            .and_then(|n| n.trim().parse::<i64>().ok())
            .expect("the health streams gauge")
    };
    let mut most = 0;
    tokio::pin!(until);
    loop {
        most = most.max(read());
        tokio::select! {
            () = &mut until => return most.max(read()),
            () = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
}

/// grpcio's ListOperations as the viewer, asked again while the server is busy: what it
/// printed, once it answered (`None` without the Python of the interop tests).
async fn grpcio_list(addr: std::net::SocketAddr) -> Option<String> {
    let python = crate::interop::python()?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/hostile.py");
    let out = tokio::process::Command::new(&python)
        .arg(script)
        .arg(addr.to_string())
        .args(["--token", users::VIEWER_TOKEN, "list"])
        .kill_on_drop(true)
        .output()
        .await
        .unwrap_or_else(|e| panic!("running {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "grpcio's list:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_holding_health_streams_without_a_token_do_not_lock_callers_out() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let tally = Arc::new(Tally::default());
    let attack: Vec<_> = (0..ATTACKERS)
        .map(|_| tokio::spawn(attacker(server.url(false), tally.clone())))
        .collect();
    let lockout_tried = async {
        until(&tally, "the server takes the attackers' connections", |t| {
            t.answered.load(Ordering::SeqCst) >= 2048
        })
        .await;
        let grpcio = grpcio_list(server.addr).await;
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
        if let Some(out) = grpcio {
            assert!(out.contains("list: OK"), "{out}");
        }
        // The streams the attackers got were ended by the server: their connections never
        // carried an authenticated call.
        until(&tally, "the server ends the attackers' streams", |t| {
            t.ended.load(Ordering::SeqCst) >= ichor_server::MAX_HEALTH_STREAMS
        })
        .await;
    };
    let most = most_health_streams(&server.metrics, lockout_tried).await;
    for a in attack {
        a.abort();
    }
    assert!(
        most <= ichor_server::MAX_HEALTH_STREAMS as i64,
        "{most} health streams open at once"
    );
    assert!(api.write_log().is_empty());
}
