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

// ---- A key acts only on what is on screen ----
//
// Below 40×12 the views draw only "terminal too small"; a dialog that needs more rows than the
// terminal has is not drawn either. Then no key but quit acts: each dialog at 30×10, through
// the dashboard's own stack against the embedded API, writes nothing and changes nothing.

/// The cluster `c1`; with `ops`, a running and a paused operation on it.
fn small_world(ops: bool) -> EmbeddedApi {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    if ops {
        for (name, phase, paused) in [
            ("c1-talos-running", "Running", false),
            ("c1-talos-paused", "Paused", true),
        ] {
            let mut o = common::op(name, "c1", "talos", 1);
            o.spec.paused = paused;
            o.status = Some(ichor_resources::TalosOperationStatus {
                phase: phase.into(),
                ..Default::default()
            });
            api.seed(&o).unwrap();
        }
    }
    api
}

/// The dashboard on the Operations list, as the admin, in-process.
async fn dashboard(api: &EmbeddedApi) -> Driver {
    let client = connect(Path::InProcess, api, User::Admin).await;
    Driver::new(fixtures::state(), client).await
}

/// Selects the row of `name` on the Operations list.
async fn select_op(d: &mut Driver, name: &str) {
    for _ in 0..10 {
        if d.state.ops.selected().is_some_and(|o| o.name == name) {
            return;
        }
        d.key(Key::ch('j')).await;
    }
    panic!("no operation {name}");
}

async fn resize(d: &mut Driver, w: u16, h: u16) {
    d.act(Action::Resize(w, h)).await;
}

/// `keys` one by one: none asks for anything, nothing is written, nothing changes.
async fn keys_do_nothing(d: &mut Driver, api: &EmbeddedApi, keys: &[Key], what: &str) {
    let before = d.state.clone();
    let asked = d.effects.len();
    for k in keys {
        d.key(*k).await;
        assert_eq!(d.effects[asked..], [], "{what}: {k:?} asked for something");
        assert_eq!(d.state, before, "{what}: {k:?} changed the state");
    }
    assert!(!d.state.on_screen(), "{what}: keys were off");
    assert_eq!(
        common::names(&api.write_log()),
        Vec::<String>::new(),
        "{what}"
    );
}

fn typed(s: &str) -> Vec<Key> {
    s.chars().map(Key::ch).collect()
}

/// Every key a person might press at a y/N question and around it.
fn answers() -> Vec<Key> {
    let mut keys = vec![
        Key::ch('y'),
        Key::ch('Y'),
        Key::plain(KeyCode::Enter),
        Key::ch('n'),
        Key::plain(KeyCode::Esc),
        Key::plain(KeyCode::Tab),
        Key::plain(KeyCode::BackTab),
        Key::ch('j'),
        Key::ch('d'),
        Key::ch('p'),
        Key::ch('r'),
        Key::ch('?'),
        Key::ch(':'),
        Key::ch('/'),
        Key::ch('2'),
    ];
    keys.extend(typed("yes"));
    keys
}

#[tokio::test]
async fn at_30x10_d_then_y_on_the_list_deletes_nothing() {
    let api = small_world(true);
    let mut d = dashboard(&api).await;
    select_op(&mut d, "c1-talos-running").await;
    resize(&mut d, 30, 10).await;
    api.clear_write_log();
    // The question is never drawn, so it is never asked, and `y` (the YAML view here) is off.
    keys_do_nothing(&mut d, &api, &answers(), "30×10, the list").await;
    assert_eq!(d.state.dialog, None);
}

