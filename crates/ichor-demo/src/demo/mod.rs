//! The demo cluster set: three clusters in `default` with running, paused-by-failure and
//! finished operations, so every screen has something real to show.

use crate::apiserver::EmbeddedApi;
use crate::apiserver::auth::users;
use crate::controller::{Controller, format_time};
use anyhow::Context as _;
use ichor_resources::{
    CaRotationStatus, CniSpec, IchorInstallation, IchorInstallationSpec, Machine, MachineProgress,
    TalosCluster, TalosClusterSpec, TalosOperation, TalosOperationSpec, TalosOperationStatus,
    machine, names,
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

/// Stores the demo data in `api`, with times relative to `now`.
pub fn seed(api: &EmbeddedApi, now: Timestamp) -> anyhow::Result<()> {
    let mut install = IchorInstallation::new(
        names::ICHOR_INSTALLATION_NAME,
        IchorInstallationSpec {
            version: "v0.14.2".into(),
        },
    );
    install.metadata.namespace = Some(NAMESPACE.into());
    api.seed(&install)?;

    // prod-eu: tracked by Argo CD, one worker held.
    let mut prod = cluster("prod-eu", "v1.9.2", "v1.32.3", "enabled");
    prod.metadata.annotations = Some(BTreeMap::from([(
        names::ARGOCD_TRACKING_ID.to_string(),
        "platform-prod-eu:ichor.maesh.dev/TalosCluster:default/prod-eu".to_string(),
    )]));
    api.seed(&prod)?;
    let mut prod_machines = machines("prod-eu", 3, 12);
    if let Some(w7) = prod_machines
        .iter_mut()
        .find(|m| m.metadata.name.as_deref() == Some("prod-eu-w07"))
    {
        w7.metadata.annotations = Some(BTreeMap::from([(
            names::UPGRADE_HOLD.to_string(),
            "RAID controller replacement scheduled (INC-4821)".to_string(),
        )]));
    }
    for m in &prod_machines {
        api.seed(m)?;
    }

    // staging: a Talos upgrade under way (the spec already names the target).
    let staging = cluster("staging", "v1.9.3", "v1.32.3", "enabled");
    api.seed(&staging)?;
    let staging_machines = machines("staging", 1, 3);
    for m in &staging_machines {
        api.seed(m)?;
    }
    let mut running = operation(
        "staging-talos-x7k2p",
        "staging",
        "talos",
        "alice@example.com",
        &at(now, 3),
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

    // edge-tokyo: a Talos upgrade paused by a failed worker.
    let tokyo = cluster("edge-tokyo", "v1.9.3", "v1.32.2", "replaced");
    api.seed(&tokyo)?;
    let mut tokyo_machines = machines("edge-tokyo", 3, 5);
    if let Some(w3) = tokyo_machines
        .iter_mut()
        .find(|m| m.metadata.name.as_deref() == Some("edge-tokyo-w03"))
    {
        w3.metadata.annotations = Some(BTreeMap::from([(
            names::DEMO_FAIL.to_string(),
            "talos".to_string(),
        )]));
    }
    for m in &tokyo_machines {
        api.seed(m)?;
    }
    let mut failed = operation(
        "edge-tokyo-talos-m4q9z",
        "edge-tokyo",
        "talos",
        "kenji@example.com",
        &at(now, 42),
    );
    let mut ms = Vec::new();
    for (i, n) in names_of(&tokyo_machines).iter().enumerate() {
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
    failed.status = Some(TalosOperationStatus {
        phase: "Paused".into(),
        failure_reason: Some(
            "machine edge-tokyo-w03 failed: installer exited with code 1: image verification failed".into(),
        ),
        machines: ms,
        started_at: Some(at(now, 40)),
        ..Default::default()
    });
    api.seed(&failed)?;

    // History.
    let prod_names: Vec<String> = {
        let mut v = prod_machines.clone();
        ichor_resources::sort_by_order(&mut v);
        names_of(&v)
    };
    let history = [
        completed(
            now,
            [
                "prod-eu-kubernetes-9fj3c",
                "prod-eu",
                "kubernetes",
                "alice@example.com",
            ],
            &prod_names,
            12,
            "running Kubernetes v1.32.3",
        ),
        completed(
            now,
            [
                "prod-eu-ca-rotation-2hd8w",
                "prod-eu",
                "ca-rotation",
                "security-bot",
            ],
            &prod_names,
            30,
            "pass 5: configuration applied",
        ),
        completed(
            now,
            ["staging-cni-p2m8v", "staging", "cni", "bob@example.com"],
            &names_of(&staging_machines),
            5,
            "kube-proxy enabled",
        ),
        completed(
            now,
            [
                "staging-shutdown-k3r7d",
                "staging",
                "shutdown",
                "bob@example.com",
            ],
            &names_of(&staging_machines),
            20,
            "stopped",
        ),
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
    ];
    for op in &history {
        api.seed(op)?;
    }
    Ok(())
}

/// The environment variable that seeds hostile cluster text (test-only, see [`DemoExtras`]).
pub const HOSTILE_ENV: &str = "ICHOR_DEMO_HOSTILE";
/// The environment variable that adds history operations (test and benchmark only, see
/// [`DemoExtras`]).
pub const OPERATIONS_ENV: &str = "ICHOR_DEMO_OPERATIONS";

/// Every kind of terminal control a hostile cluster might put in its text: a CSI that clears
/// the screen, an OSC that sets the window title, an OSC 52 that writes the clipboard, a DCS,
/// BEL, backspace, carriage return, line feed and the bidi overrides U+202E and U+2066.
pub const HOSTILE_TEXT: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}P+q544e\u{1b}\\\u{7}\u{8}\r\n\u{202E}\u{2066}";

/// Extra demo data for the end-to-end tests and the benchmarks, read from the environment by
/// [`DemoCluster::start`]. Not a user feature: undocumented in `--help` on purpose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DemoExtras {
    /// `ICHOR_DEMO_HOSTILE=1` (test-only): a cluster `hostile` whose machines, operations,
    /// failure reason, messages, actor, hold reason and tracking carry [`HOSTILE_TEXT`], seeded
    /// past the API's validation so even object names carry it.
    pub hostile: bool,
    /// `ICHOR_DEMO_OPERATIONS=N` (tests and benchmarks only): N more Completed operations in
    /// the history of `staging`.
    pub history: usize,
}

impl DemoExtras {
    /// Reads the knobs from `env` (a variable's value, if set).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> anyhow::Result<DemoExtras> {
        let hostile = env(HOSTILE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        let history = match env(OPERATIONS_ENV).filter(|v| !v.is_empty()) {
            Some(v) => v.trim().parse().map_err(|e| {
                anyhow::anyhow!("{OPERATIONS_ENV} must be a number of operations, not {v:?}: {e}")
            })?,
            None => 0,
        };
        Ok(DemoExtras { hostile, history })
    }
}

/// Stores the extra data `extras` asks for in `api` (after [`seed`]).
pub fn seed_extras(api: &EmbeddedApi, now: Timestamp, extras: DemoExtras) -> anyhow::Result<()> {
    if extras.hostile {
        seed_hostile(api, now)?;
    }
    if extras.history > 0 {
        let staging: Vec<String> = ["staging-cp1", "staging-w01", "staging-w02", "staging-w03"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for i in 0..extras.history {
            let name = format!("staging-talos-h{i:06}");
            let days = 40 + i64::try_from(i).unwrap_or(i64::MAX / 4096) % 3650;
            let op = completed(
                now,
                [&name, "staging", "talos", "history-bot"],
                &staging,
                days,
                "running Talos v1.9.3",
            );
            api.seed(&op)
                .with_context(|| format!("seeding history operation {name}"))?;
        }
    }
    Ok(())
}

/// A cluster `hostile` whose every piece of text tries to reach the terminal.
fn seed_hostile(api: &EmbeddedApi, now: Timestamp) -> anyhow::Result<()> {
    let evil = HOSTILE_TEXT;
    let mut c = cluster("hostile", "v1.9.3", "v1.32.3", "enabled");
    c.metadata.annotations = Some(BTreeMap::from([(
        names::ARGOCD_TRACKING_ID.to_string(),
        format!("app{evil}x"),
    )]));
    api.seed(&c).context("seeding the hostile cluster")?;
    let mut ms = machines("hostile", 1, 2);
    ms.push(machine(
        "hostile",
        &format!("hostile-w{evil}9"),
        "worker",
        Some(30),
        true,
        Some(&format!("hold{evil}reason")),
    ));
    if let Some(m) = ms.first_mut() {
        m.metadata.annotations = Some(BTreeMap::from([(
            names::UPGRADE_HOLD.to_string(),
            format!("held{evil}here"),
        )]));
    }
    for m in &mut ms {
        m.metadata.namespace = Some(NAMESPACE.into());
        api.seed(m).context("seeding a hostile machine")?;
    }
    // Paused by a failed machine: the failure banner and every machine row carry the text.
    let mut paused = operation(
        "hostile-talos-e5c1x",
        "hostile",
        "talos",
        &format!("mallory{evil}@example.com"),
        &at(now, 1),
    );
    paused.status = Some(TalosOperationStatus {
        phase: "Paused".into(),
        failure_reason: Some(format!("machine hostile-w01 failed: {evil} end")),
        machines: vec![
            progress(
                &format!("hostile{evil}cp1"),
                "Completed",
                &format!("done{evil}ok"),
                Some(at(now, 1)),
                Some(at(now, 1)),
            ),
            progress(
                "hostile-w01",
                "Failed",
                &format!("installer said {evil} and exited"),
                Some(at(now, 1)),
                Some(at(now, 1)),
            ),
            progress(
                &format!("hostile-w{evil}9"),
                &format!("Weird{evil}"),
                &format!("pending{evil}"),
                None,
                None,
            ),
        ],
        started_at: Some(at(now, 1)),
        ..Default::default()
    });
    api.seed(&paused)
        .context("seeding the hostile paused operation")?;
    // The cluster's oldest unfinished operation, in a phase nobody knows: the Clusters list
    // shows its phase.
    let mut odd = operation(
        "hostile-ichor-q0q0q",
        "hostile",
        "ichor",
        "mallory@example.com",
        &at(now, 600),
    );
    odd.status = Some(TalosOperationStatus {
        // Short, so the bidi characters fit in the column and are not cut off.
        phase: "\u{202E}Odd\u{2066}\u{1b}]0;pwned\u{7}".into(),
        started_at: Some(at(now, 600)),
        ..Default::default()
    });
    api.seed(&odd)
        .context("seeding the hostile odd-phase operation")?;
    // Finished, with the text in its name, cluster and kind: only listed.
    let mut named = operation(
        &format!("x{evil}y"),
        &format!("c{evil}d"),
        &format!("k{evil}l"),
        &format!("m{evil}n"),
        &at(now, 2),
    );
    named.status = Some(TalosOperationStatus {
        phase: "Completed".into(),
        started_at: Some(at(now, 2)),
        finished_at: Some(at(now, 2)),
        ..Default::default()
    });
    api.seed(&named)
        .context("seeding the hostile-named operation")?;
    Ok(())
}

/// A demo cluster: the API seeded with the demo data and the simulated controller running.
pub struct DemoCluster {
    pub api: EmbeddedApi,
    controller: tokio::task::JoinHandle<()>,
}

impl DemoCluster {
    /// Seeds the data (with the [`DemoExtras`] the environment asks for) and starts the
    /// controller at `speed` (1: a machine step takes 4 s).
    pub fn start(speed: f64) -> anyhow::Result<DemoCluster> {
        let extras = DemoExtras::from_env(|k| std::env::var(k).ok())?;
        let api = EmbeddedApi::default();
        let now = Timestamp::now();
        seed(&api, now)?;
        seed_extras(&api, now, extras)?;
        let controller = Controller::new(api.client(users::CONTROLLER_TOKEN), speed);
        let controller = tokio::spawn(controller.run());
        Ok(DemoCluster { api, controller })
    }
}

impl Drop for DemoCluster {
    fn drop(&mut self) {
        self.controller.abort();
    }
}
