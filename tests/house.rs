//! The house: what Cargo cannot say. The arrows between the layers are the crates' own (a wrong
//! import does not build); this test keeps the manifests from growing a dependency the wrong
//! way, and the rooms at a size a newcomer can read (no file over 600 lines, no function over
//! 80). It walks every crate's sources and fails where nothing was found to check.

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
    // A renamed folder must fail, not pass with nothing read.
    assert!(files.len() > 100, "only {} source files found", files.len());
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

/// Each crate and what it must not depend on. The arrows between the crates are the compiler's
/// now (a wrong import does not build); what Cargo allows is a wrong dependency added to a
/// manifest, and that is what this table refuses. (manifest folder, dependencies, why)
const FLOORS: &[(&str, &[&str], &str)] = &[
    (
        "crates/ichor-model",
        &[
            "kube",
            "k8s-openapi",
            "tonic",
            "ratatui",
            "crossterm",
            "ichor-resources",
            "ichor-service",
        ],
        "the model is the floor: no kube, tonic or terminal",
    ),
    (
        "src/app",
        &[
            "kube",
            "k8s-openapi",
            "tonic",
            "ratatui",
            "crossterm",
            "ichor-service",
            "ichor-client",
            "ichor-views",
        ],
        "the app is pure: state, actions, update",
    ),
    (
        "src/views",
        &[
            "kube",
            "k8s-openapi",
            "tonic",
            "crossterm",
            "ichor-service",
            "ichor-client",
            "ichor-server",
            "ichor-runtime",
        ],
        "views draw app state",
    ),
    (
        "src/runtime",
        &[
            "kube",
            "k8s-openapi",
            "tonic",
            "ichor-service",
            "ichor-client",
            "ichor-server",
        ],
        "the event loop runs the app; it reaches the service only through the client trait",
    ),
    (
        "crates/ichor-service",
        &[
            "tonic",
            "ratatui",
            "crossterm",
            "ichor-server",
            "ichor-client",
            "ichor-app",
            "ichor-views",
            "ichor-demo",
        ],
        "the service stands on the resources and the model",
    ),
    (
        "crates/ichor-server",
        &[
            "ratatui",
            "crossterm",
            "ichor-client",
            "ichor-app",
            "ichor-views",
            "ichor-demo",
        ],
        "the server serves the service over the wire",
    ),
    (
        "src/client",
        &[
            "ratatui",
            "crossterm",
            "ichor-app",
            "ichor-views",
            "ichor-runtime",
            "ichor-demo",
            "ichor-server",
            "clap",
        ],
        "clients reach a service; they draw nothing, share the wire with the server rather than \
         depend on it, and leave flags to the binary",
    ),
    (
        "crates/ichor-wire",
        &[
            "kube",
            "k8s-openapi",
            "ratatui",
            "crossterm",
            "ichor-service",
            "ichor-server",
            "ichor-client",
            "ichor-resources",
        ],
        "the wire is the proto and its conversions to the model, nothing more",
    ),
    (
        "crates/ichor-i18n",
        &[
            "kube",
            "k8s-openapi",
            "tonic",
            "ratatui",
            "crossterm",
            "ichor-model",
            "ichor-resources",
            "ichor-service",
            "ichor-app",
            "ichor-views",
        ],
        "the words stand alone: the model and the views read them",
    ),
    (
        "crates/ichor-resources",
        &["ichor-service", "ichor-demo", "ichor-tui"],
        "the resources stand on the model alone (its kinds are theirs)",
    ),
    (
        "crates/ichor-demo",
        &[
            "ichor-model",
            "ichor-service",
            "ichor-server",
            "ichor-client",
            "ichor-tui",
        ],
        "the demo cluster is a Kubernetes API, not the product",
    ),
];

/// The names under a manifest's `[dependencies]` (not its dev- or build-dependencies).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == "[dependencies]";
        } else if inside && let Some((name, _)) = t.split_once('=') {
            out.push(name.trim().to_string());
        }
    }
    out
}

#[test]
fn crates_depend_only_downward() {
    let mut broken = Vec::new();
    for (dir, forbidden, why) in FLOORS {
        let path = root().join(dir).join("Cargo.toml");
        // A renamed folder fails here instead of passing with nothing checked.
        let manifest =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let deps = dependencies(&manifest);
        assert!(!deps.is_empty(), "{dir} lists no dependencies");
        for d in deps.iter().filter(|d| forbidden.contains(&d.as_str())) {
            broken.push(format!("{dir} depends on {d} ({why})"));
        }
    }
    assert!(
        broken.is_empty(),
        "arrows the wrong way:\n{}",
        broken.join("\n")
    );
}

