//! Lays out the release binary's code so that the functions the dashboard runs sit together
//! (`link/dashboard.order`, made by `link/order.sh`). The kernel maps up to 64 KiB of cached
//! code around each page a process first runs; scattered among the code of `serve` and the demo,
//! the dashboard's 3.2 MB of functions made 9.9 MB of the binary's code resident, together 3.4 MB
//! (README, "The dashboard's memory").
//!
//! Only for release builds on x86_64 Linux with glibc, where rustc links with its own LLD
//! (`--symbol-ordering-file` is LLD's); `ICHOR_NO_LINK_ORDER=1` leaves it out for a build linked
//! otherwise. A name the build no longer has is skipped: a stale order costs memory, never
//! correctness (`python3 link/order.py --check BIN` says how much of it a binary still holds;
//! `cargo bench` builds with the tests' dev-dependency features, whose symbols differ).

fn main() {
    println!("cargo::rerun-if-changed=link/dashboard.order");
    println!("cargo::rerun-if-env-changed=ICHOR_NO_LINK_ORDER");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let lld = std::env::var("TARGET").is_ok_and(|t| t == "x86_64-unknown-linux-gnu");
    let wanted = std::env::var_os("ICHOR_NO_LINK_ORDER").is_none_or(|v| v.is_empty() || v == "0");
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    if release && lld && wanted {
        println!(
            "cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={dir}/link/dashboard.order"
        );
        println!("cargo::rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
