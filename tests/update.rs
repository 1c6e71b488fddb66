//! `update` driven by Action sequences: poll cadence, confirmations, no write without `y`, and
//! no key acting on what is not on screen.

use crate::common;

use common::dialog::{dialog, on_clusters, select};
use common::driver::Driver;
use common::fixtures::{self, listed, now, opened};
use common::paths::{Path, User, connect};
use ichor_app::action::{Action, Effect, Key, KeyCode};
use ichor_app::state::{Conn, Dialog, Input, NewOpStep, Notice, Screen, State, Why, WriteAction};
use ichor_app::update::{POLL_ACTIVE, POLL_IDLE, start, update};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_model::{ApiError, Code, Phase};
use jiff::SignedDuration;

#[path = "update/outcomes.rs"]
mod outcomes;
#[path = "update/too_small.rs"]
mod too_small;

fn key(s: &mut State, k: Key) -> Vec<Effect> {
    update(s, Action::Key(k))
}

fn tick_at(s: &mut State, at: jiff::Timestamp) -> Vec<Effect> {
    s.now = at;
    update(s, Action::Tick)
}

#[test]
fn the_list_polls_every_3_s_while_anything_is_unfinished_else_every_10_s() {
    let mut s = listed(fixtures::list());
    assert_eq!(s.next_poll, Some(now() + POLL_ACTIVE));
    assert!(
        tick_at(&mut s, now() + SignedDuration::from_secs(2)).is_empty(),
        "not yet due"
    );
    let e = tick_at(&mut s, now() + POLL_ACTIVE);
    assert!(matches!(e.as_slice(), [Effect::ListOperations { .. }]));
    assert_eq!(
        s.next_poll, None,
        "no second request while one is under way"
    );
    assert!(tick_at(&mut s, now() + SignedDuration::from_secs(30)).is_empty());

    let mut idle = listed(vec![fixtures::completed(), fixtures::ichor_completed()]);
    assert_eq!(idle.next_poll, Some(now() + POLL_IDLE));
    assert!(tick_at(&mut idle, now() + POLL_ACTIVE).is_empty());
    assert_eq!(tick_at(&mut idle, now() + POLL_IDLE).len(), 1);
}

#[test]
fn the_page_polls_3_s_running_10_s_paused_and_stops_when_finished() {
    let s = opened(fixtures::running_rollout());
    assert_eq!(s.screen, Screen::Operation);
    assert_eq!(s.next_poll, Some(now() + POLL_ACTIVE));
    let s = opened(fixtures::paused_by_user());
    assert_eq!(s.next_poll, Some(now() + POLL_IDLE));
    let s = opened(fixtures::paused_by_failure());
    assert_eq!(s.next_poll, Some(now() + POLL_IDLE));
    let mut s = opened(fixtures::completed());
    assert_eq!(s.next_poll, None, "no poll after Completed");
    assert!(tick_at(&mut s, now() + SignedDuration::from_secs(3600)).is_empty());
    // R refreshes by hand, and asks again what the caller may do.
    let e = key(&mut s, Key::ch('R'));
    assert!(
        matches!(
            e.as_slice(),
            [
                Effect::GetOperation { .. },
                Effect::ListEvents { .. },
                Effect::Permissions { .. }
            ]
        ),
        "{e:?}"
    );
    // A running operation that completes stops the polling.
    let mut s = opened(fixtures::running_rollout());
    let mut done = fixtures::running_rollout();
    done.phase = Phase::Completed;
    tick_at(&mut s, now() + POLL_ACTIVE);
    let seq = s.seq;
    update(
        &mut s,
        Action::Operation {
            seq,
            namespace: done.namespace.clone(),
            name: done.name.clone(),
            result: Ok(done),
        },
    );
    assert_eq!(s.next_poll, None);
}

