//! The documents a newcomer reads name only what the repository has: every path
//! ARCHITECTURE.md names in backquotes exists, and so does every function, type or constant it
//! names (`land_page`, `OperationStore::watch`); every constant docs/limits.md quotes lives in a
//! file its section's heading names; and every relative link of the README, of ARCHITECTURE.md
//! and of `docs/` leads to a file that exists.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The top folders a path in the documents starts with.
const TOPS: &[&str] = &[
    "src/", "crates/", "tests/", "docs/", "locales/", "proto/", "benches/", "link/", "deploy/",
];

/// The paths named in backquotes: `src/app/keymap.rs`, `crates/ichor-server/` and the like.
fn quoted_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| TOPS.iter().any(|t| s.starts_with(t)))
        .filter(|s| !s.contains(['*', ' ', '<', '{']))
        .map(str::to_string)
        .collect()
}

/// The relative targets of Markdown links, `[text](target)`, without their `#anchor`.
fn links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target))
        .filter(|t| !t.contains("://") && !t.starts_with('#') && !t.starts_with("mailto:"))
        .map(|t| t.split('#').next().unwrap_or_default().to_string())
        .collect()
}

fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                docs.push(p);
            }
        }
    }
    docs.sort();
    docs
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[test]
fn every_path_architecture_names_exists() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let paths = quoted_paths(&text);
    // A page that named nothing would pass with nothing checked.
    assert!(paths.len() > 40, "only {} paths found", paths.len());
    let missing: Vec<&String> = paths.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md names {missing:?}");
}

#[test]
fn every_link_of_the_documents_leads_somewhere() {
    let mut broken = Vec::new();
    let mut seen = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = doc.parent().unwrap();
        for target in links(&text) {
            seen += 1;
            if !dir.join(&target).exists() {
                broken.push(format!("{} links to {target}", rel(&doc)));
            }
        }
    }
    assert!(seen > 20, "only {seen} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_front_door() {
    let lines = std::fs::read_to_string(root().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: move the detail into docs/"
    );
}

/// What the sources define: each name after `fn`, `struct`, `enum`, `trait`, `type`, `mod`,
/// `const`, `static` or `macro_rules!`, with the file it is in; and each file's words.
struct Defined {
    names: Vec<(String, String)>,
    words: Vec<(String, HashSet<String>)>,
}

const KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "mod",
    "const",
    "static",
    "macro_rules",
];

fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

fn defined() -> Defined {
    let mut files = super::sources();
    files.push(root().join("build.rs"));
    let mut d = Defined {
        names: Vec::new(),
        words: Vec::new(),
    };
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let w = words(&text);
        for pair in w.windows(2) {
            if KEYWORDS.contains(&pair[0]) {
                d.names.push((pair[1].to_string(), rel(&f)));
            }
        }
        d.words
            .push((rel(&f), w.into_iter().map(str::to_string).collect()));
    }
    d
}

impl Defined {
    fn files_of(&self, name: &str) -> Vec<&str> {
        self.names
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, f)| f.as_str())
            .collect()
    }

    /// A crate of the workspace by its name in code (`ichor_model`).
    fn is_crate(name: &str) -> bool {
        name == "ichor_tui" || root().join("crates").join(name.replace('_', "-")).is_dir()
    }

    /// `a::b::c`: each part defined (or a crate); a last part not defined may be a variant
    /// or an associated item written in a file that defines the part before it.
    fn has(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split("::").collect();
        let known = |p: &str| Defined::is_crate(p) || !self.files_of(p).is_empty();
        let Some((last, before)) = parts.split_last() else {
            return false;
        };
        if !before.iter().all(|p| known(p)) {
            return false;
        }
        if known(last) {
            return true;
        }
        let Some(owner) = before.last() else {
            return false;
        };
        let homes = self.files_of(owner);
        self.words
            .iter()
            .any(|(f, w)| homes.contains(&f.as_str()) && w.contains(*last))
    }
}

/// The names in backquotes that look like code: `land_page`, `OperationClient`,
/// `KeyCommand::Pause`, `MAX_STREAMS` (a single lowercase word such as `update` or `serve` is
/// as likely a command as a function, and is left alone).
fn quoted_names(text: &str) -> Vec<String> {
    let ident = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.split("::").all(ident))
        .filter(|s| s.contains("::") || s.contains('_') || s.starts_with(char::is_uppercase))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_name_architecture_quotes_exists() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let names = quoted_names(&text);
    assert!(names.len() > 20, "only {} names found", names.len());
    let d = defined();
    let missing: Vec<&String> = names.iter().filter(|n| !d.has(n)).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what the sources do not define: {missing:?}"
    );
}

/// The files a heading of docs/limits.md names: full paths, and bare names in the folder of
/// the path before them (`crates/ichor-server/src/listen.rs`, `drain.rs`, `shares/`).
fn heading_files(heading: &str) -> Vec<String> {
    let mut folder = String::new();
    let mut files = Vec::new();
    for p in heading.split('`').skip(1).step_by(2) {
        let full = match p.starts_with("crates/") || p.starts_with("src/") {
            true => p.to_string(),
            false => format!("{folder}{p}"),
        };
        if let Some((dir, _)) = full.trim_end_matches('/').rsplit_once('/') {
            folder = format!("{dir}/");
        }
        files.push(full);
    }
    files
}

