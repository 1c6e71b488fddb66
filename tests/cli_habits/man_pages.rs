//! The manual pages as a package installs them and `man` shows them: `ichor-tui man --dir`
//! writes every command's page under the name the pages cite, each with the version in its
//! footer and SEE ALSO, every page cited is a page written, and `man -l` renders each (groff
//! comes with man-db; where `man` is missing, the roff's structure is read instead).
//! ichor-tui(1) also lists the dashboard's keys, the config file's keys and the exit codes.

use super::*;
use std::collections::BTreeSet;

/// The roff as text: `\-` as `-`, font changes and quotes left out.
fn plain(roff: &str) -> String {
    roff.replace("\\-", "-")
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "")
        .replace("\\fP", "")
}

/// Every `ichor-tui…(1)` that `text` cites.
fn citations(text: &str) -> BTreeSet<String> {
    let mut cited = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("(1)") {
        let before = &rest[..at];
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map_or(0, |i| i + 1);
        let name = &before[start..];
        if name.starts_with("ichor-tui") {
            cited.insert(name.to_string());
        }
        rest = &rest[at + 3..];
    }
    cited
}

/// `man -l PAGE` as plain text, or `None` where man is missing (unless CI is set).
fn shown_by_man(page: &Path) -> Option<String> {
    let out = match Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "200")
        .env("LANG", "C.UTF-8")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "man is missing: {e}");
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "man -l {}: {stderr}",
        page.display()
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn every_page_is_written_under_the_name_the_pages_cite_and_renders() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("man1");
    let (code, out, err) = run_in(
        home.path(),
        &["man", "--dir", &dir.display().to_string()],
        &[],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let written: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for page in [
        "ichor-tui.1",
        "ichor-tui-serve.1",
        "ichor-tui-operation.1",
        "ichor-tui-operation-list.1",
        "ichor-tui-cluster-rotate-ca.1",
    ] {
        assert!(written.contains(page), "{page} in {written:?}");
    }
    let footer = format!("\"ichor-tui {}\"", env!("CARGO_PKG_VERSION"));
    for file in &written {
        let name = file.strip_suffix(".1").unwrap();
        let roff = std::fs::read_to_string(dir.join(file)).unwrap();
        let title = roff.lines().find(|l| l.starts_with(".TH ")).unwrap();
        assert!(
            title.starts_with(&format!(".TH {name} 1 ")) && title.contains(&footer),
            "{file}: {title}"
        );
        let headings: Vec<&str> = roff.lines().filter(|l| l.starts_with(".SH ")).collect();
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "\"SEE ALSO\""] {
            assert!(
                headings.contains(&format!(".SH {section}").as_str()),
                "{file}: {section} in {headings:?}"
            );
        }
        let cited = citations(&plain(&roff));
        assert!(!cited.is_empty(), "{file} cites no page");
        for page in &cited {
            assert!(
                written.contains(&format!("{page}.1")),
                "{file} cites {page}(1), which is not written"
            );
        }
        if let Some(text) = shown_by_man(&dir.join(file)) {
            assert!(text.contains("SEE ALSO"), "{file}: {text}");
            assert!(
                text.contains(&format!("ichor-tui {}", env!("CARGO_PKG_VERSION"))),
                "{file}: the footer names the version: {text}"
            );
        }
    }
    // Every page is cited by another (none is written that nothing leads to).
    let all_cited: BTreeSet<String> = written
        .iter()
        .flat_map(|f| citations(&plain(&std::fs::read_to_string(dir.join(f)).unwrap())))
        .collect();
    for file in &written {
        let name = file.strip_suffix(".1").unwrap();
        assert!(all_cited.contains(name), "nothing cites {name}(1)");
    }

    // A command's page is printed as it is written; a command with no page is refused.
    let (code, page, err) = run_in(home.path(), &["man", "op", "list"], &[]);
    assert_eq!(code, 0, "{err}");
    let written_page = std::fs::read_to_string(dir.join("ichor-tui-operation-list.1")).unwrap();
    assert_eq!(page, written_page);
    let (code, out, err) = run_in(home.path(), &["man", "operation", "lisst"], &[]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("no page for \"lisst\": ichor-tui operation has the commands list, get"),
        "{err}"
    );
}

#[test]
fn the_main_page_has_the_keys_the_config_file_and_the_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let (code, page, err) = run_in(home.path(), &["man"], &[]);
    assert_eq!(code, 0, "{err}");
    let text = plain(&page);
    for section in ["KEYS", "CONFIGURATION", "\"EXIT STATUS\""] {
        assert!(page.contains(&format!("\n.SH {section}\n")), "{section}");
    }
    let keys = &text[text.find("\n.SH KEYS").unwrap()..text.find("\n.SH CONFIGURATION").unwrap()];
    // The Operations list's keys, in the words `?` shows.
    for (key, words) in [("p", "pause"), ("w", "report"), (":ctx NAME", "")] {
        assert!(
            keys.contains(&format!(".TP\n{key}\n{words}")),
            "{key} {words}: {keys}"
        );
    }
    let config = &text[text.find("\n.SH CONFIGURATION").unwrap()..];
    for key in ["read-only", "ambiguous-width", "contexts", "keys", "timing"] {
        assert!(config.contains(&format!(".TP\n{key}\n")), "{key}: {config}");
    }
    let exits = &text[text.find("\n.SH \"EXIT STATUS\"").unwrap()..];
    for code in 0..=3 {
        assert!(exits.contains(&format!(".TP\n{code}\n")), "{code}: {exits}");
    }
}