#[tokio::test]
async fn a_confirm_for_pause_resume_or_delete_is_not_answered_once_the_terminal_shrinks() {
    for (key, op) in [
        ('p', "c1-talos-running"),
        ('r', "c1-talos-paused"),
        ('d', "c1-talos-running"),
    ] {
        let api = small_world(true);
        let mut d = dashboard(&api).await;
        select_op(&mut d, op).await;
        // Asked at 80×24, where the question is drawn; then the terminal shrinks.
        d.key(Key::ch(key)).await;
        assert!(
            matches!(d.state.dialog, Some(Dialog::Confirm(_))),
            "{key}: {:?}",
            d.state.dialog
        );
        resize(&mut d, 30, 10).await;
        api.clear_write_log();
        keys_do_nothing(&mut d, &api, &answers(), &format!("{key} at 30×10")).await;
        // Larger again: the question is on screen again, and it is answered as asked.
        resize(&mut d, 80, 24).await;
        assert!(d.state.on_screen());
        assert!(matches!(d.state.dialog, Some(Dialog::Confirm(_))));
        d.key(Key::ch('n')).await;
        assert_eq!(d.state.dialog, None);
        assert!(api.write_log().is_empty(), "{key}: No writes nothing");
    }
}

#[tokio::test]
async fn q_quits_while_the_terminal_is_too_small_and_answers_nothing() {
    let api = small_world(true);
    let mut d = dashboard(&api).await;
    select_op(&mut d, "c1-talos-running").await;
    d.key(Key::ch('d')).await;
    resize(&mut d, 30, 10).await;
    api.clear_write_log();
    d.key(Key::ch('q')).await;
    assert!(d.state.quit, "the screen says q quits");
    assert!(!d.wrote());
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn a_question_not_drawn_yet_takes_no_answer() {
    // `d` and `y` in one burst (one frame): the question was not on screen when `y` came.
    let api = small_world(true);
    let mut d = dashboard(&api).await;
    select_op(&mut d, "c1-talos-running").await;
    assert!(update(&mut d.state, Action::Key(Key::ch('d'))).is_empty());
    assert!(update(&mut d.state, Action::Key(Key::ch('y'))).is_empty());
    assert!(matches!(d.state.dialog, Some(Dialog::Confirm(_))));
    // Once drawn, it is answered.
    d.lay_out();
    let e = update(&mut d.state, Action::Key(Key::ch('y')));
    assert!(matches!(e.as_slice(), [Effect::Write { .. }]), "{e:?}");
}

#[tokio::test]
async fn the_new_operation_dialog_takes_no_keys_while_it_is_not_drawn() {
    let api = small_world(false);
    let client = connect(Path::InProcess, &api, User::Admin).await;
    let mut d = on_clusters(client).await;
    select(&mut d, "c1").await;
    // At 30×10 `n` opens nothing.
    resize(&mut d, 30, 10).await;
    api.clear_write_log();
    let mut keys = vec![Key::ch('n'), Key::plain(KeyCode::Tab)];
    keys.extend(typed("v1.9.3"));
    keys.extend([Key::plain(KeyCode::Enter), Key::plain(KeyCode::Enter)]);
    keys_do_nothing(&mut d, &api, &keys, "30×10, Clusters").await;
    // The form, opened at 80×24; at 30×10 it takes no key (at 40×12 it scrolls to its
    // focused field and takes them: tests/titles.rs).
    resize(&mut d, 80, 24).await;
    d.key(Key::ch('n')).await;
    assert_eq!(dialog(&d).step, NewOpStep::Form);
    let mut keys = vec![Key::plain(KeyCode::Tab), Key::plain(KeyCode::Down)];
    keys.extend(typed("v1.9.3"));
    keys.extend([Key::plain(KeyCode::Enter), Key::plain(KeyCode::Esc)]);
    resize(&mut d, 30, 10).await;
    keys_do_nothing(&mut d, &api, &keys, "the form at 30×10").await;
    // The Review, with its plan on screen at 80×24; Start at 30×10 starts nothing.
    resize(&mut d, 80, 24).await;
    d.key(Key::plain(KeyCode::Tab)).await;
    d.type_text("v1.9.3").await;
    d.key(Key::plain(KeyCode::Enter)).await;
    assert_eq!(dialog(&d).step, NewOpStep::Review);
    assert!(dialog(&d).can_start(), "{:?}", dialog(&d).plan);
    resize(&mut d, 30, 10).await;
    api.clear_write_log();
    let keys = [
        Key::plain(KeyCode::Enter),
        Key::ch('b'),
        Key::ch('R'),
        Key::plain(KeyCode::Down),
        Key::plain(KeyCode::Esc),
    ];
    keys_do_nothing(&mut d, &api, &keys, "the Review at 30×10").await;
    assert!(!d.effects.iter().any(|e| matches!(e, Effect::Create { .. })));
}

#[tokio::test]
async fn the_command_line_takes_no_keys_while_too_small() {
    let api = small_world(true);
    let mut d = dashboard(&api).await;
    // At 120×10 (wide, but too short): `:` Shift-Tab Enter would be `:q`.
    resize(&mut d, 120, 10).await;
    api.clear_write_log();
    let keys = [
        Key::ch(':'),
        Key::plain(KeyCode::BackTab),
        Key::plain(KeyCode::Enter),
    ];
    keys_do_nothing(&mut d, &api, &keys, "`:` at 120×10").await;
    // Opened at 80×24, then shrunk to 30×10.
    resize(&mut d, 80, 24).await;
    d.key(Key::ch(':')).await;
    assert_eq!(d.state.input, Input::Command);
    resize(&mut d, 30, 10).await;
    let mut keys = vec![Key::plain(KeyCode::BackTab), Key::plain(KeyCode::Enter)];
    keys.extend(typed("ops"));
    keys.extend([Key::plain(KeyCode::Enter), Key::plain(KeyCode::Esc)]);
    keys_do_nothing(&mut d, &api, &keys, "the command line at 30×10").await;
    assert!(!d.state.quit);
}

#[tokio::test]
async fn the_keys_help_and_the_yaml_view_take_no_keys_while_too_small() {
    let api = small_world(true);
    let mut d = dashboard(&api).await;
    resize(&mut d, 30, 10).await;
    api.clear_write_log();
    keys_do_nothing(&mut d, &api, &[Key::ch('?')], "`?` at 30×10").await;
    for open in ['?', 'y'] {
        resize(&mut d, 80, 24).await;
        d.key(Key::ch(open)).await;
        assert!(
            matches!(d.state.dialog, Some(Dialog::Read(_))),
            "{open}: {:?}",
            d.state.dialog
        );
        resize(&mut d, 30, 10).await;
        let keys = [
            Key::ch('j'),
            Key::plain(KeyCode::PageDown),
            Key::plain(KeyCode::Esc),
            Key::plain(KeyCode::Enter),
            Key::ch('d'),
            Key::ch('y'),
        ];
        keys_do_nothing(&mut d, &api, &keys, &format!("{open} at 30×10")).await;
        resize(&mut d, 80, 24).await;
        d.key(Key::plain(KeyCode::Esc)).await;
        assert_eq!(d.state.dialog, None);
    }
}

#[tokio::test]
async fn the_filter_takes_no_keys_while_too_small() {
    let api = small_world(true);
    let mut d = dashboard(&api).await;
    resize(&mut d, 30, 10).await;
    api.clear_write_log();
    let mut keys = vec![Key::ch('/')];
    keys.extend(typed("paused"));
    keys_do_nothing(&mut d, &api, &keys, "`/` at 30×10").await;
    resize(&mut d, 80, 24).await;
    d.key(Key::ch('/')).await;
    assert_eq!(d.state.input, Input::Filter);
    resize(&mut d, 30, 10).await;
    let mut keys = typed("paused");
    keys.extend([
        Key::plain(KeyCode::Backspace),
        Key::plain(KeyCode::Enter),
        Key::plain(KeyCode::Esc),
    ]);
    keys_do_nothing(&mut d, &api, &keys, "the filter at 30×10").await;
    assert!(d.state.ops.filter.is_empty());
}

/// A poll's answer with `ops` (a changed page).
fn answered(s: &mut State, ops: Vec<ichor_model::Operation>) -> Vec<Effect> {
    let seq = s.seq;
    update(
        s,
        Action::OperationsPage {
            seq,
            more: false,
            result: Ok(ichor_model::OperationPage {
                total: ops.len(),
                version: format!("v{}", s.revision),
                operations: ops,
                ..Default::default()
            }),
        },
    )
}

fn notified(effects: &[Effect]) -> Vec<(ichor_app::state::Outcome, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Notify { outcome, name, .. } => Some((*outcome, name.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn an_outcome_is_said_once_and_never_for_the_first_state_seen() {
    use ichor_app::state::Outcome;
    let mut s = fixtures::state();
    s.notifications.on = true;
    start(&mut s);
    let running = fixtures::running_rollout();
    let first = answered(&mut s, vec![running.clone(), fixtures::completed()]);
    assert!(
        notified(&first).is_empty(),
        "the first state seen is never said"
    );
    let mut done = running.clone();
    done.phase = Phase::Completed;
    done.resource_version.push('1');
    let change = answered(&mut s, vec![done.clone(), fixtures::completed()]);
    assert_eq!(
        notified(&change),
        [(Outcome::Completed, running.name.clone())]
    );
    done.resource_version.push('2');
    let again = answered(&mut s, vec![done, fixtures::completed()]);
    assert!(notified(&again).is_empty(), "never twice for one change");
    // A failure pause of another one is said; off, nothing is.
    let mut failed = fixtures::paused_by_failure();
    let mut before = failed.clone();
    before.phase = Phase::Running;
    before.failure_reason = None;
    answered(&mut s, vec![before.clone()]);
    failed.resource_version.push('3');
    let said = answered(&mut s, vec![failed.clone()]);
    assert_eq!(notified(&said), [(Outcome::Failed, failed.name.clone())]);
    let mut quiet = fixtures::state();
    start(&mut quiet);
    answered(&mut quiet, vec![before]);
    assert!(
        notified(&answered(&mut quiet, vec![failed])).is_empty(),
        "off: nothing"
    );
}

#[test]
fn what_a_key_was_told_before_an_outage_is_not_said_again_after_it() {
    let mut s = listed(fixtures::list());
    s.session.read_only = true;
    let retrying = ichor_model::RetryEvent::Retrying {
        what: "listing operations".into(),
        attempt: 1,
        delay: std::time::Duration::from_secs(2),
        since: now(),
        error: ApiError::new(Code::Unavailable, "connection refused"),
    };
    let recovered = ichor_model::RetryEvent::Recovered {
        what: "listing operations".into(),
    };
    // Pressed before the outage: its answer ends with the state it answered.
    key(&mut s, Key::ch('p'));
    assert_eq!(s.notice, Some(Notice::Unavailable(Why::ReadOnly)));
    update(&mut s, Action::Retry(retrying.clone()));
    assert_eq!(s.notice, None);
    // Pressed during it (hidden under the connection's banner): not said after it either.
    key(&mut s, Key::ch('p'));
    assert_eq!(s.notice, Some(Notice::Unavailable(Why::ReadOnly)));
    update(&mut s, Action::Retry(recovered));
    assert_eq!(s.conn, Conn::Ok);
    assert_eq!(s.notice, None);
    // A write's outcome is not a key's answer: it stays.
    s.notice = Some(Notice::Done(
        WriteAction::Pause,
        "prod-eu-talos-8xk2m".into(),
    ));
    update(&mut s, Action::Retry(retrying));
    assert_eq!(
        s.notice,
        Some(Notice::Done(
            WriteAction::Pause,
            "prod-eu-talos-8xk2m".into()
        ))
    );
}
