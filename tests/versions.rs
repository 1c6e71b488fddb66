//! Version targets over every path: semantic-version order (pre-releases by their fields), and
//! the jumps the executors support (one minor version at a time for Talos and Kubernetes, no
//! major change for any), refused in the plan and by a start, writing nothing.

use crate::common;

use common::paths::{Path, User, connect};
use common::small_cluster;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_model::OperationKind;
use ichor_model::{Code, OperationRequest, Reason};
use ichor_resources::{CniSpec, TalosCluster, TalosClusterSpec};

fn req(kind: OperationKind, target: &str) -> OperationRequest {
    OperationRequest {
        target: Some(target.into()),
        ..OperationRequest::new("default", Some("c1"), kind)
    }
}

/// `c1` runs Talos v1.9.2, Kubernetes v1.32.3 and ichor v0.14.2.
async fn jumps_beyond_what_the_executors_support_are_refused(path: Path) {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    let c = connect(path, &api, User::Admin).await;
    for (kind, target, allowed) in [
        (OperationKind::Talos, "v1.33.1", "v1.9.x, v1.10.x"),
        (OperationKind::Talos, "2.0.0", "v1.9.x, v1.10.x"),
        (OperationKind::Kubernetes, "v1.34.0", "v1.32.x, v1.33.x"),
        (OperationKind::Ichor, "v1.0.0", "v0.x"),
    ] {
        let plan = c.plan_operation(&req(kind, target)).await.unwrap();
        let b = plan.blocked.expect("blocked");
        assert_eq!(b.reason, Reason::UnsupportedJump, "{kind:?} {target}");
        assert_eq!(b.params["allowed"], allowed, "{kind:?} {target}");
        assert_eq!(b.params["current"], plan.current);
        let e = c.create_operation(&req(kind, target)).await.unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::FailedPrecondition, Some(Reason::UnsupportedJump)),
            "{kind:?} {target}"
        );
    }
    assert!(api.write_log().is_empty(), "nothing written");
    for (kind, target) in [
        (OperationKind::Talos, "v1.10.0-beta.10"),
        (OperationKind::Talos, "1.10.3"),
        (OperationKind::Kubernetes, "v1.33.0"),
        (OperationKind::Ichor, "v0.20.0"),
    ] {
        let plan = c.plan_operation(&req(kind, target)).await.unwrap();
        assert_eq!(plan.blocked, None, "{kind:?} {target}");
    }
}

/// A cluster on a pre-release: its fields order as numbers, so beta.10 comes after beta.2.
async fn pre_releases_order_by_their_fields(path: Path) {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    let mut c1 = TalosCluster::new(
        "c1",
        TalosClusterSpec {
            talos_version: "v1.10.0-beta.2".into(),
            kubernetes_version: "v1.32.3".into(),
            cni: CniSpec {
                kube_proxy: "enabled".into(),
            },
        },
    );
    c1.metadata.namespace = Some("default".into());
    api.seed(&c1).unwrap();
    let c = connect(path, &api, User::Admin).await;
    let plan = c
        .plan_operation(&req(OperationKind::Talos, "v1.10.0-beta.1"))
        .await
        .unwrap();
    assert_eq!(plan.blocked.map(|b| b.reason), Some(Reason::Downgrade));
    let created = c
        .create_operation(&req(OperationKind::Talos, "1.10.0-beta.10"))
        .await
        .unwrap();
    assert_eq!(created.operation.target.as_deref(), Some("v1.10.0-beta.10"));
    assert_eq!(
        created.spec_written.map(|s| (s.from, s.to)),
        Some(("v1.10.0-beta.2".into(), "v1.10.0-beta.10".into()))
    );
}

crate::matrix!(
    paths: [InProcess => in_process, Grpc => grpc, Connect => connect];
    [
        jumps_beyond_what_the_executors_support_are_refused,
        pre_releases_order_by_their_fields,
    ]
);