/// Each constant docs/limits.md quotes lives in a file the heading of a section that quotes it
/// names (a section may name a bound of another, "above"); a reason (`LIMIT_REACHED`) is one
/// of `crates/ichor-model/src/error.rs`.
#[test]
fn limits_says_where_each_constant_lives() {
    let text = std::fs::read_to_string(root().join("docs/limits.md")).unwrap();
    let reasons = std::fs::read_to_string(root().join("crates/ichor-model/src/error.rs")).unwrap();
    let mut named: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut wrong = Vec::new();
    for section in text.split("\n## ").skip(1) {
        let (heading, body) = section.split_once('\n').unwrap_or((section, ""));
        let files = heading_files(heading);
        for f in &files {
            if !root().join(f).exists() {
                wrong.push(format!("{heading:?} names {f}, which does not exist"));
            }
        }
        let constant =
            |n: &String| n.len() > 2 && n.chars().all(|c| c.is_ascii_uppercase() || c == '_');
        for c in quoted_names(body).into_iter().filter(constant) {
            named.entry(c).or_default().extend(files.iter().cloned());
        }
    }
    assert!(named.len() > 40, "only {} constants found", named.len());
    let d = defined();
    for (c, files) in &named {
        if reasons.contains(&format!("\"{c}\"")) {
            continue;
        }
        let homes = d.files_of(c);
        if !homes
            .iter()
            .any(|h| files.iter().any(|f| h.starts_with(f.as_str())))
        {
            wrong.push(format!("{c} is defined in {homes:?}, not in {files:?}"));
        }
    }
    assert!(wrong.is_empty(), "docs/limits.md:\n{}", wrong.join("\n"));
}

/// A file's text as one line of words: comment markers (`//!`, `///`, `//`, `#`) and line
/// breaks gone, so a citation that wraps reads whole.
fn flattened(text: &str) -> String {
    text.lines()
        .map(|l| l.trim_start().trim_start_matches(['/', '!', '#']).trim())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The sections cited as `docs/x.md, "Heading"` (or `X.md: "Heading"`): the file and the
/// heading.
fn cited_sections(text: &str) -> Vec<(String, String)> {
    let text = flattened(text);
    let mut out = Vec::new();
    for (at, _) in text.match_indices(".md") {
        let rest = &text[at + 3..];
        let Some(quoted) = rest
            .strip_prefix(", \"")
            .or_else(|| rest.strip_prefix(": \""))
        else {
            continue;
        };
        let Some((heading, _)) = quoted.split_once('"') else {
            continue;
        };
        let start = text[..at]
            .rfind(|c: char| c.is_whitespace() || c == '(')
            .map_or(0, |i| i + 1);
        out.push((format!("{}.md", &text[start..at]), heading.to_string()));
    }
    out
}

/// Every section the code, the build and the documents cite by its heading exists, in the file
/// they name.
#[test]
fn every_section_cited_exists() {
    let mut files = super::sources();
    files.extend(documents());
    for extra in ["build.rs", "Cargo.toml", "link/order.sh"] {
        files.push(root().join(extra));
    }
    let mut cited = 0;
    let mut missing = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (doc, heading) in cited_sections(&text) {
            cited += 1;
            let headings = std::fs::read_to_string(root().join(&doc)).unwrap_or_default();
            let found = headings
                .lines()
                .any(|l| l.starts_with('#') && l.trim_start_matches('#').trim() == heading);
            if !found {
                missing.push(format!("{} cites {doc}, \"{heading}\"", rel(&f)));
            }
        }
    }
    assert!(cited >= 4, "only {cited} sections cited");
    assert!(
        missing.is_empty(),
        "no such section:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_readers_find_the_two_parsers_right() {
    assert_eq!(
        cited_sections("// see (docs/a.md, \"The X\n// and Y\") and B.md: \"Z\""),
        [
            ("docs/a.md".to_string(), "The X and Y".to_string()),
            ("B.md".to_string(), "Z".to_string())
        ]
    );
    assert_eq!(
        quoted_names("`land_page` and `Foo::bar`, `Action`, not `update`, `a-b` or `x y`"),
        ["land_page", "Foo::bar", "Action"]
    );
    assert_eq!(
        heading_files("Calls (`crates/a/src/front.rs`, `auth.rs`, `shares/`, `src/x.rs`, `y.rs`)"),
        [
            "crates/a/src/front.rs",
            "crates/a/src/auth.rs",
            "crates/a/src/shares/",
            "src/x.rs",
            "src/y.rs"
        ]
    );
    assert_eq!(
        quoted_paths("see `src/app/` and `crates/x/y.rs`, not `cargo test` or `src/*.rs`"),
        ["src/app/", "crates/x/y.rs"]
    );
    assert_eq!(
        links("[a](docs/a.md) [b](https://x.io) [c](b.md#top) [d](#here)"),
        ["docs/a.md", "b.md"]
    );
}
