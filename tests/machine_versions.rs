//! What the machines report they run (issue 25, item 3), on every path: a Machine's status
//! versions reach the Clusters screen beside the spec's, made inert; the demo's edge-tokyo,
//! whose upgrade stopped at its sixth machine, has three machines on the version before; the
//! simulated controller reports the target on each machine as its step completes.

use crate::common;

use common::paths::{Path, User, connect};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::{Component, RunningApart};
use ichor_resources::{Machine, MachineStatus, machine};
use kube::api::{Api, PostParams};

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    ichor_demo::demo::seed(&api, common::fixtures::now()).unwrap();
    let mut odd = machine("edge-tokyo", "edge-tokyo-w99", "worker", None, true, None);
    odd.metadata.namespace = Some("default".into());
    odd.status = Some(MachineStatus {
        talos_version: Some("v1.9.1\u{1b}[31m".into()),
        kubernetes_version: None,
    });
    api.seed(&odd).unwrap();
    api
}

async fn the_machines_versions_reach_every_path(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Viewer).await;
    let clusters = c.list_clusters(Some("default")).await.unwrap();
    let tokyo = clusters.iter().find(|c| c.name == "edge-tokyo").unwrap();
    assert_eq!(
        tokyo.running_apart(Component::Talos),
        Some(RunningApart {
            apart: 4,
            reporting: 9,
            versions: vec!["v1.9.1\u{fffd}[31m".into(), "v1.9.2".into()],
        }),
        "{path:?}: made inert, the failed one and those after it on the version before"
    );
    assert_eq!(
        tokyo.running(Component::Talos, "v1.9.3").len(),
        5,
        "{path:?}"
    );
    assert_eq!(tokyo.running_apart(Component::Kubernetes), None, "{path:?}");
    let prod = c.get_cluster("default", "prod-eu").await.unwrap();
    assert_eq!(prod.running_apart(Component::Talos), None, "{path:?}");
    assert!(
        prod.machines
            .iter()
            .all(|m| m.talos_version.as_deref() == Some("v1.9.2")),
        "{path:?}"
    );
}

crate::matrix!(
    the_machines_versions_reach_every_path,
    the_plan_says_which_machines_already_run_the_target,
);

/// A Talos upgrade run by the simulated controller: each machine reports the target as its
/// step completes; the held and the unapproved ones keep the version before.
#[tokio::test]
async fn the_controller_reports_the_target_as_each_machine_completes() {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    let machines: Api<Machine> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    for mut m in machines.list(&Default::default()).await.unwrap().items {
        m.status = Some(MachineStatus {
            talos_version: Some("v1.9.2".into()),
            kubernetes_version: Some("v1.32.3".into()),
        });
        let name = m.metadata.name.clone().unwrap();
        machines
            .replace_status(&name, &PostParams::default(), &m)
            .await
            .unwrap();
    }
    let c = connect(Path::InProcess, &api, User::Admin).await;
    let mut req = ichor_model::OperationRequest::new(
        "default",
        Some("c1"),
        ichor_model::OperationKind::Talos,
    );
    req.target = Some("v1.9.3".into());
    req.request_id = Some("r-versions".into());
    c.create_operation(&req).await.unwrap();
    let ctrl = ichor_demo::controller::Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    let mut now = jiff::Timestamp::now();
    let mut seen_part_way = false;
    for _ in 0..200 {
        now += jiff::SignedDuration::from_secs(5);
        ctrl.reconcile(now).await.unwrap();
        let cluster = c.get_cluster("default", "c1").await.unwrap();
        let apart = cluster
            .running_apart(Component::Talos)
            .map_or(0, |a| a.apart);
        seen_part_way |= apart > 2 && apart < cluster.machines.len();
        if apart == 2 {
            break;
        }
    }
    assert!(
        seen_part_way,
        "some machines reported the target before the others"
    );
    // The held and the unapproved machines are not upgraded: they still run the version before.
    let cluster = c.get_cluster("default", "c1").await.unwrap();
    assert_eq!(cluster.running(Component::Talos, "v1.9.3").len(), 5);
    assert_eq!(
        cluster.running(Component::Talos, "v1.9.2"),
        ["c1-w-unapproved", "c1-w-held"]
    );
}

/// After "delete and start again", the plan says which machines already report the target:
/// edge-tokyo's first five (its upgrade stopped at the sixth); the Review says so and what the
/// executor does to them.
async fn the_plan_says_which_machines_already_run_the_target(path: Path) {
    let api = world();
    let ops: Api<ichor_resources::TalosOperation> =
        Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.delete("edge-tokyo-talos-m4q9z", &Default::default())
        .await
        .unwrap();
    let c = connect(path, &api, User::Admin).await;
    let mut req = ichor_model::OperationRequest::new(
        "default",
        Some("edge-tokyo"),
        ichor_model::OperationKind::Talos,
    );
    req.target = Some("v1.9.3".into());
    let plan = c.plan_operation(&req).await.unwrap();
    let at: Vec<&str> = plan
        .steps
        .iter()
        .flatten()
        .filter(|m| m.runs_target)
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(
        at,
        [
            "edge-tokyo-cp1",
            "edge-tokyo-cp2",
            "edge-tokyo-cp3",
            "edge-tokyo-w01",
            "edge-tokyo-w02"
        ],
        "{path:?}"
    );
    assert_eq!(
        plan.steps.iter().flatten().count(),
        9,
        "{path:?}: none skipped"
    );
}
