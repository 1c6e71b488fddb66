//! What an operator reads (issue 17): a CA rotation as ADR 0068 Decision 7 and ADR 0091 say,
//! Reviews that leave no machine unnamed, questions and failures that match the state, and
//! long text read whole. Snapshots in English and Japanese at 80×24 and 160×48, and 40×12
//! where it scrolls.

use crate::common;

use common::fixtures::{self, ago, machine, page};
use common::snap::draw;
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{AskedAbout, Dialog, Notice, State};
use ichor_app::update::update;
use ichor_model::*;
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;

fn snap(name: &str, state: &State) {
    crate::snap_all!(name, state);
}

/// `state` drawn at 40×12 in both languages, named `NAME_LANG_40x12`.
fn snap_small(name: &str, state: &State) {
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(state, lang, 40, 12, Theme::default());
        crate::snapshot!(format!("{name}_{}_40x12", lang.code()), term.backend());
    }
}

/// The screen as text (a wide character once).
fn text_of(state: &State, lang: Lang, w: u16, h: u16) -> String {
    let term = draw(state, lang, w, h, Theme::default());
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let sym = buf[(x, y)].symbol();
            out.push_str(sym);
            x += u16::try_from(unicode_width::UnicodeWidthStr::width(sym).max(1)).unwrap_or(1);
        }
        out.push('\n');
    }
    out
}

/// The screen's words as one line: borders dropped, wrapped lines joined, spaces collapsed, so
/// a sentence is found wherever it wrapped.
fn flat(state: &State, lang: Lang, w: u16, h: u16) -> String {
    text_of(state, lang, w, h)
        .lines()
        .map(|l| l.trim_matches(|c: char| "│┌┐└┘─ ".contains(c)))
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A CA rotation of prod-eu's four machines at `stage`, pass `pass` of `passes` (0: the
/// status carries no counts), its machines in `phases`.
fn rotation(stage: &str, pass: i32, passes: i32, phases: [MachinePhase; 4]) -> Operation {
    let mut op = fixtures::ca_rotation_mid_pass();
    op.ca_rotation = Some(CaRotation {
        stage: stage.into(),
        pass,
        passes,
    });
    let names = ["prod-eu-cp1", "prod-eu-cp2", "prod-eu-w01", "prod-eu-w02"];
    let shown_pass = match pass {
        0 => ichor_resources::ca_pass_of_stage(stage).unwrap_or(1),
        p => p,
    };
    op.machines = names
        .iter()
        .zip(phases)
        .enumerate()
        .map(|(i, (n, p))| {
            let done = p == MachinePhase::Completed;
            let msg = if done {
                format!("pass {shown_pass}: configuration applied")
            } else {
                String::new()
            };
            let started = done.then(|| ago(12 - 3 * i as i64));
            let finished = done.then(|| ago(10 - 3 * i as i64));
            machine(n, p, &msg, started, finished)
        })
        .collect();
    op
}

use MachinePhase::{Completed as Done, Pending};

// ---- CA rotation ----

#[test]
fn a_rotation_awaiting_credentials_says_what_to_run() {
    let s = page(rotation(
        "AwaitingCredentials",
        3,
        5,
        [Done, Done, Done, Done],
    ));
    let screen = flat(&s, Lang::En, 80, 24);
    assert!(
        screen.contains("Pass 3 of 5: Awaiting credentials"),
        "{screen}"
    );
    assert!(
        screen.contains("ichor cluster bundle-export prod-eu"),
        "{screen}"
    );
    snap("ca_rotation_awaiting_credentials", &s);
}

#[test]
fn a_pass_is_derived_from_the_stage_when_the_status_counts_none() {
    let s = page(rotation(
        "Dropping",
        0,
        0,
        [Done, MachinePhase::Running, Pending, Pending],
    ));
    let screen = flat(&s, Lang::En, 80, 24);
    assert!(screen.contains("Pass 4 of 5: Dropping"), "{screen}");
    assert!(!screen.contains("of 0"), "never Pass 0 of 0: {screen}");
    snap("ca_rotation_derived_pass", &s);
    let none = page(rotation("", 0, 0, [Pending, Pending, Pending, Pending]));
    let screen = flat(&none, Lang::En, 80, 24);
    assert!(screen.contains("Preparing"), "{screen}");
    assert!(!screen.contains("Pass 0"), "{screen}");
}

#[test]
fn a_completed_rotation_reminds_of_the_bundle() {
    let mut op = rotation("Dropping", 5, 5, [Done, Done, Done, Done]);
    op.phase = Phase::Completed;
    op.finished_at = Some(ago(2));
    let s = page(op);
    let screen = flat(&s, Lang::En, 80, 24);
    assert!(screen.contains("20/20 machine passes"), "{screen}");
    assert!(
        screen.contains("your copy is stale")
            && screen.contains("ichor cluster bundle-export prod-eu"),
        "{screen}"
    );
    snap("ca_rotation_completed", &s);
}

#[test]
fn the_start_of_a_rotation_carries_the_reminder() {
    let op = rotation("Accepting", 1, 5, [Pending, Pending, Pending, Pending]);
    let mut s = page(op.clone());
    s.notice = Some(Notice::Started(Box::new(Created {
        operation: op,
        found: false,
        spec_written: None,
        warnings: Vec::new(),
    })));
    let screen = flat(&s, Lang::En, 160, 48);
    assert!(
        screen.contains("ichor cluster bundle-export prod-eu"),
        "{screen}"
    );
    snap("ca_rotation_started", &s);
}

/// The list row and the page of one rotation, as each is drawn.
fn row_and_page(op: &Operation) -> (String, String) {
    let list = fixtures::listed(vec![op.clone().summarized()]);
    let row = text_of(&list, Lang::En, 160, 48)
        .lines()
        .find(|l| l.contains(op.name.as_str()))
        .unwrap_or_default()
        .to_string();
    let page = text_of(&page(op.clone()), Lang::En, 160, 48);
    (row, page)
}

#[test]
fn the_list_and_the_page_show_the_same_progress_for_a_rotation() {
    // The end of pass 1 and the start of pass 2: the moments a list poll and a page poll
    // may each catch.
    let end = rotation("Accepting", 1, 5, [Done, Done, Done, Done]);
    let mut start = rotation("Issuing", 2, 5, [Pending, Pending, Pending, Pending]);
    start.name = "prod-eu-ca-rotation-7kq2n".into();
    for op in [&end, &start] {
        let (row, page) = row_and_page(op);
        assert!(row.contains(" 4/20 "), "{row}");
        assert!(page.contains("4/20 machine passes"), "{page}");
    }
    let list = fixtures::listed(vec![end.clone().summarized(), start.summarized()]);
    snap("ca_rotation_list_at_a_pass_end", &list);
}

// ---- the dashboard's own credentials ----

fn unauthenticated() -> ApiError {
    let mut e = ApiError::refused(
        Code::Unauthenticated,
        Reason::Unauthenticated,
        &[("what", "listing operations"), ("detail", "Unauthorized")],
        "listing operations: Unauthorized",
    );
    e.params.insert("via".into(), "kubeconfig".into());
    e.params.insert("user".into(), "admin@prod-eu".into());
    e
}

/// The list, then a poll that Kubernetes answers 401.
fn refused_after(ops: Vec<Operation>) -> State {
    let mut s = fixtures::listed(ops);
    s.now = ago(-1);
    update(&mut s, Action::Tick);
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Err(unauthenticated()),
        },
    );
    s
}

