//! Port-forwarding to ichor-ui's pod in the demo cluster through kube-rs's client
//! (`Api::<Pod>::portforward`, the WebSocket channel protocol): in process and over HTTP, the
//! refusals, RBAC, and the pod restarting, going not ready and away.

use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::{Rule, Subject, users};
use ichor_demo::demo::{self, ichor_ui};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use kube::api::{Api, ListParams, PostParams};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A TCP echo server that counts its open connections.
struct Echo {
    addr: SocketAddr,
    open: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn echo() -> Echo {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let open = Arc::new(AtomicUsize::new(0));
    let count = open.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let count = count.clone();
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if s.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    }
                }
                count.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    Echo { addr, open, task }
}

impl Echo {
    /// Waits until no connection to the echo server is left open.
    async fn all_closed(&self) {
        crate::common::eventually("no connection to the target left open", || {
            self.open.load(Ordering::SeqCst) == 0
        })
        .await;
    }
}

/// The demo data, with ichor-ui forwarding to a fresh echo server.
async fn demo_with_echo() -> (EmbeddedApi, Echo, String) {
    let api = EmbeddedApi::default();
    demo::seed(&api, jiff::Timestamp::now()).unwrap();
    let echo = echo().await;
    let pod = ichor_ui::forward_to(&api, echo.addr).unwrap();
    (api, echo, pod)
}

fn pods(client: kube::Client) -> Api<Pod> {
    Api::namespaced(client, ichor_ui::NAMESPACE)
}

/// Bytes written to the forwarded port come back from the echo server.
async fn round_trip(pods: &Api<Pod>, pod: &str, payload: &[u8]) {
    let mut pf = pods
        .portforward(pod, &[ichor_ui::CONTAINER_PORT])
        .await
        .unwrap();
    let mut stream = pf.take_stream(ichor_ui::CONTAINER_PORT).unwrap();
    stream.write_all(payload).await.unwrap();
    let mut got = vec![0u8; payload.len()];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut got))
        .await
        .expect("the echo comes back in time")
        .unwrap();
    assert!(got == payload, "echoed bytes differ");
    drop(stream);
    tokio::time::timeout(Duration::from_secs(10), pf.join())
        .await
        .expect("the forward ends when the stream is dropped")
        .unwrap();
}

#[tokio::test]
async fn bytes_round_trip_in_process_for_every_demo_user() {
    let (api, echo, pod) = demo_with_echo().await;
    // A payload larger than one message, twice per user.
    let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let tasks = || {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    };
    let before = tasks();
    for token in [
        users::ADMIN_TOKEN,
        users::OPERATOR_TOKEN,
        users::VIEWER_TOKEN,
        users::CLUSTER_EDITOR_TOKEN,
    ] {
        let pods = pods(api.client(token));
        round_trip(&pods, &pod, &payload).await;
        round_trip(&pods, &pod, b"second connection").await;
    }
    echo.all_closed().await;
    // No task outlives its forward: not the upgrade's, not the in-memory connection's, not
    // the target connections'.
    crate::common::eventually("no more tasks than before", || tasks() <= before).await;
}

#[tokio::test]
async fn bytes_round_trip_over_http() {
    let (api, echo, pod) = demo_with_echo().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(ichor_demo::apiserver::server::serve(api.clone(), listener));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    ichor_demo::apiserver::server::write_kubeconfig(&path, &addr).unwrap();
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let pods = pods(client);
    round_trip(&pods, &pod, b"over a real socket").await;
    round_trip(&pods, &pod, &vec![7u8; 100_000]).await;
    echo.all_closed().await;
    server.abort();
}

#[tokio::test]
async fn the_core_objects_read_as_kube_types() {
    let (api, _echo, pod) = demo_with_echo().await;
    let client = api.client(users::VIEWER_TOKEN);
    let svc: Service = Api::namespaced(client.clone(), ichor_ui::NAMESPACE)
        .get(ichor_ui::SERVICE)
        .await
        .unwrap();
    let selector = svc.spec.unwrap().selector.unwrap();
    let label = selector
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let listed = pods(client.clone())
        .list(&ListParams::default().labels(&label))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].metadata.name.as_deref(), Some(pod.as_str()));
    let ep: Endpoints = Api::namespaced(client.clone(), ichor_ui::NAMESPACE)
        .get(ichor_ui::SERVICE)
        .await
        .unwrap();
    assert_eq!(ep.subsets.unwrap()[0].addresses.as_ref().unwrap().len(), 1);
    // Read only: a write is not allowed on any of them.
    let err = Api::<Service>::namespaced(api.client(users::ADMIN_TOKEN), ichor_ui::NAMESPACE)
        .create(&PostParams::default(), &Service::default())
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 405));
    // Nobody but the admin reads pods elsewhere.
    let err = Api::<Pod>::namespaced(client, "default")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 403));
}

