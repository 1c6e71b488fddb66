//! Deterministic operations and states for the screen and update tests.
#![allow(dead_code)]

use ichor_app::action::{Action, Effect, Key, KeyCode};
use ichor_app::state::{Session, State};
use ichor_app::update::{start, update};
use ichor_model::*;
use jiff::{SignedDuration, Timestamp};

pub fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

pub fn ago(mins: i64) -> Timestamp {
    now() - SignedDuration::from_secs(mins * 60)
}

pub fn ago_s(secs: i64) -> Timestamp {
    now() - SignedDuration::from_secs(secs)
}

pub fn machine(
    name: &str,
    phase: MachinePhase,
    message: &str,
    started: Option<Timestamp>,
    finished: Option<Timestamp>,
) -> MachineProgress {
    MachineProgress {
        name: name.into(),
        phase,
        message: message.into(),
        started_at: started,
        finished_at: finished,
    }
}

pub fn base(
    name: &str,
    cluster: &str,
    kind: OperationKind,
    phase: Phase,
    created_min: i64,
) -> Operation {
    Operation {
        namespace: "default".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        generation: 1,
        request_id: None,
        cluster: cluster.into(),
        kind: Some(kind),
        kind_raw: kind.as_str().into(),
        max_unavailable: 1,
        paused: false,
        phase,
        failure_reason: None,
        machines: Vec::new(),
        ca_rotation: None,
        conditions: Vec::new(),
        created_at: Some(ago(created_min)),
        started_at: Some(ago(created_min) + SignedDuration::from_secs(5)),
        finished_at: None,
        actor: Some("alice@example.com".into()),
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
}

/// A 15-machine Talos rollout, 6 done, 1 running.
pub fn running_rollout() -> Operation {
    let mut op = base(
        "prod-eu-talos-8xk2m",
        "prod-eu",
        OperationKind::Talos,
        Phase::Running,
        27,
    );
    op.current = Some("v1.9.2".into());
    op.target = Some("v1.9.3".into());
    let mut ms = Vec::new();
    for i in 0..15 {
        let name = if i < 3 {
            format!("prod-eu-cp{}", i + 1)
        } else {
            format!("prod-eu-w{:02}", i - 2)
        };
        let m = match i {
            0..=5 => machine(
                &name,
                MachinePhase::Completed,
                "running Talos v1.9.3",
                Some(ago(26 - 4 * i)),
                Some(ago(23 - 4 * i)),
            ),
            6 => machine(
                &name,
                MachinePhase::Running,
                "installing Talos v1.9.3 and rebooting",
                Some(ago_s(42)),
                None,
            ),
            10 => machine(
                &name,
                MachinePhase::Skipped,
                "held: RAID controller replacement scheduled (INC-4821)",
                None,
                None,
            ),
            _ => machine(&name, MachinePhase::Pending, "", None, None),
        };
        ms.push(m);
    }
    op.machines = ms;
    op
}

pub fn paused_by_user() -> Operation {
    let mut op = running_rollout();
    op.name = "prod-eu-talos-8xk2m".into();
    op.phase = Phase::Paused;
    op.paused = true;
    op.paused_by = Some("bob@example.com".into());
    op.paused_at = Some(ago(3));
    op.machines[6] = machine(
        "prod-eu-w04",
        MachinePhase::Completed,
        "running Talos v1.9.3",
        Some(ago(6)),
        Some(ago(3)),
    );
    op
}

pub fn paused_by_failure() -> Operation {
    let mut op = base(
        "edge-tokyo-talos-m4q9z",
        "edge-tokyo",
        OperationKind::Talos,
        Phase::Paused,
        42,
    );
    op.actor = Some("kenji@example.com".into());
    op.current = Some("v1.9.2".into());
    op.target = Some("v1.9.3".into());
    op.failure_reason = Some(
        "machine edge-tokyo-w03 failed: installer exited with code 1: image verification failed"
            .into(),
    );
    let names = [
        "edge-tokyo-cp1",
        "edge-tokyo-cp2",
        "edge-tokyo-cp3",
        "edge-tokyo-w01",
        "edge-tokyo-w02",
        "edge-tokyo-w03",
        "edge-tokyo-w04",
        "edge-tokyo-w05",
    ];
    op.machines = names
        .iter()
        .enumerate()
        .map(|(i, n)| match i {
            0..=4 => machine(
                n,
                MachinePhase::Completed,
                "running Talos v1.9.3",
                Some(ago(40 - 6 * i as i64)),
                Some(ago(36 - 6 * i as i64)),
            ),
            5 => machine(
                n,
                MachinePhase::Failed,
                "installer exited with code 1: image verification failed",
                Some(ago(10)),
                Some(ago(6)),
            ),
            _ => machine(n, MachinePhase::Pending, "", None, None),
        })
        .collect();
    op
}

pub fn completed() -> Operation {
    let mut op = base(
        "staging-cni-p2m8v",
        "staging",
        OperationKind::Cni,
        Phase::Completed,
        60 * 24 * 5,
    );
    op.actor = Some("bob@example.com".into());
    op.current = Some("enabled".into());
    op.target = Some("replaced".into());
    op.finished_at = Some(ago(60 * 24 * 5 - 20));
    op.machines = ["staging-cp1", "staging-w01", "staging-w02", "staging-w03"]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let s = 60 * 24 * 5 - 5 * i as i64;
            machine(
                n,
                MachinePhase::Completed,
                "kube-proxy replaced",
                Some(ago(s)),
                Some(ago(s - 4)),
            )
        })
        .collect();
    op
}

