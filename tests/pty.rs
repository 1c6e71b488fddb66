//! End to end in a pseudo-terminal: the real binary on the demo cluster, driven by keys and
//! read from a vt100 screen as a person would, then the terminal checked to be given back.

use crate::common::pty;

use pty::{Pty, Spawn, keys};
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// Leaving the alternate screen, and showing the cursor, on the wire.
const LEAVE: &[u8] = b"\x1b[?1049l";
const SHOW: &[u8] = b"\x1b[?25h";

fn demo(home: &Path) -> Spawn<'_> {
    Spawn::demo(Path::new(BIN), home)
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

/// The value of a `Label   value` line on an operation's page.
fn field(screen: &str, label: &str) -> Option<String> {
    screen.lines().find_map(|l| {
        let inner = l.trim_start_matches(['│', '|', ' ']);
        let rest = inner.strip_prefix(label)?;
        rest.starts_with("  ")
            .then(|| rest.trim().trim_end_matches(['│', '|']).trim().to_string())
    })
}

/// The Clusters row of `name`, if on screen.
fn cluster_row<'a>(screen: &'a str, name: &str) -> Option<&'a str> {
    screen.lines().find(|l| {
        let inner = l.trim_start_matches(['│', '|']);
        inner.starts_with(&format!("  {name} ")) || inner.starts_with(&format!("> {name} "))
    })
}

/// Asserts the program exited 0 and gave the terminal back: the output ends with leaving the
/// alternate screen and showing the cursor (ratatui's Terminal, dropped after, shows it once
/// more; nothing else may follow), and the pty is out of raw mode.
fn assert_restored(pty: &mut Pty) {
    let code = pty.wait_exit();
    assert_eq!(code, 0, "exit code; the screen:\n{}", pty.screen());
    let raw = pty.raw();
    let end = String::from_utf8_lossy(&raw[raw.len().saturating_sub(120)..]).into_owned();
    let leave = raw
        .windows(LEAVE.len())
        .rposition(|w| w == LEAVE)
        .unwrap_or_else(|| panic!("the alternate screen is never left; the output ends {end:?}"));
    let after = &raw[leave + LEAVE.len()..];
    assert!(
        !after.is_empty() && after.chunks(SHOW.len()).all(|c| c == SHOW),
        "the output ends with leaving the alternate screen, then showing the cursor; it ends {end:?}"
    );
    assert!(!pty.raw_mode(), "the pty is back in cooked mode");
}

/// The selected row of a list (the one marked `>`).
fn selected_row(screen: &str) -> Option<String> {
    screen
        .lines()
        .find(|l| l.trim_start_matches(['│', '|']).starts_with("> "))
        .map(str::to_string)
}

/// Moves the Clusters selection down, one row at a time, until `name` is selected.
fn select_cluster(pty: &mut Pty, name: &str) {
    for _ in 0..10 {
        let screen = pty.screen();
        if cluster_row(&screen, name).is_some_and(|r| r.starts_with("│> ")) {
            return;
        }
        let before = selected_row(&screen);
        pty.send(keys::DOWN);
        pty.wait_for("the selection to move", |s| selected_row(s) != before);
    }
    panic!("{name} never got selected:\n{}", pty.screen());
}

/// On the Clusters list, waits until staging has nothing unfinished (its demo upgrade
/// finished), then selects it.
fn staging_selected_once_idle(pty: &mut Pty) {
    pty.send("2");
    pty.wait_text("Clusters (3)");
    let staging_done = |s: &str| cluster_row(s, "staging").is_some_and(|r| r.contains(" — "));
    refresh_until(pty, "staging's upgrade to finish", staging_done);
    select_cluster(pty, "staging");
    let screen = pty.wait_for("staging selected", |s| {
        cluster_row(s, "staging").is_some_and(|r| r.starts_with("│> "))
    });
    assert!(staging_done(&screen), "{screen}");
}

/// Waits for `pred`, pressing R (refresh now) every second instead of waiting for the poll.
fn refresh_until(pty: &mut Pty, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let until = std::time::Instant::now() + pty::DEADLINE;
    loop {
        if let Ok(s) = pty.try_wait_for(std::time::Duration::from_secs(1), &pred) {
            return s;
        }
        assert!(
            std::time::Instant::now() < until,
            "waited {:?} for {what}; the screen:\n{}",
            pty::DEADLINE,
            pty.screen()
        );
        pty.send("R");
    }
}