#[test]
fn refused_credentials_after_a_rotation_say_so_and_what_to_run() {
    // The list's rotation has dropped the old CA.
    let ops = fixtures::list()
        .into_iter()
        .map(|o| match o.kind {
            Some(OperationKind::CaRotation) => {
                rotation("Dropping", 4, 5, [Done, Pending, Pending, Pending])
            }
            _ => o,
        })
        .collect();
    let s = refused_after(ops);
    assert_eq!(s.conn, ichor_app::state::Conn::Ok, "not a retry");
    let screen = flat(&s, Lang::En, 80, 24);
    assert!(!screen.contains("retrying"), "{screen}");
    assert!(
        screen.contains("no longer accepts") && screen.contains("bundle-export prod-eu"),
        "{screen}"
    );
    snap("credentials_refused_after_rotation", &s);
    let plain = refused_after(vec![fixtures::running_rollout()]);
    let screen = flat(&plain, Lang::En, 80, 24);
    assert!(screen.contains("log in again"), "{screen}");
    snap("credentials_refused", &plain);
}

// ---- failures and questions ----

#[test]
fn a_failure_that_is_not_a_machines_says_so() {
    let mut op = fixtures::running_rollout();
    op.phase = Phase::Failed;
    op.finished_at = Some(ago(1));
    op.failure_reason = Some("cluster prod-eu not found".into());
    let s = page(op);
    let screen = flat(&s, Lang::En, 80, 24);
    assert!(!screen.contains("Machine unknown"), "{screen}");
    assert!(
        screen.contains("The operation failed, not a machine: cluster prod-eu not found"),
        "{screen}"
    );
    snap("operation_failed_not_a_machine", &s);
}

