//! A connection that carries no authenticated call is closed within
//! [`ichor_server::AUTHENTICATED_WITHIN`] of its accept, whatever it holds, on HTTP/1.1 and
//! HTTP/2, plain and TLS: curl holds a `grpc.health.v1.Health/Watch` stream (health needs no
//! token; gRPC over HTTP/2, gRPC-Web over HTTP/1.1) and is cut off. The same stream on a
//! connection whose first call was a viewer's ListOperations is held until its client gives up:
//! curl's over HTTP/1.1; over HTTP/2 a tonic channel's (Debian 12's curl 7.88 fails any second
//! upload on a reused HTTP/2 connection with "Error in the HTTP2 framing layer", whatever the
//! server).

use super::common::server::{Options, Running, start};
use super::world;
use ichor_demo::apiserver::auth::users;
use ichor_server::AUTHENTICATED_WITHIN;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long curl holds a stream the server does not end.
const CURL_GIVES_UP: Duration = Duration::from_secs(16);

/// curl's exit code when its `--max-time` passed.
const TIMED_OUT: i32 = 28;

/// One gRPC (or gRPC-Web) message frame: no flags, its length, itself.
fn framed(message: &[u8]) -> Vec<u8> {
    super::curl::enveloped(message)
}

/// A transport: curl's flags for it, the content type it sends, and the server's base URL.
struct Transport {
    name: &'static str,
    http2: bool,
    flags: Vec<String>,
    content_type: &'static str,
    base: String,
}

fn transports(plain: &Running, tls: &Running, ca: &Path) -> Vec<Transport> {
    let cacert = vec!["--cacert".to_string(), ca.display().to_string()];
    let with = |first: &str, rest: &[String]| {
        std::iter::once(first.to_string())
            .chain(rest.iter().cloned())
            .collect()
    };
    vec![
        Transport {
            name: "HTTP/2, plain",
            http2: true,
            flags: vec!["--http2-prior-knowledge".into()],
            content_type: "application/grpc",
            base: plain.url(false),
        },
        Transport {
            name: "HTTP/1.1, plain",
            http2: false,
            flags: vec!["--http1.1".into()],
            content_type: "application/grpc-web+proto",
            base: plain.url(false),
        },
        Transport {
            name: "HTTP/2, TLS",
            http2: true,
            flags: with("--http2", &cacert),
            content_type: "application/grpc",
            base: tls.url(true),
        },
        Transport {
            name: "HTTP/1.1, TLS",
            http2: false,
            flags: with("--http1.1", &cacert),
            content_type: "application/grpc-web+proto",
            base: tls.url(true),
        },
    ]
}

/// The arguments of one call of curl's: `path` with the body in `file`.
fn call(t: &Transport, path: &str, file: &Path, token: Option<&str>) -> Vec<String> {
    let mut args = t.flags.clone();
    args.extend([
        "-sS".into(),
        "--max-time".into(),
        CURL_GIVES_UP.as_secs().to_string(),
    ]);
    args.extend(["-X", "POST", "-H", "te: trailers"].map(String::from));
    args.extend(["-H".into(), format!("content-type: {}", t.content_type)]);
    if let Some(token) = token {
        args.extend(["-H".into(), format!("authorization: Bearer {token}")]);
    }
    args.extend(["--data-binary".into(), format!("@{}", file.display())]);
    args.extend(["-o".into(), "/dev/null".into()]);
    args.push(format!("{}{path}", t.base));
    args
}

/// How curl ended (its exit code) and when, holding the calls `args` on one connection.
async fn held(args: Vec<String>) -> (Option<i32>, Duration) {
    let started = Instant::now();
    let out = tokio::process::Command::new("curl")
        .args(&args)
        .kill_on_drop(true)
        .output()
        .await
        .expect("running curl");
    (out.status.code(), started.elapsed())
}

