//! The demo cluster set: three clusters in `default` with running, paused-by-failure and
//! finished operations, so every screen has something real to show.

mod events;
mod extras;
pub mod ichor_ui;
mod slow;

pub use self::extras::{HOSTILE_ENV, OPERATIONS_ENV, USERS_ENV, bench_token};
pub use self::slow::{SLOW_ENV, SlowMachine};

use self::extras::{DemoExtras, seed_extras};
use crate::apiserver::EmbeddedApi;
use crate::apiserver::auth::users;
use crate::controller::Controller;
use ichor_resources::{
    CaRotationStatus, CniSpec, IchorInstallation, IchorInstallationSpec, Machine, MachineProgress,
    MachineStatus, TalosCluster, TalosClusterSpec, TalosOperation, TalosOperationSpec,
    TalosOperationStatus, format_time, machine, names,
};
use jiff::{SignedDuration, Timestamp};
use std::collections::BTreeMap;

/// The namespace of the demo data.
pub const NAMESPACE: &str = "default";

fn cluster(name: &str, talos: &str, k8s: &str, kube_proxy: &str) -> TalosCluster {
    let mut c = TalosCluster::new(
        name,
        TalosClusterSpec {
            talos_version: talos.into(),
            kubernetes_version: k8s.into(),
            cni: CniSpec {
                kube_proxy: kube_proxy.into(),
            },
        },
    );
    c.metadata.namespace = Some(NAMESPACE.into());
    c
}

fn machines(cluster: &str, cps: usize, workers: usize) -> Vec<Machine> {
    let mut out = Vec::new();
    for i in 1..=cps {
        out.push(machine(
            cluster,
            &format!("{cluster}-cp{i}"),
            "controlplane",
            Some(i as i64),
            true,
            None,
        ));
    }
    for i in 1..=workers {
        out.push(machine(
            cluster,
            &format!("{cluster}-w{i:02}"),
            "worker",
            Some(10 + i as i64),
            true,
            None,
        ));
    }
    for m in &mut out {
        m.metadata.namespace = Some(NAMESPACE.into());
    }
    out
}

/// The machines report they run `talos` and `k8s`: the first `ahead` of them (in their
/// order) already `talos_ahead`, as an upgrade under way or stopped leaves them.
fn running(ms: &mut [Machine], (talos, k8s): (&str, &str), (ahead, talos_ahead): (usize, &str)) {
    for (i, m) in ms.iter_mut().enumerate() {
        m.status = Some(MachineStatus {
            talos_version: Some(if i < ahead { talos_ahead } else { talos }.to_string()),
            kubernetes_version: Some(k8s.to_string()),
        });
    }
}

fn at(now: Timestamp, minutes_ago: i64) -> String {
    format_time(now - SignedDuration::from_secs(minutes_ago * 60))
}

fn operation(name: &str, cluster: &str, kind: &str, actor: &str, created: &str) -> TalosOperation {
    let mut op = TalosOperation::new(
        name,
        TalosOperationSpec {
            cluster: cluster.into(),
            kind: kind.into(),
            max_unavailable: 1,
            paused: false,
        },
    );
    op.metadata.namespace = Some(NAMESPACE.into());
    op.metadata.annotations = Some(BTreeMap::from([(
        names::ACTOR.to_string(),
        actor.to_string(),
    )]));
    op.metadata.creation_timestamp = created
        .parse()
        .ok()
        .map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time);
    op
}

fn progress(
    name: &str,
    phase: &str,
    message: &str,
    started: Option<String>,
    finished: Option<String>,
) -> MachineProgress {
    MachineProgress {
        name: name.into(),
        phase: phase.into(),
        message: message.into(),
        started_at: started,
        finished_at: finished,
    }
}

/// `op` with the value before and the target, as a start through the service records them.
fn headed(mut op: TalosOperation, current: &str, target: &str) -> TalosOperation {
    let annotations = op.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(names::CURRENT.to_string(), current.to_string());
    annotations.insert(names::TARGET.to_string(), target.to_string());
    op
}

