//! What only the network has: authentication by TokenReview, anonymous calls, TLS, deadlines,
//! a server that goes away and comes back, graceful shutdown, health and reflection, and the
//! refusal to serve plaintext beyond loopback. The behaviour itself is tests/service.rs's
//! matrix, which runs over gRPC too.

use crate::common;
#[path = "serve/bounds.rs"]
mod bounds;
#[path = "serve/cors.rs"]
mod cors;
#[path = "serve/curl.rs"]
pub(crate) mod curl;
#[path = "serve/deadlines.rs"]
mod deadlines;
#[path = "serve/edges.rs"]
mod edges;
#[path = "serve/every_call.rs"]
mod every_call;
#[path = "serve/fleet.rs"]
mod fleet;
#[path = "serve/grpc_web_text.rs"]
mod grpc_web_text;
#[path = "serve/gzip.rs"]
mod gzip;
#[path = "serve/limits.rs"]
mod limits;
#[path = "serve/lockout.rs"]
mod lockout;
#[path = "serve/malformed.rs"]
mod malformed;
#[path = "serve/pages.rs"]
mod pages;
#[path = "serve/shares.rs"]
mod shares;
#[path = "serve/sizes.rs"]
mod sizes;
#[path = "serve/streams.rs"]
mod streams;
#[path = "serve/transport.rs"]
mod transport;
#[path = "serve/unauthenticated.rs"]
mod unauthenticated;
#[path = "serve/watches.rs"]
mod watches;

use common::server::{Options, client, start, start_anonymous, start_on};
use common::small_cluster;
use ichor_client::remote::{Protocol, RemoteClient, RemoteOptions};
use ichor_demo::apiserver::auth::users;
use ichor_demo::apiserver::{EmbeddedApi, Fault, FaultRule};
use ichor_model::OperationClient;
use ichor_model::OperationKind;
use ichor_model::{Code, OperationRequest, Reason};
use ichor_server::{ServerConfig, TlsPem, check_transport, serve};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc};

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

fn shutdown_req() -> OperationRequest {
    OperationRequest::new("default", Some("c1"), OperationKind::Shutdown)
}

#[tokio::test]
async fn a_token_the_token_review_rejects_is_unauthenticated_and_writes_nothing() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let c = client(&server.url(false), Some("not-a-real-token"));
    let e = c.list_operations(Some("default")).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::Unauthenticated, Some(Reason::Unauthenticated))
    );
    assert!(e.message.contains("TokenReview"), "{}", e.message);
    assert!(!e.message.contains("not-a-real-token"), "{}", e.message);
    // What the dashboard needs to say which flag to fix.
    assert_eq!(e.param("via"), Some("token"));
    assert_eq!(e.param("detail"), Some(e.message.as_str()));
    let e = c.create_operation(&shutdown_req()).await.unwrap_err();
    assert_eq!(e.code, Code::Unauthenticated);
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn without_a_token_calls_are_refused_unless_anonymous_calls_are_allowed() {
    let api = world();
    let strict = start(&api, Options::default()).await;
    let e = client(&strict.url(false), None)
        .create_operation(&shutdown_req())
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::Unauthenticated, Some(Reason::Unauthenticated))
    );
    assert!(
        e.message.contains("bearer token is required"),
        "{}",
        e.message
    );
    assert_eq!(e.param("via"), Some("no-token"));
    assert!(api.write_log().is_empty());

    let open = start_anonymous(&api).await;
    let anon = client(&open.url(false), None);
    assert_eq!(anon.list_clusters(Some("default")).await.unwrap().len(), 1);
    let created = anon.create_operation(&shutdown_req()).await.unwrap();
    assert_eq!(
        created.operation.actor.as_deref(),
        Some("ichor-tui-server"),
        "an anonymous start is the server's"
    );
    assert_eq!(
        common::names(&api.write_log()),
        [
            format!("create leases by {}", users::SERVER),
            format!("create talosoperations by {}", users::SERVER),
            format!("update leases by {}", users::SERVER)
        ],
        "the claim and the operation, written as the server's own identity"
    );
    // A token that is sent still decides.
    let e = client(&open.url(false), Some("not-a-real-token"))
        .list_operations(Some("default"))
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::Unauthenticated);
}

/// The status bar names the person whose permissions it shows: the server says who it took
/// the token for, on every protocol; an anonymous call (the server's own identity) names nobody.
#[tokio::test]
async fn the_server_says_who_it_took_the_caller_for() {
    let api = world();
    let open = start_anonymous(&api).await;
    for protocol in [Protocol::Grpc, Protocol::Connect] {
        let c = common::server::client_over(&open.url(false), Some(users::VIEWER_TOKEN), protocol);
        assert_eq!(c.user(), None, "{protocol:?}: not known before an answer");
        c.list_clusters(Some("default")).await.unwrap();
        assert_eq!(c.user().as_deref(), Some(users::VIEWER), "{protocol:?}");
        let anon = common::server::client_over(&open.url(false), None, protocol);
        anon.list_clusters(Some("default")).await.unwrap();
        assert_eq!(anon.user(), None, "{protocol:?}: the server's own identity");
    }
}