#[test]
fn a_pause_or_resume_is_followed_closely_until_the_controller_acts() {
    // Asked to pause, still running: 3 s, not the paused 10 s.
    let mut pausing = fixtures::running_rollout();
    pausing.paused = true;
    assert_eq!(opened(pausing).next_poll, Some(now() + POLL_ACTIVE));
    // Asked to resume, still paused: 3 s too.
    let mut resuming = fixtures::paused_by_user();
    resuming.paused = false;
    assert_eq!(opened(resuming).next_poll, Some(now() + POLL_ACTIVE));
    // Settled: paused polls every 10 s; a pause caused by a failure is not waiting for anything.
    assert_eq!(
        opened(fixtures::paused_by_user()).next_poll,
        Some(now() + POLL_IDLE)
    );
    let mut failed = fixtures::paused_by_failure();
    failed.paused = false;
    assert_eq!(opened(failed).next_poll, Some(now() + POLL_IDLE));
}

#[test]
fn permission_denied_and_not_found_are_shown_not_retried_and_looked_at_again_at_10_s() {
    let mut s = fixtures::state();
    start(&mut s);
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Err(ApiError::new(Code::PermissionDenied, "forbidden")),
        },
    );
    // No retry banner (the client does not retry it), but the next poll asks again.
    assert_eq!(s.conn, Conn::Ok);
    assert_eq!(s.next_poll, Some(now() + POLL_IDLE));
    let mut s = opened(fixtures::running_rollout());
    tick_at(&mut s, now() + POLL_ACTIVE);
    let seq = s.seq;
    let (ns, name) = ("default".to_string(), "prod-eu-talos-8xk2m".to_string());
    update(
        &mut s,
        Action::Operation {
            seq,
            namespace: ns,
            name,
            result: Err(ApiError::new(Code::NotFound, "gone")),
        },
    );
    assert_eq!(s.next_poll, Some(now() + POLL_ACTIVE + POLL_IDLE));
    assert!(
        s.detail.as_ref().unwrap().op.data.is_some(),
        "the last data stays"
    );
    assert!(s.stale(), "and is marked stale");
}

#[test]
fn a_list_that_cannot_be_read_keeps_polling_marked_stale_and_mends_by_itself() {
    let mut s = listed(fixtures::list());
    assert!(!s.stale());
    let first = s.last_ok;
    // The next poll fails for a reason that is not transient (an answer that cannot be read).
    let at = now() + POLL_ACTIVE;
    assert!(matches!(
        tick_at(&mut s, at).as_slice(),
        [Effect::ListOperations { .. }]
    ));
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Err(ApiError::new(
                Code::Internal,
                "decoding the answer: invalid type",
            )),
        },
    );
    assert_eq!(s.conn, Conn::Ok, "not a retry: no banner");
    assert!(s.stale(), "the rows on screen are from the last good load");
    assert!(s.load_failed());
    assert_eq!(s.last_ok, first, "data last arrived then, not now");
    assert_eq!(
        s.ops.all.data.as_ref().map(Vec::len),
        Some(fixtures::list().len())
    );
    assert_eq!(s.next_poll, Some(at + POLL_IDLE), "polled again at 10 s");
    // Nothing before then; at 10 s the list is asked for again, with no key pressed.
    assert!(tick_at(&mut s, at + POLL_ACTIVE).is_empty());
    let fails_again = tick_at(&mut s, at + POLL_IDLE);
    assert!(matches!(
        fails_again.as_slice(),
        [Effect::ListOperations { .. }]
    ));
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Err(ApiError::new(
                Code::Internal,
                "decoding the answer: invalid type",
            )),
        },
    );
    assert_eq!(s.next_poll, Some(at + POLL_IDLE + POLL_IDLE));
    // The object is fixed: the next poll answers, and everything is as before.
    let mended = at + POLL_IDLE + POLL_IDLE;
    assert_eq!(tick_at(&mut s, mended).len(), 1);
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Ok(fixtures::list()),
        },
    );
    assert!(!s.stale());
    assert_eq!(s.ops.all.error, None);
    assert_eq!(s.last_ok, Some(mended));
    assert_eq!(s.next_poll, Some(mended + POLL_ACTIVE));
}

