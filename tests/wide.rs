//! Terminals that draw East Asian "ambiguous" characters two columns wide (Tera Term and PuTTY
//! set to Japanese, mintty under a ja locale, `xterm -cjk_width`): the main screens in wide
//! mode (no ambiguous character drawn, cluster text included), and `--ambiguous-width auto`
//! against terminals that answer as wide ones, as narrow ones, and not at all.
//! (Every screen the other snapshot tests draw is also checked in wide mode: `common::snap`.)

use crate::common;
use crate::common::pty;

use common::dialog::{on_clusters, review, select};
use common::fixtures::{self, page};
use common::snap::{assert_nothing_ambiguous, draw_only, east_asian_ambiguous};
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::State;
use ichor_app::update::update;
use ichor_client::inprocess::InProcessClient;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_demo::demo;
use ichor_model::OperationClient;
use ichor_model::{MachinePhase, OperationKind};
use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;
use pty::{Answers, Spawn};
use std::path::Path;
use std::sync::Arc;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

const WIDE: Theme = Theme {
    color: true,
    ascii: false,
    wide_ambiguous: true,
};

/// Snapshots `state` in Japanese, wide mode, at 80×24 and 160×48, named `NAME_ja_wide_WxH`.
fn snap_wide(name: &str, state: &State) {
    for (w, h) in common::snap::SIZES {
        let term = draw_only(state, Lang::Ja, w, h, WIDE);
        assert_nothing_ambiguous(term.backend().buffer());
        crate::snapshot!(format!("{name}_ja_wide_{w}x{h}"), term.backend());
    }
}

#[test]
fn the_operations_list_and_an_operation() {
    snap_wide("operations_list", &fixtures::listed(fixtures::list()));
    snap_wide("operation_running", &page(fixtures::running_rollout()));
    let mut failed = page(fixtures::paused_by_failure());
    update(&mut failed, Action::Key(Key::ch('r')));
    snap_wide("operation_paused_by_failure", &failed);
    let mut confirm = page(fixtures::running_rollout());
    update(&mut confirm, Action::Key(Key::ch('p')));
    snap_wide("operation_confirm_pause", &confirm);
    let mut help = fixtures::listed(fixtures::list());
    update(&mut help, Action::Key(Key::ch('?')));
    snap_wide("operations_help", &help);
}

/// Cluster text full of ambiguous characters, as operators write it: Latin letters with
/// accents, circled digits, a reference mark, arrows, Cyrillic.
#[test]
fn cluster_text_with_ambiguous_characters_is_shown_by_stand_ins() {
    let mut op = fixtures::running_rollout();
    op.actor = Some("renée@example.com".into());
    op.machines[6].message = "① ディスク交換 → 再起動中…".into();
    op.machines[10] = fixtures::machine(
        "prod-eu-w08",
        MachinePhase::Skipped,
        "※ RAID 交換待ち（Д-2 ラック、担当 José）",
        None,
        None,
    );
    let state = page(op);
    snap_wide("operation_ambiguous_cluster_text", &state);
    let term = draw_only(&state, Lang::Ja, 160, 48, WIDE);
    let screen = format!("{}", term.backend());
    for said in [
        "1 ディスク交換 > 再起動中~",
        "* RAID 交換待ち（?-2 ラック、担当 Jose）",
    ] {
        assert!(screen.contains(said), "{said:?} in\n{screen}");
    }
}

/// The demo cluster behind the in-process service.
async fn demo_client() -> (EmbeddedApi, Arc<dyn OperationClient>) {
    let api = EmbeddedApi::default();
    demo::seed(&api, fixtures::now()).unwrap();
    let service =
        OperationService::new(KubeAccess::new(api.client(users::ADMIN_TOKEN), "ichor-tui"));
    let client = InProcessClient::new(service, Caller::in_process());
    (api, Arc::new(client))
}

#[tokio::test]
async fn the_clusters_a_cluster_and_a_review() {
    let (_api, client) = demo_client().await;
    let mut d = on_clusters(client.clone()).await;
    snap_wide("clusters_list", &d.state);
    select(&mut d, "prod-eu").await;
    d.code(KeyCode::Enter).await;
    snap_wide("cluster_page", &d.state);
    let d = review(client, "prod-eu", OperationKind::CaRotation, None).await;
    snap_wide("review_ca-rotation", &d.state);
}

// ---- `--ambiguous-width auto` in a pseudo-terminal ----

