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
