//! Text fields take every printable key as text, capitals, `?` and the keys that are commands
//! elsewhere included (the filter, the command line, the form's fields, the typed name); only
//! keys that cannot be text act there.

use crate::common;

use common::dialog::{dialog, form, review};
use common::fixtures::{self, listed};
use ichor_app::action::{Action, Effect, Key, KeyCode};
use ichor_app::state::{Dialog, FormField, Input, State};
use ichor_app::update::update;
use ichor_model::OperationKind;

/// Every printable key a person might type that is a command somewhere: the sort keys, `R`,
/// `?`, `q`, `j`/`k`, `/`, `:`.
const TYPED: &str = "Staging XSRN?qjk/:";

fn typed(s: &mut State, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| update(s, Action::Key(Key::ch(c))))
        .collect()
}

#[test]
fn the_filter_takes_capitals_and_command_keys_as_text() {
    let mut s = listed(fixtures::list());
    let order = s.ops.order;
    update(&mut s, Action::Key(Key::ch('/')));
    assert_eq!(s.input, Input::Filter);
    let effects = typed(&mut s, TYPED);
    assert_eq!(s.ops.filter, TYPED);
    assert_eq!(s.ops.order, order, "Shift-S and the like did not sort");
    assert!(s.dialog.is_none(), "? did not open the help");
    assert!(effects.is_empty(), "nothing asked: {effects:?}");
    assert_eq!(s.input, Input::Filter, "still typing");
}

#[test]
fn the_command_line_takes_capitals_and_command_keys_as_text() {
    let mut s = listed(fixtures::list());
    update(&mut s, Action::Key(Key::ch(':')));
    assert_eq!(s.input, Input::Command);
    let effects = typed(&mut s, TYPED);
    assert_eq!(s.command.text, TYPED);
    assert!(s.dialog.is_none());
    assert!(effects.is_empty(), "{effects:?}");
}

/// The form's version and max unavailable take every printable key (what is not a version or
/// a number is said where it is typed); `?` opens the keys only on the kind, which takes no
/// text.
#[tokio::test]
async fn the_forms_fields_take_every_printable_key() {
    let (_api, client) = crate::start_dialog::world(true).await;
    let mut d = form(client, "prod-eu", OperationKind::Talos).await;
    d.key(Key::ch('?')).await;
    assert!(
        matches!(d.state.dialog, Some(Dialog::Read(_))),
        "? on the kind: the keys"
    );
    d.key(Key::ch('?')).await;
    assert!(matches!(d.state.dialog, Some(Dialog::NewOperation(_))));
    d.code(KeyCode::Tab).await;
    assert_eq!(dialog(&d).field, FormField::Target);
    d.type_text("V1.9.3?R").await;
    assert_eq!(dialog(&d).target, "V1.9.3?R");
    d.key(Key::ctrl('u')).await;
    d.type_text("v1.9.3").await;
    d.code(KeyCode::Tab).await;
    assert_eq!(dialog(&d).field, FormField::MaxUnavailable);
    d.key(Key::ctrl('u')).await;
    d.type_text("2x").await;
    assert_eq!(
        dialog(&d).max_unavailable,
        "2x",
        "typed, and said not a number"
    );
    let before = d.effects.len();
    d.code(KeyCode::Enter).await;
    assert!(
        !d.effects[before..]
            .iter()
            .any(|e| matches!(e, Effect::Plan { .. })),
        "no review of a form that is wrong"
    );
    assert_eq!(dialog(&d).field, FormField::MaxUnavailable);
}

/// The typed name takes capitals, `R` and `?` as typed: none of them re-plans, opens the keys
/// or is lost; Ctrl-R reviews again (and the name must be typed again).
#[tokio::test]
async fn the_typed_name_takes_every_printable_key_and_ctrl_r_reviews_again() {
    let (api, client) = crate::start_dialog::world(true).await;
    let mut d = review(client, "prod-eu", OperationKind::Shutdown, None).await;
    assert!(dialog(&d).takes_text());
    let before = d.effects.len();
    d.type_text(TYPED).await;
    assert_eq!(dialog(&d).typed_name, TYPED, "every key typed, none lost");
    assert!(
        matches!(d.state.dialog, Some(Dialog::NewOperation(_))),
        "? typed, no keys shown"
    );
    assert!(
        d.effects[before..].is_empty(),
        "R did not review again: {:?}",
        &d.effects[before..]
    );
    d.code(KeyCode::Enter).await;
    assert!(!d.wrote(), "not the name: no start");
    d.key(Key::ctrl('r')).await;
    assert!(
        d.effects[before..]
            .iter()
            .any(|e| matches!(e, Effect::Plan { .. })),
        "Ctrl-R reviews again"
    );
    assert_eq!(dialog(&d).typed_name, "", "typed again for the new plan");
    assert!(api.write_log().is_empty(), "nothing written");
}

/// The filter finds a row by the words it shows, state words included, in the language on
/// screen: `/failed` the row that reads "✗ Paused: failed", `/失敗` the same row in Japanese.
#[test]
fn the_filter_matches_the_words_the_row_shows() {
    let failed = fixtures::paused_by_failure();
    for needle in ["failed", "Paused: f", "失敗で"] {
        let mut s = listed(fixtures::list());
        update(&mut s, Action::Key(Key::ch('/')));
        typed(&mut s, needle);
        let shown: Vec<&str> = s
            .ops
            .visible
            .iter()
            .map(|&i| s.ops.all.data.as_ref().unwrap()[i].name.as_str())
            .collect();
        assert_eq!(shown, [failed.name.as_str()], "{needle}");
    }
}