#[tokio::test]
async fn a_user_without_rights_is_permission_denied_and_nothing_is_written() {
    let api = world();
    api.add_token("nobody-token", "nobody", &["nobody-group"]);
    let server = start(&api, Options::default()).await;
    let nobody = client(&server.url(false), Some("nobody-token"));
    let e = nobody.list_operations(Some("default")).await.unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied);
    assert!(e.message.contains("\"nobody\""), "{}", e.message);
    let e = nobody.create_operation(&shutdown_req()).await.unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied);
    let viewer = client(&server.url(false), Some(users::VIEWER_TOKEN));
    let e = viewer.create_operation(&shutdown_req()).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::PermissionDenied, Some(Reason::PermissionDenied))
    );
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn the_client_recovers_when_the_server_goes_away_and_comes_back_on_the_same_port() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let addr = server.addr;
    let c = client(&server.url(false), Some(users::OPERATOR_TOKEN));
    assert!(c.list_operations(Some("default")).await.is_ok());
    server.stop().await.unwrap();

    let e = c.list_operations(Some("default")).await.unwrap_err();
    assert_eq!(e.code, Code::Unavailable, "{e:?}");
    assert!(e.code.is_transient());
    assert!(e.message.contains(&addr.to_string()), "{}", e.message);

    let listener = TcpListener::bind(addr).await.unwrap();
    let _again = start_on(&api, listener, Options::default());
    let ops = c.list_operations(Some("default")).await.unwrap();
    assert!(ops.is_empty());
    c.create_operation(&shutdown_req()).await.unwrap();
    assert_eq!(common::operations_created(&api), 1);
}

#[tokio::test]
async fn a_server_that_is_down_at_start_is_reached_once_it_listens() {
    let api = world();
    // Take a free port, then let it go: nothing listens there yet.
    let addr = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let c = client(&format!("http://{addr}"), Some(users::VIEWER_TOKEN));
    let e = c.list_clusters(Some("default")).await.unwrap_err();
    assert_eq!(e.code, Code::Unavailable);
    let _server = start_on(
        &api,
        TcpListener::bind(addr).await.unwrap(),
        Options::default(),
    );
    assert_eq!(c.list_clusters(Some("default")).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_call_that_outlasts_its_deadline_is_deadline_exceeded() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let mut o = RemoteOptions::new(server.url(false)).with_protocol(Protocol::Grpc);
    o.token = Some(users::ADMIN_TOKEN.into());
    o.deadline = Duration::from_millis(300);
    let c = RemoteClient::new(o).unwrap();
    api.fail_when(
        FaultRule::on("list", "talosoperations"),
        Fault::Delay(Duration::from_secs(30)),
    );
    let e = c.list_operations(Some("default")).await.unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e:?}");
    assert!(e.code.is_transient());
    // The connection is still good for the next call.
    c.list_operations(Some("default")).await.unwrap();
}

/// The server's own Kubernetes client, holding `list talosoperations` requests at a gate until
/// released, and reporting each one that reaches it.
fn gated_client(api: &EmbeddedApi) -> (kube::Client, mpsc::UnboundedReceiver<()>, Arc<Notify>) {
    let inner = api.client(users::SERVER_TOKEN);
    let (arrived_tx, arrived_rx) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let gate = release.clone();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        let held =
            req.method() == http::Method::GET && req.uri().path().ends_with("/talosoperations");
        let arrived = arrived_tx.clone();
        let gate = gate.clone();
        async move {
            if held {
                let _ = arrived.send(());
                gate.notified().await;
            }
            inner.send(req).await
        }
    });
    (kube::Client::new(svc, "default"), arrived_rx, release)
}

