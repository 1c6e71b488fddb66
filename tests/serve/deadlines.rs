//! A call's deadline binds the server: `grpc-timeout` and `Connect-Timeout-Ms` stop a read with
//! DEADLINE_EXCEEDED, from the server (the clients here do not enforce them); a write once
//! begun is carried to its end and the answer says so; malformed timeout and protocol-version
//! headers are refused as connect-go refuses them. curl where it is installed.

use super::common::server::Running;
use super::world;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_server::wire::proto;
use ichor_server::{ServerConfig, serve};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc};

/// The server's own client, holding each request `held` picks until released.
pub(super) fn holding(
    api: &EmbeddedApi,
    held: fn(&http::Method, &str) -> bool,
) -> (kube::Client, mpsc::UnboundedReceiver<()>, Arc<Notify>) {
    let inner = api.client(users::SERVER_TOKEN);
    let (arrived_tx, arrived_rx) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let gate = release.clone();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        let hold = held(req.method(), req.uri().path());
        let arrived = arrived_tx.clone();
        let gate = gate.clone();
        async move {
            if hold {
                let _ = arrived.send(());
                gate.notified().await;
            }
            inner.send(req).await
        }
    });
    (kube::Client::new(svc, "default"), arrived_rx, release)
}

async fn serving(kube: kube::Client) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(ServerConfig::new(kube), listener, async move {
        let _ = stop_rx.await;
    }));
    (addr, stop_tx)
}

/// A gRPC call over h2c with curl, which leaves deadlines to the server: `message` framed, the
/// caller's token and `extra` headers; the response's headers (and trailers).
async fn curl_grpc(
    addr: std::net::SocketAddr,
    method: &str,
    message: &impl prost::Message,
    extra: &[&str],
) -> Option<String> {
    let bearer = format!("Authorization: Bearer {}", users::OPERATOR_TOKEN);
    let mut args = vec![
        "--http2-prior-knowledge",
        "-H",
        "Content-Type: application/grpc",
        "-H",
        "TE: trailers",
        "-H",
        &bearer,
        "--data-binary",
        "@-",
    ];
    for h in extra {
        args.extend(["-H", h]);
    }
    let url = format!("http://{addr}/ichor.v1alpha1.OperationService/{method}");
    args.push(&url);
    let message = message.encode_to_vec();
    let mut frame = vec![0];
    frame.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(&message);
    // Only a call that writes nothing may be made again when curl lost its answer.
    let writes = ["CreateOperation", "SetOperationPaused", "DeleteOperation"];
    let sent = match writes.contains(&method) {
        true => super::curl::run_with_input(&args, &frame).await,
        false => super::curl::run_read_with_input(&args, &frame).await,
    };
    sent.map(|a| a.to_ascii_lowercase())
}

fn list_default() -> proto::ListOperationsRequest {
    proto::ListOperationsRequest {
        namespace: "default".into(),
        ..Default::default()
    }
}

fn is_list(m: &http::Method, path: &str) -> bool {
    m == http::Method::GET && path.ends_with("/talosoperations")
}

#[tokio::test]
async fn a_read_stops_at_the_callers_deadline_on_grpc_and_connect() {
    let api = world();
    let (kube, mut arrived, _release) = holding(&api, is_list);
    let (addr, _stop) = serving(kube).await;
    let Some(grpc) = curl_grpc(
        addr,
        "ListOperations",
        &list_default(),
        &["grpc-timeout: 200m"],
    )
    .await
    else {
        return;
    };
    assert!(grpc.contains("grpc-status: 4"), "{grpc}");
    assert!(
        grpc.contains("deadline%20passed"),
        "the server's words: {grpc}"
    );
    arrived.recv().await.unwrap();
    if let Some(answer) = super::curl::run(&[
        "-H",
        "Content-Type: application/json",
        "-H",
        &format!("Authorization: Bearer {}", users::VIEWER_TOKEN),
        "-H",
        "Connect-Timeout-Ms: 200",
        "-d",
        r#"{"namespace":"default"}"#,
        &format!("http://{addr}/ichor.v1alpha1.OperationService/ListOperations"),
    ])
    .await
    {
        assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
        assert!(
            answer.contains("\"code\":\"deadline_exceeded\""),
            "{answer}"
        );
    }
}

#[tokio::test]
async fn a_write_past_its_deadline_is_carried_to_its_end_and_the_answer_says_so() {
    let api = world();
    api.seed(&super::common::op("roll", "c1", "talos", 1))
        .unwrap();
    let (kube, mut arrived, release) = holding(&api, |m, _| m == http::Method::PATCH);
    let (addr, _stop) = serving(kube).await;
    let pause = proto::SetOperationPausedRequest {
        namespace: "default".into(),
        name: "roll".into(),
        paused: true,
        ..Default::default()
    };
    let Some(answer) = curl_grpc(addr, "SetOperationPaused", &pause, &["grpc-timeout: 200m"]).await
    else {
        return;
    };
    assert!(answer.contains("grpc-status: 4"), "{answer}");
    assert!(answer.contains("carried%20to%20its%20end"), "{answer}");
    arrived.recv().await.unwrap();
    release.notify_one();
    let c = super::common::server::client(&format!("http://{addr}"), Some(users::OPERATOR_TOKEN));
    let paused = async {
        loop {
            let op = ichor_model::OperationClient::get_operation(&c, "default", "roll")
                .await
                .unwrap();
            if op.paused {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), paused)
        .await
        .expect("the write went on after the caller's deadline");
}

#[tokio::test]
async fn malformed_deadlines_and_protocol_versions_are_refused_as_connect_go_refuses_them() {
    let api = world();
    let server: Running = super::common::server::start(&api, Default::default()).await;
    let addr = server.addr;
    let bearer = format!("Authorization: Bearer {}", users::VIEWER_TOKEN);
    for timeout in [
        "grpc-timeout: banana",
        "grpc-timeout: 123456789S",
        "grpc-timeout: 5s",
    ] {
        let Some(answer) = curl_grpc(addr, "ListOperations", &list_default(), &[timeout]).await
        else {
            return;
        };
        assert!(answer.contains("grpc-status: 3"), "{timeout}: {answer}");
        assert!(answer.contains("grpc-timeout"), "{timeout}: {answer}");
    }
    let Some(ok) = curl_grpc(
        addr,
        "ListOperations",
        &list_default(),
        &["grpc-timeout: 10S"],
    )
    .await
    else {
        return;
    };
    assert!(ok.contains("grpc-status: 0"), "{ok}");
    for header in [
        "Connect-Timeout-Ms: abc",
        "Connect-Timeout-Ms: 12345678901",
        "Connect-Protocol-Version: 2",
    ] {
        let Some(answer) = super::curl::run(&[
            "-H",
            "Content-Type: application/json",
            "-H",
            &bearer,
            "-H",
            header,
            "-d",
            r#"{"namespace":"default"}"#,
            &format!("http://{addr}/ichor.v1alpha1.OperationService/ListOperations"),
        ])
        .await
        else {
            return;
        };
        assert!(answer.starts_with("HTTP/1.1 400"), "{header}: {answer}");
        assert!(
            answer.contains("\"code\":\"invalid_argument\""),
            "{header}: {answer}"
        );
    }
}