/// Over HTTP/2, with tonic on one connection: the viewer's ListOperations, then a health
/// Watch stream held until [`CURL_GIVES_UP`] (`ca`: the TLS server's certificate). Whether it
/// was still open then.
async fn held_after_a_call_over_http2(base: &str, ca: Option<&str>) -> bool {
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let mut endpoint = tonic::transport::Endpoint::from_shared(base.to_string()).unwrap();
    if let Some(pem) = ca {
        let tls = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(pem))
            .domain_name("localhost");
        endpoint = endpoint.tls_config(tls).unwrap();
    }
    let channel = endpoint.connect().await.unwrap();
    let mut list = tonic::Request::new(ichor_server::wire::proto::ListOperationsRequest {
        namespace: "default".into(),
        ..Default::default()
    });
    list.metadata_mut().insert(
        "authorization",
        format!("Bearer {}", users::VIEWER_TOKEN).parse().unwrap(),
    );
    ichor_server::wire::proto::operation_service_client::OperationServiceClient::new(
        channel.clone(),
    )
    .list_operations(list)
    .await
    .expect("the viewer's list");
    let started = Instant::now();
    let watch = HealthCheckRequest {
        service: String::new(),
    };
    let mut stream = HealthClient::new(channel)
        .watch(watch)
        .await
        .unwrap()
        .into_inner();
    let read = async { while let Ok(Some(_)) = stream.message().await {} };
    let gave_up = tokio::time::timeout(CURL_GIVES_UP, read).await.is_err();
    gave_up && started.elapsed() >= CURL_GIVES_UP
}

/// Whether a stream held on a connection whose first call was the viewer's was still open when
/// its client gave up.
async fn held_after_a_call(t: &Transport, ca: &str, files: (&Path, &Path)) -> bool {
    const WATCH: &str = "/grpc.health.v1.Health/Watch";
    const LIST: &str = "/ichor.v1alpha1.OperationService/ListOperations";
    if t.http2 {
        let tls = t.base.starts_with("https").then_some(ca);
        return held_after_a_call_over_http2(&t.base, tls).await;
    }
    let (list, watch) = files;
    let mut args = call(t, LIST, list, Some(users::VIEWER_TOKEN));
    args.push("--next".into());
    args.extend(call(t, WATCH, watch, None));
    held(args).await.0 == Some(TIMED_OUT)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_an_authenticated_call_is_closed_on_every_transport() {
    if !super::curl::present() {
        return;
    }
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, cert.cert.pem()).unwrap();
    let watch = dir.path().join("watch.bin");
    std::fs::write(&watch, framed(&[])).unwrap();
    let list = dir.path().join("list.bin");
    // ListOperationsRequest{namespace: "default"}.
    std::fs::write(&list, framed(b"\x0a\x07default")).unwrap();
    let api = world();
    let plain = start(&api, Options::default()).await;
    let tls = start(
        &api,
        Options {
            tls: Some(ichor_server::TlsPem {
                cert: cert.cert.pem().into_bytes(),
                key: cert.signing_key.serialize_pem().into_bytes(),
            }),
            ..Options::default()
        },
    )
    .await;
    let pem = cert.cert.pem();
    let mut runs = Vec::new();
    for t in transports(&plain, &tls, &ca) {
        let alone = call(&t, "/grpc.health.v1.Health/Watch", &watch, None);
        let (list, watch, pem) = (&list, &watch, &pem);
        runs.push(async move {
            let (alone, vouched) =
                futures::join!(held(alone), held_after_a_call(&t, pem, (list, watch)));
            (t.name, alone, vouched)
        });
    }
    for (name, (code, after), vouched) in futures::future::join_all(runs).await {
        assert!(
            code != Some(TIMED_OUT) && after < AUTHENTICATED_WITHIN + Duration::from_secs(4),
            "{name}: a connection with only a health stream was closed within {AUTHENTICATED_WITHIN:?}: curl exit {code:?} after {after:?}"
        );
        assert!(
            after >= AUTHENTICATED_WITHIN - Duration::from_secs(1),
            "{name}: the health stream was held until then: curl exit {code:?} after {after:?}"
        );
        assert!(
            vouched,
            "{name}: a connection that carried an authenticated call keeps its stream"
        );
    }
    assert!(api.write_log().is_empty());
}