#[test]
fn the_failure_banner_says_it_once() {
    let s = page(fixtures::paused_by_failure());
    let screen = flat(&s, Lang::En, 160, 48);
    assert_eq!(
        screen.matches("image verification failed").count(),
        2,
        "the banner once, the machine's row once: {screen}"
    );
    // A reason that says more than the machine's message is kept.
    let mut op = fixtures::paused_by_failure();
    op.failure_reason = Some("lost the node during reboot".into());
    let screen = flat(&page(op), Lang::En, 160, 48);
    assert!(
        screen.contains("Reason: lost the node during reboot"),
        "{screen}"
    );
}

/// The words inside the dialog box whose title starts with `title` (English: one column a
/// character), as one line.
fn boxed(state: &State, title: &str) -> String {
    let screen = text_of(state, Lang::En, 80, 24);
    let rows: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let top = rows
        .iter()
        .position(|r| r.iter().collect::<String>().contains(&format!("┌ {title}")))
        .unwrap_or_else(|| panic!("no box {title}: {screen}"));
    let x0 = rows[top].iter().position(|c| *c == '┌').unwrap_or(0);
    let x1 = rows[top].iter().rposition(|c| *c == '┐').unwrap_or(0);
    let mut words = Vec::new();
    for r in &rows[top + 1..] {
        if r.get(x0) == Some(&'└') {
            break;
        }
        words.push(r[x0 + 1..x1].iter().collect::<String>());
    }
    words
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The page of `op` with `d` pressed.
fn asked_to_delete(op: Operation) -> State {
    let mut s = page(op);
    update(&mut s, Action::Key(Key::ch('d')));
    s
}

#[test]
fn the_delete_question_matches_the_state() {
    let mut paused_by_user = fixtures::paused_by_user();
    paused_by_user.name = "prod-eu-talos-8xk2m".into();
    let mut failed = fixtures::paused_by_failure();
    failed.phase = Phase::Failed;
    let cases = [
        (
            "paused_by_failure",
            fixtures::paused_by_failure(),
            AskedAbout::PausedByFailure,
            "frees the cluster",
        ),
        ("paused", paused_by_user, AskedAbout::Paused, "is paused"),
        ("failed", failed, AskedAbout::Failed, "The operation failed"),
        (
            "waiting",
            fixtures::waiting_for_lock(),
            AskedAbout::Waiting,
            "has not started",
        ),
        (
            "completed",
            fixtures::completed(),
            AskedAbout::Completed,
            "has completed",
        ),
        (
            "running",
            fixtures::running_rollout(),
            AskedAbout::Running,
            "still running",
        ),
    ];
    for (name, op, asked, says) in cases {
        let s = asked_to_delete(op);
        let Some(Dialog::Confirm(c)) = &s.dialog else {
            panic!("{name}: {:?}", s.dialog)
        };
        assert_eq!(c.asked, asked, "{name}");
        let screen = boxed(&s, "Delete");
        assert!(screen.contains(says), "{name}: {screen}");
        if asked != AskedAbout::Running {
            assert!(!screen.contains("still running"), "{name}: {screen}");
        }
        if name != "running" {
            snap(&format!("confirm_delete_{name}"), &s);
        }
    }
}

// ---- long text read whole ----

/// An operation whose names and reason are longer than any column.
fn long_winded() -> Operation {
    let mut op = fixtures::paused_by_failure();
    op.name = "edge-tokyo-talos-upgrade-to-v1-9-3-requested-by-the-platform-team-m4q9z".into();
    op.failure_reason = Some(format!(
        "machine edge-tokyo-w03 failed: {}; \u{1b}[31mthe installer said: {}",
        "image verification failed",
        "signature by key 0x5EC0FFEE is not trusted by the machine's policy ".repeat(3)
    ));
    op.machines[5].message = "installer exited with code 1: image verification failed".into();
    op
}

#[test]
fn enter_reads_the_page_whole_and_inert() {
    let mut s = page(long_winded());
    update(&mut s, Action::Key(Key::plain(KeyCode::Enter)));
    assert!(matches!(s.dialog, Some(Dialog::Read(_))));
    let screen = flat(&s, Lang::En, 160, 48);
    assert!(
        screen.contains("0x5EC0FFEE is not trusted") && !screen.contains('\u{1b}'),
        "{screen}"
    );
    assert!(
        screen.contains("requested-by-the-platform-team-m4q9z"),
        "the whole name: {screen}"
    );
    snap("whole_text_operation", &s);
    snap_small("whole_text_operation", &s);
    update(&mut s, Action::Key(Key::plain(KeyCode::Esc)));
    assert!(s.dialog.is_none());
}
