//! The documents a newcomer reads name only what the repository has: every path
//! ARCHITECTURE.md names in backquotes exists, and every relative link of the README, of
//! ARCHITECTURE.md and of `docs/` leads to a file that exists.

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

#[test]
fn the_readers_find_the_two_parsers_right() {
    assert_eq!(
        quoted_paths("see `src/app/` and `crates/x/y.rs`, not `cargo test` or `src/*.rs`"),
        ["src/app/", "crates/x/y.rs"]
    );
    assert_eq!(
        links("[a](docs/a.md) [b](https://x.io) [c](b.md#top) [d](#here)"),
        ["docs/a.md", "b.md"]
    );
}
