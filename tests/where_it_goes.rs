//! Where an operation goes (issue 25, item 3): every list row and page says current → target
//! when the start recorded them, the demo's seeded operations included.

use crate::common;
use crate::help_screens::demo_client;

use common::fixtures;
use common::snap::draw;
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;

fn screen_text(w: u16, h: u16, lang: Lang) -> Vec<String> {
    let s = fixtures::listed(fixtures::list());
    let term = draw(&s, lang, w, h, Theme::default());
    let buf = term.backend().buffer();
    (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

#[tokio::test]
async fn the_demos_seeded_operations_say_where_they_go() {
    let (_api, client) = demo_client().await;
    let ops = client.list_operations(Some("default")).await.unwrap();
    for op in &ops {
        if op.kind.is_some_and(|k| k.takes_target()) {
            assert!(
                op.current.is_some() && op.target.is_some(),
                "{} records no current → target",
                op.name
            );
        }
    }
    let tokyo = ops
        .iter()
        .find(|o| o.name == "edge-tokyo-talos-m4q9z")
        .unwrap();
    assert_eq!(
        (tokyo.current.as_deref(), tokyo.target.as_deref()),
        (Some("v1.9.2"), Some("v1.9.3"))
    );
}

#[test]
fn every_list_row_says_where_it_goes_at_every_width() {
    for lang in [Lang::En, Lang::Ja] {
        let wide = screen_text(160, 48, lang);
        let row = |rows: &[String], name: &str| {
            rows.iter()
                .find(|r| r.contains(name))
                .cloned()
                .unwrap_or_default()
        };
        let rollout = row(&wide, "prod-eu-talos-8xk2m");
        assert!(rollout.contains("v1.9.2 → v1.9.3"), "{rollout}");
        let shutdown = row(&wide, "staging-shutdown-k3r7d");
        assert!(!shutdown.contains('→'), "{shutdown}");
        let narrow = screen_text(80, 24, lang);
        let rollout = row(&narrow, "8xk2m");
        assert!(rollout.contains("v1.9.3"), "{lang:?} at 80: {rollout}");
    }
}

/// At 40×12 the target gives way before the name and the state (it is on the page).
#[test]
fn the_list_at_40_columns() {
    let s = fixtures::listed(fixtures::list());
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(&s, lang, 40, 12, Theme::default());
        crate::snapshot!(
            format!("operations_list_{}_40x12", lang.code()),
            term.backend()
        );
    }
}

/// The demo's clusters as the Clusters screen shows them: edge-tokyo's spec names v1.9.3, but
/// three of its eight machines run v1.9.2 (its upgrade stopped at the sixth); staging's upgrade
/// is under way; prod-eu runs what its spec names.
#[tokio::test]
async fn clusters_say_what_the_machines_run_beside_the_spec() {
    use ichor_app::action::{Action, Key, KeyCode};
    use ichor_app::update::update;
    let (_api, client) = demo_client().await;
    let clusters = client.list_clusters(Some("default")).await.unwrap();
    let mut s = fixtures::listed(fixtures::list());
    update(&mut s, Action::Key(Key::ch('2')));
    let seq = s.seq;
    update(
        &mut s,
        Action::Clusters {
            seq,
            result: Ok(clusters),
        },
    );
    let wide = screen_of(&s, 160, 48, Lang::En);
    let tokyo = wide.iter().find(|r| r.contains("edge-tokyo")).unwrap();
    assert!(tokyo.contains("v1.9.3 (3 of 8 run v1.9.2)"), "{tokyo}");
    let prod = wide.iter().find(|r| r.contains("prod-eu")).unwrap();
    assert!(!prod.contains(" run "), "{prod}");
    let narrow = screen_of(&s, 80, 24, Lang::En);
    let tokyo = narrow.iter().find(|r| r.contains("edge-tokyo")).unwrap();
    assert!(tokyo.contains("v1.9.3 (3 differ)"), "{tokyo}");
    assert!(tokyo.contains("Talos · Paused"), "{tokyo}");
    crate::snap_all!("clusters_running_versions", &s);
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(&s, lang, 40, 12, Theme::default());
        crate::snapshot!(
            format!("clusters_running_versions_{}_40x12", lang.code()),
            term.backend()
        );
    }
    // The cluster's page says it too.
    update(&mut s, Action::Key(Key::plain(KeyCode::Enter)));
    let page = screen_of(&s, 160, 48, Lang::En).join("\n");
    assert!(
        page.contains("(3 of 8 run v1.9.2)") || page.contains("(1 of 4 run v1.9.2)"),
        "{page}"
    );
    crate::snap_all!("cluster_page_running_versions", &s);
}

