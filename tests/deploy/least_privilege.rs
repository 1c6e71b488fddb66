//! The ClusterRole of `deploy/rbac.yaml` is what serve needs and no more. The embedded API
//! grants serve's identity that role and nothing else (read into k8s-openapi's types and matched
//! as kube-apiserver's RBAC authorizer matches rules: `ichor-demo`'s `apiserver/rbac.rs`), so in
//! every test of this suite a rule missing there fails a real call. Here serve is driven through
//! everything it does as itself (reviewing tokens; impersonating a person, their groups and a CI
//! job's service account; the shared watch of one namespace and of all; the GitOps tracking
//! check of a TalosCluster and of an IchorInstallation; its readiness), and every grant of the
//! role (each verb on each resource of each rule) must have been used, and nothing refused.

use crate::common;
use crate::common::server::{Options, client_over, start};
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::{Rule, Subject, users};
use ichor_model::{
    ListQuery, OperationClient, OperationKind, OperationRequest, View, WatchRequest,
};

/// A CI job's service account, allowed to read and start operations in `default`.
const CI: &str = "system:serviceaccount:ci:deployer";
const CI_TOKEN: &str = "ci-deployer-token";

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    api.add_token(
        CI_TOKEN,
        CI,
        &["system:serviceaccounts", "system:serviceaccounts:ci"],
    );
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

#[tokio::test]
async fn the_cluster_role_grants_what_serve_uses_and_nothing_more() {
    use futures::StreamExt as _;
    let api = world();
    let server = start(&api, Options::default()).await;
    let url = server.url(false);

    // A person: lists of one namespace and of all (the shared watches), a subscription, and
    // plans (the tracking check of a cluster and of an installation).
    let viewer = client_over(&url, Some(users::VIEWER_TOKEN), Protocol::Grpc);
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
    };
    let mut updates = viewer.watch_operations(&watch).await.unwrap();
    let first = tokio::time::timeout(std::time::Duration::from_secs(10), updates.next()).await;
    assert!(matches!(first, Ok(Some(Ok(_)))), "{first:?}");
    viewer
        .plan_operation(&start_req(OperationKind::Talos, "v1.9.3"))
        .await
        .unwrap();
    viewer
        .plan_operation(&start_req(OperationKind::Ichor, "v0.14.3"))
        .await
        .unwrap();

    // A CI job with its service account's token starts one: serve acts as that service account.
    let ci = client_over(&url, Some(CI_TOKEN), Protocol::Connect);
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

    let usage = api.deployed_role_usage();
    assert!(
        usage.denied.is_empty(),
        "refused to serve's identity: {:?}",
        usage.denied
    );
    let unused: Vec<String> = usage.unused().iter().map(|g| g.to_string()).collect();
    assert!(
        unused.is_empty(),
        "granted by deploy/rbac.yaml, never used by serve: {unused:?}"
    );
    // Every request serve made as itself is one a used grant allows.
    let own: Vec<_> = api
        .requests_by()
        .into_iter()
        .filter(|r| r.user == users::SERVER)
        .collect();
    assert!(!own.is_empty());
    for r in &own {
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
