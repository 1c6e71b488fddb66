//! A production context looks like one (issue 38): PRODUCTION and the context's name in red in
//! the status bar and the frame, said in `?`, and every write (pause, resume, delete, every
//! start) asks for the cluster's name typed; and keys rebound in the config (`[keys]`) are the
//! keys in force, in the footer and `?`. Snapshots in English and Japanese at 80×24, 160×48
//! and 40×12; the writes driven against the in-process service over the embedded API, with the
//! write log checked.

use crate::common;

use common::driver::Driver;
use common::fixtures::{self, page};
use common::paths::{Path, User, connect};
use common::snap::{draw, styles};
use ichor_app::action::{Action, Effect, Key, KeyCode};
use ichor_app::rebind::KeyOverrides;
use ichor_app::state::{Dialog, Notice, State};
use ichor_app::update::update;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_model::OperationKind;
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;

fn snap(name: &str, state: &State) {
    crate::snap_all!(name, state);
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(state, lang, 40, 12, Theme::default());
        crate::snapshot!(format!("{name}_{}_40x12", lang.code()), term.backend());
    }
}

fn production(s: &mut State) {
    s.session.production = true;
    s.session.context = Some("prod-eu-admin".into());
}

#[test]
fn a_production_context_says_so_in_red_on_every_screen() {
    let mut s = fixtures::listed(fixtures::list());
    production(&mut s);
    snap("production_list", &s);
    let term = draw(&s, Lang::En, 80, 24, Theme::default());
    crate::snapshot!("production_list_styles", styles(term.backend().buffer()));
    let mut p = page(fixtures::running_rollout());
    production(&mut p);
    crate::snap_all!("production_page", &p);
    // `?` says it, on the list (the page's keys are in the rebound keys' help below).
    update(&mut s, Action::Key(Key::ch('?')));
    snap("production_help", &s);
}

/// Keys typed one by one.
fn typed(s: &mut State, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| update(s, Action::Key(Key::ch(c))))
        .collect()
}

#[test]
fn a_production_write_asks_for_the_cluster_name_typed() {
    let mut s = page(fixtures::running_rollout());
    production(&mut s);
    update(&mut s, Action::Key(Key::ch('p')));
    assert!(matches!(&s.dialog, Some(Dialog::Confirm(c)) if c.typed.as_deref() == Some("")));
    // `y` is a letter of a name here, not a yes.
    assert!(typed(&mut s, "y").is_empty());
    update(&mut s, Action::Key(Key::plain(KeyCode::Backspace)));
    typed(&mut s, "prod-e");
    snap("production_confirm_typing", &s);
    let effects = update(&mut s, Action::Key(Key::plain(KeyCode::Enter)));
    assert!(effects.is_empty() && s.dialog.is_none() && s.pending.is_none());
    assert_eq!(s.notice, Some(Notice::NameNotTyped("prod-eu".into())));
    crate::snap_all!("production_name_not_typed", &s);
    update(&mut s, Action::Key(Key::ch('p')));
    typed(&mut s, "prod-eu");
    snap("production_confirm_typed", &s);
    let effects = update(&mut s, Action::Key(Key::plain(KeyCode::Enter)));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Write {
                action: ichor_app::state::WriteAction::Pause,
                ..
            }]
        ),
        "{effects:?}"
    );
    // Esc leaves the question: nothing is written.
    let mut s = page(fixtures::running_rollout());
    production(&mut s);
    update(&mut s, Action::Key(Key::ch('d')));
    typed(&mut s, "prod-eu");
    assert!(update(&mut s, Action::Key(Key::plain(KeyCode::Esc))).is_empty());
    assert!(s.dialog.is_none());
}

#[tokio::test]
async fn every_start_in_production_asks_for_the_name() {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    let client = connect(Path::InProcess, &api, User::Admin).await;
    let mut state = fixtures::state();
    production(&mut state);
    let mut d = Driver::new(state, client).await;
    d.key(Key::ch('2')).await;
    d.key(Key::ch('n')).await;
    d.code(KeyCode::Tab).await;
    d.type_text("v1.9.3").await;
    d.code(KeyCode::Enter).await;
    let Some(Dialog::NewOperation(n)) = &d.state.dialog else {
        panic!("no Review: {:?}", d.state.dialog);
    };
    assert_eq!(n.kind, OperationKind::Talos);
    assert!(n.needs_typed_name() && n.start_offered());
    crate::snap_all!("production_review", &d.state);
    d.code(KeyCode::Enter).await;
    assert_eq!(common::operations_created(&api), 0, "no name, no start");
    assert!(api.write_log().is_empty());
    d.type_text("c1").await;
    d.code(KeyCode::Enter).await;
    common::api_settled(&api).await;
    assert_eq!(common::operations_created(&api), 1);
}

fn rebound() -> KeyOverrides {
    let entries = [("pause", "P"), ("refresh", "ctrl-r"), ("report", "W")];
    let entries: Vec<(String, Vec<String>)> = entries
        .iter()
        .map(|(a, k)| (a.to_string(), vec![k.to_string()]))
        .collect();
    KeyOverrides::new(&entries).unwrap()
}

#[test]
fn rebound_keys_are_the_keys_in_force_in_the_footer_and_help() {
    let mut s = page(fixtures::running_rollout());
    s.keys = rebound();
    crate::snap_all!("rebound_keys_page", &s);
    // The old key does nothing; the new one asks.
    update(&mut s, Action::Key(Key::ch('p')));
    assert!(s.dialog.is_none());
    update(&mut s, Action::Key(Key::ch('P')));
    assert!(matches!(s.dialog, Some(Dialog::Confirm(_))));
    update(&mut s, Action::Key(Key::plain(KeyCode::Esc)));
    let effects = update(&mut s, Action::Key(Key::ch('W')));
    assert!(
        matches!(effects.as_slice(), [Effect::SaveReport { .. }]),
        "{effects:?}"
    );
    update(&mut s, Action::Key(Key::plain(KeyCode::Esc)));
    assert_eq!(s.screen, ichor_app::state::Screen::Operations);
    update(&mut s, Action::Key(Key::ch('?')));
    snap("rebound_keys_help", &s);
    // On the page, `?` names the report key as rebound.
    let mut p = page(fixtures::running_rollout());
    p.keys = rebound();
    update(&mut p, Action::Key(Key::ch('?')));
    let term = draw(&p, Lang::En, 160, 48, Theme::default());
    let buf = term.backend().buffer();
    let rows: Vec<String> = (0..48)
        .map(|y| (0..160).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert!(rows.iter().any(|r| r.contains("│ W report │")), "{rows:#?}");
}

#[test]
fn the_report_key_is_in_the_pages_help_and_says_where_it_wrote() {
    let mut s = page(fixtures::running_rollout());
    let effects = update(&mut s, Action::Key(Key::ch('w')));
    assert_eq!(
        effects,
        vec![Effect::SaveReport {
            namespace: "default".into(),
            name: "prod-eu-talos-8xk2m".into()
        }]
    );
    update(
        &mut s,
        Action::ReportSaved {
            name: "prod-eu-talos-8xk2m".into(),
            result: Ok("/home/alice/ichor-report-prod-eu-talos-8xk2m-20261129T120000Z.md".into()),
        },
    );
    crate::snap_all!("report_saved", &s);
    update(
        &mut s,
        Action::ReportSaved {
            name: "prod-eu-talos-8xk2m".into(),
            result: Err("/home/alice/ichor-report-prod-eu-talos-8xk2m-20261129T120000Z.md: Permission denied (os error 13)".into()),
        },
    );
    crate::snap_all!("report_failed", &s);
}