/// The demo in Japanese in a terminal that answers cursor queries as `answers` says.
fn spawn(home: &Path, answers: Answers, extra: &[&str]) -> pty::Pty {
    Spawn::demo(Path::new(BIN), home)
        .size(100, 30)
        .args(&["--lang", "ja"])
        .args(extra)
        .answers(answers)
        .start()
}

/// What the program wrote after asking the terminal, as text.
fn written_after_the_probe(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw).into_owned();
    let at = text.find("\x1b[6n").map_or(0, |i| i + 4);
    text[at..].to_string()
}

fn ambiguous_in(text: &str) -> Vec<char> {
    let mut found: Vec<char> = text.chars().filter(|c| east_asian_ambiguous(*c)).collect();
    found.dedup();
    found
}

/// The log line that says what was decided.
fn decided(home: &Path) -> String {
    let log = std::fs::read_to_string(home.join("log")).unwrap_or_default();
    log.lines()
        .find(|l| l.contains("East Asian ambiguous width"))
        .unwrap_or_else(|| panic!("no decision in the log:\n{log}"))
        .to_string()
}

#[test]
fn auto_asks_a_wide_terminal_and_then_draws_nothing_ambiguous() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = spawn(home.path(), Answers::Wide, &[]);
    let screen = pty.wait_text("オペレーション（7 件）");
    assert!(
        screen.contains("+ オペレーション（7 件） ---") && !screen.contains('│'),
        "ASCII borders:\n{screen}"
    );
    let raw = pty.raw();
    assert!(
        String::from_utf8_lossy(&raw).contains("\x1b[H\u{25BD}\x1b[6n"),
        "the probe: ▽ at the top left, then the query"
    );
    assert_eq!(
        ambiguous_in(&written_after_the_probe(&raw)),
        Vec::<char>::new()
    );
    pty.send("q");
    assert_eq!(pty.wait_exit(), 0);
    let line = decided(home.path());
    assert!(
        line.contains("wide=true") && line.contains("Auto"),
        "{line}"
    );
}

#[test]
fn auto_asks_a_narrow_terminal_and_draws_as_ever() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = spawn(home.path(), Answers::Narrow, &[]);
    let screen = pty.wait_text("オペレーション（7 件）");
    assert!(screen.contains("┌ オペレーション（7 件） ─"), "{screen}");
    pty.send("q");
    assert_eq!(pty.wait_exit(), 0);
    assert!(decided(home.path()).contains("wide=false"));
}

#[test]
fn a_terminal_that_does_not_answer_is_taken_as_narrow() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = spawn(home.path(), Answers::Silent, &[]);
    let screen = pty.wait_text("オペレーション（7 件）");
    assert!(screen.contains("┌ オペレーション（7 件） ─"), "{screen}");
    pty.send("q");
    assert_eq!(pty.wait_exit(), 0);
    let log = std::fs::read_to_string(home.path().join("log")).unwrap();
    assert!(
        log.contains("no answer to the cursor query in time"),
        "{log}"
    );
    assert!(decided(home.path()).contains("wide=false"));
}

#[test]
fn the_setting_wins_without_asking() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = spawn(home.path(), Answers::Narrow, &["--ambiguous-width", "wide"]);
    let screen = pty.wait_text("オペレーション（7 件）");
    assert!(!screen.contains('│'), "{screen}");
    let raw = pty.raw();
    assert!(
        !String::from_utf8_lossy(&raw).contains('\u{25BD}'),
        "no probe when the width is given"
    );
    assert_eq!(
        ambiguous_in(&String::from_utf8_lossy(&raw)),
        Vec::<char>::new()
    );
    pty.send("q");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn an_answer_that_comes_too_late_never_becomes_keys() {
    let home = tempfile::tempdir().unwrap();
    let late = std::time::Duration::from_millis(1500);
    let mut pty = spawn(home.path(), Answers::Late(late), &[]);
    pty.wait_text("オペレーション（7 件）");
    // The filter takes every printable key as text: the late `ESC [ 1 ; 2 R` would show there.
    pty.send("/");
    pty.wait_text("絞り込み：");
    pty.wait_late_answers(1);
    pty.send("zz");
    let screen = pty.wait_text("絞り込み：zz");
    assert!(
        !screen.contains("絞り込み：1") && !screen.contains(";2R"),
        "{screen}"
    );
    pty.send(pty::keys::ESC);
    pty.wait_for("the filter to go", |s| !s.contains("絞り込み：zz"));
    pty.send("q");
    assert_eq!(pty.wait_exit(), 0);
    assert!(decided(home.path()).contains("wide=false"));
}