pub fn ca_rotation_mid_pass() -> Operation {
    let mut op = base(
        "prod-eu-ca-rotation-2hd8w",
        "prod-eu",
        OperationKind::CaRotation,
        Phase::Running,
        95,
    );
    op.actor = Some("security-bot".into());
    op.ca_rotation = Some(CaRotation {
        stage: "Issuing".into(),
        pass: 3,
        passes: 5,
    });
    op.machines = [
        "prod-eu-cp1",
        "prod-eu-cp2",
        "prod-eu-cp3",
        "prod-eu-w01",
        "prod-eu-w02",
    ]
    .iter()
    .enumerate()
    .map(|(i, n)| match i {
        0 | 1 => machine(
            n,
            MachinePhase::Completed,
            "pass 3: configuration applied",
            Some(ago(8 - 3 * i as i64)),
            Some(ago(6 - 3 * i as i64)),
        ),
        2 => machine(
            n,
            MachinePhase::Running,
            "pass 3: applying machine configuration",
            Some(ago_s(20)),
            None,
        ),
        _ => machine(n, MachinePhase::Pending, "", None, None),
    })
    .collect();
    op
}

pub fn waiting_for_lock() -> Operation {
    let mut op = base(
        "prod-eu-kubernetes-q7w2c",
        "prod-eu",
        OperationKind::Kubernetes,
        Phase::Pending,
        2,
    );
    op.actor = Some("carol@example.com".into());
    op.current = Some("v1.32.3".into());
    op.target = Some("v1.33.0".into());
    op.started_at = None;
    op.conditions = vec![Condition {
        type_: "ClusterLockHeld".into(),
        status: "True".into(),
        reason: "LockHeld".into(),
        message: "cluster lock held by prod-eu-talos-8xk2m".into(),
        last_transition_time: None,
    }];
    op
}

pub fn ichor_completed() -> Operation {
    let mut op = base(
        "edge-tokyo-ichor-b5n2s",
        "edge-tokyo",
        OperationKind::Ichor,
        Phase::Completed,
        60 * 48,
    );
    op.finished_at = Some(ago(60 * 48 - 1));
    op
}

