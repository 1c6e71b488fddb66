//! A key acts only on what is on screen.
//!
//! Below 40×12 the views draw only "terminal too small"; a dialog that needs more rows than the
//! terminal has is not drawn either. Then no key but quit acts: each dialog at 30×10, through
//! the dashboard's own stack against the embedded API, writes nothing and changes nothing.

use super::*;

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
