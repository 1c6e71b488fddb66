//! Production known by its API server (issue 43): in a production context every screen is
//! marked, the new-operation form, the Review and every dialog (the y/N and typed-name
//! questions, help, the YAML, the Events) included, with the red frame and the word PRODUCTION
//! beside it (read without colour too); the status bar names the API server beside the context.
//! Snapshots in English and Japanese at 80×24, 120×36 and 160×48.

use crate::common;

use common::dialog::{dialog, select};
use common::driver::Driver;
use common::fixtures;
use common::snap::{draw, rows, styles};
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{Dialog, NewOpStep, Route, Screen, State};
use ichor_app::update::update;
use ichor_model::ApiServer;
use ichor_views::i18n::{Lang, Texts};
use ichor_views::widgets::Theme;

/// The sizes an operator reads these screens at: a small terminal, a tmux pane, a large one.
const SIZES: [(u16, u16); 3] = [(80, 24), (120, 36), (160, 48)];

fn snap(name: &str, state: &State) {
    for lang in [Lang::En, Lang::Ja] {
        for (w, h) in SIZES {
            let term = draw(state, lang, w, h, Theme::default());
            crate::snapshot!(format!("{name}_{}_{w}x{h}", lang.code()), term.backend());
        }
    }
}

fn api_server(host: &str) -> Option<ApiServer> {
    ApiServer::new("https", host, Some(6443), "")
}

/// Context `operator` of a kubeconfig whose `ichor-prod` the config marks production: both
/// reach api.prod-eu.example.com, so `operator` is production too. Reached through ichor-ui.
fn operator_in_production(s: &mut State) {
    s.session.demo = false;
    s.session.route = Route::Tunnel {
        service: "ichor-system/ichor-ui".into(),
    };
    s.session.user = Some("operator".into());
    s.session.context = Some("operator".into());
    s.session.contexts = vec!["ichor-prod".into(), "operator".into()];
    s.session.production = true;
    s.session.api_server = api_server("api.prod-eu.example.com");
}

/// The dialog's top border (the row with `title` after a corner) holds the word, in colour
/// and without, in both languages; with colour its frame is red.
fn marked(state: &State, title_id: &str, args: &[(&str, &str)]) {
    for lang in [Lang::En, Lang::Ja] {
        let t = Texts::new(lang);
        let title = t.tr(title_id, args);
        let word = t.t("badge-production-alone");
        for color in [true, false] {
            let theme = Theme {
                color,
                ..Theme::default()
            };
            let rows = rows(state, lang, 80, 24, theme);
            let head = format!("┌ {}", title.chars().take(8).collect::<String>());
            let border = rows
                .iter()
                .find_map(|r| {
                    let from = &r[r.find(&head)?..];
                    Some(from[..from.find('┐')? + '┐'.len_utf8()].to_string())
                })
                .unwrap_or_else(|| panic!("no dialog titled {title:?}:\n{}", rows.join("\n")));
            assert!(
                border.contains(&format!(" {word}")) && border.ends_with("─┐"),
                "{lang:?}, colour {color}: {border}"
            );
        }
    }
    let term = draw(state, Lang::En, 80, 24, Theme::default());
    let st = styles(term.backend().buffer());
    assert!(
        st.lines()
            .any(|l| l.contains("fg=Red") && l.contains("BOLD") && l.contains('┌')),
        "a red frame: {st}"
    );
}

