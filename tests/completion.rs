//! Shell completion as a person meets it: bash in a pty sources `ichor-tui completion bash`, and
//! Tab completes a command, a flag, an operation name (from the demo the typed `--demo` starts)
//! and a context name (from the typed `--kubeconfig`). The other shells' scripts register the
//! same engine.

use crate::common::pty::{Answers, Pty, Spawn, keys};
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// An interactive bash (no rc files) in a 120×30 pty, with the binary's folder first in PATH.
fn bash(home: &Path) -> Pty {
    let dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Spawn {
        binary: Path::new("bash"),
        args: vec!["--norc".into(), "--noprofile".into(), "-i".into()],
        env: vec![("PATH".into(), path), ("PS1".into(), "$ ".into())],
        cols: 120,
        rows: 30,
        home,
        answers: Answers::Silent,
    }
    .start()
}

/// Clears the line typed (Ctrl-U).
fn clear_line(pty: &mut Pty) {
    pty.send("\u{15}");
}

#[test]
fn bash_completes_a_command_a_flag_an_operation_and_a_context() {
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = home.path().join("kubeconfig");
    ichor_demo::apiserver::server::write_kubeconfig(&kubeconfig, &"127.0.0.1:9".parse().unwrap())
        .unwrap();
    let mut pty = bash(home.path());
    pty.command("source <(ichor-tui completion bash) && echo registered");
    pty.wait_text("registered");
    clear_line(&mut pty);

    pty.send("ichor-tui upg");
    pty.send(keys::TAB);
    pty.wait_text("$ ichor-tui upgrade");
    clear_line(&mut pty);

    pty.send("ichor-tui op list --no-h");
    pty.send(keys::TAB);
    pty.wait_text("$ ichor-tui op list --no-headers");
    clear_line(&mut pty);

    // The demo's operations, asked of the demo the typed --demo starts.
    pty.send("ichor-tui --demo op get staging-t");
    pty.send(keys::TAB);
    pty.wait_text("$ ichor-tui --demo op get staging-talos-x7k2p");
    clear_line(&mut pty);

    // Contexts come from the kubeconfig alone (its API is not reached: port 9).
    let typed = format!(
        "ichor-tui --kubeconfig {} --context vie",
        kubeconfig.display()
    );
    pty.send(&typed);
    pty.send(keys::TAB);
    pty.wait_text(&format!("{typed}wer"));
}

#[test]
fn every_shells_script_calls_the_binary_back() {
    let home = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, script, err) =
            crate::cli_habits::run_in(home.path(), &["completion", shell], &[]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(
            script.contains("COMPLETE") && script.contains("ichor-tui"),
            "{shell}: {script}"
        );
    }
    let (code, _, err) = crate::cli_habits::run_in(home.path(), &["completion", "tcsh"], &[]);
    assert_eq!(code, 2, "{err}");
}