/// A finished operation; `id` is [name, cluster, kind, actor].
fn completed(
    now: Timestamp,
    id: [&str; 4],
    names: &[String],
    days_ago: i64,
    message: &str,
) -> TalosOperation {
    let [name, cluster, kind, actor] = id;
    let start = days_ago * 24 * 60;
    let mut op = operation(name, cluster, kind, actor, &at(now, start + 1));
    op.status = Some(TalosOperationStatus {
        phase: "Completed".into(),
        machines: names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let i = i as i64;
                progress(
                    n,
                    "Completed",
                    message,
                    Some(at(now, start - 3 * i)),
                    Some(at(now, start - 3 * i - 3)),
                )
            })
            .collect(),
        started_at: Some(at(now, start)),
        finished_at: Some(at(now, start - 3 * names.len() as i64 - 3)),
        ca_rotation: (kind == "ca-rotation").then(|| CaRotationStatus {
            stage: "Dropping".into(),
            pass: 5,
            passes: 5,
        }),
        ..Default::default()
    });
    op
}

fn names_of(ms: &[Machine]) -> Vec<String> {
    ms.iter().filter_map(|m| m.metadata.name.clone()).collect()
}

/// Stores the demo data in `api`, with times relative to `now`: the clusters, operations and
/// the Events of the operations in flight in [`NAMESPACE`], and ichor-ui in
/// [`ichor_ui::NAMESPACE`] (no forward target).
pub fn seed(api: &EmbeddedApi, now: Timestamp) -> anyhow::Result<()> {
    seed_with(api, now, None)
}

/// [`seed`], with `slow`'s machine made slow.
pub fn seed_with(
    api: &EmbeddedApi,
    now: Timestamp,
    slow: Option<&SlowMachine>,
) -> anyhow::Result<()> {
    seed_installation(api)?;
    let prod_machines = seed_prod_eu(api, now, slow)?;
    let staging_machines = seed_staging(api, now, slow)?;
    seed_edge_tokyo(api, now, slow)?;
    seed_history(api, now, &prod_machines, &staging_machines)?;
    events::seed_events(api, now)?;
    ichor_ui::seed(api)
}

fn seed_installation(api: &EmbeddedApi) -> anyhow::Result<()> {
    let mut install = IchorInstallation::new(
        names::ICHOR_INSTALLATION_NAME,
        IchorInstallationSpec {
            version: "v0.14.2".into(),
        },
    );
    install.metadata.namespace = Some(NAMESPACE.into());
    api.seed(&install)
}

/// `name`'s annotations become just `key: value` (when the machine is there).
fn annotate(machines: &mut [Machine], name: &str, key: &str, value: &str) {
    if let Some(m) = machines
        .iter_mut()
        .find(|m| m.metadata.name.as_deref() == Some(name))
    {
        m.metadata.annotations = Some(BTreeMap::from([(key.to_string(), value.to_string())]));
    }
}

/// prod-eu: tracked by Argo CD, one worker held. Returns its machines.
fn seed_prod_eu(
    api: &EmbeddedApi,
    now: Timestamp,
    slow: Option<&SlowMachine>,
) -> anyhow::Result<Vec<Machine>> {
    let mut prod = cluster("prod-eu", "v1.9.2", "v1.32.3", "enabled");
    prod.metadata.annotations = Some(BTreeMap::from([(
        names::ARGOCD_TRACKING_ID.to_string(),
        "platform-prod-eu:ichor.maesh.dev/TalosCluster:default/prod-eu".to_string(),
    )]));
    // Its CA rotation 30 days ago left the secrets bundle's backup stale.
    prod.status = Some(ichor_resources::TalosClusterStatus {
        conditions: vec![ichor_resources::Condition {
            type_: names::BUNDLE_BACKUP_STALE.into(),
            status: "True".into(),
            reason: "CARotated".into(),
            message:
                "the backup of the secrets bundle of prod-eu predates its new CA; export it again"
                    .into(),
            last_transition_time: Some(at(now, 30 * 24 * 60 - 50)),
        }],
        lock_holder: None,
    });
    api.seed(&prod)?;
    let mut prod_machines = machines("prod-eu", 3, 12);
    running(&mut prod_machines, ("v1.9.2", "v1.32.3"), (0, ""));
    annotate(
        &mut prod_machines,
        "prod-eu-w07",
        names::UPGRADE_HOLD,
        "RAID controller replacement scheduled (INC-4821)",
    );
    SlowMachine::mark(slow, &mut prod_machines);
    for m in &prod_machines {
        api.seed(m)?;
    }
    Ok(prod_machines)
}

