//! What a caller can hold of `serve`, over raw TCP: an unauthenticated call is answered from its
//! headers, its body never waited for; a connection that sends no request is closed; calls
//! over the in-flight limit wait their turn, and are refused with retry advice when their
//! deadline comes first.

use super::common::server::{Options, start};
use super::world;
use ichor_demo::apiserver::auth::users;
use ichor_server::{ServerConfig, serve};
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A generous bound for what must happen at once: only a hang reaches it.
const NEVER: Duration = Duration::from_secs(60);

/// Sends `head` and the first `sent` bytes of a body whose Content-Length is 1 MiB, never the
/// rest, and reads what the server answers until it closes the connection.
async fn slow_upload(addr: std::net::SocketAddr, head: &str, sent: usize) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let request = format!("{head}Content-Length: {}\r\n\r\n", 1024 * 1024);
    tcp.write_all(request.as_bytes()).await.unwrap();
    tcp.write_all(&vec![b'x'; sent]).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(NEVER, tcp.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes without the rest of the body")
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

fn post(path: &str, content_type: &str, token: Option<&str>) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!("POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n{auth}")
}

const LIST: &str = "/ichor.v1alpha1.OperationService/ListOperations";

#[tokio::test]
async fn an_unauthenticated_slow_upload_is_answered_at_once_and_never_read() {
    let api = world();
    let server = start(&api, Options::default()).await;
    for (token, what) in [
        (None, "no token"),
        (Some("not-a-token"), "a rejected token"),
    ] {
        let connect = slow_upload(server.addr, &post(LIST, "application/json", token), 1000).await;
        assert!(connect.starts_with("HTTP/1.1 401"), "{what}: {connect}");
        assert!(
            connect.contains("\"code\":\"unauthenticated\""),
            "{what}: {connect}"
        );
        let web = slow_upload(
            server.addr,
            &post(LIST, "application/grpc-web+proto", token),
            1000,
        )
        .await;
        assert!(web.starts_with("HTTP/1.1 200"), "{what}: {web}");
        assert!(
            web.to_ascii_lowercase().contains("grpc-status: 16"),
            "{what}: {web}"
        );
    }
}

#[tokio::test]
async fn an_authenticated_upload_that_stalls_is_cut_off_at_its_deadline() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let head = post(LIST, "application/json", Some(users::VIEWER_TOKEN));
    let head = format!("{head}Connect-Timeout-Ms: 200\r\n");
    let answer = slow_upload(server.addr, &head, 10).await;
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    assert!(answer.contains("deadline_exceeded"), "{answer}");
}

#[tokio::test]
async fn a_connection_that_sends_no_request_is_closed() {
    let api = world();
    let server = start(&api, Options::default()).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(b"POST / HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(NEVER, tcp.read_to_end(&mut rest))
        .await
        .expect("the server closes a connection whose headers never end")
        .unwrap();
}

/// A Connect ListClusters by `token` over a connection of its own, with `extra` headers; the
/// status line and the headers.
async fn list_over_http1(addr: std::net::SocketAddr, token: &str, extra: &str) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let body = r#"{"namespace":"default"}"#;
    let head = post(
        "/ichor.v1alpha1.ClusterService/ListClusters",
        "application/json",
        Some(token),
    );
    let request = format!(
        "{head}{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// Eight people hold every read's seat, 32 each (their cluster lists held at the API): a call
/// past them waits its turn in its person's queue; one whose deadline comes first is refused
/// with retry advice, and one without is answered once a seat is given back.
#[tokio::test]
async fn calls_over_the_in_flight_limit_wait_their_turn_or_are_refused_with_retry_advice() {
    use ichor_server::pools::CALLS_PER_PERSON;
    use ichor_server::{MAX_CALLS_IN_FLIGHT, RETRY_AFTER_SECONDS};
    let api = world();
    let people = MAX_CALLS_IN_FLIGHT / CALLS_PER_PERSON;
    for p in 0..people {
        api.add_token(
            &format!("reader-{p}"),
            &format!("reader-{p}"),
            &["ichor:viewers"],
        );
    }
    // Cluster lists are held at the API (ListOperations waits for a turn of its own first).
    let (kube, mut arrived, release) = super::deadlines::holding(&api, |m, path| {
        m == http::Method::GET && path.ends_with("/talosclusters")
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(ServerConfig::new(kube), listener, async move {
        let _ = stop_rx.await;
    }));
    let held: Vec<_> = (0..MAX_CALLS_IN_FLIGHT)
        .map(|i| {
            let token = format!("reader-{}", i % people);
            tokio::spawn(async move { list_over_http1(addr, &token, "").await })
        })
        .collect();
    for _ in 0..MAX_CALLS_IN_FLIGHT {
        arrived.recv().await.unwrap();
    }
    let refused = list_over_http1(addr, users::VIEWER_TOKEN, "Connect-Timeout-Ms: 300\r\n").await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(
        refused.contains("\"code\":\"resource_exhausted\""),
        "{refused}"
    );
    assert!(refused.contains("answering 256 calls"), "{refused}");
    let lower = refused.to_ascii_lowercase();
    assert!(
        lower.contains(&format!("retry-after: {RETRY_AFTER_SECONDS}")),
        "{refused}"
    );
    let grpc = super::common::server::client(&format!("http://{addr}"), Some(users::VIEWER_TOKEN));
    let waiting = tokio::spawn(async move {
        ichor_model::OperationClient::list_clusters(&grpc, Some("default")).await
    });
    release.notify_waiters();
    for h in held {
        let answer = h.await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    // The waiting call had its seat once one was given back; its own list is held in turn.
    arrived.recv().await.unwrap();
    release.notify_waiters();
    let answered = waiting.await.unwrap();
    assert!(answered.is_ok(), "{answered:?}");
    let _ = stop_tx.send(());
    server.await.unwrap().unwrap();
}
