//! serve's ClusterRole is what serve needs and no more, in both of its modes. The embedded API
//! grants serve's identity that role and nothing else (read into k8s-openapi's types and matched
//! as kube-apiserver's RBAC authorizer matches rules, resource names included: `ichor-demo`'s
//! `apiserver/rbac.rs`), so in every test of this suite a rule missing there fails a real call.
//! Here serve is driven through everything it does as itself, and every grant of the role
//! (each verb on each resource of each rule) must have been used, and nothing refused:
//!
//! - impersonating (`deploy/base`): reviewing tokens; impersonating a person with only the
//!   groups the role names (never `system:masters`), and a CI job's service account with the
//!   uid and extras its review named; the shared watch of one namespace and of all; the GitOps
//!   tracking check of a TalosCluster and of an IchorInstallation; its readiness;
//! - passing tokens through (`deploy/components/passthrough`): the same calls, each made with
//!   the caller's own token (the API sees no impersonation and no token review at all), and
//!   serve's identity refused when it asks to impersonate.

use crate::common;
use crate::common::server::{Options, client_over, start};
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::{Rule, Subject, users};
use ichor_model::{
    ListQuery, OperationClient, OperationKind, OperationRequest, View, WatchRequest,
};
use std::collections::BTreeMap;

/// A CI job's service account, allowed to read and start operations in `default`.
const CI: &str = "system:serviceaccount:ci:deployer";
const CI_TOKEN: &str = "ci-deployer-token";

/// A person in a group the role names and in `system:masters`, which it does not.
const DANA: &str = "dana";
const DANA_TOKEN: &str = "dana-token";

/// What a bound service-account token's review names beside the user: its uid, and its
/// credential, pod and node (Kubernetes 1.30 and later).
fn ci_extras() -> BTreeMap<String, Vec<String>> {
    [
        ("credential-id", "JTI=7f0c"),
        ("node-name", "worker-1"),
        ("node-uid", "node-uid-1"),
        ("pod-name", "deploy-job-x2"),
        ("pod-uid", "pod-uid-1"),
    ]
    .into_iter()
    .map(|(k, v)| {
        (
            format!("authentication.kubernetes.io/{k}"),
            vec![v.to_string()],
        )
    })
    .collect()
}

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    let groups: &[&str] = &["system:serviceaccounts", "system:serviceaccounts:ci"];
    api.add_token_with(CI_TOKEN, (CI, groups), Some("uid-deployer"), ci_extras());
    api.add_token(DANA_TOKEN, DANA, &["ichor:operators", "system:masters"]);
    let mut rule = Rule::new(
        Subject::User(CI.to_string()),
        &["*"],
        &[
            "talosclusters",
            "machines",
            "ichorinstallations",
            "talosoperations",
            "leases",
            "events",
        ],
    );
    rule.namespaces = Some(vec!["default".to_string()]);
    api.add_rule(rule);
    api
}

fn start_req(kind: OperationKind, target: &str) -> OperationRequest {
    OperationRequest {
        target: Some(target.to_string()),
        ..OperationRequest::new("default", Some("c1"), kind)
    }
}

/// Everything serve does as itself, asked of the server at `url`: lists of one namespace and
/// of all (the shared watches), a subscription and plans (the tracking check of a cluster and
/// of an installation) by a person, a start by a CI job, and its readiness.
async fn drive(api: &EmbeddedApi, url: &str) {
    use futures::StreamExt as _;
    let viewer = client_over(url, Some(users::VIEWER_TOKEN), Protocol::Grpc);
    for namespace in [Some("default"), None] {
        let summaries = ListQuery {
            namespace: namespace.map(str::to_string),
            view: View::Summary,
            ..ListQuery::default()
        };
        viewer.list_page(&summaries).await.unwrap();
    }
    let watch = WatchRequest {
        list: ListQuery {
            namespace: Some("default".into()),
            ..ListQuery::default()
        },
        follow: None,
        page_deltas: false,
    };
    let mut updates = viewer.watch_operations(&watch).await.unwrap();
    let first = tokio::time::timeout(std::time::Duration::from_secs(10), updates.next()).await;
    assert!(matches!(first, Ok(Some(Ok(_)))), "{first:?}");
    viewer
        .plan_operation(&start_req(OperationKind::Talos, "v1.9.3"))
        .await
        .unwrap();
    let dana = client_over(url, Some(DANA_TOKEN), Protocol::Connect);
    dana.plan_operation(&start_req(OperationKind::Ichor, "v0.14.3"))
        .await
        .unwrap();

    // A CI job with its service account's token starts one: serve acts as that service account.
    let ci = client_over(url, Some(CI_TOKEN), Protocol::Connect);
    ci.create_operation(&start_req(OperationKind::Talos, "v1.9.3"))
        .await
        .unwrap();
    let writes = common::names(&api.write_log());
    assert!(
        writes.contains(&format!("create talosoperations by {CI}")),
        "{writes:?}"
    );

    // Its readiness asks the API (kube-apiserver's /readyz: public, no rule needed).
    let readyz = format!("{url}/readyz");
    let answer = tokio::task::spawn_blocking(move || super::get(None, &readyz));
    assert_eq!(answer.await.unwrap(), (200, "ok".to_string()));
}