#[test]
fn an_unreadable_operation_offers_no_write_and_does_not_speed_up_polling() {
    let mut bad = fixtures::completed();
    bad.unreadable = Some("status: invalid type: integer `42`, expected a string".into());
    bad.phase = Phase::Unknown;
    let mut s = listed(vec![bad.clone()]);
    assert_eq!(s.next_poll, Some(now() + POLL_IDLE), "nothing known to run");
    for k in ['p', 'r', 'd'] {
        assert!(key(&mut s, Key::ch(k)).is_empty());
        assert_eq!(s.dialog, None, "{k}: no question");
        assert_eq!(s.notice, Some(Notice::Unavailable(Why::Unreadable)), "{k}");
    }
    // Its page opens, says why, and follows it at 10 s.
    let s = opened(bad);
    assert_eq!(s.next_poll, Some(now() + POLL_IDLE));
}

#[test]
fn results_of_superseded_requests_are_dropped() {
    let mut s = listed(fixtures::list());
    let old = s.seq;
    key(&mut s, Key::ch('R'));
    update(
        &mut s,
        Action::Operations {
            seq: old,
            result: Ok(vec![]),
        },
    );
    assert_eq!(s.ops.all.data.as_ref().unwrap().len(), 7);
}

#[test]
fn confirmation_defaults_to_no() {
    for answer in [
        Key::plain(KeyCode::Enter),
        Key::ch('n'),
        Key::ch('N'),
        Key::plain(KeyCode::Esc),
        Key::ch('q'),
    ] {
        let mut s = opened(fixtures::running_rollout());
        assert!(key(&mut s, Key::ch('p')).is_empty());
        assert!(matches!(s.dialog, Some(Dialog::Confirm(_))));
        let e = key(&mut s, answer);
        assert!(e.is_empty(), "{answer:?} wrote: {e:?}");
        assert_eq!(s.dialog, None);
        assert!(!s.quit, "q answers the dialog first");
    }
    let mut s = opened(fixtures::running_rollout());
    key(&mut s, Key::ch('d'));
    // Other keys do nothing while the question is open.
    for k in [
        Key::ch('x'),
        Key::ch('p'),
        Key::plain(KeyCode::Down),
        Key::ch('d'),
    ] {
        assert!(key(&mut s, k).is_empty());
    }
    assert!(
        matches!(s.dialog, Some(Dialog::Confirm(ref c)) if c.asked == ichor_app::state::AskedAbout::Running && c.action == WriteAction::Delete)
    );
    let e = key(&mut s, Key::ch('y'));
    assert_eq!(
        e,
        vec![Effect::Write {
            seq: s.seq,
            action: WriteAction::Delete,
            namespace: "default".into(),
            name: "prod-eu-talos-8xk2m".into(),
            confirmed: fixtures::running_rollout().confirmed(),
        }]
    );
    assert!(s.pending.is_some(), "the screen shows the write pending");
}

#[test]
fn no_write_effect_without_a_y() {
    // Thousands of random key sequences without `y`: never a write.
    let keys = [
        Key::ch('p'),
        Key::ch('r'),
        Key::ch('d'),
        Key::ch('n'),
        Key::ch('N'),
        Key::ch('j'),
        Key::ch('k'),
        Key::ch('g'),
        Key::ch('G'),
        Key::ch('/'),
        Key::ch('?'),
        Key::ch('R'),
        Key::ch('1'),
        Key::plain(KeyCode::Enter),
        Key::plain(KeyCode::Esc),
        Key::plain(KeyCode::Tab),
        Key::plain(KeyCode::Down),
        Key::plain(KeyCode::Backspace),
        Key::ch('Y'),
        Key::ctrl('y'),
    ];
    let mut rng = fastrand::Rng::with_seed(68);
    for _ in 0..2000 {
        let mut s = listed(fixtures::list());
        for _ in 0..30 {
            let k = keys[rng.usize(..keys.len())];
            if k == Key::ch('Y') {
                continue; // `Y` is a yes too; this test is about everything else
            }
            let e = key(&mut s, k);
            assert!(!e.iter().any(Effect::is_write), "a write without y: {e:?}");
        }
    }
}

