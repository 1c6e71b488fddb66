//! Shell completion as a person meets it: bash in a pty sources `ichor-tui completion bash`, and
//! Tab completes a command, a flag, an operation name (from the demo the typed `--demo` starts)
//! and a context name (from the typed `--kubeconfig`). The other shells' scripts register the
//! same engine. And as a package installs it: the scripts written from a staging folder, the
//! folder installed elsewhere and gone, then bash (through bash-completion's loader) and zsh
//! (through `fpath` and compinit) complete on the first Tab.

use crate::common::pty::{Answers, Pty, Spawn, keys};
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// An interactive bash (no rc files) in a 120×30 pty, with the binary's folder first in PATH.
fn bash(home: &Path) -> Pty {
    shell(home, "bash", Path::new(BIN).parent().unwrap(), &[])
}

/// An interactive `program` (bash or zsh, no rc files) in a 120×30 pty, with `bin` first in
/// PATH and `env` beside it.
fn shell(home: &Path, program: &str, bin: &Path, env: &[(&str, &Path)]) -> Pty {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let args = match program {
        "zsh" => vec!["-f".into(), "-i".into()],
        _ => vec!["--norc".into(), "--noprofile".into(), "-i".into()],
    };
    let mut vars = vec![("PATH".into(), path), ("PS1".into(), "$ ".into())];
    vars.extend(
        env.iter()
            .map(|(k, v)| (k.to_string(), v.display().to_string())),
    );
    Spawn {
        binary: Path::new(program),
        args,
        env: vars,
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

/// Whether `program` runs here; where it does not, a notice and `false`, unless `$CI` is set
/// (`.ci/run` installs it), when the test fails.
fn present(program: &str, check: &[&str]) -> bool {
    let runs = std::process::Command::new(program)
        .args(check)
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is missing but CI is set: .ci/run installs it"
        );
        eprintln!("skipping: {program} does not run here");
    }
    runs
}

/// A package's build and install: the binary in a staging folder (`pkg/usr/bin`), its bash
/// and zsh scripts written from there by a relative path, then the folder moved to where it is
/// installed (`root/usr`), so the staging path is gone. Returns `root/usr`.
fn installed_from_staging(home: &Path) -> std::path::PathBuf {
    let stage = home.join("pkg");
    std::fs::create_dir_all(stage.join("usr/bin")).unwrap();
    std::os::unix::fs::symlink(BIN, stage.join("usr/bin/ichor-tui")).unwrap();
    for (shell, place) in [
        ("bash", "usr/share/bash-completion/completions/ichor-tui"),
        ("zsh", "usr/share/zsh/site-functions/_ichor-tui"),
    ] {
        let out = std::process::Command::new("./usr/bin/ichor-tui")
            .args(["completion", shell])
            .current_dir(&stage)
            .env("HOME", home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(
            !script.contains("pkg/"),
            "{shell}: the staging path is in {script}"
        );
        let path = stage.join(place);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, script).unwrap();
    }
    let root = home.join("root");
    std::fs::rename(&stage, &root).unwrap();
    root.join("usr")
}

#[test]
fn scripts_written_from_a_staging_folder_complete_once_installed_in_bash_and_zsh() {
    let loader = Path::new("/usr/share/bash-completion/bash_completion");
    if !present("zsh", &["-fc", "true"]) || !present("test", &["-f", &loader.display().to_string()])
    {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let usr = installed_from_staging(home.path());
    let share = usr.join("share");

    // bash: bash-completion's loader finds the script by the command's name on the first Tab.
    let mut pty = shell(
        home.path(),
        "bash",
        &usr.join("bin"),
        &[("XDG_DATA_DIRS", &share)],
    );
    pty.command(&format!("source {} && echo loaded", loader.display()));
    pty.wait_text("loaded");
    clear_line(&mut pty);
    completes_a_verb_and_an_operation(&mut pty);
    drop(pty);

    // zsh: compinit autoloads `_ichor-tui` from fpath; the first Tab completes.
    let functions = share.join("zsh/site-functions");
    let mut pty = shell(home.path(), "zsh", &usr.join("bin"), &[]);
    pty.command(&format!(
        "PS1='$ '; fpath=({} $fpath); autoload -U compinit && compinit -u -D && echo loaded",
        functions.display()
    ));
    pty.wait_text("loaded");
    clear_line(&mut pty);
    completes_a_verb_and_an_operation(&mut pty);
}

/// `ichor-tui upg` Tab, then an operation of the demo the typed `--demo` starts.
fn completes_a_verb_and_an_operation(pty: &mut Pty) {
    pty.send("ichor-tui upg");
    pty.send(keys::TAB);
    pty.wait_text("$ ichor-tui upgrade");
    clear_line(pty);
    pty.send("ichor-tui --demo op get staging-t");
    pty.send(keys::TAB);
    pty.wait_text("$ ichor-tui --demo op get staging-talos-x7k2p");
    clear_line(pty);
}