/// staging: a Talos upgrade under way (the spec already names the target). Returns its
/// machines.
fn seed_staging(
    api: &EmbeddedApi,
    now: Timestamp,
    slow: Option<&SlowMachine>,
) -> anyhow::Result<Vec<Machine>> {
    let staging = cluster("staging", "v1.9.3", "v1.32.3", "enabled");
    api.seed(&staging)?;
    let mut staging_machines = machines("staging", 1, 3);
    // The control plane is done; the first worker is being upgraded.
    running(&mut staging_machines, ("v1.9.2", "v1.32.3"), (1, "v1.9.3"));
    SlowMachine::mark(slow, &mut staging_machines);
    for m in &staging_machines {
        api.seed(m)?;
    }
    let mut running = headed(
        operation(
            "staging-talos-x7k2p",
            "staging",
            "talos",
            "alice@example.com",
            &at(now, 3),
        ),
        "v1.9.2",
        "v1.9.3",
    );
    running.status = Some(TalosOperationStatus {
        phase: "Running".into(),
        machines: vec![
            progress(
                "staging-cp1",
                "Completed",
                "running Talos v1.9.3",
                Some(at(now, 2)),
                Some(at(now, 1)),
            ),
            progress(
                "staging-w01",
                "Running",
                "installing Talos v1.9.3 and rebooting",
                Some(format_time(now)),
                None,
            ),
            progress("staging-w02", "Pending", "", None, None),
            progress("staging-w03", "Pending", "", None, None),
        ],
        started_at: Some(at(now, 2)),
        ..Default::default()
    });
    api.seed(&running)?;
    Ok(staging_machines)
}

/// edge-tokyo: a Talos upgrade paused by a failed worker.
fn seed_edge_tokyo(
    api: &EmbeddedApi,
    now: Timestamp,
    slow: Option<&SlowMachine>,
) -> anyhow::Result<()> {
    let tokyo = cluster("edge-tokyo", "v1.9.3", "v1.32.2", "replaced");
    api.seed(&tokyo)?;
    let mut tokyo_machines = machines("edge-tokyo", 3, 5);
    // Five done before the sixth failed.
    running(&mut tokyo_machines, ("v1.9.2", "v1.32.2"), (5, "v1.9.3"));
    annotate(
        &mut tokyo_machines,
        "edge-tokyo-w03",
        names::DEMO_FAIL,
        "talos",
    );
    SlowMachine::mark(slow, &mut tokyo_machines);
    for m in &tokyo_machines {
        api.seed(m)?;
    }
    let mut failed = headed(
        operation(
            "edge-tokyo-talos-m4q9z",
            "edge-tokyo",
            "talos",
            "kenji@example.com",
            &at(now, 42),
        ),
        "v1.9.2",
        "v1.9.3",
    );
    failed.status = Some(TalosOperationStatus {
        phase: "Paused".into(),
        failure_reason: Some(
            "machine edge-tokyo-w03 failed: installer exited with code 1: image verification failed".into(),
        ),
        machines: failed_upgrade_progress(&names_of(&tokyo_machines), now),
        started_at: Some(at(now, 40)),
        ..Default::default()
    });
    api.seed(&failed)
}

/// The edge-tokyo upgrade's machines: five done, the sixth failed, the rest Pending.
fn failed_upgrade_progress(machine_names: &[String], now: Timestamp) -> Vec<MachineProgress> {
    let mut ms = Vec::new();
    for (i, n) in machine_names.iter().enumerate() {
        let i = i as i64;
        let (phase, msg, s, f) = match i {
            0..=4 => (
                "Completed",
                "running Talos v1.9.3",
                Some(at(now, 40 - 6 * i)),
                Some(at(now, 36 - 6 * i)),
            ),
            5 => (
                "Failed",
                "installer exited with code 1: image verification failed",
                Some(at(now, 10)),
                Some(at(now, 6)),
            ),
            _ => ("Pending", "", None, None),
        };
        ms.push(progress(n, phase, msg, s, f));
    }
    ms
}

