//! How long (issue 38), on screen: the time in the current phase, each running machine's time
//! against the pace so far, the slow machine (in words and colour, with its last Warning), the
//! estimate of the end, the lock waited for since when, the list's mark and estimate, the slow
//! notification said once, the clock woken for the moment a machine turns slow, and the
//! cluster's stale bundle backup after a CA rotation. Snapshots in English and Japanese at
//! 80×24, 160×48 and 40×12.

use crate::common;

use common::fixtures::{self, ago, ago_s, cluster_of, now, page};
use common::snap::{draw, styles};
use ichor_app::action::{Action, Effect};
use ichor_app::state::{Outcome, State};
use ichor_app::update::update;
use ichor_model::*;
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;
use jiff::SignedDuration;

/// At 80×24 and 160×48, and at 40×12.
fn snap(name: &str, state: &State) {
    crate::snap_all!(name, state);
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(state, lang, 40, 12, Theme::default());
        crate::snapshot!(format!("{name}_{}_40x12", lang.code()), term.backend());
    }
}

/// The rollout of the fixtures with its running worker `started_min` minutes into its step
/// (the workers before it took 3 minutes each: the pace, and slow past 6).
fn rollout(started_min: i64) -> Operation {
    let mut op = fixtures::running_rollout();
    op.machines[6].started_at = Some(ago(started_min));
    op
}

/// The Warning the controller recorded on the slow worker.
fn warning() -> OperationEvent {
    OperationEvent {
        warning: true,
        reason: "StepSlow".into(),
        message:
            "prod-eu-talos-8xk2m: still waiting for the machine to report Ready after the reboot"
                .into(),
        object_kind: "Machine".into(),
        object_name: "prod-eu-w04".into(),
        count: 1,
        first_at: Some(ago(2)),
        last_at: Some(ago(2)),
    }
}

/// `op`'s page with its cluster read and its events.
fn page_with_events(op: Operation, events: Vec<OperationEvent>) -> State {
    let mut s = page(op.clone());
    let seq = s.seq;
    update(
        &mut s,
        Action::Events {
            seq,
            namespace: op.namespace.clone(),
            name: op.name.clone(),
            result: Ok(events.into()),
        },
    );
    s
}

#[test]
fn a_slow_machine_is_said_in_words_and_colour_with_its_last_warning() {
    let s = page_with_events(rollout(9), vec![warning()]);
    let timing = s
        .pace
        .timing(s.detail.as_ref().unwrap().op.data.as_ref().unwrap(), now());
    assert!(timing.slow(), "9 min against a pace of 3: slow past 6");
    snap("slow_machine_page", &s);
    let term = draw(&s, Lang::En, 80, 24, Theme::default());
    crate::snapshot!("slow_machine_page_styles", styles(term.backend().buffer()));
}

#[test]
fn a_machine_within_its_bound_shows_its_pace_and_the_estimate() {
    let s = page_with_events(rollout(1), Vec::new());
    snap("paced_machine_page", &s);
}

/// A pause asked a few seconds ago on a run that began 27 minutes ago, after an earlier pause
/// and resume by other people: "Pausing" counts from this pause, and the page keeps each
/// pause and resume with its person (the last two beside "Started by").
#[test]
fn a_pause_asked_counts_from_the_pause_and_keeps_each_person() {
    let mut op = rollout(1);
    op.paused = true;
    op.paused_by = Some("bob@example.com".into());
    op.paused_at = Some(ago_s(20));
    let entry = |action: &str, who: &str, at| HistoryEntry::read(action, who, Some(at), "applied");
    op.history = vec![
        HistoryEntry::read("start", "alice@example.com", Some(ago(27)), "created"),
        entry("pause", "carol@example.com", ago(12)),
        entry("resume", "alice@example.com", ago(9)),
        entry("pause", "bob@example.com", ago_s(20)),
    ];
    let s = page_with_events(op, Vec::new());
    snap("pausing_with_history_page", &s);
    let text = common::snap::rows(&s, Lang::En, 160, 48, Theme::default()).join("\n");
    assert!(text.contains("‖ Pausing for 20s"), "{text}");
    assert!(text.contains("pause asked by bob@example.com"), "{text}");
    assert!(text.contains("resume asked by alice@example.com"), "{text}");
}

#[test]
fn before_a_machine_of_its_role_finished_there_is_no_estimate() {
    let mut op = rollout(1);
    for m in &mut op.machines {
        if m.phase == MachinePhase::Completed {
            m.phase = MachinePhase::Pending;
            m.started_at = None;
            m.finished_at = None;
        }
    }
    op.machines[0].phase = MachinePhase::Running;
    op.machines[0].started_at = Some(ago_s(90));
    op.machines[6].phase = MachinePhase::Pending;
    op.machines[6].started_at = None;
    let s = page_with_events(op, Vec::new());
    snap("no_estimate_yet_page", &s);
}

#[test]
fn waiting_for_the_lock_says_who_holds_it_and_since_when() {
    let mut op = fixtures::waiting_for_lock();
    op.conditions[0].last_transition_time = Some(ago(2));
    let s = page_with_events(op, Vec::new());
    snap("waiting_for_lock_since_page", &s);
}