#[test]
fn resume_after_a_failure_is_not_offered() {
    let mut s = opened(fixtures::paused_by_failure());
    assert!(key(&mut s, Key::ch('r')).is_empty());
    assert_eq!(s.dialog, None);
    assert_eq!(
        s.notice,
        Some(Notice::ResumeNotOffered("edge-tokyo-talos-m4q9z".into()))
    );
    // Deleting it is offered.
    key(&mut s, Key::ch('d'));
    assert!(matches!(s.dialog, Some(Dialog::Confirm(_))));
}

#[test]
fn read_only_offers_no_write() {
    let mut s = fixtures::state();
    s.session.read_only = true;
    start(&mut s);
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Ok(fixtures::list()),
        },
    );
    for k in ['p', 'r', 'd'] {
        assert!(key(&mut s, Key::ch(k)).is_empty());
        assert_eq!(s.dialog, None);
        assert_eq!(s.notice, Some(Notice::Unavailable(Why::ReadOnly)));
    }
}

#[test]
fn a_refusal_is_shown_and_the_screen_refreshed() {
    let mut s = opened(fixtures::running_rollout());
    key(&mut s, Key::ch('p'));
    key(&mut s, Key::ch('y'));
    let seq = s.seq;
    let e = update(
        &mut s,
        Action::Written {
            seq,
            action: WriteAction::Pause,
            namespace: "default".into(),
            name: "prod-eu-talos-8xk2m".into(),
            result: Err(ApiError::new(Code::PermissionDenied, "forbidden")),
        },
    );
    assert!(matches!(s.notice, Some(Notice::Failed(_))));
    assert!(matches!(
        e.as_slice(),
        [Effect::GetOperation { .. }, Effect::ListEvents { .. }]
    ));
}

#[test]
fn deleting_the_open_operation_goes_back_to_the_list() {
    let mut s = opened(fixtures::running_rollout());
    key(&mut s, Key::ch('d'));
    key(&mut s, Key::ch('y'));
    let seq = s.seq;
    let e = update(
        &mut s,
        Action::Written {
            seq,
            action: WriteAction::Delete,
            namespace: "default".into(),
            name: "prod-eu-talos-8xk2m".into(),
            result: Ok(()),
        },
    );
    assert_eq!(s.screen, Screen::Operations);
    assert!(matches!(e.as_slice(), [Effect::ListOperations { .. }]));
}

#[test]
fn filter_typing_and_navigation() {
    let mut s = listed(fixtures::list());
    key(&mut s, Key::ch('/'));
    for c in "tokyo".chars() {
        key(&mut s, Key::ch(c));
    }
    assert_eq!(s.ops.visible.len(), 2);
    // Typing `q` in the filter types it; it does not quit.
    key(&mut s, Key::ch('q'));
    assert!(!s.quit);
    assert_eq!(s.ops.visible.len(), 0);
    key(&mut s, Key::plain(KeyCode::Backspace));
    key(&mut s, Key::plain(KeyCode::Enter));
    assert_eq!(s.ops.filter, "tokyo");
    key(&mut s, Key::ch('j'));
    assert_eq!(s.ops.selected().unwrap().name, "edge-tokyo-ichor-b5n2s");
    key(&mut s, Key::plain(KeyCode::Esc));
    assert!(s.ops.filter.is_empty());
    assert_eq!(s.ops.visible.len(), 7);
    assert_eq!(
        s.ops.selected().unwrap().name,
        "edge-tokyo-ichor-b5n2s",
        "the selection follows the row"
    );
    // Ctrl-C keeps its meaning everywhere, even in a text field.
    key(&mut s, Key::ch('/'));
    let e = key(&mut s, Key::ctrl('c'));
    assert_eq!(e, vec![Effect::Quit]);
}
