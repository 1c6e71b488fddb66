//! Two things the binary learns as it is built:
//!
//! - Its commit and build date, for `ichor-tui version` and `--version` (`ICHOR_COMMIT`,
//!   `ICHOR_BUILD_DATE`): the commit from git when the source is a git checkout, else
//!   "unknown" (a crates.io download, a tarball); the date from `SOURCE_DATE_EPOCH` when it is
//!   set (reproducible builds), else the time the build script ran.
//! - The order of its code: optimised builds lay the functions the dashboard runs out together
//!   (`link/dashboard.order`, made by `link/order.sh`). The kernel maps up to 64 KiB of cached
//!   code around each page a process first runs; scattered among the code of `serve` and the
//!   demo, the dashboard's functions made several times their own size resident (the figures:
//!   docs/install.md, "The link order, and a build that links with any linker"). The flag is LLD's:
//!   it is given only when the linker this build runs takes it, asked of the linker itself
//!   (`link/probe.rs`), so GNU ld, gold or mold link the same build without it.
//!   `ICHOR_NO_LINK_ORDER=1` leaves it out whatever the linker. A name the build does not have
//!   is skipped: a stale order costs memory, never correctness (`python3 link/order.py --check
//!   BIN` says how much of it a binary holds).

#[path = "link/probe.rs"]
mod probe;

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    stamp(&dir);
    link_order(&dir);
}

/// `ICHOR_COMMIT` and `ICHOR_BUILD_DATE`.
fn stamp(dir: &Path) {
    println!("cargo::rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // The checkout this source is the top of: not a repository it was copied into.
    let top = git(dir, &["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    let ours = top.is_some_and(|t| t.canonicalize().ok() == dir.canonicalize().ok());
    let commit = ours
        .then(|| git(dir, &["rev-parse", "--short=12", "HEAD"]))
        .flatten();
    if commit.is_some() {
        // Run again when HEAD moves: a commit, a checkout, a fetch that packs the refs.
        let mut watched = vec![git(dir, &["rev-parse", "--git-path", "HEAD"])];
        watched.push(git(dir, &["rev-parse", "--git-path", "packed-refs"]));
        if let Some(head_ref) = git(dir, &["rev-parse", "--symbolic-full-name", "HEAD"]) {
            watched.push(git(dir, &["rev-parse", "--git-path", &head_ref]));
        }
        for path in watched.into_iter().flatten() {
            let path = dir.join(path);
            // A path that does not exist would make cargo run this script on every build.
            if path.exists() {
                println!("cargo::rerun-if-changed={}", path.display());
            }
        }
    }
    let commit = commit.unwrap_or_else(|| "unknown".to_string());
    println!("cargo::rustc-env=ICHOR_COMMIT={commit}");
    let epoch = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(s) => s.trim().parse::<i64>().ok(),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| i64::try_from(d.as_secs()).ok()),
    };
    let date = epoch.map_or_else(|| "unknown".to_string(), rfc3339);
    println!("cargo::rustc-env=ICHOR_BUILD_DATE={date}");
}

/// What `git ARGS` prints in `dir`, trimmed; `None` without git, outside a checkout, or on any
/// failure.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}

/// Seconds since 1970 as `YYYY-MM-DDTHH:MM:SSZ` (the proleptic Gregorian calendar, UTC).
fn rfc3339(epoch: i64) -> String {
    let (days, secs) = (epoch.div_euclid(86_400), epoch.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

/// The link order, when the build is optimised, for Linux, wanted, and the linker takes it.
fn link_order(dir: &Path) {
    println!("cargo::rerun-if-changed=link/dashboard.order");
    println!("cargo::rerun-if-env-changed=ICHOR_NO_LINK_ORDER");
    let optimised = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let wanted = std::env::var_os("ICHOR_NO_LINK_ORDER").is_none_or(|v| v.is_empty() || v == "0");
    if !(optimised && linux && wanted) {
        return;
    }
    let (Some(how), Some(out)) = (probe::Linking::from_env(), std::env::var_os("OUT_DIR")) else {
        return;
    };
    match probe::takes_symbol_ordering(&how, Path::new(&out)) {
        Ok(()) => {
            for arg in probe::ordering_args(&dir.join("link").join("dashboard.order")) {
                println!("cargo::rustc-link-arg-bins={arg}");
            }
        }
        // Said in the build script's output (target/*/build/ichor-tui-*/output), not as a
        // warning: linking without the order is a right build, only a larger one in memory.
        Err(why) => println!("link order left out: the linker does not take it ({why})"),
    }
}
