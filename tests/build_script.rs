//! build.rs as a release build meets it. The link order (`--symbol-ordering-file`) is LLD's: the
//! build asks the linker it will run (link/probe.rs) and gives the flag only when it is taken, so
//! a build linked by GNU ld links. Asked here of GNU ld, gold and LLD; then the real build.rs,
//! in a one-file crate built with `cargo build --release`, linked by GNU ld and by LLD (which
//! linked is read off the binary), its commit "unknown" outside a git checkout and its date
//! from SOURCE_DATE_EPOCH.
#![cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]

#[path = "../link/probe.rs"]
mod probe;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// rustc as this checkout runs it (rust-toolchain.toml), for the host, with `flags`.
fn linking(flags: &[&str]) -> probe::Linking {
    probe::Linking {
        rustc: "rustc".into(),
        target: "x86_64-unknown-linux-gnu".into(),
        rustflags: flags.iter().map(|s| s.to_string()).collect(),
        linker: None,
    }
}

#[test]
fn the_probe_says_which_linkers_take_the_order() {
    let scratch = tempfile::tempdir().unwrap();
    // rustc links with its own LLD on x86_64 Linux (Rust 1.90 and later).
    probe::takes_symbol_ordering(&linking(&[]), scratch.path())
        .expect("rustc's own LLD takes --symbol-ordering-file");
    probe::takes_symbol_ordering(&linking(&["-C", "link-arg=-fuse-ld=lld"]), scratch.path())
        .expect("-fuse-ld=lld takes it");
    let bfd =
        probe::takes_symbol_ordering(&linking(&["-C", "link-arg=-fuse-ld=bfd"]), scratch.path())
            .expect_err("GNU ld refuses it");
    assert!(
        bfd.contains("symbol-ordering-file"),
        "the linker's own word: {bfd}"
    );
    let gold =
        probe::takes_symbol_ordering(&linking(&["-C", "link-arg=-fuse-ld=gold"]), scratch.path())
            .expect_err("gold refuses it");
    assert!(gold.contains("symbol-ordering-file"), "{gold}");
    // A cargo config's `linker = …` (RUSTC_LINKER) is asked too.
    let wrapper = scratch.path().join("cc-bfd");
    std::fs::write(&wrapper, "#!/bin/sh\nexec cc \"$@\" -fuse-ld=bfd\n").unwrap();
    chmod_x(&wrapper);
    let mut through_wrapper = linking(&[]);
    through_wrapper.linker = Some(wrapper);
    assert!(probe::takes_symbol_ordering(&through_wrapper, scratch.path()).is_err());
    assert_eq!(
        probe::split_encoded("-C\u{1f}link-arg=-fuse-ld=bfd"),
        ["-C", "link-arg=-fuse-ld=bfd"]
    );
}

fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A one-file crate whose build script is this repository's build.rs, and whose binary prints
/// the commit and date build.rs gave it.
fn tiny_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("link")).unwrap();
    let build = root().join("build.rs");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2024\"\nbuild = \"{}\"\n\n[workspace]\n",
            build.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() { println!(\"{} {}\", env!(\"ICHOR_COMMIT\"), env!(\"ICHOR_BUILD_DATE\")); }\n",
    )
    .unwrap();
    std::fs::write(dir.join("link/dashboard.order"), "main\n").unwrap();
}

/// `cargo build --release` of the tiny crate with `rustflags`: its build script's output, and
/// what the binary printed and the linker wrote into its `.comment`.
fn release_build(dir: &Path, target: &Path, rustflags: &str) -> (String, String, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--release", "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env("RUSTFLAGS", rustflags)
        .env("SOURCE_DATE_EPOCH", "86400")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("ICHOR_NO_LINK_ORDER")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the release build with RUSTFLAGS={rustflags:?} links: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = std::fs::read_dir(target.join("release/build"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("output"))
        .find(|p| p.exists())
        .expect("the build script's output");
    let script = std::fs::read_to_string(script).unwrap();
    let bin = target.join("release/tiny");
    let said = Command::new(&bin).output().unwrap();
    let comment = Command::new("readelf")
        .args(["-p", ".comment"])
        .arg(&bin)
        .output()
        .unwrap();
    (
        script,
        String::from_utf8_lossy(&said.stdout).trim().to_string(),
        String::from_utf8_lossy(&comment.stdout).into_owned(),
    )
}

#[test]
fn a_release_build_links_with_gnu_ld_and_with_lld() {
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("tiny");
    tiny_crate(&krate);

    let (script, said, comment) =
        release_build(&krate, &dir.path().join("bfd"), "-C link-arg=-fuse-ld=bfd");
    assert!(!script.contains("rustc-link-arg"), "{script}");
    assert!(
        script.contains("link order left out: the linker does not take it"),
        "{script}"
    );
    assert!(!comment.contains("LLD"), "GNU ld linked it: {comment}");
    // No git checkout here: the commit is unknown; the date is SOURCE_DATE_EPOCH's.
    assert_eq!(said, "unknown 1970-01-02T00:00:00Z");

    let (script, said, comment) = release_build(&krate, &dir.path().join("lld"), "");
    let order = krate.join("link/dashboard.order");
    assert!(
        script.contains(&format!(
            "cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        )),
        "{script}"
    );
    assert!(comment.contains("LLD"), "LLD linked it: {comment}");
    assert_eq!(said, "unknown 1970-01-02T00:00:00Z");
}
