use super::*;
use crate::{CaRotation, ClusterMachine, Condition, MachineProgress};

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + s).unwrap()
}

fn secs(s: i64) -> SignedDuration {
    SignedDuration::from_secs(s)
}

fn m(name: &str, phase: MachinePhase, start: Option<i64>, end: Option<i64>) -> MachineProgress {
    MachineProgress {
        name: name.into(),
        phase,
        message: String::new(),
        started_at: start.map(at),
        finished_at: end.map(at),
    }
}

fn roles(pairs: &[(&str, &str)]) -> Roles {
    Roles::of(&Cluster {
        namespace: String::new(),
        name: String::new(),
        talos_version: String::new(),
        kubernetes_version: String::new(),
        kube_proxy: String::new(),
        ichor_version: None,
        machines: pairs
            .iter()
            .map(|(n, r)| ClusterMachine {
                name: (*n).into(),
                role: (*r).into(),
                order: None,
                approved: true,
                hold: None,
                unreadable: None,
                talos_version: None,
                kubernetes_version: None,
            })
            .collect(),
        tracking: None,
        active_operation: None,
        unreadable: None,
        last_shutdown: None,
        stray_confirmation: false,
        bundle_backup_stale: None,
    })
}

fn rolling(machines: Vec<MachineProgress>, max_unavailable: i32) -> Operation {
    Operation {
        kind: Some(OperationKind::Talos),
        phase: Phase::Running,
        max_unavailable,
        started_at: Some(at(0)),
        machines,
        ..Operation::default()
    }
}

use MachinePhase::{Completed as Done, Pending, Running};

const CLUSTER: [(&str, &str); 5] = [
    ("cp1", "controlplane"),
    ("cp2", "controlplane"),
    ("w1", "worker"),
    ("w2", "worker"),
    ("w3", "worker"),
];

#[test]
fn the_pace_is_the_median_of_the_finished_machines_of_the_role() {
    let op = rolling(
        vec![
            m("cp1", Done, Some(0), Some(300)),
            m("cp2", Done, Some(300), Some(500)),
            m("w1", Done, Some(500), Some(560)),
            m("w2", Running, Some(560), None),
            m("w3", Pending, None, None),
        ],
        1,
    );
    let t = op.timing(&roles(&CLUSTER), SlowRule::default(), at(600));
    let w2 = &t.running[0];
    assert_eq!((w2.name.as_str(), w2.in_step), ("w2", secs(40)));
    assert_eq!(
        (w2.pace, w2.paced_by),
        (Some(secs(60)), 1),
        "the worker's, not the control planes'"
    );
    assert_eq!(w2.bound, Some(secs(120)), "twice the pace");
    assert!(!w2.slow && !t.slow());
    assert_eq!(w2.slow_at(), Some(at(680)));
    assert_eq!(t.next_slow_at(), Some(at(680)));
    let later = op.timing(&roles(&CLUSTER), SlowRule::default(), at(681));
    assert!(later.slow() && later.running[0].slow_at().is_none());
    // Two control planes: the median of an even count is the mean of the middle two.
    assert_eq!(median(vec![secs(300), secs(200)]), Some(secs(250)));
    assert_eq!(median(vec![]), None);
    let max = median(vec![SignedDuration::MAX, SignedDuration::MAX]).unwrap();
    assert!(max > SignedDuration::MAX - SignedDuration::from_nanos(2));
}

#[test]
fn the_bound_is_the_later_of_the_factor_and_the_margin() {
    let rule = SlowRule::default();
    assert_eq!(
        rule.bound(secs(4)),
        secs(34),
        "a step of seconds: the margin"
    );
    assert_eq!(
        rule.bound(secs(300)),
        secs(600),
        "a step of minutes: the factor"
    );
    let odd = SlowRule {
        factor: f64::NAN,
        margin: secs(-5),
    };
    assert_eq!(
        odd.bound(secs(10)),
        secs(10),
        "a factor that is no number counts as 1"
    );
    let huge = SlowRule {
        factor: 1e300,
        margin: SignedDuration::MAX,
    };
    assert_eq!(huge.bound(SignedDuration::MAX), MAX_ESTIMATE);
}