#[tokio::test]
async fn a_port_without_a_target_fails_on_the_error_channel() {
    let api = EmbeddedApi::default();
    demo::seed(&api, jiff::Timestamp::now()).unwrap();
    let pod = ichor_ui::pod(&api).unwrap();
    let pods = pods(api.client(users::OPERATOR_TOKEN));
    let mut pf = pods
        .portforward(&pod, &[ichor_ui::CONTAINER_PORT])
        .await
        .unwrap();
    let error = pf.take_error(ichor_ui::CONTAINER_PORT).unwrap();
    let mut stream = pf.take_stream(ichor_ui::CONTAINER_PORT).unwrap();
    let msg = tokio::time::timeout(Duration::from_secs(10), error)
        .await
        .unwrap()
        .expect("an error message");
    assert!(
        msg.contains(&format!("error forwarding port 8080 to pod {pod}"))
            && msg.contains("connection refused"),
        "{msg}"
    );
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest))
        .await
        .unwrap()
        .unwrap();
    assert!(rest.is_empty());
    // Another port of the pod: refused the same way.
    let mut pf = pods.portforward(&pod, &[9090]).await.unwrap();
    let msg = pf.take_error(9090).unwrap().await.unwrap();
    assert!(msg.contains("localhost:9090"), "{msg}");
}

#[tokio::test]
async fn refusals_before_the_upgrade() {
    let (api, _echo, _pod) = demo_with_echo().await;
    let status = |e: kube::Error| match e {
        kube::Error::Api(s) => (s.code, s.message),
        other => panic!("expected an API status, got {other:?}"),
    };
    let pods = pods(api.client(users::OPERATOR_TOKEN));
    let err = refused(&pods, "no-such-pod").await;
    let (code, message) = status(err);
    assert_eq!(code, 404);
    assert!(
        message.contains("pods \"no-such-pod\" not found"),
        "{message}"
    );

    // Someone whose rules do not include pods/portforward.
    api.add_token("outsider-token", "outsider", &["outsiders"]);
    api.add_rule(Rule::new(
        Subject::Group("outsiders".into()),
        &["get", "list"],
        &["pods"],
    ));
    let pod = ichor_ui::pod(&api).unwrap();
    let err = refused(&pods_of(&api, "outsider-token"), &pod).await;
    let (code, message) = status(err);
    assert_eq!(code, 403);
    assert!(
        message.contains(
            "User \"outsider\" cannot create resource \"pods/portforward\" in API group \"\" in the namespace \"ichor-system\""
        ),
        "{message}"
    );
    // A plain request to the subresource is no upgrade.
    let req = http::Request::get(format!(
        "/api/v1/namespaces/ichor-system/pods/{pod}/portforward?ports=8080"
    ))
    .body(Vec::new())
    .unwrap();
    let err = api
        .client(users::ADMIN_TOKEN)
        .request_text(req)
        .await
        .unwrap_err();
    assert_eq!(status(err).0, 400);
}

/// The error of a port-forward that must fail.
async fn refused(pods: &Api<Pod>, pod: &str) -> kube::Error {
    match pods.portforward(pod, &[8080]).await {
        Ok(_) => panic!("the port-forward to {pod} was accepted"),
        Err(e) => e,
    }
}

fn pods_of(api: &EmbeddedApi, token: &str) -> Api<Pod> {
    pods(api.client(token))
}