/// The finished operations of the three clusters.
fn seed_history(
    api: &EmbeddedApi,
    now: Timestamp,
    prod_machines: &[Machine],
    staging_machines: &[Machine],
) -> anyhow::Result<()> {
    let prod_names: Vec<String> = {
        let mut v = prod_machines.to_vec();
        ichor_resources::sort_by_order(&mut v);
        names_of(&v)
    };
    let staging_names = names_of(staging_machines);
    let history = history(now, &prod_names, &staging_names);
    for op in &history {
        api.seed(op)?;
    }
    Ok(())
}

/// The finished operations, each with what its start recorded.
fn history(now: Timestamp, prod_names: &[String], staging_names: &[String]) -> [TalosOperation; 5] {
    [
        headed(
            completed(
                now,
                [
                    "prod-eu-kubernetes-9fj3c",
                    "prod-eu",
                    "kubernetes",
                    "alice@example.com",
                ],
                prod_names,
                12,
                "running Kubernetes v1.32.3",
            ),
            "v1.32.2",
            "v1.32.3",
        ),
        completed(
            now,
            [
                "prod-eu-ca-rotation-2hd8w",
                "prod-eu",
                "ca-rotation",
                "security-bot",
            ],
            prod_names,
            30,
            "pass 5: configuration applied",
        ),
        headed(
            completed(
                now,
                ["staging-cni-p2m8v", "staging", "cni", "bob@example.com"],
                staging_names,
                5,
                "kube-proxy enabled",
            ),
            "replaced",
            "enabled",
        ),
        completed(
            now,
            [
                "staging-shutdown-k3r7d",
                "staging",
                "shutdown",
                "bob@example.com",
            ],
            staging_names,
            20,
            "stopped",
        ),
        headed(
            completed(
                now,
                [
                    "edge-tokyo-ichor-b5n2s",
                    "edge-tokyo",
                    "ichor",
                    "kenji@example.com",
                ],
                &[],
                2,
                "",
            ),
            "v0.14.1",
            "v0.14.2",
        ),
    ]
}

/// A demo cluster: the API seeded with the demo data and the simulated controller running.
pub struct DemoCluster {
    pub api: EmbeddedApi,
    controller: tokio::task::JoinHandle<()>,
}

impl DemoCluster {
    /// Seeds the data (with the extras that [`HOSTILE_ENV`] and [`OPERATIONS_ENV`] ask for, and
    /// the slow machine [`SLOW_ENV`] names) and starts the controller at `speed` (1: a machine step takes 4 s).
    pub fn start(speed: f64) -> anyhow::Result<DemoCluster> {
        let extras = DemoExtras::from_env(|k| std::env::var(k).ok())?;
        let slow = SlowMachine::from_env(|k| std::env::var(k).ok())?;
        let api = EmbeddedApi::default();
        let now = Timestamp::now();
        seed_with(&api, now, slow.as_ref())?;
        seed_extras(&api, now, extras)?;
        let controller = Controller::new(api.client(users::CONTROLLER_TOKEN), speed);
        let controller = tokio::spawn(controller.run());
        Ok(DemoCluster { api, controller })
    }
}

impl DemoCluster {
    /// Port-forwards to ichor-ui's pod (`ichor-system`, port `api`, 8080) reach `target`, e.g.
    /// the product's own OperationService on loopback; kept across [`ichor_ui::restart`].
    /// Returns the pod's name (a new pod if it had been removed).
    pub fn forward_ichor_ui(&self, target: std::net::SocketAddr) -> anyhow::Result<String> {
        ichor_ui::start(&self.api, Some(target))
    }
}

impl Drop for DemoCluster {
    fn drop(&mut self) {
        self.controller.abort();
    }
}