#[test]
fn no_pace_before_a_machine_of_the_role_finished() {
    let op = rolling(
        vec![
            m("cp1", Running, Some(0), None),
            m("cp2", Pending, None, None),
            m("w1", Pending, None, None),
        ],
        1,
    );
    let t = op.timing(&roles(&CLUSTER), SlowRule::default(), at(10_000));
    assert_eq!((t.running[0].pace, t.running[0].slow), (None, false));
    assert_eq!(t.estimate, Estimate::NoPaceYet);
    assert_eq!(t.phase, Some(PhaseSince::Running(at(0))));
}

#[test]
fn the_estimate_walks_the_steps_left_at_the_pace_so_far() {
    // Control planes take 5 min, workers 1 min; workers two at a time.
    let op = rolling(
        vec![
            m("cp1", Done, Some(0), Some(300)),
            m("cp2", Running, Some(300), None),
            m("w1", Pending, None, None),
            m("w2", Pending, None, None),
            m("w3", Pending, None, None),
        ],
        2,
    );
    let r = roles(&CLUSTER);
    let t = op.timing(&r, SlowRule::default(), at(400));
    // cp2 has 200 s left; then {w1, w2} and {w3}: no worker finished, so the pace of every
    // machine that did (300 s) stands in for theirs.
    assert_eq!(
        t.estimate,
        Estimate::About {
            left: secs(200 + 300 + 300),
            running_left: secs(200),
            growing: false,
            basis: PaceBasis::SoFar,
        }
    );
    let steps = op.steps_left(&r);
    assert_eq!(steps, vec![vec!["w1", "w2"], vec!["w3"]]);
    // Past its pace (300 s) but not yet slow (600 s): it is expected to need its overrun
    // again, so the estimate grows as it runs on.
    let at_500 = op.timing(&r, SlowRule::default(), at(300 + 500)).estimate;
    let at_550 = op.timing(&r, SlowRule::default(), at(300 + 550)).estimate;
    assert_eq!(
        at_500,
        Estimate::About {
            left: secs(200 + 600),
            running_left: secs(200),
            growing: true,
            basis: PaceBasis::SoFar,
        }
    );
    assert!(matches!(at_550, Estimate::About { left, .. } if left == secs(250 + 600)));
    // Slow: the estimate names it and says the rest after it.
    let t = op.timing(&r, SlowRule::default(), at(5_000));
    assert_eq!(
        t.estimate,
        Estimate::AfterSlow {
            machine: "cp2".into(),
            slow_for: secs(4_700),
            since: at(300),
            more: 0,
            then: secs(600),
            basis: PaceBasis::SoFar,
        }
    );
}

#[test]
fn a_shutdown_and_a_rotation_group_as_their_executors_do() {
    let r = roles(&CLUSTER);
    let mut op = rolling(
        vec![
            m("w1", Pending, None, None),
            m("w2", Pending, None, None),
            m("cp1", Pending, None, None),
            m("cp2", Pending, None, None),
        ],
        1,
    );
    op.kind = Some(OperationKind::Shutdown);
    assert_eq!(
        op.steps_left(&r),
        vec![vec!["w1", "w2"], vec!["cp1", "cp2"]]
    );
    op.kind = Some(OperationKind::CaRotation);
    op.ca_rotation = Some(CaRotation {
        stage: "Issuing".into(),
        pass: 4,
        passes: 5,
    });
    op.machines[0] = m("w1", Done, Some(0), Some(10));
    // This pass's three, then the last pass's four.
    assert_eq!(op.steps_left(&r).len(), 3 + 4);
    let t = op.timing(&r, SlowRule::default(), at(20));
    assert_eq!(
        t.estimate,
        Estimate::About {
            left: secs(70),
            running_left: secs(0),
            growing: false,
            basis: PaceBasis::SoFar,
        }
    );
    op.ca_rotation = Some(CaRotation {
        stage: "Dropping".into(),
        pass: i32::MAX,
        passes: i32::MIN,
    });
    assert_eq!(
        op.steps_left(&r).len(),
        3,
        "a hostile pass count adds no pass"
    );
}