#[test]
fn the_list_marks_the_slow_operation_and_says_the_estimate_where_it_fits() {
    let slow = rollout(9);
    let mut ops = fixtures::list();
    ops[1] = slow.clone();
    let mut s = fixtures::listed(ops.clone());
    // The rows of unfinished operations need their machines' roles: asked once.
    let seq = s.seq;
    let listed = update(
        &mut s,
        Action::Operations {
            seq,
            result: Ok(ops),
        },
    );
    assert!(
        !listed.iter().any(|e| matches!(e, Effect::ListRoles { .. })),
        "asked at most once a minute: {listed:?}"
    );
    update(&mut s, Action::Roles(Ok(vec![cluster_of(&slow)])));
    snap("slow_operation_list", &s);
    let term = draw(&s, Lang::En, 160, 48, Theme::default());
    crate::snapshot!(
        "slow_operation_list_styles",
        styles(term.backend().buffer())
    );
}

#[test]
fn the_list_asks_for_the_roles_its_rows_need() {
    let mut s = fixtures::state();
    let effects = ichor_app::update::start(&mut s);
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::ListRoles { .. }))
    );
    let seq = s.seq;
    let effects = update(
        &mut s,
        Action::Operations {
            seq,
            result: Ok(vec![rollout(9)]),
        },
    );
    assert!(
        effects.contains(&Effect::ListRoles {
            namespace: Some("default".into())
        }),
        "{effects:?}"
    );
    // Only finished operations: nothing to ask.
    let mut s = fixtures::state();
    ichor_app::update::start(&mut s);
    let seq = s.seq;
    let effects = update(
        &mut s,
        Action::Operations {
            seq,
            result: Ok(vec![fixtures::completed()]),
        },
    );
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::ListRoles { .. }))
    );
}

#[test]
fn a_shown_operation_turning_slow_is_said_once_and_wakes_the_clock_for_it() {
    // 5 minutes into a step whose pace is 3: slow at 6.
    let mut s = page_with_events(rollout(5), Vec::new());
    s.notifications.on = true;
    let slow_at = ago(5) + SignedDuration::from_secs(6 * 60);
    // The running times tick (by the minute at these lengths), none later than the slow moment.
    assert!(ichor_views::next_clock_change(&s).is_some_and(|t| t > s.now && t <= slow_at));
    let said = |s: &mut State| -> Vec<Effect> {
        update(s, Action::Tick)
            .into_iter()
            .filter(|e| matches!(e, Effect::Notify { .. }))
            .collect()
    };
    assert!(said(&mut s).is_empty(), "not slow yet");
    // The clock wakes the dashboard at the moment it turns slow.
    s.now = slow_at - SignedDuration::from_secs(30);
    assert!(ichor_views::next_clock_change(&s).is_some_and(|t| t <= slow_at));
    s.now = slow_at + SignedDuration::from_secs(1);
    assert_eq!(
        said(&mut s),
        vec![Effect::Notify {
            outcome: Outcome::Slow,
            name: "prod-eu-talos-8xk2m".into(),
            cluster: "prod-eu".into(),
        }]
    );
    s.now += SignedDuration::from_secs(60);
    assert!(said(&mut s).is_empty(), "said once");
    // An operation first seen slow is not said (the screen shows it).
    let mut fresh = page_with_events(rollout(9), Vec::new());
    fresh.notifications.on = true;
    assert!(said(&mut fresh).is_empty());
}

#[test]
fn a_paused_or_finished_operation_wakes_nothing() {
    let mut op = fixtures::paused_by_user();
    op.paused_at = Some(ago(3));
    let s = page_with_events(op, Vec::new());
    let op = s.detail.as_ref().unwrap().op.data.as_ref().unwrap();
    assert_eq!(ichor_views::pace::next_change(&s, op), None);
    let s = page_with_events(fixtures::completed(), Vec::new());
    let op = s.detail.as_ref().unwrap().op.data.as_ref().unwrap();
    assert_eq!(ichor_views::pace::next_change(&s, op), None);
}

/// A CA rotation that completed, on a cluster whose bundle backup is stale since.
fn rotated() -> (Operation, Cluster) {
    let mut op = fixtures::ca_rotation_mid_pass();
    op.phase = Phase::Completed;
    op.finished_at = Some(ago(4));
    for m in &mut op.machines {
        m.phase = MachinePhase::Completed;
    }
    let mut cluster = cluster_of(&op);
    cluster.bundle_backup_stale = Some(StaleBundle {
        reason: "CARotated".into(),
        message: "the backup of the secrets bundle of prod-eu predates its new CA; export it again"
            .into(),
        since: Some(ago(4)),
    });
    (op, cluster)
}

#[test]
fn a_completed_rotation_and_its_cluster_say_the_bundle_backup_is_stale() {
    let (op, cluster) = rotated();
    let s = fixtures::page_with(op, cluster.clone());
    snap("rotation_bundle_stale_page", &s);
    let mut c = fixtures::state();
    c.screen = ichor_app::state::Screen::Cluster;
    c.cluster = Some(ichor_app::state::ClusterPage::of(cluster));
    snap("cluster_bundle_stale", &c);
}

#[test]
fn a_rotation_that_completes_on_its_page_reads_its_cluster_again() {
    let (done, _) = rotated();
    let running = fixtures::ca_rotation_mid_pass();
    let mut s = page(running.clone());
    let seq = s.seq;
    let effects = update(
        &mut s,
        Action::Operation {
            seq,
            namespace: done.namespace.clone(),
            name: done.name.clone(),
            result: Ok(done.clone()),
        },
    );
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::GetCluster { name, .. } if *name == done.cluster)),
        "{effects:?}"
    );
}
