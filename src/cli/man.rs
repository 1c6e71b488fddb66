//! `ichor-tui man`: the manual page, made by clap_mangen from the same grammar `--help` prints,
//! so it cannot drift from the binary. `ichor-tui man | man -l -` reads it; `--dir DIR` writes
//! a page for each command (ichor-tui.1, ichor-tui-operation.1, ichor-tui-operation-list.1, …)
//! for a package's `/usr/share/man/man1`.

use clap::Args;
use std::io::Write as _;
use std::path::PathBuf;

/// `ichor-tui man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write a page for each command into this directory instead of printing ichor-tui.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The grammar as the pages show it: dated with the build (`SOURCE_DATE_EPOCH`, when set).
fn command() -> clap::Command {
    super::command().bin_name("ichor-tui")
}

/// The build's date, as a page's header gives it (YYYY-MM-DD).
fn date() -> &'static str {
    super::version::BUILD_DATE
        .split('T')
        .next()
        .unwrap_or(super::version::BUILD_DATE)
}

/// Prints the page, or writes every page into `--dir`.
pub fn run(args: &ManArgs) -> anyhow::Result<std::process::ExitCode> {
    use anyhow::Context as _;
    match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            write_pages(command(), dir)?;
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command())
                .date(date())
                .render(&mut page)
                .context("writing the manual page")?;
            let mut out = std::io::stdout().lock();
            out.write_all(&page)?;
            out.flush()?;
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `cmd`'s page, and one for each of its subcommands, named as man names them
/// (`ichor-tui-operation-list.1`).
fn write_pages(mut cmd: clap::Command, dir: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    cmd.build();
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
    let path = dir.join(format!("{name}.1"));
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .title(name.clone())
        .date(date())
        .render(&mut page)
        .context("writing a manual page")?;
    std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        write_pages(sub.clone(), dir)?;
    }
    Ok(())
}
