//! Tokens never reach the log. In a test binary of its own: tracing's per-call-site interest is
//! shared by every thread of a process, and tests of other files calling the same sites at the
//! same time could hide events from this test's scoped subscriber.

mod common;

use common::server::{Options, client, start};
use common::small_cluster;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient;
use ichor_model::{OperationKind, OperationRequest};
use std::sync::Arc;

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

fn shutdown_req() -> OperationRequest {
    OperationRequest::new("default", Some("c1"), OperationKind::Shutdown)
}

#[tokio::test]
async fn tokens_never_reach_the_log() {
    use std::sync::Mutex;
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("debug"))
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let api = world();
    let server = start(&api, Options::default()).await;
    let good = client(&server.url(false), Some(users::OPERATOR_TOKEN));
    good.create_operation(&shutdown_req()).await.unwrap();
    good.create_operation(&shutdown_req()).await.unwrap_err();
    let bad = client(&server.url(false), Some("secret-bad-token"));
    bad.list_operations(Some("default")).await.unwrap_err();

    let log = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(
        log.contains("operation started"),
        "the log is captured: {log}"
    );
    assert!(log.contains("rejected by the token review"), "{log}");
    for token in [
        users::OPERATOR_TOKEN,
        "secret-bad-token",
        users::SERVER_TOKEN,
    ] {
        assert!(!log.contains(token), "{token} in the log");
    }
}
