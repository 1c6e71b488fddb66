//! `operation list` is the dashboard's list as text: the same header and the same cells, in
//! English and in Japanese, because both come from one definition (`ichor_views::listing`).
//! The dashboard is drawn where nothing has to give way (200 columns); each of its rows must
//! hold the command's cells in the command's order and nothing else but the glyphs, the bars,
//! the selection marker and the spaces between.

use super::ran_at;
use crate::common::fixtures;
use crate::common::snap::{draw, row_text};
use ichor_client::fake::FakeClient;
use ichor_tui::cli::verbs::Exit;
use ichor_tui::cli::verbs::args::{Output, Verb};
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;
use unicode_width::UnicodeWidthChar;

/// What the dashboard draws besides the words: borders, the marker, the glyphs and the bars.
const DRAWN: &str = "│>▶✓✗‖…○?⚠█░ ";

/// `line`'s cells: the text between each column's start (where its header starts) and the
/// next's, in display columns (a Japanese character is two).
fn cells(line: &str, starts: &[usize]) -> Vec<String> {
    let mut out = vec![String::new(); starts.len()];
    let mut at = 0;
    for c in line.chars() {
        let col = starts.iter().rposition(|s| *s <= at).unwrap_or(0);
        out[col].push(c);
        at += c.width().unwrap_or(0);
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Where each header of the command's table starts: after the spaces (three or more) that
/// end the header before it.
fn starts(header: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let (mut at, mut spaces) = (0, 0);
    for c in header.chars() {
        if c == ' ' {
            spaces += 1;
        } else {
            if spaces >= 3 {
                starts.push(at);
            }
            spaces = 0;
        }
        at += c.width().unwrap_or(0);
    }
    starts
}

/// Asserts that `drawn` holds `words` in order (`-`, the command's empty cell, is nothing on
/// the dashboard) and nothing else but what the dashboard draws besides words.
fn holds_only(drawn: &str, words: &[String], what: &str) {
    let mut rest = drawn;
    let mut besides = String::new();
    for w in words.iter().filter(|w| *w != "-") {
        let Some(i) = rest.find(w.as_str()) else {
            panic!("{what}: {w:?} in order in {drawn:?}");
        };
        besides.push_str(&rest[..i]);
        rest = &rest[i + w.len()..];
    }
    besides.push_str(rest);
    assert!(
        besides.chars().all(|c| DRAWN.contains(c)),
        "{what}: {drawn:?} holds more than {words:?}: {besides:?}"
    );
}

#[tokio::test]
async fn the_commands_list_is_the_dashboards_in_either_language() {
    let ops = fixtures::list();
    let client = FakeClient::with_operations(ops.clone());
    let state = fixtures::listed(ops.clone());
    for lang in [Lang::En, Lang::Ja] {
        let verb = Verb::List {
            all_namespaces: false,
            output: Output::Table,
            no_headers: false,
            watch: false,
        };
        let r = ran_at(&client, verb, lang, fixtures::now).await;
        assert_eq!(r.exit, Exit::Done, "{}", r.err);
        let lines: Vec<&str> = r.out.lines().collect();
        let starts = starts(lines[0]);
        let header = cells(lines[0], &starts);
        let term = draw(&state, lang, 200, 50, Theme::default());
        let buf = term.backend().buffer();
        holds_only(&row_text(buf, 3), &header, &format!("{lang:?} header"));
        let drawn: Vec<String> = (4..4 + ops.len() as u16)
            .map(|y| row_text(buf, y))
            .collect();
        assert_eq!(lines.len(), ops.len() + 1, "{}", r.out);
        for line in &lines[1..] {
            let row = cells(line, &starts);
            let name = &row[0];
            let on_screen = drawn
                .iter()
                .find(|d| d.contains(&format!(" {name} ")))
                .unwrap_or_else(|| panic!("{lang:?}: {name} on the dashboard: {drawn:#?}"));
            holds_only(on_screen, &row, &format!("{lang:?} {name}"));
        }
    }
}

/// `-o wide` is the table with the columns only it has: the machines under way (else the one
/// that failed), after the others.
#[tokio::test]
async fn wide_adds_the_machines_under_way() {
    let client = FakeClient::with_operations(fixtures::list());
    let verb = |o: Output| Verb::List {
        all_namespaces: false,
        output: o,
        no_headers: false,
        watch: false,
    };
    let table = ran_at(&client, verb(Output::Table), Lang::En, fixtures::now).await;
    let wide = ran_at(&client, verb(Output::Wide), Lang::En, fixtures::now).await;
    for (t, w) in table.out.lines().zip(wide.out.lines()) {
        assert!(w.starts_with(t.trim_end()), "{t}\n{w}");
    }
    let header = wide.out.lines().next().unwrap_or_default();
    assert!(header.ends_with("   MACHINE"), "{header}");
    assert!(!table.out.contains("MACHINE"), "{}", table.out);
    let failed = fixtures::paused_by_failure();
    let line = wide
        .out
        .lines()
        .find(|l| l.starts_with(&failed.name))
        .unwrap_or_default();
    let machine = failed.failed_machine().map(|m| m.name.clone());
    assert!(line.ends_with(&machine.unwrap_or_default()), "{line}");
}

/// `list --watch` where nothing is pushed: the table once, then, at each read, a row for each
/// operation whose row changed and Gone for one no longer listed; a refusal ends it.
#[tokio::test]
async fn list_watch_by_polling_prints_a_row_per_change() {
    use ichor_model::{ApiError, Code, MachinePhase};
    let ops = fixtures::list();
    let mut later = ops.clone();
    let rollout = fixtures::running_rollout();
    let gone = fixtures::shutdown_completed();
    later.retain(|o| o.name != gone.name);
    for o in later.iter_mut().filter(|o| o.name == rollout.name) {
        if let Some(m) = o
            .machines
            .iter_mut()
            .find(|m| m.phase == MachinePhase::Running)
        {
            m.phase = MachinePhase::Completed;
            m.finished_at = Some(fixtures::now());
        }
    }
    let client = FakeClient::with_operations(ops.clone());
    client.lists.lock().unwrap().extend([
        Ok(ops.clone()),
        Ok(ops.clone()),
        Ok(later),
        Err(ApiError::new(Code::PermissionDenied, "no longer yours")),
    ]);
    let verb = Verb::List {
        all_namespaces: false,
        output: Output::Table,
        no_headers: false,
        watch: true,
    };
    let r = ran_at(&client, verb, Lang::En, fixtures::now).await;
    assert_eq!(r.exit, Exit::Refused, "{}\n{}", r.out, r.err);
    assert!(r.err.contains("no longer yours"), "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    let table = ops.len() + 1;
    assert_eq!(lines.len(), table + 2, "{}", r.out);
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("LEFT"),
        "{}",
        r.out
    );
    // The unchanged read printed nothing; the change printed the rollout's row, 7/14 now,
    // in the table's columns.
    assert!(lines[table].starts_with(&rollout.name), "{}", r.out);
    let at = lines[0].find("PROGRESS").unwrap_or_default();
    let under: String = lines[table].chars().skip(at).take(4).collect();
    assert_eq!(under, "7/14", "{}", r.out);
    assert!(lines[table + 1].starts_with(&gone.name), "{}", r.out);
    assert!(lines[table + 1].contains("   Gone   "), "{}", r.out);
}
