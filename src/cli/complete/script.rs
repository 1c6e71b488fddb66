//! The scripts `ichor-tui completion SHELL` prints (and `COMPLETE=SHELL ichor-tui` too): they
//! register clap_complete's dynamic engine for the command by its name, and call it back by its
//! name, so a script written from a package's staging folder works once installed; zsh's also
//! works from `fpath` ([`ZshFromFpath`]).

use super::{CompletionArgs, Shell};
use std::io::Write as _;

/// The command the scripts register for and call back: its name, which the shell finds on
/// PATH as it finds the command typed, never the path the script was written from (a package
/// writes its scripts from a staging folder that is gone once it is installed).
pub const COMMAND: &str = "ichor-tui";

/// The shells the scripts are for: clap_complete's, with zsh's script made to work from
/// `fpath` too ([`ZshFromFpath`]). `main` answers the Tabs with the same ones.
pub fn shells() -> clap_complete::env::Shells<'static> {
    use clap_complete::env::{Bash, Elvish, Fish, Powershell};
    clap_complete::env::Shells(&[&Bash, &ZshFromFpath, &Fish, &Powershell, &Elvish])
}

/// zsh: clap_complete's script, which registers itself with `compdef` when sourced, made to
/// complete as well when compinit autoloads it from `fpath` as the function `_ichor-tui` (the
/// file's body is then the function: it defines the completer and, called as `_ichor-tui`,
/// completes at once, so the first Tab completes rather than only registering), as clap's
/// static zsh scripts do.
pub struct ZshFromFpath;

impl ZshFromFpath {
    /// The script clap_complete writes, its closing `compdef` line made the choice between
    /// completing (autoloaded) and registering (sourced).
    fn script(clap: &str, name: &str, bin: &str) -> std::io::Result<String> {
        let completer = format!("_clap_dynamic_completer_{}", name.replace('-', "_"));
        let compdef = format!("compdef {completer} {bin}");
        let body = clap.trim_end().strip_suffix(&compdef).ok_or_else(|| {
            std::io::Error::other(format!(
                "clap_complete's zsh script no longer ends with {compdef:?}"
            ))
        })?;
        Ok(format!(
            "{body}if [ \"$funcstack[1]\" = \"_{bin}\" ]; then\n    {completer} \"$@\"\nelse\n    {compdef}\nfi\n"
        ))
    }
}

impl clap_complete::env::EnvCompleter for ZshFromFpath {
    fn name(&self) -> &'static str {
        "zsh"
    }

    fn is(&self, name: &str) -> bool {
        name == "zsh"
    }

    fn write_registration(
        &self,
        var: &str,
        name: &str,
        bin: &str,
        completer: &str,
        buf: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let mut clap = Vec::new();
        clap_complete::env::Zsh.write_registration(var, name, bin, completer, &mut clap)?;
        let script = ZshFromFpath::script(&String::from_utf8_lossy(&clap), name, bin)?;
        buf.write_all(script.as_bytes())
    }

    fn write_complete(
        &self,
        cmd: &mut clap::Command,
        args: Vec<std::ffi::OsString>,
        current_dir: Option<&std::path::Path>,
        buf: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        clap_complete::env::Zsh.write_complete(cmd, args, current_dir, buf)
    }
}

/// Prints the shell's registration script.
pub fn print_script(args: &CompletionArgs) -> anyhow::Result<std::process::ExitCode> {
    let name = match args.shell {
        Shell::Bash => "bash",
        Shell::Zsh => "zsh",
        Shell::Fish => "fish",
        Shell::Powershell => "powershell",
        Shell::Elvish => "elvish",
    };
    let shells = shells();
    let shell = shells
        .completer(name)
        .ok_or_else(|| anyhow::anyhow!("no completion for {name}"))?;
    let mut script = Vec::new();
    shell.write_registration("COMPLETE", COMMAND, COMMAND, COMMAND, &mut script)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(std::process::ExitCode::SUCCESS)
}
