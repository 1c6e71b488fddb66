//! Operations and states built from the model types (the tests' fixtures are not available
//! to benchmarks).
#![allow(dead_code)]

use ichor_app::action::Action;
use ichor_app::state::{Session, State};
use ichor_app::update::{start, update};
use ichor_model::{MachinePhase, MachineProgress, Operation, OperationKind, Phase};
use jiff::{SignedDuration, Timestamp};

const KINDS: [OperationKind; 6] = [
    OperationKind::Talos,
    OperationKind::Kubernetes,
    OperationKind::Ichor,
    OperationKind::Cni,
    OperationKind::Shutdown,
    OperationKind::CaRotation,
];

pub fn now() -> Timestamp {
    Timestamp::from_second(1_790_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// `n` operations as the service returns them: mostly finished history, a few under way, each
/// with the machines of a 15-machine cluster.
pub fn operations(n: usize) -> Vec<Operation> {
    (0..n)
        .map(|i| {
            let created = now() - SignedDuration::from_secs(600 + 3_600 * i as i64);
            let phase = match i % 50 {
                0 => Phase::Running,
                1 => Phase::Paused,
                _ => Phase::Completed,
            };
            let kind = KINDS[i % KINDS.len()];
            let machines = (0..15)
                .map(|m| MachineProgress {
                    name: format!("cluster-{}-m{m:02}", i % 7),
                    phase: if phase == Phase::Completed || m < 5 {
                        MachinePhase::Completed
                    } else if m == 5 {
                        MachinePhase::Running
                    } else {
                        MachinePhase::Pending
                    },
                    message: format!("running Talos v1.9.{}", i % 9),
                    started_at: Some(created),
                    finished_at: Some(created + SignedDuration::from_secs(240)),
                })
                .collect();
            Operation {
                namespace: "default".into(),
                name: format!("cluster-{}-{}-{i:06}", i % 7, kind.as_str()),
                uid: format!("uid-{i}"),
                generation: 1,
                request_id: None,
                cluster: format!("cluster-{}", i % 7),
                kind: Some(kind),
                kind_raw: kind.as_str().into(),
                max_unavailable: 1,
                paused: phase == Phase::Paused,
                phase,
                failure_reason: None,
                machines,
                ca_rotation: None,
                conditions: Vec::new(),
                created_at: Some(created),
                started_at: Some(created + SignedDuration::from_secs(5)),
                finished_at: None,
                actor: Some(format!("user{}@example.com", i % 13)),
                paused_by: None,
                paused_at: None,
                history: Vec::new(),
                current: None,
                target: None,
                unreadable: None,
                resource_version: String::new(),
                summary: None,
                deleting: None,
            }
        })
        .collect()
}

/// The Operations screen at `w`×`h` with `ops` loaded through `update`, as the app loads them.
pub fn listed(ops: Vec<Operation>, w: u16, h: u16) -> State {
    let session = Session {
        route: Default::default(),
        demo: true,
        namespace: "default".into(),
        all_namespaces: false,
        user: None,
        read_only: false,
        server_version: Default::default(),
        ..Default::default()
    };
    let mut state = State::new(session, now(), jiff::tz::TimeZone::UTC);
    state.size = (w, h);
    start(&mut state);
    let seq = state.seq;
    update(
        &mut state,
        Action::Operations {
            seq,
            result: Ok(ops),
        },
    );
    state
}

/// A 15-machine Talos rollout under way: 3 control planes and 12 workers, five done, the sixth
/// running.
pub fn rollout() -> Operation {
    // Newer than every operation of `operations(n)`, so it is the list's first row; its
    // machines take 40 s each, and the one under way started 20 s ago (within its pace).
    let created = now() - SignedDuration::from_secs(5 * 40 + 20);
    let mut op = operations(1).remove(0);
    op.name = "prod-eu-talos-r8s2k".into();
    op.cluster = "prod-eu".into();
    op.kind = Some(OperationKind::Talos);
    op.kind_raw = "talos".into();
    op.phase = Phase::Running;
    op.paused = false;
    op.created_at = Some(created);
    op.started_at = Some(created);
    op.current = Some("v1.9.2".into());
    op.target = Some("v1.9.3".into());
    op.machines = (0..15)
        .map(|m| {
            let name = if m < 3 {
                format!("prod-eu-cp{}", m + 1)
            } else {
                format!("prod-eu-w{:02}", m - 2)
            };
            let start = created + SignedDuration::from_secs(40 * m as i64);
            let (phase, message, finished) = match m {
                0..5 => (
                    MachinePhase::Completed,
                    "running Talos v1.9.3",
                    Some(start + SignedDuration::from_secs(40)),
                ),
                5 => (
                    MachinePhase::Running,
                    "installing Talos v1.9.3 and rebooting",
                    None,
                ),
                _ => (MachinePhase::Pending, "", None),
            };
            MachineProgress {
                name,
                phase,
                message: message.into(),
                started_at: (m <= 5).then_some(start),
                finished_at: finished,
            }
        })
        .collect();
    op
}

/// The cluster of [`rollout`], for the roles on its page.
pub fn rollout_cluster() -> ichor_model::Cluster {
    ichor_model::Cluster {
        namespace: "default".into(),
        name: "prod-eu".into(),
        talos_version: "v1.9.3".into(),
        kubernetes_version: "v1.32.3".into(),
        kube_proxy: "enabled".into(),
        ichor_version: Some("v0.14.2".into()),
        machines: rollout()
            .machines
            .iter()
            .enumerate()
            .map(|(i, m)| ichor_model::ClusterMachine {
                name: m.name.clone(),
                role: if i < 3 { "controlplane" } else { "worker" }.into(),
                order: Some(i as i64 + 1),
                approved: true,
                hold: None,
                unreadable: None,
                talos_version: Some("v1.9.2".into()),
                kubernetes_version: Some("v1.32.3".into()),
            })
            .collect(),
        tracking: None,
        active_operation: None,
        unreadable: None,
        last_shutdown: None,
        stray_confirmation: false,
        bundle_backup_stale: None,
    }
}
