//! No title loses its last characters without an ellipsis (issue 25, item 5): every screen
//! and dialog, in English and Japanese, at 40×12, 40×14, 80×24 and 128×24, is drawn and each
//! box's top-right corner must follow a border, a space or `…`, never a letter; and no box
//! sits on another's top border.

use crate::common;

use crate::help_screens::lay_out;
use common::dialog::{dialog, form, on_clusters, review, select};
use common::fixtures;
use common::snap::draw;
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::State;
use ichor_app::update::update;
use ichor_model::OperationKind;
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;

const SIZES: [(u16, u16); 4] = [(40, 12), (40, 14), (80, 24), (128, 24)];

/// Each row of the frame as characters (a wide one once).
fn rows_of(state: &State, lang: Lang, w: u16, h: u16) -> Vec<Vec<char>> {
    crate::help_screens::rows_of(state, lang, w, h)
        .into_iter()
        .map(|row| row.chars().collect())
        .collect()
}

/// What is wrong with the titles of `state`'s frames, one line each.
fn title_faults(name: &str, state: &State) -> Vec<String> {
    let mut faults = Vec::new();
    for lang in [Lang::En, Lang::Ja] {
        for (w, h) in SIZES {
            let mut s = state.clone();
            lay_out(&mut s, w, h);
            for (y, row) in rows_of(&s, lang, w, h).iter().enumerate() {
                let line: String = row.iter().collect();
                for (i, c) in row.iter().enumerate().skip(1) {
                    let before = row[i - 1];
                    let cut = *c == '┐' && !"─ …┐│┘".contains(before);
                    let stacked = *c == '┌' && before == '─';
                    if cut || stacked {
                        faults.push(format!("{name} {} {w}x{h} row {y}: {line}", lang.code()));
                    }
                }
            }
        }
    }
    faults
}

fn key(s: &mut State, k: Key) {
    update(s, Action::Key(k));
    lay_out(s, 80, 24);
}

/// The screens and dialogs drawn from fixtures, by name.
fn fixture_states() -> Vec<(String, State)> {
    let mut out = Vec::new();
    let mut list = fixtures::listed(fixtures::list());
    lay_out(&mut list, 80, 24);
    out.push(("operations".into(), list.clone()));
    let mut keys = list.clone();
    key(&mut keys, Key::ch('?'));
    out.push(("keys".into(), keys));
    for (op, k) in [
        (fixtures::running_rollout(), 'p'),
        (fixtures::paused_by_user(), 'r'),
        (fixtures::running_rollout(), 'd'),
        (fixtures::paused_by_failure(), 'd'),
    ] {
        let mut s = fixtures::page(op);
        lay_out(&mut s, 80, 24);
        out.push((
            format!("page {}", s.detail.as_ref().unwrap().name),
            s.clone(),
        ));
        key(&mut s, Key::ch(k));
        out.push((format!("confirm {k}"), s));
    }
    let mut page = fixtures::page(fixtures::running_rollout());
    lay_out(&mut page, 80, 24);
    for (what, k) in [
        ("events", Key::ch('e')),
        ("whole text", Key::plain(KeyCode::Enter)),
        ("yaml", Key::ch('y')),
    ] {
        let mut s = page.clone();
        key(&mut s, k);
        out.push((what.into(), s));
    }
    out
}

/// The y/N question at 40×12: its title keeps its question mark or ends in `…`.
#[test]
fn the_pause_question_at_40_by_12() {
    let mut s = fixtures::page(fixtures::running_rollout());
    lay_out(&mut s, 40, 12);
    update(&mut s, Action::Key(Key::ch('p')));
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(&s, lang, 40, 12, Theme::default());
        crate::snapshot!(
            format!("confirm_pause_{}_40x12", lang.code()),
            term.backend()
        );
    }
}

#[test]
fn no_title_of_the_fixtures_is_cut_without_an_ellipsis() {
    let faults: Vec<String> = fixture_states()
        .iter()
        .flat_map(|(name, s)| title_faults(name, s))
        .collect();
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[tokio::test]
async fn no_title_of_the_clusters_or_the_new_operation_is_cut_without_an_ellipsis() {
    let (_api, client) = crate::help_screens::demo_client().await;
    let mut states = Vec::new();
    let mut d = on_clusters(client.clone()).await;
    states.push(("clusters".to_string(), d.state.clone()));
    // A filter typed makes the title longer.
    d.key(Key::ch('/')).await;
    d.type_text("prod").await;
    states.push(("clusters filtered".to_string(), d.state.clone()));
    d.code(KeyCode::Esc).await;
    select(&mut d, "prod-eu").await;
    d.code(KeyCode::Enter).await;
    states.push(("cluster".to_string(), d.state.clone()));
    // The keys over a cluster's page (at 128×24 they once sat on the frame's top border).
    d.key(Key::ch('?')).await;
    states.push(("cluster keys".to_string(), d.state.clone()));
    for kind in OperationKind::ALL {
        let f = form(client.clone(), "prod-eu", kind).await;
        assert_eq!(dialog(&f).kind, kind);
        states.push((format!("form {}", kind.as_str()), f.state.clone()));
    }
    let r = review(client, "prod-eu", OperationKind::Talos, Some("1.9.3")).await;
    states.push(("review".to_string(), r.state.clone()));
    let faults: Vec<String> = states
        .iter()
        .flat_map(|(name, s)| title_faults(name, s))
        .collect();
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// The form at 40×12, laid out there, `kind` chosen and `typed` typed into its first field.
async fn small_form(
    client: std::sync::Arc<dyn ichor_model::OperationClient>,
    kind: OperationKind,
    typed: &str,
) -> common::driver::Driver {
    let mut d = form(client, "prod-eu", kind).await;
    d.act(Action::Resize(40, 12)).await;
    d.lay_out();
    d.code(KeyCode::Tab).await;
    d.type_text(typed).await;
    d
}

#[tokio::test]
async fn at_40_by_12_the_form_shows_the_field_typed_into_and_what_is_hidden() {
    let (_api, client) = crate::help_screens::demo_client().await;
    for lang in [Lang::En, Lang::Ja] {
        for (kind, typed) in [
            (OperationKind::Talos, "1.9.3"),
            (OperationKind::Kubernetes, "1.33"),
            (OperationKind::Ichor, "0.15.0"),
        ] {
            let d = small_form(client.clone(), kind, typed).await;
            assert_eq!(
                dialog(&d).target,
                typed,
                "{kind:?}: the keys reached the field"
            );
            let said = crate::help_screens::flat(&d.state, lang, 40, 12);
            assert!(said.contains(&format!("[{typed}▏]")), "{kind:?}: {said}");
            let more = match lang {
                Lang::En => "lines above",
                Lang::Ja => "上に",
            };
            assert!(said.contains(more), "{kind:?}: no marker: {said}");
        }
    }
    // Max unavailable, the last field, too.
    let mut d = small_form(client.clone(), OperationKind::Talos, "1.9.3").await;
    d.code(KeyCode::Tab).await;
    d.key(Key::ctrl('u')).await;
    d.type_text("2").await;
    let said = crate::help_screens::flat(&d.state, Lang::En, 40, 12);
    assert!(said.contains("[2▏]"), "{said}");
    let d = small_form(client, OperationKind::Talos, "1.9.3").await;
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(&d.state, lang, 40, 12, Theme::default());
        crate::snapshot!(format!("form_typed_{}_40x12", lang.code()), term.backend());
    }
}