#[test]
fn only_a_running_operation_is_estimated() {
    let r = roles(&CLUSTER);
    let mut op = rolling(
        vec![
            m("cp1", Done, Some(0), Some(10)),
            m("cp2", Pending, None, None),
        ],
        1,
    );
    op.phase = Phase::Paused;
    op.paused = true;
    op.paused_at = Some(at(50));
    let t = op.timing(&r, SlowRule::default(), at(100));
    assert_eq!(
        (t.estimate, t.phase),
        (
            Estimate::Halted {
                machines_left: 1,
                failed: false
            },
            Some(PhaseSince::Paused(at(50)))
        )
    );
    // Resumed after it started: running since the resume.
    op.phase = Phase::Running;
    op.paused = false;
    op.paused_at = Some(at(50));
    assert_eq!(
        op.timing(&r, SlowRule::default(), at(100)).phase,
        Some(PhaseSince::Running(at(50)))
    );
    op.kind = Some(OperationKind::Ichor);
    assert_eq!(
        op.timing(&r, SlowRule::default(), at(100)).estimate,
        Estimate::None
    );
    op.phase = Phase::Completed;
    assert_eq!(op.timing(&r, SlowRule::default(), at(100)).phase, None);
}

#[test]
fn waiting_for_the_lock_counts_from_the_condition() {
    let mut op = rolling(vec![], 1);
    op.phase = Phase::Pending;
    op.created_at = Some(at(-100));
    op.conditions.push(Condition {
        type_: "ClusterLockHeld".into(),
        status: "True".into(),
        reason: "LockHeld".into(),
        message: "cluster lock held by other".into(),
        last_transition_time: Some(at(-50)),
    });
    let t = op.timing(&Roles::default(), SlowRule::default(), at(0));
    assert_eq!(t.phase, Some(PhaseSince::WaitingForLock(at(-50))));
    op.conditions.clear();
    let t = op.timing(&Roles::default(), SlowRule::default(), at(0));
    assert_eq!(t.phase, Some(PhaseSince::Pending(at(-100))));
}

#[test]
fn hostile_times_neither_panic_nor_count() {
    let r = roles(&CLUSTER);
    let op = rolling(
        vec![
            // Finished before it started: no duration.
            m("cp1", Done, Some(100), Some(0)),
            // At the ends of time.
            m("cp2", Done, Some(-1_800_000_000), Some(200_000_000_000)),
            m("w1", Running, Some(100_000_000), None),
            m("w2", Pending, None, None),
        ],
        i32::MIN,
    );
    let t = op.timing(&r, SlowRule::default(), at(0));
    assert_eq!(
        t.running[0].in_step,
        SignedDuration::ZERO,
        "a start in the future counts from now"
    );
    match t.estimate {
        Estimate::About { left, .. } => assert!(left <= MAX_ESTIMATE),
        other => panic!("{other:?}"),
    }
    // No worker finished: no bound, however long the control planes took.
    assert!(t.running[0].slow_at().is_none() && !t.slow());
}

fn said(action: &str, who: &str, t: i64) -> crate::HistoryEntry {
    crate::HistoryEntry::read(action, who, Some(at(t)), "applied")
}

/// A worker rollout: w1 took 4 s; w2 runs from 100; w3 to come.
fn workers(w2: MachinePhase, w2_end: Option<i64>) -> Operation {
    let mut op = rolling(
        vec![
            m("w1", Done, Some(0), Some(4)),
            m("w2", w2, Some(100), w2_end),
            m("w3", Pending, None, None),
        ],
        1,
    );
    op.history = vec![said("start", "alice", 0)];
    op
}

#[test]
fn pausing_counts_from_the_pause_and_paused_from_when_it_took_effect() {
    let r = roles(&CLUSTER);
    let mut op = workers(Running, None);
    op.paused = true;
    op.history.push(said("pause", "alice", 110));
    // Two seconds after the pause asked: pausing for 2 s, not since the start.
    let t = op.timing(&r, SlowRule::default(), at(112));
    assert_eq!(t.phase, Some(PhaseSince::Pausing(at(110))));
    assert_eq!(
        t.estimate,
        Estimate::Halted {
            machines_left: 2,
            failed: false
        }
    );
    // w2's step ends at 130: the pause took effect then.
    op.machines[1] = m("w2", Done, Some(100), Some(130));
    op.phase = Phase::Paused;
    let t = op.timing(&r, SlowRule::default(), at(500));
    assert_eq!(t.phase, Some(PhaseSince::Paused(at(130))));
    assert_eq!(
        t.estimate,
        Estimate::Halted {
            machines_left: 1,
            failed: false
        }
    );
    // Nothing was running when it was asked: it took effect when asked.
    op.history.push(said("resume", "bob", 600));
    op.history.push(said("pause", "bob", 700));
    let t = op.timing(&r, SlowRule::default(), at(800));
    assert_eq!(t.phase, Some(PhaseSince::Paused(at(700))));
    // Resumed by bob at 900: running since the resume, whoever started it.
    op.history.push(said("resume", "bob", 900));
    op.paused = false;
    op.phase = Phase::Running;
    let t = op.timing(&r, SlowRule::default(), at(950));
    assert_eq!(t.phase, Some(PhaseSince::Running(at(900))));
}

