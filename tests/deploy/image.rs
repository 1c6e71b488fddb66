//! The image: built by `deploy/build-image.sh` from the binary the tests use (podman, from
//! `deploy/Containerfile`), its filesystem exported (`podman create`, `podman export`), and its
//! entrypoint run from it as the container would run it: as the image's user, on that root made
//! read-only (a mount namespace of its own), with nothing of this machine's filesystem. A
//! container itself cannot run here (the sandbox's cgroups), so `chroot` stands in for the
//! runtime.

use super::{Proc, deploy_dir, get, present};
use std::path::Path;
use std::process::{Command, Stdio};

/// `podman ARGS`, which must succeed: its stdout.
fn podman(args: &[&str]) -> String {
    let out = Command::new("podman").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "podman {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Removes the image and the container made of it, however the test ends.
struct Made {
    tag: String,
    container: Option<String>,
}

impl Drop for Made {
    fn drop(&mut self) {
        if let Some(c) = &self.container {
            let _ = Command::new("podman").args(["rm", "--force", c]).output();
        }
        let _ = Command::new("podman")
            .args(["rmi", "--force", &self.tag])
            .output();
    }
}

/// `ARGS` of the image's entrypoint, run from `root` as `user` with an empty environment, on
/// `root` bound read-only in a mount namespace of its own.
fn entrypoint(root: &Path, user: &str, entry: &[String], args: &[&str]) -> Command {
    let root = root.display().to_string();
    let mut c = Command::new("unshare");
    c.args(["--mount", "--", "sh", "-c"])
        .arg(
            "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && \
             root=$1 && user=$2 && shift 2 && chroot=$(command -v chroot) && \
             exec env -i \"$chroot\" --userspec=\"$user\" \"$root\" \"$@\"",
        )
        .args(["sh", &root, user])
        .args(entry)
        .args(args);
    c
}

#[test]
fn the_image_runs_its_entrypoint_unprivileged_on_a_read_only_root() {
    if !present("podman", &["--version"]) || !present("unshare", &["--mount", "true"]) {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_ichor-tui");
    let tag = format!("localhost/ichor-tui:test-{}", std::process::id());
    let mut made = Made {
        tag: tag.clone(),
        container: None,
    };
    let out = Command::new(deploy_dir().join("build-image.sh"))
        .args([bin, &tag])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "build-image.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), tag);

    let config: serde_json::Value = serde_json::from_str(&podman(&[
        "image",
        "inspect",
        "--format",
        "{{json .Config}}",
        &tag,
    ]))
    .unwrap();
    let user = config["User"].as_str().unwrap().to_string();
    let uid: u32 = user
        .split(':')
        .next()
        .unwrap()
        .parse()
        .expect("a numeric user");
    assert_ne!(uid, 0, "not root");
    let labels = &config["Labels"];
    assert_eq!(
        labels["org.opencontainers.image.version"],
        env!("CARGO_PKG_VERSION"),
        "{labels}"
    );
    for label in ["title", "revision", "created", "licenses", "description"] {
        let value = labels[format!("org.opencontainers.image.{label}")].as_str();
        assert!(value.is_some_and(|v| !v.is_empty()), "{label}: {labels}");
    }
    let entry: Vec<String> = serde_json::from_value(config["Entrypoint"].clone()).unwrap();
    let cmd: Vec<String> = serde_json::from_value(config["Cmd"].clone()).unwrap();

    let container = podman(&["create", &tag]);
    made.container = Some(container.clone());
    let root = tempfile::tempdir().unwrap();
    let tar = root.path().join("image.tar");
    podman(&["export", "--output", tar.to_str().unwrap(), &container]);
    let fs = root.path().join("fs");
    std::fs::create_dir(&fs).unwrap();
    let untar = Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(&fs)
        .status()
        .unwrap();
    assert!(untar.success());
    drop(made);

    // The image's default command: the version.
    let cmd_args: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let out = entrypoint(&fs, &user, &entry, &cmd_args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with(&format!("ichor-tui {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{said}: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The binary is stripped: no symbol table, no debug information (`.debug_gdb_scripts`, which
    // a Rust binary loads, names gdb's pretty-printers and stays).
    let sections = Command::new("readelf")
        .args(["-S", "-W"])
        .arg(fs.join("usr/bin/ichor-tui"))
        .output()
        .unwrap();
    let sections = String::from_utf8_lossy(&sections.stdout);
    assert!(sections.contains(".text"), "{sections}");
    assert!(
        !sections.contains(".symtab") && !sections.contains(".debug_info"),
        "not stripped: {sections}"
    );

    // Commands that write nothing need no log directory: nothing on stderr on a read-only
    // root (no "creating log directory").
    for args in [
        &["version", "--client"][..],
        &["completion", "bash"],
        &["man"],
    ] {
        let out = entrypoint(&fs, &user, &entry, args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
    }

    // serve, with its demo cluster: both ports answer the probes; the log is on stderr, the
    // only place a read-only root leaves it.
    let mut serve = entrypoint(
        &fs,
        &user,
        &entry,
        &[
            "serve",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
        ],
    );
    let stderr = root.path().join("stderr");
    serve.stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
    let (serving, said) = Proc::start_saying(serve, &["serving on ", "metrics on http://"]);
    let api = said[0].trim_start_matches("serving on ").to_string();
    let metrics = said[1]
        .trim_start_matches("metrics on http://")
        .trim_end_matches("/metrics")
        .to_string();
    for at in [&api, &metrics] {
        for path in ["/livez", "/readyz", "/healthz"] {
            assert_eq!(
                get(None, &format!("http://{at}{path}")),
                (200, "ok".into()),
                "{at}{path}"
            );
        }
    }
    drop(serving);
    let log = std::fs::read_to_string(&stderr).unwrap();
    let first: serde_json::Value = serde_json::from_str(log.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("a JSON line first ({e}): {log}"));
    assert_eq!(first["level"], "INFO", "{log}");
}

/// The newest `GLIBC_x.y` symbol version `binary` links (`objdump -T`).
fn glibc_floor(binary: &str) -> Option<String> {
    let out = Command::new("objdump").args(["-T", binary]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut versions: Vec<Vec<u32>> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter_map(|w| w.strip_prefix("GLIBC_"))
        .filter_map(|v| v.split('.').map(|n| n.parse().ok()).collect())
        .collect();
    versions.sort();
    let newest = versions.pop()?;
    Some(
        newest
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("."),
    )
}

#[test]
fn the_glibc_floor_docs_install_md_names_is_the_binarys() {
    if !present("objdump", &["--version"]) {
        return;
    }
    let floor = glibc_floor(env!("CARGO_BIN_EXE_ichor-tui")).expect("a GLIBC_ version");
    let doc = std::fs::read_to_string(deploy_dir().join("../docs/install.md")).unwrap();
    assert!(
        doc.contains(&format!("needs **glibc {floor}**")),
        "docs/install.md names another glibc floor than the binary's, {floor}"
    );
}
