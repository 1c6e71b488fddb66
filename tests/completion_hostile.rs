//! A name from the cluster that a shell would not read as one plain word is never a completion
//! candidate: typed in a pty with bash and with zsh, Tab on the demo's hostile operation name
//! (ESC, OSC 52, BEL, CR, LF, `;`, U+202E, U+2066: stored past the API's validation) completes
//! nothing, and Enter runs only what was typed. A canary command named as a piece of the name
//! (`c`, between two `;`) would leave a file if the shell ran it.

use crate::common::pty::{Answers, Pty, Spawn, keys};
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// `shell` (no rc files) in a 120×30 pty, with the canary's folder and the binary's first in
/// PATH, and the demo's hostile cluster asked for.
fn shell(shell: &str, args: &[&str], home: &Path) -> Pty {
    let canaries = home.join("bin");
    std::fs::create_dir_all(&canaries).unwrap();
    let ran = home.join("ran");
    let canary = canaries.join("c");
    std::fs::write(
        &canary,
        format!("#!/bin/sh\necho \"$0\" >> '{}'\n", ran.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        canaries.display(),
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Spawn {
        binary: Path::new(shell),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: vec![
            ("PATH".into(), path),
            ("PS1".into(), "$ ".into()),
            ("PROMPT".into(), "$ ".into()),
            (ichor_demo::demo::HOSTILE_ENV.into(), "1".into()),
        ],
        cols: 120,
        rows: 30,
        home,
        answers: Answers::Silent,
    }
    .start()
}

/// Tab after the hostile name's first letter, then Enter; then a marker the shell prints only
/// once the line ran. Nothing but what was typed ran: no canary, no "command not found".
fn tab_and_enter_run_nothing(pty: &mut Pty, home: &Path) {
    pty.send("ichor-tui --demo op get x");
    pty.send(keys::TAB);
    pty.send(keys::ENTER);
    pty.command("echo ran-$((40+2))");
    let screen = pty.wait_text("ran-42");
    assert!(
        !std::fs::exists(home.join("ran")).unwrap(),
        "a piece of the name ran as a command:\n{screen}"
    );
    assert!(!screen.contains("command not found"), "{screen}");
    assert!(!screen.contains("not found: "), "{screen}");
}

#[test]
fn bash_completes_no_hostile_name_and_runs_nothing() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = shell("bash", &["--norc", "--noprofile", "-i"], home.path());
    pty.command("source <(ichor-tui completion bash) && echo registered");
    pty.wait_text("registered");
    tab_and_enter_run_nothing(&mut pty, home.path());
}

#[test]
fn zsh_completes_no_hostile_name_and_runs_nothing() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = shell("zsh", &["-f", "-i"], home.path());
    pty.command(
        "autoload -U compinit && compinit -u && source <(ichor-tui completion zsh) && echo registered",
    );
    pty.wait_text("registered");
    tab_and_enter_run_nothing(&mut pty, home.path());
}
