//! What the executor recorded, on the operation page: the latest events under the machines
//! (a Warning marked), all of them behind `e`, and the line that says why there are none when
//! the caller may not read them. Action sequences, and snapshots in en and ja.

use crate::common;

use common::fixtures::{self, ago, now};
use ichor_app::action::{Action, Effect, Key, KeyCode};
use ichor_app::state::{Dialog, State};
use ichor_app::update::update;
use ichor_model::{ApiError, Code, OperationEvent, Reason};

fn event(
    mins: i64,
    warning: bool,
    reason: &str,
    machine: Option<&str>,
    message: &str,
) -> OperationEvent {
    OperationEvent {
        warning,
        reason: reason.into(),
        message: message.into(),
        object_kind: if machine.is_some() {
            "Machine"
        } else {
            "TalosOperation"
        }
        .into(),
        object_name: machine.unwrap_or("prod-eu-talos-8xk2m").into(),
        count: 1,
        first_at: Some(ago(mins)),
        last_at: Some(ago(mins)),
    }
}

/// The rollout's events, newest first, as the service answers them.
fn rollout_events() -> Vec<OperationEvent> {
    let mut events = vec![
        event(
            1,
            false,
            "MachineStepStarted",
            Some("prod-eu-w04"),
            "upgrading Talos to v1.9.3",
        ),
        event(
            2,
            true,
            "MachineSlow",
            Some("prod-eu-w03"),
            "the node took 4m10s to become Ready\u{1b}[31m (kubelet restarted)",
        ),
        event(
            3,
            false,
            "MachineStepFinished",
            Some("prod-eu-w03"),
            "running Talos v1.9.3",
        ),
        event(
            27,
            false,
            "WaitingForLock",
            None,
            "cluster lock held by prod-eu-kubernetes-9fj3c",
        ),
        event(
            27,
            false,
            "Started",
            None,
            "started by alice@example.com: Talos v1.9.2 → v1.9.3",
        ),
    ];
    events[3].count = 4;
    for i in 0..20 {
        events.push(event(
            30 + i,
            false,
            "MachineStepFinished",
            Some("prod-eu-cp1"),
            "older",
        ));
    }
    events
}

fn answer_events(s: &mut State, result: Result<Vec<OperationEvent>, ApiError>) {
    let seq = s.seq;
    let d = s.detail.as_ref().unwrap();
    let (namespace, name) = (d.namespace.clone(), d.name.clone());
    update(
        s,
        Action::Events {
            seq,
            namespace,
            name,
            result,
        },
    );
}

fn page_with(result: Result<Vec<OperationEvent>, ApiError>) -> State {
    let mut s = fixtures::opened(fixtures::running_rollout());
    answer_events(&mut s, result);
    s
}

#[test]
fn the_page_asks_for_its_events_with_each_poll_and_keeps_them() {
    let mut s = fixtures::opened(fixtures::running_rollout());
    answer_events(&mut s, Ok(rollout_events()));
    assert_eq!(
        s.detail
            .as_ref()
            .unwrap()
            .events
            .data
            .as_ref()
            .unwrap()
            .len(),
        25
    );
    s.now = now() + jiff::SignedDuration::from_secs(3);
    let e = update(&mut s, Action::Tick);
    assert!(e.iter().any(|e| matches!(e, Effect::ListEvents { .. })));
    // A passing fault keeps the events on screen; a refusal takes them away and says why.
    answer_events(
        &mut s,
        Err(ApiError::new(Code::Unavailable, "connection reset")),
    );
    assert!(s.detail.as_ref().unwrap().events.data.is_some());
    answer_events(
        &mut s,
        Err(ApiError::refused(
            Code::PermissionDenied,
            Reason::PermissionDenied,
            &[],
            "forbidden",
        )),
    );
    assert!(s.detail.as_ref().unwrap().events.data.is_none());
}

#[test]
fn e_opens_every_event_and_the_arrows_scroll_it() {
    let mut s = page_with(Ok(rollout_events()));
    update(&mut s, Action::Key(Key::ch('e')));
    assert_eq!(s.dialog, Some(Dialog::Events { scroll: 0 }));
    update(&mut s, Action::Key(Key::plain(KeyCode::Down)));
    update(&mut s, Action::Key(Key::ch('j')));
    assert_eq!(s.dialog, Some(Dialog::Events { scroll: 2 }));
    update(&mut s, Action::Key(Key::plain(KeyCode::Up)));
    assert_eq!(s.dialog, Some(Dialog::Events { scroll: 1 }));
    // Writes are not reachable from it: p does nothing here.
    let e = update(&mut s, Action::Key(Key::ch('p')));
    assert!(e.is_empty());
    assert!(matches!(s.dialog, Some(Dialog::Events { .. })));
    update(&mut s, Action::Key(Key::plain(KeyCode::Esc)));
    assert_eq!(s.dialog, None);
}

#[test]
fn events_of_another_page_are_dropped() {
    let mut s = fixtures::opened(fixtures::running_rollout());
    let seq = s.seq;
    update(
        &mut s,
        Action::Events {
            seq,
            namespace: "default".into(),
            name: "another".into(),
            result: Ok(rollout_events()),
        },
    );
    assert!(s.detail.as_ref().unwrap().events.data.is_none());
}

#[test]
fn the_page_with_its_latest_events() {
    crate::snap_all!("operation_events", &page_with(Ok(rollout_events())));
}

#[test]
fn every_event_behind_e() {
    let mut s = page_with(Ok(rollout_events()));
    update(&mut s, Action::Key(Key::ch('e')));
    crate::snap_all!("operation_events_all", &s);
}

#[test]
fn a_caller_who_may_not_read_events_is_told_so() {
    let s = page_with(Err(ApiError::refused(
        Code::PermissionDenied,
        Reason::PermissionDenied,
        &[],
        "events is forbidden: User \"reader\" cannot list resource \"events\"",
    )));
    crate::snap_all!("operation_events_forbidden", &s);
}