fn screen_of(s: &ichor_app::state::State, w: u16, h: u16, lang: Lang) -> Vec<String> {
    let term = draw(s, lang, w, h, Theme::default());
    let buf = term.backend().buffer();
    (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

/// After "delete and start again" on edge-tokyo, the Review says which machines already report
/// the target and, in the ADR's words, what is done with them (from the plan).
#[tokio::test]
async fn the_review_says_which_machines_already_run_the_target() {
    use crate::help_screens::flat;
    use ichor_demo::apiserver::auth::users;
    let (api, client) = demo_client().await;
    let ops: kube::Api<ichor_resources::TalosOperation> =
        kube::Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    ops.delete("edge-tokyo-talos-m4q9z", &Default::default())
        .await
        .unwrap();
    let d = common::dialog::review(
        client,
        "edge-tokyo",
        ichor_model::OperationKind::Talos,
        Some("v1.9.3"),
    )
    .await;
    let said = flat(&d.state, Lang::En, 160, 48);
    assert!(
        said.contains("5 of the 8 machines already report v1.9.3 (edge-tokyo-cp1, edge-tokyo-cp2, edge-tokyo-cp3, edge-tokyo-w01, edge-tokyo-w02). The plan does not leave them out: they are in the steps, in the order the executor handles the machines. The executor takes the target from the spec when each machine's turn comes."),
        "{said}"
    );
    crate::snap_all!("review_runs_target", &d.state);
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(&d.state, lang, 40, 12, Theme::default());
        crate::snapshot!(
            format!("review_runs_target_{}_40x12", lang.code()),
            term.backend()
        );
    }
}

/// At 80 columns the name wins width over the other columns' room (issue 25, item 5): the bar
/// gives way to the count alone, the kind and the target to their short forms and the cluster
/// to 8 before the name is cut; a name still too long is cut with `…` (in the middle: the end
/// is what tells two operations of one kind on one cluster apart).
#[test]
fn the_name_wins_width_at_80_columns() {
    let mut ops = fixtures::list();
    let mut long = fixtures::running_rollout();
    long.name = "prod-eu-talos-upgrade-to-v1-9-3-requested-by-carol-x9k2q".into();
    ops.insert(0, long);
    let s = fixtures::listed(ops);
    for lang in [Lang::En, Lang::Ja] {
        let rows = screen_of(&s, 80, 24, lang);
        let name_cell = |suffix: &str| {
            let row = rows
                .iter()
                .find(|r| r.contains(suffix))
                .cloned()
                .unwrap_or_default();
            row.trim_start_matches(['│', '>', ' '])
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let cut = name_cell("x9k2q");
        assert!(
            cut.starts_with("prod-eu-") && cut.contains('…'),
            "{lang:?}: {cut}"
        );
        // Wider than the 12 it had.
        assert!(cut.chars().count() >= 16, "{lang:?}: {cut}");
        let rollout = rows
            .iter()
            .find(|r| r.contains("8xk2m"))
            .cloned()
            .unwrap_or_default();
        assert!(
            rollout.contains("6/14") && !rollout.contains('█'),
            "{lang:?}: {rollout}"
        );
    }
    crate::snap_all!("operations_long_name", &s);
}
