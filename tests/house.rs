//! The house: arrows that point one way, and rooms of a size a newcomer can read. A test over the
//! source tree, so a forbidden import or an overgrown file fails CI where it is written.

use std::path::{Path, PathBuf};

/// The longest source file, in lines.
const MAX_FILE_LINES: usize = 600;
/// The longest function, in lines (data tables are constants, not functions).
const MAX_FN_LINES: usize = 80;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every source file of the product and of the workspace's crates (not tests or benches).
fn sources() -> Vec<PathBuf> {
    let mut files = rust_files(&root().join("src"));
    if let Ok(crates) = std::fs::read_dir(root().join("crates")) {
        for c in crates.flatten() {
            files.extend(rust_files(&c.path().join("src")));
        }
    }
    files
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The code of a file without its comments and its `#[cfg(test)]` module at the end.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `text` names `n` as a whole path (`crate::cli` is not `crate::client`).
fn names_word(text: &str, n: &str) -> bool {
    text.match_indices(n).any(|(i, _)| {
        text[i + n.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

#[test]
fn arrows_point_one_way() {
    // (files under this prefix, what they must not name, why)
    let rules: &[(&str, &[&str], &str)] = &[
        (
            "src/views/",
            &[
                "tonic",
                "kube::",
                "k8s_openapi",
                "crate::service",
                "crate::client",
                "ichor_demo",
                "ichor_resources",
            ],
            "views draw app state",
        ),
        (
            "src/app/",
            &[
                "tonic",
                "kube::",
                "k8s_openapi",
                "crate::service",
                "crate::views",
                "ichor_demo",
                "ichor_resources",
            ],
            "the app speaks the client trait and the model",
        ),
        (
            "src/model",
            &[
                "tonic",
                "kube::",
                "k8s_openapi",
                "crate::service",
                "crate::client",
                "ichor_demo",
                "ichor_resources::names",
                "ichor_resources::Talos",
                "crate::app",
                "crate::views",
            ],
            "the model is the floor (it shares only the kinds' vocabulary with the resources)",
        ),
        (
            "src/server/",
            &["crate::cli", "crate::app", "crate::views", "crate::client"],
            "the server serves the service over the wire",
        ),
        (
            "src/service/",
            &[
                "tonic",
                "crate::client",
                "crate::server",
                "crate::app",
                "crate::views",
                "ichor_demo",
            ],
            "the service stands on the resources and the model",
        ),
        (
            "src/wire/",
            &[
                "kube::",
                "k8s_openapi",
                "crate::service",
                "crate::client",
                "crate::server",
                "crate::app",
                "ichor_demo",
            ],
            "the wire is proto and model only",
        ),
        (
            "src/client/",
            &["crate::server", "crate::app", "crate::views", "ichor_demo"],
            "clients reach a service; they are not one",
        ),
        (
            "crates/ichor-resources/",
            &["ichor_tui", "ichor_demo"],
            "the resources stand alone",
        ),
        (
            "crates/ichor-demo/",
            &["ichor_tui"],
            "the demo cluster is not the product",
        ),
    ];
    let mut broken = Vec::new();
    for f in sources() {
        let name = rel(&f);
        let text = code(&std::fs::read_to_string(&f).unwrap());
        for (prefix, names, why) in rules {
            if !name.starts_with(prefix) {
                continue;
            }
            for n in *names {
                if names_word(&text, n) {
                    broken.push(format!("{name} names {n} ({why})"));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "arrows the wrong way:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_file_over_600_lines() {
    let long: Vec<String> = sources()
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{} has {n} lines", rel(f)))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by concern:\n{}",
        long.join("\n")
    );
}

/// The functions of a file with their lengths: a `fn` line to the line that closes its body.
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        let is_fn = [
            "fn ",
            "pub fn ",
            "async fn ",
            "pub async fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "pub(crate) async fn ",
            "const fn ",
            "pub const fn ",
        ]
        .iter()
        .any(|p| t.starts_with(p));
        if !is_fn {
            i += 1;
            continue;
        }
        let name: String = t
            .split("fn ")
            .nth(1)
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // Find the body's opening brace, then its match (strings and chars are rare enough in
        // signatures and are skipped in bodies below).
        let mut depth = 0i32;
        let mut opened = false;
        let mut j = i;
        'outer: while j < lines.len() {
            let mut in_str = false;
            let mut prev = ' ';
            for c in lines[j].chars() {
                match c {
                    '"' if prev != '\\' => in_str = !in_str,
                    '{' if !in_str => {
                        depth += 1;
                        opened = true;
                    }
                    '}' if !in_str => {
                        depth -= 1;
                        if opened && depth == 0 {
                            break 'outer;
                        }
                    }
                    ';' if !in_str && !opened => break 'outer,
                    _ => {}
                }
                prev = c;
            }
            j += 1;
        }
        if opened {
            out.push((name, j - i + 1));
        }
        i += 1;
    }
    out
}

#[test]
fn no_function_over_80_lines() {
    let mut long = Vec::new();
    for f in sources() {
        let text = code(&std::fs::read_to_string(&f).unwrap());
        for (name, n) in functions(&text) {
            if n > MAX_FN_LINES {
                long.push(format!("{}: fn {name} has {n} lines", rel(&f)));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split these into small handlers:\n{}",
        long.join("\n")
    );
}