#[test]
fn a_pause_a_failure_caused_counts_from_the_failure() {
    let mut op = workers(MachinePhase::Failed, Some(150));
    op.phase = Phase::Paused;
    op.failure_reason = Some("w2 failed".into());
    let t = op.timing(&roles(&CLUSTER), SlowRule::default(), at(400));
    assert_eq!(t.phase, Some(PhaseSince::Paused(at(150))));
    assert_eq!(
        t.estimate,
        Estimate::Halted {
            machines_left: 2,
            failed: true
        }
    );
}

#[test]
fn a_slow_machine_sets_no_pace_for_the_others() {
    // w2 took 240 s against w1's 4 s: the workers' pace stays 4 s for w3.
    let mut op = workers(Done, Some(340));
    op.machines[2] = m("w3", Running, Some(340), None);
    let t = op.timing(&roles(&CLUSTER), SlowRule::default(), at(340));
    assert_eq!(
        (t.running[0].pace, t.running[0].paced_by),
        (Some(secs(4)), 1)
    );
    assert_eq!(
        t.estimate,
        Estimate::About {
            left: secs(4),
            running_left: secs(4),
            growing: false,
            basis: PaceBasis::SoFar,
        }
    );
    assert_eq!(
        robust_pace(vec![secs(4), secs(240)], SlowRule::default()),
        Some((secs(4), 1))
    );
    assert_eq!(
        robust_pace(vec![secs(240)], SlowRule::default()),
        Some((secs(240), 1))
    );
    assert_eq!(
        robust_pace(
            vec![secs(4), secs(6), secs(5), secs(400)],
            SlowRule::default()
        ),
        Some((secs(5), 3))
    );
    assert_eq!(robust_pace(vec![], SlowRule::default()), None);
}

#[test]
fn a_slow_machine_is_named_and_the_rest_said_after_it() {
    let op = workers(Running, None);
    // 4 minutes into a step whose pace is 4 s.
    let t = op.timing(&roles(&CLUSTER), SlowRule::default(), at(340));
    assert!(t.slow());
    assert_eq!(
        t.estimate,
        Estimate::AfterSlow {
            machine: "w2".into(),
            slow_for: secs(240),
            since: at(100),
            more: 0,
            then: secs(4),
            basis: PaceBasis::SoFar,
        }
    );
}

#[test]
fn before_a_role_has_a_pace_the_last_runs_give_it_said_so() {
    let r = roles(&CLUSTER);
    let mut last = rolling(
        vec![
            m("cp1", Done, Some(0), Some(60)),
            m("w1", Done, Some(60), Some(66)),
            m("w2", Done, Some(66), Some(74)),
        ],
        1,
    );
    last.phase = Phase::Completed;
    let prior = PriorPaces::of(&[last.clone(), last], &r, SlowRule::default());
    assert_eq!(prior.runs, 2);
    assert_eq!(prior.by_role.get("worker"), Some(&(secs(7), 4)));
    let op = rolling(
        vec![
            m("cp1", Running, Some(0), None),
            m("w1", Pending, None, None),
            m("w2", Pending, None, None),
        ],
        1,
    );
    assert_eq!(
        op.timing(&r, SlowRule::default(), at(10)).estimate,
        Estimate::NoPaceYet
    );
    let t = op.timing_with(&r, SlowRule::default(), Some(&prior), at(10));
    assert_eq!(
        t.estimate,
        Estimate::About {
            left: secs(50 + 7 + 7),
            running_left: secs(50),
            growing: false,
            basis: PaceBasis::PriorRuns(2),
        }
    );
    // The running machine's own time is judged against this run only: no bound yet.
    assert_eq!(t.running[0].bound, None);
}