#[tokio::test]
async fn a_shutdown_lets_the_calls_in_flight_finish() {
    let api = world();
    let (kube, mut arrived, release) = gated_client(&api);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let config = ServerConfig {
        settle_window: common::SETTLE_WINDOW,
        ..ServerConfig::new(kube)
    };
    let server = tokio::spawn(serve(config, listener, async move {
        let _ = stop_rx.await;
    }));
    let c = client(&format!("http://{addr}"), Some(users::VIEWER_TOKEN));
    let call = tokio::spawn(async move { c.list_operations(Some("default")).await });
    arrived.recv().await.unwrap();
    stop_tx.send(()).unwrap();
    // Once the server stops accepting, new connections are refused; the call is still held.
    tokio::time::timeout(Duration::from_secs(10), async {
        while tokio::net::TcpStream::connect(addr).await.is_ok() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the server stops accepting connections");
    assert!(!call.is_finished());
    release.notify_one();
    let ops = call.await.unwrap();
    assert!(ops.is_ok(), "the call in flight finished: {ops:?}");
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn health_answers_serving_for_the_services() {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let api = world();
    let server = start(&api, Options::default()).await;
    let channel = tonic::transport::Endpoint::from_shared(server.url(false))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = HealthClient::new(channel);
    for service in [
        "",
        "ichor.v1alpha1.OperationService",
        "ichor.v1alpha1.ClusterService",
    ] {
        let r = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.status(), ServingStatus::Serving, "{service:?}");
    }
    let e = health
        .check(HealthCheckRequest {
            service: "no.such.Service".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);
}

#[tokio::test]
async fn reflection_lists_the_services() {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::{ServerReflectionRequest, ServerReflectionResponse};
    let api = world();
    let server = start(&api, Options::default()).await;
    let channel = tonic::transport::Endpoint::from_shared(server.url(false))
        .unwrap()
        .connect()
        .await
        .unwrap();
    // Reflection takes a token, as the calls do.
    let bearer: tonic::metadata::MetadataValue<_> =
        format!("Bearer {}", users::VIEWER_TOKEN).parse().unwrap();
    let mut reflection =
        ServerReflectionClient::with_interceptor(channel, move |mut r: tonic::Request<()>| {
            r.metadata_mut().insert("authorization", bearer.clone());
            Ok(r)
        });
    let ask = |m: MessageRequest| ServerReflectionRequest {
        host: String::new(),
        message_request: Some(m),
    };
    let requests = futures::stream::iter([
        ask(MessageRequest::ListServices(String::new())),
        ask(MessageRequest::FileContainingSymbol(
            "ichor.v1alpha1.OperationService".into(),
        )),
    ]);
    let mut answers = reflection
        .server_reflection_info(requests)
        .await
        .unwrap()
        .into_inner();
    let first: ServerReflectionResponse = answers.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = first.message_response else {
        panic!("not a service list: {first:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for want in [
        "ichor.v1alpha1.OperationService",
        "ichor.v1alpha1.ClusterService",
        "grpc.health.v1.Health",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    let second = answers.message().await.unwrap().unwrap();
    assert!(
        matches!(
            second.message_response,
            Some(MessageResponse::FileDescriptorResponse(ref f)) if !f.file_descriptor_proto.is_empty()
        ),
        "{second:?}"
    );
}

#[tokio::test]
async fn a_retrying_client_waits_out_a_server_that_is_away() {
    use ichor_client::retry::{RetryPolicy, Retrying};
    use ichor_model::RetryEvent;
    let api = world();
    let server = start(&api, Options::default()).await;
    let addr = server.addr;
    let (tx, mut events) = mpsc::unbounded_channel();
    let policy = RetryPolicy {
        initial: Duration::from_millis(20),
        ..RetryPolicy::default()
    };
    let c = Retrying::with_policy(
        client(&server.url(false), Some(users::OPERATOR_TOKEN)),
        tx,
        policy,
    );
    server.stop().await.unwrap();
    // A read waits the outage out.
    let call = tokio::spawn(async move {
        let r = c.list_operations(Some("default")).await;
        (r, c)
    });
    let first = events.recv().await.unwrap();
    assert!(
        matches!(&first, RetryEvent::Retrying { attempt: 1, error, .. } if error.code == Code::Unavailable),
        "{first:?}"
    );
    let again = start_on(
        &api,
        TcpListener::bind(addr).await.unwrap(),
        Options::default(),
    );
    let (listed, c) = call.await.unwrap();
    assert!(listed.unwrap().is_empty());
    let mut last = first;
    while let Ok(e) = events.try_recv() {
        last = e;
    }
    assert!(matches!(last, RetryEvent::Recovered { .. }), "{last:?}");
    // A start is not: it is sent once, found not to have happened, and never sent again.
    again.stop().await.unwrap();
    let call = tokio::spawn(async move {
        let r = c.create_operation(&shutdown_req()).await;
        (r, c)
    });
    let first = events.recv().await.unwrap();
    assert!(
        matches!(&first, RetryEvent::Retrying { what, .. } if what.contains("checking whether the start happened")),
        "only the read that finds out is retried: {first:?}"
    );
    let back = start_on(
        &api,
        TcpListener::bind(addr).await.unwrap(),
        Options::default(),
    );
    let (created, c) = call.await.unwrap();
    let e = created.unwrap_err();
    assert_eq!(
        (e.reason, e.param("action")),
        (Some(Reason::WriteNotApplied), Some("start"))
    );
    assert!(c.list_operations(Some("default")).await.unwrap().is_empty());
    // Nothing is written later either: with the client gone and the server stopped (which
    // carries every call it took to its end first), the cluster still holds no write.
    drop(c);
    back.stop().await.unwrap();
    assert!(api.write_log().is_empty(), "nothing was written later");
}
