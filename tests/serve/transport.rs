//! How serve is reached: plaintext refused beyond loopback without --insecure-listen, TLS with
//! a self-signed certificate and its CA file, and Kubernetes through a kubeconfig.

use super::*;

#[test]
fn plaintext_beyond_loopback_is_refused_without_insecure_listen() {
    for every in ["0.0.0.0:50051", "[::]:50051", ":50051"] {
        let any: ichor_server::ListenAddr = every.parse().unwrap();
        let e = check_transport(&any, false, false).unwrap_err();
        assert!(format!("{e}").contains("--insecure-listen"), "{e}");
        check_transport(&any, false, true).unwrap();
        check_transport(&any, true, false).unwrap();
    }
    for loopback in ["127.0.0.1:0", "[::1]:0", "localhost:0"] {
        check_transport(&loopback.parse().unwrap(), false, false).unwrap();
    }

    // What a user sees from the command.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ichor-tui"))
        .args(["serve", "--demo", "--listen", "0.0.0.0:0"])
        .arg("--log-file")
        .arg(std::env::temp_dir().join("ichor-tui-grpc-test.log"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refusing to serve plaintext on 0.0.0.0:0"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was served");
}

#[tokio::test]
async fn tls_with_a_self_signed_certificate_and_the_ca_file() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let pem = cert.cert.pem();
    let api = world();
    let server = start(
        &api,
        Options {
            tls: Some(TlsPem {
                cert: pem.clone().into_bytes(),
                key: cert.signing_key.serialize_pem().into_bytes(),
            }),
            ..Options::default()
        },
    )
    .await;
    let url = server.url(true);
    assert!(url.starts_with("https://localhost:"));

    for protocol in [Protocol::Grpc, Protocol::Connect] {
        let mut o = RemoteOptions::new(&url).with_protocol(protocol);
        o.token = Some(users::VIEWER_TOKEN.into());
        o.ca_pem = Some(pem.clone().into_bytes());
        let trusted = RemoteClient::new(o).unwrap();
        assert_eq!(
            trusted.list_clusters(Some("default")).await.unwrap().len(),
            1,
            "{protocol:?}"
        );

        // Without the CA file the certificate is not trusted: no call gets through.
        let untrusted = common::server::client_over(&url, Some(users::VIEWER_TOKEN), protocol);
        let e = untrusted.list_clusters(Some("default")).await.unwrap_err();
        assert_eq!(e.code, Code::Unavailable, "{protocol:?}: {e:?}");
        // Plain HTTP to a TLS port is no answer either.
        let plain =
            common::server::client_over(&server.url(false), Some(users::VIEWER_TOKEN), protocol);
        assert!(
            plain.list_clusters(Some("default")).await.is_err(),
            "{protocol:?}"
        );
    }
}

#[test]
fn serve_reaches_kubernetes_through_a_kubeconfig() {
    use common::process::Process;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let kubeconfig = kubeconfig.to_str().unwrap();
    // The demo cluster's API over HTTP, with a kubeconfig for its admin (who may review tokens
    // and impersonate), stands in for a real cluster.
    let (_cluster, first) = Process::start(
        &[
            "demo-cluster",
            "--listen",
            "127.0.0.1:0",
            "--kubeconfig-out",
            kubeconfig,
        ],
        &dir.path().join("cluster.log"),
    );
    assert!(first.starts_with("demo cluster listening on"), "{first}");
    let (server, first) = Process::start(
        &[
            "serve",
            "--kubeconfig",
            kubeconfig,
            "--listen",
            "127.0.0.1:0",
        ],
        &dir.path().join("serve.log"),
    );
    let addr = first.strip_prefix("serving on ").unwrap().to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let url = format!("http://{addr}");
        let operator = client(&url, Some(users::OPERATOR_TOKEN));
        let clusters = operator.list_clusters(Some("default")).await.unwrap();
        let free = clusters
            .iter()
            .find(|c| c.active_operation.is_none())
            .expect("a demo cluster without an unfinished operation");
        let created = operator
            .create_operation(&OperationRequest {
                cluster: Some(free.name.clone()),
                ..shutdown_req()
            })
            .await
            .unwrap();
        assert_eq!(created.operation.actor.as_deref(), Some(users::OPERATOR));
        let e = client(&url, Some(users::VIEWER_TOKEN))
            .delete_operation("default", &created.operation.name, None)
            .await
            .unwrap_err();
        assert_eq!(
            e.code,
            Code::PermissionDenied,
            "the viewer acts as the viewer"
        );
        let e = client(&url, None).list_operations(None).await.unwrap_err();
        assert_eq!(e.code, Code::Unauthenticated);
    });
    assert!(server.terminate(Duration::from_secs(30)).success());
}