/// Every manifest of the workspace: the root's and each member's.
fn manifests() -> Vec<(String, String)> {
    let mut dirs = vec![String::new()];
    for top in ["crates", "src"] {
        for e in std::fs::read_dir(root().join(top)).unwrap().flatten() {
            if e.path().join("Cargo.toml").exists() {
                dirs.push(format!("{top}/{}/", e.file_name().to_string_lossy()));
            }
        }
    }
    dirs.sort();
    dirs.into_iter()
        .map(|d| {
            let text = std::fs::read_to_string(root().join(&d).join("Cargo.toml")).unwrap();
            (format!("{d}Cargo.toml"), text)
        })
        .collect()
}

/// Each dependency line of a manifest (dependencies, dev- and build-dependencies): its name and
/// what follows the `=`.
fn dependency_lines(manifest: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t.ends_with("dependencies]") && !t.starts_with("[workspace");
        } else if inside
            && !t.starts_with('#')
            && let Some((name, spec)) = t.split_once('=')
        {
            out.push((name.trim().to_string(), spec.trim().to_string()));
        }
    }
    out
}

/// A crate from crates.io that two manifests name is named once, in the root's
/// `[workspace.dependencies]`, and `{ workspace = true, … }` everywhere: its version and
/// features cannot differ from one crate to the next. (The workspace's own crates are named by
/// path.)
#[test]
fn shared_dependencies_are_the_workspaces() {
    let manifests = manifests();
    assert!(manifests.len() > 8, "only {} manifests", manifests.len());
    let mut users: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    for (path, text) in &manifests {
        for (name, spec) in dependency_lines(text) {
            if !spec.contains("path =") {
                users.entry(name).or_default().push((path.clone(), spec));
            }
        }
    }
    let mut apart = Vec::new();
    for (name, uses) in &users {
        let manifests: std::collections::BTreeSet<&String> = uses.iter().map(|(p, _)| p).collect();
        if manifests.len() < 2 {
            continue;
        }
        for (path, spec) in uses.iter().filter(|(_, s)| !s.contains("workspace = true")) {
            apart.push(format!("{path}: {name} = {spec}"));
        }
    }
    assert!(
        apart.is_empty(),
        "name these in [workspace.dependencies] and `{{ workspace = true }}`:\n{}",
        apart.join("\n")
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

/// The name of the function a line declares: any visibility (`pub(super)` too) and any of
/// `const`, `async`, `unsafe` and `extern "C"` before `fn`.
fn fn_name(line: &str) -> Option<String> {
    let mut t = line.trim_start();
    if let Some(rest) = t.strip_prefix("pub") {
        t = match rest.strip_prefix('(') {
            Some(scoped) => scoped.split_once(')')?.1,
            None => rest,
        }
        .trim_start();
    }
    loop {
        let before = t;
        for q in ["const ", "async ", "unsafe ", "extern \"C\" "] {
            t = t.strip_prefix(q).unwrap_or(t);
        }
        if t == before {
            break;
        }
    }
    let name: String = t
        .strip_prefix("fn ")?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The functions of a file with their lengths: a `fn` line to the line that closes its body.
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(name) = fn_name(lines[i]) else {
            i += 1;
            continue;
        };
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

mod house_docs;

/// `link/dashboard.order` was made for the binary these sources build: what `link/inputs.sh`
/// prints now (the toolchain, the release profile, every crate the binary links with its version
/// and features: what Cargo derives the symbols' names from) is what `link/order.sh` recorded in
/// `link/dashboard.inputs` beside the order. A change that would leave the order stale, and the
/// dashboard larger in memory with nothing failing, fails here in that very change, with what
/// changed.
#[test]
fn the_link_order_was_made_for_these_inputs() {
    let out = std::process::Command::new(root().join("link/inputs.sh"))
        .output()
        .expect("running link/inputs.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "link/inputs.sh: {stderr}");
    let now = String::from_utf8_lossy(&out.stdout).into_owned();
    let then = std::fs::read_to_string(root().join("link/dashboard.inputs")).unwrap_or_default();
    let lines =
        |s: &str| -> std::collections::BTreeSet<String> { s.lines().map(str::to_string).collect() };
    let (now, then) = (lines(&now), lines(&then));
    assert!(
        now.len() > 100,
        "link/inputs.sh printed too little: {now:?}"
    );
    let came: Vec<&String> = now.difference(&then).collect();
    let went: Vec<&String> = then.difference(&now).collect();
    assert!(
        came.is_empty() && went.is_empty(),
        "link/dashboard.order is stale: make it again with `cargo build --release --bin ichor-tui \
         && link/order.sh target/release/ichor-tui` (docs/install.md, \"The link order, and a \
         build that links with any linker\").\nnow: {came:#?}\nwhen it was made: {went:#?}"
    );
}
