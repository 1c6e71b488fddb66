//! `/` in a text read (an operation's YAML, a page whole): the lines that hold the text are
//! marked, Enter goes to the first from where one is, `n`/`N` to the next and previous (round
//! again past either end), Esc clears the search before it closes the view.

use crate::common;

use common::fixtures::{self, page};
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{Dialog, Reading, State};
use ichor_app::update::update;
use ichor_views::i18n::{Lang, Texts};

fn snap(name: &str, state: &State) {
    crate::snap_all!(name, state);
}

/// At 40×12 in both languages, and the marks' styles at 80×24 (reversed; the current one bold
/// and underlined too).
fn snap_small_and_styles(name: &str, state: &State) {
    use common::snap::{draw, styles};
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(state, lang, 40, 12, Default::default());
        crate::snapshot!(format!("{name}_{}_40x12", lang.code()), term.backend());
    }
    let term = draw(state, Lang::En, 80, 24, Default::default());
    crate::snapshot!(format!("{name}_styles"), styles(term.backend().buffer()));
}

/// A key, then the layout as the runtime makes it before the next frame (80×24, English).
fn press(s: &mut State, k: Key) {
    update(s, Action::Key(k));
    let texts = Texts::new(Lang::En);
    let ctx = ichor_views::widgets::Ctx {
        texts: &texts,
        theme: Default::default(),
    };
    let v = ichor_views::viewport(s, &ctx, s.size);
    if v != s.viewport {
        update(s, Action::Viewport(v));
    }
}

fn typed(s: &mut State, text: &str) {
    for c in text.chars() {
        press(s, Key::ch(c));
    }
}

fn reading(s: &State) -> &Reading {
    match &s.dialog {
        Some(Dialog::Read(r)) => r,
        other => panic!("not reading: {other:?}"),
    }
}

/// An operation's YAML, 60 lines, with `needle` on lines 10, 30 and 50.
fn yaml() -> String {
    (0..60)
        .map(|i| match i {
            10 | 30 | 50 => format!("  message: Needle at {i}"),
            _ => format!("  line{i}: value"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn yaml_open() -> State {
    let op = fixtures::running_rollout();
    let mut s = page(op.clone());
    press(&mut s, Key::ch('y'));
    update(
        &mut s,
        Action::Manifest {
            namespace: op.namespace.clone(),
            name: op.name.clone(),
            result: Ok(yaml()),
        },
    );
    press(&mut s, Key::ch('j'));
    press(&mut s, Key::ch('k'));
    s
}

#[test]
fn slash_in_the_yaml_finds_marks_and_steps_through_the_lines() {
    let mut s = yaml_open();
    assert_eq!(reading(&s).scroll, 0);
    press(&mut s, Key::ch('/'));
    typed(&mut s, "needle");
    assert!(reading(&s).search.typing);
    // Typing is text: `n` and `e` went into the search, the view is still open.
    assert_eq!(reading(&s).search.text, "needle");
    snap("yaml_search_typing", &s);
    press(&mut s, Key::plain(KeyCode::Enter));
    assert_eq!(s.viewport.search.matches, 3);
    assert_eq!(reading(&s).search.at, Some(10));
    assert_eq!(reading(&s).scroll, 10);
    snap("yaml_search_found", &s);
    snap_small_and_styles("yaml_search_found", &s);
    press(&mut s, Key::ch('n'));
    assert_eq!(reading(&s).search.at, Some(30));
    press(&mut s, Key::ch('n'));
    assert_eq!(reading(&s).search.at, Some(50));
    // Past the end: from the top again (the view scrolls no further than its last page).
    press(&mut s, Key::ch('n'));
    assert_eq!(reading(&s).search.at, Some(10));
    press(&mut s, Key::ch('N'));
    assert_eq!(reading(&s).search.at, Some(50));
    press(&mut s, Key::ch('N'));
    assert_eq!(reading(&s).search.at, Some(30));
    // Esc clears the search first, then closes.
    press(&mut s, Key::plain(KeyCode::Esc));
    assert_eq!(reading(&s).search, Default::default());
    press(&mut s, Key::plain(KeyCode::Esc));
    assert_eq!(s.dialog, None);
}

#[test]
fn a_search_that_finds_nothing_says_so_and_moves_nothing() {
    let mut s = yaml_open();
    press(&mut s, Key::ch('/'));
    typed(&mut s, "absent");
    press(&mut s, Key::plain(KeyCode::Enter));
    assert_eq!(s.viewport.search.matches, 0);
    assert_eq!(reading(&s).scroll, 0);
    press(&mut s, Key::ch('n'));
    assert_eq!(reading(&s).scroll, 0);
    snap("yaml_search_none", &s);
}

#[test]
fn slash_in_the_page_read_whole_finds_a_machine() {
    let mut s = page(fixtures::running_rollout());
    press(&mut s, Key::plain(KeyCode::Enter));
    let machine = s
        .detail
        .as_ref()
        .and_then(|d| d.op.data.as_ref())
        .and_then(|o| o.machines.last())
        .map(|m| m.name.clone())
        .unwrap();
    press(&mut s, Key::ch('/'));
    typed(&mut s, &machine.to_uppercase());
    press(&mut s, Key::plain(KeyCode::Enter));
    assert_eq!(s.viewport.search.matches, 1, "case folded");
    let at = reading(&s).search.at.unwrap();
    assert!(at > 0);
    snap("whole_text_search", &s);
}