#[test]
fn a_session_from_list_to_start_pause_resume_delete_and_quit() {
    let home = tempfile::tempdir().unwrap();
    // At speed 20 a 4-machine rollout is over in about a second, which races the pause keys
    // on a loaded machine; at 4 a machine step takes 1 s, and staging's own upgrade still ends
    // within a few seconds.
    let mut spawn = demo(home.path());
    spawn.args[2] = "4".into();
    let mut pty = spawn.start();

    pty.wait_text("Operations (7)");
    assert!(
        pty.raw_mode(),
        "the dashboard runs the terminal in raw mode"
    );

    // Open the selected operation, then go back.
    pty.send(keys::ENTER);
    let page = pty.wait_for("the operation's page", |s| {
        !s.contains("Operations (") && s.contains("MACHINE") && s.contains("staging-w03")
    });
    assert_eq!(field(&page, "Name").as_deref(), Some("staging-talos-x7k2p"));
    pty.send(keys::ESC);
    pty.wait_text("Operations (7)");

    // Clusters: wait until staging has nothing unfinished, then select it.
    staging_selected_once_idle(&mut pty);

    // Start a Talos upgrade: form, Review (nothing written), Start.
    pty.send("n");
    pty.wait_text("Target version");
    pty.send(keys::TAB);
    pty.send("v1.9.4");
    pty.wait_text("v1.9.4");
    pty.send(keys::ENTER);
    pty.wait_text("Nothing has been written yet");
    pty.send(keys::ENTER);
    let page = pty.wait_for("the new operation's page", |s| {
        field(s, "Name")
            .is_some_and(|n| n.starts_with("staging-talos-") && n != "staging-talos-x7k2p")
    });
    let name = field(&page, "Name").unwrap();
    assert!(
        field(&page, "Change").is_some_and(|c| c.contains("v1.9.4")),
        "{page}"
    );

    // Pause it: y/N, then Pausing or Paused. The page polls every 3 s (10 s while paused);
    // like a person who does not want to wait, R asks now.
    pty.send("p");
    pty.wait_text(&format!("Pause {name}?"));
    pty.send("y");
    pty.wait_text(&format!("Paused {name}:"));
    refresh_until(&mut pty, "Paused or Pausing", |s| {
        field(s, "State").is_some_and(|v| v.contains("Paused") || v.contains("Pausing"))
    });

    // Resume it.
    pty.send("r");
    pty.wait_text(&format!("Resume {name}?"));
    pty.send("y");
    pty.wait_text(&format!("Resumed {name}."));
    refresh_until(&mut pty, "Running or Completed", |s| {
        field(s, "State").is_some_and(|v| v.contains("Running") || v.contains("Completed"))
    });

    // Delete it: back on the list, one fewer.
    pty.send("d");
    pty.wait_text(&format!("Delete {name}?"));
    pty.send("y");
    pty.wait_for("the delete", |s| {
        s.contains(&format!("Deleted {name}.")) && s.contains("Operations (7)")
    });

    pty.send("q");
    assert_restored(&mut pty);
}

