//! `ichor-tui man`: the manual pages, made by clap_mangen from the same grammar `--help` prints,
//! so they cannot drift from the binary. `ichor-tui man | man -l -` reads ichor-tui(1);
//! `ichor-tui man operation list` prints that command's page; `--dir DIR` writes every page
//! under the name the pages cite (ichor-tui.1, ichor-tui-operation.1,
//! ichor-tui-operation-list.1, …) for a package's `/usr/share/man/man1`.
//!
//! Every page's footer names the version, every page ends with SEE ALSO (ichor-tui(1), the
//! page above it and those below), and no page cites one that is not written (clap's `help`
//! subcommand has none). ichor-tui(1) also has the dashboard's keys (from the key tables the
//! footer and `?` are drawn from), the config file's keys (from the config's own fields) and
//! the exit codes (from the commands' `Exit`): [`sections`].

mod sections;

use anyhow::Context as _;
use clap::Args;
use clap_mangen::roff::{Roff, bold, roman};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// `ichor-tui man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print, e.g. `operation list` (none: ichor-tui's own page).
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Write every command's page into this directory instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

/// The program's name, as every page cites it.
const NAME: &str = "ichor-tui";

/// The grammar as the pages show it: no `help` subcommand (it has no page of its own).
fn command() -> clap::Command {
    let mut cmd = super::command()
        .bin_name(NAME)
        .disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The build's date, as a page's header gives it (YYYY-MM-DD).
fn date() -> &'static str {
    super::version::BUILD_DATE
        .split('T')
        .next()
        .unwrap_or(super::version::BUILD_DATE)
}

/// One page: a command and the words that lead to it (`["operation", "list"]`).
struct Page<'a> {
    cmd: &'a clap::Command,
    path: Vec<String>,
}

impl Page<'_> {
    /// The page's name, as the pages cite it: `ichor-tui-operation-list`.
    fn name(&self) -> String {
        std::iter::once(NAME)
            .chain(self.path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("-")
    }

    /// The pages it cites under SEE ALSO: ichor-tui(1), the page above it, those below it.
    fn see_also(&self) -> Vec<String> {
        let mut cited = Vec::new();
        if !self.path.is_empty() {
            cited.push(NAME.to_string());
        }
        if self.path.len() > 1 {
            let above = &self.path[..self.path.len() - 1];
            cited.push(format!("{NAME}-{}", above.join("-")));
        }
        cited.extend(pages_below(self.cmd).map(|sub| format!("{}-{}", self.name(), sub)));
        cited
    }

    /// The page in roff.
    fn render(&self) -> anyhow::Result<Vec<u8>> {
        let man = clap_mangen::Man::new(self.cmd.clone())
            .title(self.name())
            .date(date())
            .source(format!("{NAME} {}", env!("CARGO_PKG_VERSION")))
            .manual("ichor-tui manual");
        let mut page = Vec::new();
        man.render_title(&mut page)?;
        man.render_name_section(&mut page)?;
        man.render_synopsis_section(&mut page)?;
        man.render_description_section(&mut page)?;
        if self.cmd.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut page)?;
        }
        if pages_below(self.cmd).next().is_some() {
            man.render_subcommands_section(&mut page)?;
        }
        if self.path.is_empty() {
            sections::keys().to_writer(&mut page)?;
            sections::config_file(self.cmd).to_writer(&mut page)?;
            sections::exit_status().to_writer(&mut page)?;
        }
        if self.cmd.get_after_long_help().is_some() || self.cmd.get_after_help().is_some() {
            man.render_extra_section(&mut page)?;
        }
        if self.cmd.get_version().is_some() {
            man.render_version_section(&mut page)?;
        }
        see_also(&self.see_also()).to_writer(&mut page)?;
        Ok(page)
    }
}

/// The names of the subcommands that have pages of their own.
fn pages_below(cmd: &clap::Command) -> impl Iterator<Item = &str> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name())
}

/// `SEE ALSO`: each page cited, `name(1)`, comma-separated.
fn see_also(pages: &[String]) -> Roff {
    let mut roff = Roff::default();
    roff.control("SH", ["SEE ALSO"]);
    let mut line = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        line.push(bold(page.as_str()));
        line.push(roman("(1)"));
    }
    roff.text(line);
    roff
}

/// Every page under `cmd`, `cmd`'s first, in the grammar's order.
fn every_page<'a>(cmd: &'a clap::Command, path: Vec<String>, out: &mut Vec<Page<'a>>) {
    out.push(Page {
        cmd,
        path: path.clone(),
    });
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut below = path.clone();
        below.push(sub.get_name().to_string());
        every_page(sub, below, out);
    }
}

/// The page of the command `words` name (a subcommand's name or alias, in turn).
fn page_of<'a>(root: &'a clap::Command, words: &[String]) -> anyhow::Result<Page<'a>> {
    let mut cmd = root;
    let mut path = Vec::new();
    for word in words {
        cmd = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .find(|s| s.get_name() == word || s.get_all_aliases().any(|a| a == word))
            .ok_or_else(|| {
                let known: Vec<&str> = pages_below(cmd).collect();
                anyhow::anyhow!(
                    "no page for {}: {} has the commands {}",
                    ichor_model::error_text::quoted(word),
                    std::iter::once(NAME)
                        .chain(path.iter().map(String::as_str))
                        .collect::<Vec<_>>()
                        .join(" "),
                    known.join(", ")
                )
            })?;
        path.push(cmd.get_name().to_string());
    }
    Ok(Page { cmd, path })
}

/// Writes every page into `dir`: the files written.
pub fn write_pages(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let root = command();
    let mut pages = Vec::new();
    every_page(&root, Vec::new(), &mut pages);
    let mut written = Vec::new();
    for page in pages {
        let path = dir.join(format!("{}.1", page.name()));
        let text = page.render().context("writing a manual page")?;
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Prints the page `args` names, or writes every page into `--dir`.
pub fn run(args: &ManArgs) -> anyhow::Result<std::process::ExitCode> {
    if let Some(dir) = &args.dir {
        write_pages(dir)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let root = command();
    let page = page_of(&root, &args.command)?
        .render()
        .context("writing the manual page")?;
    let mut out = std::io::stdout().lock();
    out.write_all(&page)?;
    out.flush()?;
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_found_by_its_words_and_aliases_and_cites_its_neighbours() {
        let root = command();
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let list = page_of(&root, &words(&["op", "list"])).unwrap();
        assert_eq!(list.name(), "ichor-tui-operation-list");
        assert_eq!(list.see_also(), ["ichor-tui", "ichor-tui-operation"]);
        let op = page_of(&root, &words(&["operation"])).unwrap();
        assert!(
            op.see_also()
                .contains(&"ichor-tui-operation-report".to_string())
        );
        assert!(!op.see_also().iter().any(|p| p.ends_with("-help")));
        let e = page_of(&root, &words(&["operation", "x".repeat(300).as_str()]))
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("no page for \"xxx"), "{e}");
        assert!(e.len() < 300, "the input is not echoed whole: {e}");
        assert!(e.contains("list, get"), "{e}");
    }
}
