//! Whether the linker this build will run takes LLD's `--symbol-ordering-file`: asked of the
//! linker itself, by linking an empty program with the build's own rustc, target, linker and
//! flags (`CARGO_ENCODED_RUSTFLAGS`, `RUSTC_LINKER`) and the ordering flags. rustc links with
//! its own LLD on x86_64 Linux from Rust 1.90, but a distribution's rustc, Rust 1.89, a
//! `-fuse-ld=bfd|gold|mold` in a cargo config or a `linker = …` of its own run another linker,
//! which refuses the flag at the very end of a fat-LTO build (GNU ld: "unrecognized option").
//!
//! Used by `build.rs` and by the test that runs it with GNU ld and with LLD
//! (`tests/link_probe.rs`), so it depends on nothing but std.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The linker arguments that lay the functions out in the order a file gives.
pub fn ordering_args(order_file: &Path) -> [String; 2] {
    [
        format!("-Wl,--symbol-ordering-file={}", order_file.display()),
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ]
}

/// What a build links with, as cargo tells a build script.
#[derive(Clone, Debug)]
pub struct Linking {
    /// `RUSTC`.
    pub rustc: PathBuf,
    /// `TARGET`.
    pub target: String,
    /// `CARGO_ENCODED_RUSTFLAGS`, split.
    pub rustflags: Vec<String>,
    /// `RUSTC_LINKER`, when a cargo config names one.
    pub linker: Option<PathBuf>,
}

impl Linking {
    /// As cargo tells a build script; `None` when it does not say what rustc is.
    pub fn from_env() -> Option<Linking> {
        let rustc = std::env::var_os("RUSTC")?;
        let target = std::env::var("TARGET").ok()?;
        Some(Linking {
            rustc: rustc.into(),
            target,
            rustflags: split_encoded(&std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default()),
            linker: std::env::var_os("RUSTC_LINKER")
                .filter(|l| !l.is_empty())
                .map(PathBuf::from),
        })
    }
}

/// `CARGO_ENCODED_RUSTFLAGS`: the flags separated by 0x1f.
pub fn split_encoded(flags: &str) -> Vec<String> {
    flags
        .split('\u{1f}')
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether an empty program links with `how` and the ordering flags (an empty order file, in
/// `scratch`). `Err` says why not, in a line: the linker's own first complaint.
pub fn takes_symbol_ordering(how: &Linking, scratch: &Path) -> Result<(), String> {
    std::fs::create_dir_all(scratch).map_err(|e| format!("creating {}: {e}", scratch.display()))?;
    let source = scratch.join("link_probe.rs");
    let order = scratch.join("link_probe.order");
    let out = scratch.join("link_probe");
    std::fs::write(&source, "fn main() {}\n")
        .and_then(|()| std::fs::write(&order, ""))
        .map_err(|e| format!("writing the probe in {}: {e}", scratch.display()))?;
    let mut cmd = Command::new(&how.rustc);
    cmd.args([
        "--crate-type",
        "bin",
        "--crate-name",
        "link_probe",
        "--edition",
        "2021",
    ])
    .args([
        "--target",
        &how.target,
        "-C",
        "opt-level=0",
        "-C",
        "debuginfo=0",
    ])
    .args(&how.rustflags);
    if let Some(linker) = &how.linker {
        cmd.arg("-C").arg(format!("linker={}", linker.display()));
    }
    for arg in ordering_args(&order) {
        cmd.arg("-C").arg(format!("link-arg={arg}"));
    }
    let output = cmd
        .arg("-o")
        .arg(&out)
        .arg(&source)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", how.rustc.display()))?;
    let _ = std::fs::remove_file(&out);
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(complaint(&stderr))
}

/// The line of a failed link that says what the linker refused, else the first line.
fn complaint(stderr: &str) -> String {
    let lines = || stderr.lines().map(str::trim).filter(|l| !l.is_empty());
    let said = lines()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("unrecognized option")
                || l.contains("unknown option")
                || l.contains("unknown argument")
                || l.contains("not supported")
        })
        .or_else(|| lines().next())
        .unwrap_or("the linker failed");
    said.chars().take(200).collect()
}