pub fn shutdown_completed() -> Operation {
    let mut op = base(
        "staging-shutdown-k3r7d",
        "staging",
        OperationKind::Shutdown,
        Phase::Completed,
        60 * 24 * 20,
    );
    op.actor = Some("bob@example.com".into());
    op.finished_at = Some(ago(60 * 24 * 20 - 30));
    op.machines = vec![machine(
        "staging-w01",
        MachinePhase::Completed,
        "stopped",
        None,
        None,
    )];
    op
}

/// The list the Operations screen shows in most snapshots.
pub fn list() -> Vec<Operation> {
    vec![
        waiting_for_lock(),
        running_rollout(),
        paused_by_failure(),
        ca_rotation_mid_pass(),
        completed(),
        ichor_completed(),
        shutdown_completed(),
    ]
}

pub fn session() -> Session {
    Session {
        route: Default::default(),
        demo: true,
        namespace: "default".into(),
        all_namespaces: false,
        user: None,
        read_only: false,
        server_version: Default::default(),
        ..Default::default()
    }
}

pub fn state() -> State {
    State::new(session(), now(), jiff::tz::TimeZone::UTC)
}

/// The Operations screen after its first load answered with `ops`.
pub fn listed(ops: Vec<Operation>) -> State {
    let mut s = state();
    let effects = start(&mut s);
    assert_eq!(
        effects,
        vec![
            Effect::ListOperations {
                seq: 1,
                query: ichor_model::ListQuery {
                    namespace: Some("default".into()),
                    view: ichor_model::View::Summary,
                    page_size: 100,
                    ..Default::default()
                },
                more: false,
            },
            Effect::Permissions {
                namespace: "default".into()
            }
        ]
    );
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Ok(ops),
        },
    );
    s
}

/// `op`'s page, opened from the list with Enter, after its load.
pub fn opened(op: Operation) -> State {
    let mut s = listed(vec![op.clone()]);
    let effects = update(&mut s, Action::Key(Key::plain(KeyCode::Enter)));
    assert!(matches!(effects[0], Effect::GetOperation { .. }));
    assert!(matches!(effects[1], Effect::ListEvents { .. }));
    assert!(matches!(effects[2], Effect::GetCluster { .. }));
    let seq = s.seq;
    let (namespace, name) = (op.namespace.clone(), op.name.clone());
    update(
        &mut s,
        Action::Operation {
            seq,
            namespace,
            name,
            result: Ok(op),
        },
    );
    s
}

/// The page of `op`, with its cluster read (the machines' roles from their names: `cp` is a
/// control plane).
pub fn page(op: ichor_model::Operation) -> State {
    let cluster = cluster_of(&op);
    page_with(op, cluster)
}

/// The page of `op`, with `cluster` read for it.
pub fn page_with(op: ichor_model::Operation, cluster: ichor_model::Cluster) -> State {
    let mut s = opened(op.clone());
    let seq = s.seq;
    update(
        &mut s,
        Action::Cluster {
            seq,
            purpose: ichor_app::action::ClusterFor::OperationPage,
            namespace: op.namespace.clone(),
            name: op.cluster.clone(),
            result: Ok(cluster),
        },
    );
    s
}

/// The cluster of `op`, as GetCluster reads it (the machines' roles from their names: `cp` is a
/// control plane).
pub fn cluster_of(op: &ichor_model::Operation) -> ichor_model::Cluster {
    ichor_model::Cluster {
        namespace: op.namespace.clone(),
        name: op.cluster.clone(),
        talos_version: "v1.9.3".into(),
        kubernetes_version: "v1.32.3".into(),
        kube_proxy: "enabled".into(),
        ichor_version: None,
        machines: op
            .machines
            .iter()
            .map(|m| ichor_model::ClusterMachine {
                name: m.name.clone(),
                role: if m.name.contains("cp") {
                    "controlplane"
                } else {
                    "worker"
                }
                .into(),
                order: None,
                approved: true,
                hold: None,
                unreadable: None,
                // Those done run the target; the others still the version before.
                talos_version: Some(
                    match m.phase {
                        MachinePhase::Completed => "v1.9.3",
                        _ => "v1.9.2",
                    }
                    .into(),
                ),
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