/// The count in the page's "Events (N; e: all)" heading.
fn events_count(screen: &str) -> Option<usize> {
    let at = screen.find("Events (")? + "Events (".len();
    let digits: String = screen[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A rollout's page shows what the executor records, and more of it as machines progress;
/// `e` shows all of it.
#[test]
fn a_rollouts_events_appear_on_its_page_as_machines_progress() {
    let home = tempfile::tempdir().unwrap();
    let mut spawn = demo(home.path());
    spawn.args[2] = "2".into();
    let mut pty = spawn.start();
    pty.wait_text("Operations (7)");
    pty.send(keys::ENTER);
    let page = pty.wait_for("the running rollout's page with its events", |s| {
        s.contains("staging-w03") && events_count(s).is_some()
    });
    assert_eq!(field(&page, "Name").as_deref(), Some("staging-talos-x7k2p"));
    let first = events_count(&page).unwrap();
    let later = refresh_until(&mut pty, "more events as machines progress", |s| {
        events_count(s).is_some_and(|n| n > first)
    });
    assert!(
        later.contains("StepStarted") || later.contains("StepCompleted"),
        "{later}"
    );
    pty.send("e");
    let all = pty.wait_text("Events of staging-talos-x7k2p, newest first");
    assert!(all.contains("Started"), "{all}");
    pty.send(keys::ESC);
    pty.wait_for("the overlay to close", |s| !s.contains("newest first"));
    pty.send("q");
    assert_restored(&mut pty);
}

/// The screen's words in one line, borders and wrapping gone.
fn flat(screen: &str) -> String {
    screen
        .replace(['│', '┌', '┐', '└', '┘', '─'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A CA rotation started from the dashboard and followed to the end: the Review says the
/// credentials stop working and must be typed for; the start and the completed page say to
/// fetch the new bundle.
#[test]
fn a_ca_rotation_followed_from_start_to_completion() {
    let home = tempfile::tempdir().unwrap();
    let mut spawn = demo(home.path());
    spawn.args[2] = "20".into();
    let mut pty = spawn.start();
    pty.wait_text("Operations (7)");
    staging_selected_once_idle(&mut pty);

    // The form: CA rotation is the last kind, one up from the first.
    pty.send("n");
    pty.wait_text("What to do");
    pty.send("k");
    pty.wait_text("> CA rotation");
    pty.send(keys::ENTER);
    // The plan, once it has come: the credentials stop working, and the name is asked for.
    let review = pty.wait_text("Type the cluster name staging to confirm");
    assert!(
        review.contains("Review: CA rotation on staging"),
        "{review}"
    );
    assert!(flat(&review).contains("stop working"), "{review}");
    pty.send("staging");
    pty.wait_text("matches");
    pty.send(keys::ENTER);
    let page = pty.wait_for("the rotation's page", |s| {
        field(s, "Name").is_some_and(|n| n.starts_with("staging-ca-rotation-"))
    });
    assert!(
        page.contains("bundle-export staging"),
        "the start's notice: {page}"
    );
    let done = refresh_until(&mut pty, "the rotation to complete", |s| {
        field(s, "State").is_some_and(|v| v.ends_with("Completed"))
    });
    assert!(done.contains("Pass 5 of 5"), "{done}");
    let words = flat(&done);
    assert!(
        words.contains("your copy is stale. Run ichor cluster bundle-export staging."),
        "{done}"
    );
    pty.send("q");
    assert_restored(&mut pty);
}

#[test]
fn sigterm_restores_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = demo(home.path()).start();
    pty.wait_text("Operations (7)");
    assert!(pty.raw_mode());
    pty.signal(libc::SIGTERM);
    assert_restored(&mut pty);
}

#[test]
fn sighup_restores_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = demo(home.path()).start();
    // On the operation page, mid-session.
    pty.wait_text("Operations (7)");
    pty.send(keys::ENTER);
    pty.wait_text("MACHINE");
    assert!(pty.raw_mode());
    pty.signal(libc::SIGHUP);
    assert_restored(&mut pty);
}

#[test]
fn a_tiny_terminal_says_it_is_too_small() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = demo(home.path()).size(20, 8).start();
    let screen = pty.wait_text("terminal too small");
    let words: Vec<&str> = screen.split_whitespace().collect();
    assert_eq!(
        words.join(" "),
        "terminal too small (need 40×12) Keys are off until it is larger; q quits.",
        "the whole message, and nothing else:\n{screen}"
    );
    // As it says: q quits.
    pty.send("q");
    assert_restored(&mut pty);
}

/// The SGR parameters of every `ESC [ … m` in `raw`.
fn sgr_params(raw: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = raw[i..].windows(2).position(|w| w == b"\x1b[") {
        let start = i + p + 2;
        let Some(len) = raw[start..]
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';' || *b == b':'))
        else {
            break;
        };
        if raw[start + len] == b'm' {
            out.push(String::from_utf8_lossy(&raw[start..start + len]).into_owned());
        }
        i = start + len;
    }
    out
}

/// Whether an SGR parameter list sets a foreground or background colour (39 and 49, "default
/// colour", set none: ratatui ends every frame with them).
fn sets_colour(params: &str) -> bool {
    let ps: Vec<u32> = params
        .split([';', ':'])
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    // 38 and 48 take arguments (5;N or 2;R;G;B): any of them sets a colour.
    ps.iter()
        .any(|&p| matches!(p, 30..=38 | 40..=48 | 90..=97 | 100..=107))
}

fn colour_run(no_color: bool, args: &[&str]) -> Vec<String> {
    let home = tempfile::tempdir().unwrap();
    let mut spawn = demo(home.path()).args(args);
    if no_color {
        spawn = spawn.env("NO_COLOR", "1");
    }
    let mut pty = spawn.start();
    pty.wait_text("Operations (7)");
    pty.send(keys::ENTER);
    pty.wait_text("MACHINE");
    pty.send(keys::ESC);
    pty.wait_text("Operations (7)");
    pty.send("2");
    pty.wait_text("Clusters (3)");
    pty.send("q");
    assert_restored(&mut pty);
    sgr_params(&pty.raw())
}

