//! `/livez`, `/readyz` and `/healthz` on serve's main port, asked with curl as a kubelet or a
//! person asks them: without a token, over HTTP/1.1 and HTTP/2; `ok`, or every check listed
//! with the failed ones withheld, as kube-apiserver answers. (The metrics port's are asked in
//! `pod.rs` and `image.rs`, where the binary serves it.)

use super::present;
use crate::common;
use crate::common::server::{Options, start};
use ichor_demo::apiserver::auth::users;
use ichor_demo::apiserver::{EmbeddedApi, Fault, FaultRule};
use ichor_model::{ListQuery, OperationClient, View};
use std::process::Command;
use std::time::Duration;

/// `curl -sS ARGS URL`: the status and the body.
fn curl(args: &[&str], url: &str) -> (u16, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "-w", "\n%{http_code}"])
        .args(args)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (code.parse().unwrap(), body.to_string())
}

#[tokio::test]
async fn the_probes_answer_without_a_token_as_kube_apiserver_answers() {
    if !present("curl", &["--version"]) {
        return;
    }
    let api = EmbeddedApi::default();
    let server = start(&api, Options::default()).await;
    let url = server.url(false);
    let check = |args: &'static [&'static str], path: &'static str| {
        let url = format!("{url}{path}");
        tokio::task::spawn_blocking(move || curl(args, &url))
    };
    for path in [
        "/livez",
        "/readyz",
        "/healthz",
        "/readyz/",
        "/readyz/shared-watches",
    ] {
        for args in [
            &[][..],
            &["--http2-prior-knowledge"],
            &["-H", "Authorization: Bearer nope"],
        ] {
            let answer = check(args, path).await.unwrap();
            assert_eq!(answer, (200, "ok".to_string()), "{path} {args:?}");
        }
    }
    let (code, body) = check(&["-i"], "/readyz").await.unwrap();
    assert_eq!(code, 200);
    assert!(
        body.contains("content-type: text/plain; charset=utf-8"),
        "{body}"
    );
    assert!(body.contains("x-content-type-options: nosniff"), "{body}");
    let (_, body) = check(&[], "/readyz?verbose").await.unwrap();
    assert_eq!(
        body,
        "[+]ping ok\n[+]kubernetes-api ok\n[+]shared-watches ok\n[+]shutdown ok\nreadyz check passed\n"
    );
    let (_, body) = check(&[], "/livez?verbose").await.unwrap();
    assert_eq!(body, "[+]ping ok\nlivez check passed\n");
    let (_, body) = check(&[], "/healthz?verbose&exclude=kubernetes-api&exclude=nope")
        .await
        .unwrap();
    assert_eq!(
        body,
        "[+]ping ok\n[+]kubernetes-api excluded: ok\n[+]shared-watches ok\n\
         warn: some health checks cannot be excluded: no matches for \"nope\"\nhealthz check passed\n"
    );
    assert_eq!(check(&[], "/readyz/nope").await.unwrap().0, 404);
    // Not a call: no token was reviewed, nothing counted as serve's calls.
    assert!(
        api.requests_by()
            .iter()
            .all(|r| r.resource != "tokenreviews"),
        "{:?}",
        api.requests_by()
    );
    // Another method is a call like any other: refused without a token.
    assert_eq!(check(&["-X", "POST"], "/readyz").await.unwrap().0, 401);
}

#[tokio::test]
async fn not_ready_while_the_kubernetes_api_does_not_answer_yet_alive() {
    if !present("curl", &["--version"]) {
        return;
    }
    // serve's own client reaches nothing: a port nobody listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let nowhere = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let config = kube::Config::new(nowhere.parse().unwrap());
    let kube = kube::Client::try_from(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let config = ichor_server::ServerConfig::new(kube);
    tokio::spawn(ichor_server::serve(
        config,
        listener,
        std::future::pending(),
    ));
    let get = |path: &str| {
        let url = format!("{url}{path}");
        tokio::task::spawn_blocking(move || curl(&[], &url))
    };
    let (code, body) = get("/readyz").await.unwrap();
    assert_eq!(code, 500);
    assert_eq!(
        body,
        "[+]ping ok\n[-]kubernetes-api failed: reason withheld\n[+]shared-watches ok\n\
         [+]shutdown ok\nreadyz check failed\n"
    );
    assert_eq!(get("/healthz").await.unwrap().0, 500);
    assert_eq!(get("/readyz/kubernetes-api").await.unwrap().0, 500);
    assert_eq!(get("/livez").await.unwrap(), (200, "ok".to_string()));
}

#[tokio::test]
async fn not_ready_until_a_new_shared_watch_has_listed() {
    if !present("curl", &["--version"]) {
        return;
    }
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    let server = start(&api, Options::default()).await;
    let url = server.url(false);
    // The shared watch's first list takes a while to come.
    api.fail_when(
        FaultRule::on("list", "talosoperations"),
        Fault::Delay(Duration::from_secs(3)),
    );
    let viewer = common::server::client(&url, Some(users::VIEWER_TOKEN));
    let summaries = ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        ..ListQuery::default()
    };
    let listing = tokio::spawn(async move { viewer.list_page(&summaries).await });
    let readyz = |url: String| async move {
        tokio::task::spawn_blocking(move || curl(&[], &format!("{url}/readyz?verbose")))
            .await
            .unwrap()
    };
    let mut answer = (0, String::new());
    common::eventually_async("readyz says the shared watches failed", async || {
        answer = readyz(url.clone()).await;
        answer.0 == 500
    })
    .await;
    let (_, body) = answer;
    assert!(
        body.contains("[-]shared-watches failed: reason withheld\n"),
        "{body}"
    );
    listing.await.unwrap().unwrap();
    // Listed: ready again.
    common::eventually_async("readyz says ready again", async || {
        readyz(url.clone()).await.0 == 200
    })
    .await;
}
