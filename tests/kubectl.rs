//! The real kubectl against `ichor-tui demo-cluster`, as against a real cluster.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

struct DemoCluster {
    child: Child,
    kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for DemoCluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> DemoCluster {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ichor-tui"))
        .args([
            "demo-cluster",
            "--listen",
            "127.0.0.1:0",
            "--demo-speed",
            "20",
            "--kubeconfig-out",
        ])
        .arg(&kubeconfig)
        .arg("--log-file")
        .arg(dir.path().join("log"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("demo cluster listening on http://127.0.0.1:"),
        "{line}"
    );
    DemoCluster {
        child,
        kubeconfig,
        _dir: dir,
    }
}

fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String) {
    let mut cmd = Command::new("kubectl");
    cmd.env("KUBECONFIG", kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("kubectl runs");
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn kubectl_available() -> bool {
    let found = Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok();
    if !found {
        // .ci/run installs kubectl; a developer machine without it skips, CI never does.
        assert!(std::env::var_os("CI").is_none(), "kubectl is missing in CI");
        eprintln!("kubectl not found: skipping");
    }
    found
}

const OPERATION: &str = "apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosOperation
metadata:
  name: prod-eu-kubernetes-manual
spec:
  cluster: prod-eu
  kind: kubernetes
";

#[test]
fn kubectl_get_create_patch_delete() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let (ok, out) = kubectl(kc, &["get", "talosoperations", "-A"], None);
    assert!(ok, "{out}");
    assert!(
        out.contains("staging-talos-x7k2p") && out.contains("edge-tokyo-talos-m4q9z"),
        "{out}"
    );
    // Server-side printing: the kind's columns, as kubectl shows them for a real CRD.
    let header = out.lines().next().unwrap_or_default();
    for col in ["NAMESPACE", "NAME", "CLUSTER", "KIND", "PHASE", "AGE"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        out.lines()
            .any(|l| l.contains("edge-tokyo-talos-m4q9z") && l.contains("Paused")),
        "{out}"
    );
    let (ok, out) = kubectl(kc, &["get", "top"], None);
    assert!(
        ok && out.contains("prod-eu-ca-rotation-2hd8w"),
        "short name: {out}"
    );
    let (ok, out) = kubectl(kc, &["get", "taloscluster", "prod-eu", "-o", "yaml"], None);
    assert!(ok, "{out}");
    assert!(
        out.contains("talosVersion: v1.9.2") && out.contains("argocd.argoproj.io/tracking-id"),
        "{out}"
    );

    let (ok, out) = kubectl(kc, &["create", "-f", "-"], Some(OPERATION));
    assert!(ok, "{out}");
    assert!(
        out.contains("talosoperation.ichor.maesh.dev/prod-eu-kubernetes-manual created"),
        "{out}"
    );
    let (ok, out) = kubectl(
        kc,
        &[
            "patch",
            "talosoperation",
            "prod-eu-kubernetes-manual",
            "--type=merge",
            "-p",
            r#"{"spec":{"paused":true}}"#,
        ],
        None,
    );
    assert!(ok && out.contains("patched"), "{out}");
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "top",
            "prod-eu-kubernetes-manual",
            "-o",
            "jsonpath={.spec.paused}",
        ],
        None,
    );
    assert!(ok && out == "true", "{out}");
    let (ok, out) = kubectl(
        kc,
        &["delete", "talosoperation", "prod-eu-kubernetes-manual"],
        None,
    );
    assert!(ok && out.contains("deleted"), "{out}");
    let (ok, out) = kubectl(kc, &["get", "top", "prod-eu-kubernetes-manual"], None);
    assert!(!ok && out.contains("NotFound"), "{out}");

    // The admission policy and RBAC answer kubectl as a real apiserver would.
    let (ok, out) = kubectl(
        kc,
        &[
            "patch",
            "tc",
            "prod-eu",
            "--type=merge",
            "-p",
            r#"{"spec":{"cni":{"kubeProxy":"replaced"}}}"#,
        ],
        None,
    );
    assert!(!ok && out.contains("ValidatingAdmissionPolicy"), "{out}");
    let (ok, out) = kubectl(
        kc,
        &[
            "delete",
            "top",
            "staging-cni-p2m8v",
            "--as",
            "viewer",
            "--as-group",
            "ichor:viewers",
        ],
        None,
    );
    assert!(
        !ok && out.contains("User \"viewer\" cannot delete resource \"talosoperations\""),
        "{out}"
    );
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "top",
            "--as",
            "viewer",
            "--as-group",
            "ichor:viewers",
        ],
        None,
    );
    assert!(ok && out.contains("staging-cni-p2m8v"), "{out}");
}

#[test]
fn a_non_loopback_listen_address_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_ichor-tui"))
        .args([
            "demo-cluster",
            "--listen",
            "0.0.0.0:0",
            "--log-file",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0") && err.contains("--allow-remote"),
        "{err}"
    );
}