#[tokio::test]
async fn access_reviews_answer_for_the_port_forward() {
    let api = EmbeddedApi::default();
    demo::seed(&api, jiff::Timestamp::now()).unwrap();
    let review = |ns: &str, verb: &str, sub: Option<&str>| SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(ns.into()),
                verb: Some(verb.into()),
                resource: Some("pods".into()),
                subresource: sub.map(str::to_string),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    for token in [
        users::VIEWER_TOKEN,
        users::OPERATOR_TOKEN,
        users::CLUSTER_EDITOR_TOKEN,
        users::ADMIN_TOKEN,
    ] {
        let reviews: Api<SelfSubjectAccessReview> = Api::all(api.client(token));
        for (ns, verb, sub, want) in [
            ("ichor-system", "create", Some("portforward"), true),
            ("ichor-system", "list", None, true),
            ("ichor-system", "get", None, true),
            ("ichor-system", "delete", None, token == users::ADMIN_TOKEN),
            (
                "default",
                "create",
                Some("portforward"),
                token == users::ADMIN_TOKEN,
            ),
        ] {
            let answer = reviews
                .create(&PostParams::default(), &review(ns, verb, sub))
                .await
                .unwrap();
            assert_eq!(
                answer.status.map(|s| s.allowed),
                Some(want),
                "{token}: {verb} pods {sub:?} in {ns}"
            );
        }
    }
}

#[tokio::test]
async fn a_restart_ends_open_forwards_and_the_new_pod_forwards() {
    let (api, echo, old) = demo_with_echo().await;
    let pods = pods(api.client(users::OPERATOR_TOKEN));
    let mut pf = pods.portforward(&old, &[8080]).await.unwrap();
    let error = pf.take_error(8080).unwrap();
    let mut stream = pf.take_stream(8080).unwrap();
    stream.write_all(b"ping").await.unwrap();
    let mut got = [0u8; 4];
    stream.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"ping");

    let new = ichor_ui::restart(&api).unwrap();
    assert_ne!(new, old);
    let msg = tokio::time::timeout(Duration::from_secs(10), error)
        .await
        .unwrap()
        .expect("the old forward says why it ended");
    assert!(msg.contains(&format!("pod \"{old}\" was deleted")), "{msg}");
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest))
        .await
        .unwrap()
        .unwrap();
    echo.all_closed().await;

    // The old pod is gone; the new one forwards to the same target.
    let err = refused(&pods, &old).await;
    assert!(matches!(err, kube::Error::Api(s) if s.code == 404));
    round_trip(&pods, &new, b"after the restart").await;

    // Not ready: still forwarded (as a real running pod is), but out of the ready addresses.
    assert!(ichor_ui::set_ready(&api, false));
    let ep: Endpoints = Api::namespaced(api.client(users::VIEWER_TOKEN), ichor_ui::NAMESPACE)
        .get(ichor_ui::SERVICE)
        .await
        .unwrap();
    let subset = &ep.subsets.unwrap()[0];
    assert!(subset.addresses.is_none());
    assert_eq!(subset.not_ready_addresses.as_ref().unwrap().len(), 1);
    round_trip(&pods, &new, b"not ready").await;

    // Removed: no pod, no endpoints, and a forward to it is not found.
    assert!(ichor_ui::remove(&api));
    assert!(ichor_ui::pod(&api).is_none());
    let err = refused(&pods, &new).await;
    assert!(matches!(err, kube::Error::Api(s) if s.code == 404));
    // And back, with the target given again.
    let back = ichor_ui::start(&api, Some(echo.addr)).unwrap();
    round_trip(&pods, &back, b"back again").await;
    echo.all_closed().await;
}

/// The target closes first (it says goodbye and hangs up): the client reads to the end and the
/// forward finishes cleanly.
#[tokio::test]
async fn the_target_closing_ends_the_forward() {
    let api = EmbeddedApi::default();
    demo::seed(&api, jiff::Timestamp::now()).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        for _ in 0..2 {
            let (mut s, _) = listener.accept().await.unwrap();
            s.write_all(b"bye").await.unwrap();
        }
    });
    let pod = ichor_ui::forward_to(&api, target).unwrap();
    let pods = pods(api.client(users::VIEWER_TOKEN));
    for _ in 0..2 {
        let mut pf = pods.portforward(&pod, &[8080]).await.unwrap();
        let mut stream = pf.take_stream(8080).unwrap();
        let mut got = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut got))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, b"bye");
        drop(stream);
        // kube-rs answers the server's Close, then tries to send its own once the stream is
        // dropped: `join` then reports SendAfterClosing, as it would against kube-apiserver.
        // What matters here is that the forward ends.
        let joined = tokio::time::timeout(Duration::from_secs(10), pf.join())
            .await
            .expect("the forward ends");
        assert!(
            joined.is_ok() || format!("{joined:?}").contains("SendAfterClosing"),
            "{joined:?}"
        );
    }
    server.await.unwrap();
}