#[test]
fn no_color_means_no_colour_codes() {
    let coloured = colour_run(false, &[]);
    assert!(
        coloured.iter().any(|p| sets_colour(p)),
        "without NO_COLOR the demo is in colour (the check below can fail): {coloured:?}"
    );
    let plain = colour_run(true, &[]);
    let colours: Vec<&String> = plain.iter().filter(|p| sets_colour(p)).collect();
    assert!(colours.is_empty(), "NO_COLOR=1, yet: {colours:?}");
    assert!(!plain.is_empty(), "bold and reverse still come through");
}

/// no-color.org: NO_COLOR changes the default; a flag given for the run wins.
#[test]
fn color_always_wins_over_no_color() {
    let forced = colour_run(true, &["--color", "always"]);
    assert!(
        forced.iter().any(|p| sets_colour(p)),
        "NO_COLOR=1 --color always, yet no colour: {forced:?}"
    );
}

#[test]
fn hostile_cluster_text_never_reaches_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    // Wide enough that the list shows the NAME column too.
    let mut pty = demo(home.path())
        .size(160, 40)
        .env(ichor_demo::demo::HOSTILE_ENV, "1")
        .start();
    let inert = |s: &str| s.contains("pwned");

    // The list: names, clusters, kinds and actors.
    let list = pty.wait_text("Operations (10)");
    assert!(inert(&list), "the hostile row is listed, inert:\n{list}");

    // The paused operation's page: failure reason, machine names, phases and messages.
    pty.send(keys::ENTER);
    let page = pty.wait_for("the hostile operation's page", |s| {
        s.contains("MACHINE") && s.contains("hostile-w01") && s.contains("Reason:")
    });
    assert!(inert(&page), "{page}");
    pty.send(keys::ESC);
    pty.wait_text("Operations (10)");

    // The Clusters list: tracking and the unfinished operation in an unknown phase.
    pty.send("2");
    pty.wait_text("Clusters (4)");
    select_cluster(&mut pty, "hostile");
    let clusters = pty.screen();
    assert!(inert(&clusters), "{clusters}");
    // A phase nobody knows is shown as the cluster's (inert) text, never as a message id.
    let row = cluster_row(&clusters, "hostile").unwrap_or_default();
    assert!(row.contains("Odd") && !row.contains("phase-"), "{row}");

    // The cluster page: machine names and hold reasons.
    pty.send(keys::ENTER);
    let cluster = pty.wait_for("the hostile cluster's page", |s| {
        s.contains("HOLD") && s.contains("hostile-cp1")
    });
    assert!(inert(&cluster), "{cluster}");

    // The Review of a new operation there: held machines and the blocking operation.
    pty.send("n");
    pty.wait_text("Target version");
    pty.send(keys::TAB);
    pty.send("v1.9.4");
    pty.wait_text("v1.9.4");
    pty.send(keys::ENTER);
    pty.wait_for("the Review", |s| {
        s.contains("Review:") && !s.contains("Target version")
    });
    pty.send(keys::ESC);
    pty.wait_for("the dialog to close", |s| !s.contains("Review:"));
    pty.send("q");
    assert_restored(&mut pty);

    let raw = pty.raw();
    let text = String::from_utf8_lossy(&raw);
    for (what, seq) in [
        ("OSC (title, clipboard)", &b"\x1b]"[..]),
        ("DCS", b"\x1bP"),
        ("ST", b"\x1b\\"),
        ("BEL", b"\x07"),
        ("backspace", b"\x08"),
        ("carriage return", b"\r"),
        ("U+202E", "\u{202E}".as_bytes()),
        ("U+2066", "\u{2066}".as_bytes()),
    ] {
        assert_eq!(
            count(&raw, seq),
            0,
            "{what} reached the terminal: {:?}",
            text.match_indices(std::str::from_utf8(seq).unwrap())
                .map(|(i, _)| &text[i.saturating_sub(40)..(i + 40).min(text.len())])
                .collect::<Vec<_>>()
        );
    }
    // ratatui clears the screen once when it takes the terminal; the text's own ESC [2J
    // must not add another.
    assert_eq!(
        count(&raw, b"\x1b[2J"),
        1,
        "ESC [2J beyond the initial clear"
    );
}