/// Every grant of the deployed role was used, nothing was refused, and every request serve
/// made as itself is one a used grant allows.
fn every_grant_used_and_nothing_refused(api: &EmbeddedApi) {
    let usage = api.deployed_role_usage();
    assert!(
        usage.denied.is_empty(),
        "refused to serve's identity: {:?}",
        usage.denied
    );
    let unused: Vec<String> = usage.unused().iter().map(|g| g.to_string()).collect();
    assert!(
        unused.is_empty(),
        "granted to serve, never used by serve: {unused:?}"
    );
    let own: Vec<_> = api
        .requests_by()
        .into_iter()
        .filter(|r| r.user == users::SERVER)
        .collect();
    assert!(!own.is_empty());
    // The reviews every authenticated user may make need no rule.
    let reviews = ["selfsubjectaccessreviews", "selfsubjectreviews"];
    for r in own
        .iter()
        .filter(|r| !reviews.contains(&r.resource.as_str()))
    {
        let allowed = usage.used.iter().any(|g| {
            (g.verb == r.verb || g.verb == "*") && (g.resource == r.resource || g.resource == "*")
        });
        assert!(
            allowed,
            "{r:?} is not among the role's grants {:?}",
            usage.used
        );
    }
}

#[tokio::test]
async fn impersonating_the_role_grants_what_serve_uses_and_nothing_more() {
    let api = world();
    let server = start(&api, Options::default()).await;
    drive(&api, &server.url(false)).await;
    every_grant_used_and_nothing_refused(&api);

    // serve acted as each caller by impersonation: the CI job's account with the uid and the
    // extras its review named (its groups are the API server's to add), dana without
    // system:masters, which the role does not name.
    let seen = api.impersonations();
    let ci = seen.iter().find(|i| i.user == CI).expect("the CI job");
    assert_eq!(ci.by, users::SERVER);
    assert_eq!(ci.uid.as_deref(), Some("uid-deployer"));
    assert_eq!(ci.extra, ci_extras());
    // Its groups are the ones the API server gives a service account (serve sent none: the
    // role names neither, so a request asking for them would have been refused).
    assert_eq!(
        ci.groups,
        ["system:serviceaccounts", "system:serviceaccounts:ci"]
    );
    let dana: Vec<_> = seen.iter().filter(|i| i.user == DANA).collect();
    assert!(!dana.is_empty());
    for i in dana {
        assert_eq!(i.groups, ["ichor:operators"], "never system:masters");
    }
    let viewer = api
        .requests_by()
        .into_iter()
        .filter(|r| r.user == users::VIEWER && r.resource == "talosoperations");
    assert!(
        viewer
            .into_iter()
            .all(|r| r.impersonated_by.as_deref() == Some(users::SERVER))
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn passing_tokens_through_the_role_grants_what_serve_reads_as_itself_and_nothing_more() {
    let api = world();
    api.deploy_passthrough();
    let opts = Options {
        passthrough: true,
        ..Options::default()
    };
    let server = start(&api, opts).await;
    drive(&api, &server.url(false)).await;
    every_grant_used_and_nothing_refused(&api);

    // The API received each caller's own token: nothing impersonated, no token reviewed.
    assert_eq!(api.impersonations(), []);
    let rows = api.requests_by();
    assert!(rows.iter().all(|r| r.impersonated_by.is_none()), "{rows:?}");
    assert!(
        !rows.iter().any(|r| r.resource == "tokenreviews"),
        "{rows:?}"
    );
    for (who, what) in [
        (users::VIEWER, "talosoperations"),
        (DANA, "talosclusters"),
        (CI, "talosoperations"),
    ] {
        assert!(
            rows.iter().any(|r| r.user == who && r.resource == what),
            "{who} read {what} with their own token: {rows:?}"
        );
    }
    server.stop().await.unwrap();

    // And serve's identity may impersonate no one (a fresh API: the refusal is the test's).
    let api = EmbeddedApi::default();
    api.deploy_passthrough();
    let own = api.client(users::SERVER_TOKEN);
    let asked = http::Request::get("/apis/ichor.maesh.dev/v1alpha1/talosoperations")
        .header("impersonate-user", users::VIEWER)
        .body(Vec::new())
        .unwrap();
    let refused = own.request_text(asked).await.unwrap_err();
    match refused {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 403, "{s:?}");
            assert!(s.message.contains("cannot impersonate"), "{}", s.message);
        }
        other => panic!("{other:?}"),
    }
    let denied = api.deployed_role_usage().denied;
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert!(denied[0].contains("impersonate users"), "{denied:?}");
}

/// `curl` a Connect call `ListOperations` of every namespace at `url` with `token`: the HTTP
/// status and the body.
fn list_over_connect(url: &str, token: &str) -> (u16, String) {
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "10", "-w", "\n%{http_code}"])
        .args(["-H", "Content-Type: application/json"])
        .arg("-H")
        .arg(format!("Authorization: Bearer {token}"))
        .args(["-d", r#"{"allNamespaces": true}"#])
        .arg(format!(
            "{url}/ichor.v1alpha1.OperationService/ListOperations"
        ))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (code.parse().unwrap(), body.to_string())
}

#[test]
fn the_binary_passes_tokens_through_when_asked() {
    if !super::present("curl", &["--version"]) {
        return;
    }
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ichor-tui"));
    cmd.args([
        "serve",
        "--demo",
        "--auth",
        "passthrough",
        "--listen",
        "127.0.0.1:0",
        "--log-format",
        "json",
    ])
    .stderr(std::process::Stdio::null());
    let (_serving, said) = super::Proc::start_saying(cmd, &["serving on "]);
    let url = format!("http://{}", said[0].trim_start_matches("serving on "));
    let (code, body) = list_over_connect(&url, users::VIEWER_TOKEN);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"operations\""), "{body}");
    let (code, body) = list_over_connect(&url, "not-a-token");
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("SelfSubjectReview"), "{body}");
    assert!(!body.contains("not-a-token"), "{body}");
}