#[tokio::test]
async fn the_form_and_the_review_are_marked_and_the_review_asks_for_the_name() {
    let (api, client) = crate::start_dialog::world(true).await;
    let mut state = fixtures::state();
    operator_in_production(&mut state);
    let mut d = Driver::new(state, client).await;
    d.key(Key::ch('2')).await;
    assert_eq!(d.state.screen, Screen::Clusters);
    select(&mut d, "prod-eu").await;
    d.key(Key::ch('n')).await;
    d.code(KeyCode::Tab).await;
    d.type_text("1.9.3").await;
    assert_eq!(dialog(&d).step, NewOpStep::Form);
    snap("production_form", &d.state);
    marked(&d.state, "new-title", &[("cluster", "prod-eu")]);
    d.code(KeyCode::Enter).await;
    assert_eq!(dialog(&d).step, NewOpStep::Review);
    assert!(
        dialog(&d).needs_typed_name(),
        "production asks for the name"
    );
    snap("production_review", &d.state);
    let talos = Texts::new(Lang::En).t("kind-talos");
    let ja_talos = Texts::new(Lang::Ja).t("kind-talos");
    for (lang, kind) in [(Lang::En, talos), (Lang::Ja, ja_talos)] {
        let rows = rows(&d.state, lang, 80, 24, Theme::default());
        let word = Texts::new(lang).t("badge-production-alone");
        assert!(
            rows[1].contains(&kind) && rows[1].contains(&word),
            "{}",
            rows[1]
        );
    }
    // Enter without the name starts nothing.
    d.code(KeyCode::Enter).await;
    assert!(api.write_log().is_empty(), "{:?}", api.write_log());
}

/// The rollout's page in production, laid out at 80×24.
fn page() -> State {
    let mut s = fixtures::page(fixtures::running_rollout());
    operator_in_production(&mut s);
    crate::help_screens::lay_out(&mut s, 80, 24);
    s
}

fn key(s: &mut State, k: Key) {
    update(s, Action::Key(k));
    crate::help_screens::lay_out(s, 80, 24);
}

#[test]
fn every_dialog_in_production_is_marked() {
    let name = "prod-eu-talos-8xk2m";
    // The typed-name question.
    let mut s = page();
    key(&mut s, Key::ch('p'));
    assert!(matches!(&s.dialog, Some(Dialog::Confirm(c)) if c.typed.is_some()));
    for c in "prod-e".chars() {
        key(&mut s, Key::ch(c));
    }
    snap("production_confirm", &s);
    let term = draw(&s, Lang::En, 80, 24, Theme::default());
    crate::snapshot!("production_confirm_styles", styles(term.backend().buffer()));
    marked(&s, "confirm-pause-title", &[("name", name)]);
    // Help.
    let mut s = page();
    key(&mut s, Key::ch('?'));
    marked(&s, "help-title", &[]);
    // The YAML.
    let mut s = page();
    key(&mut s, Key::ch('y'));
    let op = fixtures::running_rollout();
    update(
        &mut s,
        Action::Manifest {
            namespace: op.namespace.clone(),
            name: op.name.clone(),
            result: Ok("apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\n".into()),
        },
    );
    assert!(matches!(s.dialog, Some(Dialog::Read(_))), "{:?}", s.dialog);
    marked(&s, "reading-yaml-title", &[("name", name)]);
    // The Events.
    let mut s = page();
    key(&mut s, Key::ch('e'));
    assert!(
        matches!(s.dialog, Some(Dialog::Events { .. })),
        "{:?}",
        s.dialog
    );
    marked(&s, "events-title", &[("name", name)]);
}

#[test]
fn the_status_bar_names_the_api_server_beside_the_context() {
    // Not production: the context and its server, shortened as the terminal narrows.
    let mut s = fixtures::listed(fixtures::list());
    operator_in_production(&mut s);
    s.session.production = false;
    snap("api_server_list", &s);
    // In-process: the route says how, the context is named once, beside its server; a long
    // host is cut in the middle (its port kept).
    s.session.route = Route::InProcess {
        context: "operator".into(),
        why: None,
        asked: false,
    };
    s.session.api_server = api_server("api.prod-eu-west-1.k8s.internal.example.com");
    snap("api_server_in_process", &s);
    let row = |s: &State, w| rows(s, Lang::En, w, 24, Theme::default())[0].clone();
    for w in [80, 120, 160] {
        let bar = row(&s, w);
        // At 80 columns the route gives way first.
        let route = if w > 80 { "in-process │ " } else { "" };
        assert!(
            bar.contains(&format!(" {route}operator · API api.prod-eu-"))
                && bar.contains(".com:6443 │ "),
            "{bar}"
        );
    }
    // Production: the label names the context, the bar its server.
    operator_in_production(&mut s);
    snap("api_server_production", &s);
    let bar = row(&s, 80);
    assert!(
        bar.starts_with(" PRODUCTION operator ") && bar.contains("api.prod-eu.example.com:6443"),
        "{bar}"
    );
}
