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
            result: result.map(Into::into),
        },
    );
}

fn page_with(result: Result<Vec<OperationEvent>, ApiError>) -> State {
    let mut s = fixtures::opened(fixtures::running_rollout());
    answer_events(&mut s, result);
    crate::help_screens::lay_out(&mut s, 80, 24);
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
    key(&mut s, Key::ch('e'));
    assert_eq!(s.dialog, Some(Dialog::Events { scroll: 0 }));
    key(&mut s, Key::plain(KeyCode::Down));
    key(&mut s, Key::ch('j'));
    assert_eq!(s.dialog, Some(Dialog::Events { scroll: 2 }));
    key(&mut s, Key::plain(KeyCode::Up));
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
            result: Ok(rollout_events().into()),
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

/// A key, and the frame laid out after it, as the runtime does.
fn key(s: &mut State, k: Key) {
    update(s, Action::Key(k));
    crate::help_screens::lay_out(s, s.size.0, s.size.1);
}

/// As many events as the service sends at most (a CA rotation records about 157).
fn a_full_answer() -> Vec<OperationEvent> {
    (0..ichor_model::MAX_EVENTS)
        .map(|i| {
            event(
                i64::try_from(i).unwrap() + 1,
                false,
                "MachineStepFinished",
                Some("prod-eu-cp1"),
                &format!("step {i}"),
            )
        })
        .collect()
}

#[test]
fn the_counts_loaded_and_known_and_older_events_not_loaded() {
    use crate::help_screens::flat;
    use ichor_views::i18n::Lang;
    let some = page_with(Ok(rollout_events()));
    assert!(
        flat(&some, Lang::En, 80, 24).contains("Events (25 of 25 loaded; e: all)"),
        "{}",
        flat(&some, Lang::En, 80, 24)
    );
    let mut full = page_with(Ok(a_full_answer()));
    let said = flat(&full, Lang::En, 160, 48);
    assert!(
        said.contains("the newest 100 loaded, older events not loaded"),
        "{said}"
    );
    key(&mut full, Key::ch('e'));
    let said = flat(&full, Lang::En, 80, 24);
    assert!(
        said.contains("Older events not loaded: the newest 100 are shown"),
        "{said}"
    );
    crate::help_screens::snap3("events_older_not_loaded", &full);
}

/// An event whose message is longer than any line.
fn long_events() -> Vec<OperationEvent> {
    let mut events = rollout_events();
    events[1].message = format!(
        "the node took 4m10s to become Ready: {} END-OF-MESSAGE",
        "kubelet restarted after the image was pulled again; ".repeat(4)
    );
    events
}

#[test]
fn a_long_message_is_wrapped_in_the_overlay_and_read_whole() {
    use crate::help_screens::flat;
    use ichor_views::i18n::Lang;
    let mut s = page_with(Ok(long_events()));
    key(&mut s, Key::ch('e'));
    let said = flat(&s, Lang::En, 80, 24);
    assert!(said.contains("END-OF-MESSAGE"), "{said}");
    crate::help_screens::snap3("events_wrapped", &s);
    // The page read whole (Enter) has the events too, whole.
    key(&mut s, Key::plain(KeyCode::Esc));
    key(&mut s, Key::plain(KeyCode::Enter));
    crate::help_screens::snap3("events_read_whole", &s);
    let mut read = String::new();
    for _ in 0..10 {
        read.push_str(&flat(&s, Lang::En, 80, 24));
        key(&mut s, Key::plain(KeyCode::PageDown));
    }
    assert!(read.contains("END-OF-MESSAGE"), "{read}");
    assert!(read.contains("25 events, all loaded"), "{read}");
}

#[test]
fn g_end_and_home_move_in_the_overlay() {
    let mut s = page_with(Ok(rollout_events()));
    key(&mut s, Key::ch('e'));
    let last = s.viewport.dialog.last_start();
    assert!(last > 0, "25 events do not fit at 80x24");
    for (k, to) in [
        (Key::ch('G'), last),
        (Key::plain(KeyCode::Home), 0),
        (Key::plain(KeyCode::End), last),
        (Key::ch('g'), 0),
    ] {
        key(&mut s, k);
        assert_eq!(s.dialog, Some(Dialog::Events { scroll: to }), "{k:?}");
    }
    // Down at the end stays at the end.
    key(&mut s, Key::ch('G'));
    key(&mut s, Key::ch('j'));
    assert_eq!(s.dialog, Some(Dialog::Events { scroll: last }));
}

#[test]
fn ages_in_seconds_tick_and_only_while_shown() {
    let just_now = |secs| {
        let mut e = event(
            0,
            false,
            "MachineStepStarted",
            Some("prod-eu-w04"),
            "upgrading",
        );
        e.first_at = Some(fixtures::ago_s(secs));
        e.last_at = Some(fixtures::ago_s(secs));
        e
    };
    // A finished operation, so that no other age on the page ticks.
    let mut s = fixtures::opened(fixtures::completed());
    s.last_ok = None;
    answer_events(&mut s, Ok(vec![just_now(5)]));
    assert_eq!(
        ichor_views::next_clock_change(&s),
        Some(now() + jiff::SignedDuration::from_secs(1)),
        "\"5s\" becomes \"6s\" in a second"
    );
    // Nothing on screen in seconds: no wake before the minute changes.
    answer_events(&mut s, Ok(vec![just_now(600)]));
    let next = ichor_views::next_clock_change(&s);
    assert!(
        next.is_none_or(|t| t >= now() + jiff::SignedDuration::from_secs(60)),
        "{next:?}"
    );
    // Off the page (not among the latest three) and the overlay closed: not shown.
    let mut events: Vec<_> = (0..3).map(|_| just_now(7200)).collect();
    events.push(just_now(5));
    answer_events(&mut s, Ok(events));
    let next = ichor_views::next_clock_change(&s);
    assert!(
        next.is_none_or(|t| t >= now() + jiff::SignedDuration::from_secs(60)),
        "{next:?}"
    );
}
