//! The real kubectl against `ichor-tui demo-cluster`, as against a real cluster.

use crate::common::process::{kubectl_available, kubectl_says as kubectl};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

#[path = "kubectl/port_forward.rs"]
mod port_forward;
#[path = "kubectl/watch.rs"]
mod watch;

pub(crate) struct DemoCluster {
    child: Child,
    pub(crate) kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for DemoCluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start() -> DemoCluster {
    start_with(&[])
}

fn start_with(extra: &[&str]) -> DemoCluster {
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
        .args(extra)
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

#[test]
fn kubectl_lists_the_core_resources_and_reads_ichor_ui() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let (ok, out) = kubectl(kc, &["api-resources"], None);
    assert!(ok && !out.contains("error"), "{out}");
    for line in [
        ["services", "svc", "v1"],
        ["endpoints", "ep", "v1"],
        ["pods", "po", "v1"],
    ] {
        assert!(
            out.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.starts_with(&line)
            }),
            "{line:?} in {out}"
        );
    }
    let (ok, out) = kubectl(
        kc,
        &["get", "svc,pods,endpoints", "-n", "ichor-system"],
        None,
    );
    assert!(ok, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("service/ichor-ui") && l.contains("8080/TCP")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("pod/ichor-ui-") && l.contains("1/1") && l.contains("Running")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("endpoints/ichor-ui") && l.contains(":8080")),
        "{out}"
    );
    // Read only, and RBAC for the demo users: they read ichor-system, not other namespaces.
    let (ok, out) = kubectl(
        kc,
        &["delete", "svc", "ichor-ui", "-n", "ichor-system"],
        None,
    );
    assert!(!ok && out.contains("MethodNotAllowed"), "{out}");
    let viewer = ["--as", "viewer", "--as-group", "ichor:viewers"];
    let (ok, out) = kubectl(
        kc,
        &[&["get", "pods", "-n", "ichor-system"][..], &viewer].concat(),
        None,
    );
    assert!(ok && out.contains("ichor-ui-"), "{out}");
    let (ok, out) = kubectl(
        kc,
        &[&["get", "pods", "-n", "default"][..], &viewer].concat(),
        None,
    );
    assert!(!ok && out.contains("Forbidden"), "{out}");
}

/// kubectl lists in chunks (`--chunk-size`, 500 by default) and follows `continue`: every
/// row is there, once, in Tables and in JSON.
#[test]
fn kubectl_lists_in_chunks() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let (ok, out) = kubectl(kc, &["get", "top", "--chunk-size=2", "--no-headers"], None);
    assert!(ok, "{out}");
    assert_eq!(out.lines().count(), 7, "{out}");
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "top",
            "--chunk-size=3",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        None,
    );
    assert!(ok, "{out}");
    let mut names: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(names.len(), 7, "{out}");
    names.dedup();
    assert_eq!(names.len(), 7, "{out}");
}

const APPLIED: &str = "apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosOperation
metadata:
  name: prod-eu-applied
spec:
  cluster: prod-eu
  kind: kubernetes
  paused: true
  maxUnavailable: 1
";

/// The CRDs and server-side apply, as kubectl users and GitOps tools reach them: `get crd`,
/// `explain` from the CRD's schema, `apply --server-side` twice with a changed field, a second
/// manager's change refused 409 (nothing written), `--force-conflicts`.
#[test]
fn kubectl_reads_the_crds_and_applies_server_side() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let (ok, out) = kubectl(kc, &["get", "crd"], None);
    assert!(ok, "{out}");
    for crd in [
        "talosoperations",
        "talosclusters",
        "machines",
        "ichorinstallations",
    ] {
        assert!(out.contains(&format!("{crd}.ichor.maesh.dev")), "{out}");
    }
    let (ok, out) = kubectl(kc, &["explain", "crd.spec.versions.schema"], None);
    assert!(ok && out.contains("openAPIV3Schema"), "{out}");
    let (ok, out) = kubectl(
        kc,
        &["explain", "talosoperations.spec.maxUnavailable"],
        None,
    );
    assert!(ok && out.contains("<integer>"), "{out}");

    let apply = ["apply", "--server-side", "-f", "-"];
    let (ok, out) = kubectl(kc, &apply, Some(APPLIED));
    assert!(ok && out.contains("serverside-applied"), "{out}");
    let changed = APPLIED.replace("maxUnavailable: 1", "maxUnavailable: 2");
    let (ok, out) = kubectl(kc, &apply, Some(&changed));
    assert!(ok && out.contains("serverside-applied"), "{out}");
    let jsonpath = |path: &str| {
        let (ok, out) = kubectl(
            kc,
            &[
                "get",
                "top",
                "prod-eu-applied",
                "-o",
                &format!("jsonpath={path}"),
            ],
            None,
        );
        assert!(ok, "{out}");
        out
    };
    assert_eq!(jsonpath("{.spec.maxUnavailable}"), "2");
    let rv = jsonpath("{.metadata.resourceVersion}");

    let other = [&apply[..2], &["--field-manager=other", "-f", "-"]].concat();
    let third = APPLIED.replace("maxUnavailable: 1", "maxUnavailable: 3");
    let (ok, out) = kubectl(kc, &other, Some(&third));
    assert!(
        !ok && out.contains(
            "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.maxUnavailable"
        ),
        "{out}"
    );
    assert_eq!(jsonpath("{.spec.maxUnavailable}"), "2");
    assert_eq!(
        jsonpath("{.metadata.resourceVersion}"),
        rv,
        "nothing written"
    );
    let forced = [&other[..], &["--force-conflicts"]].concat();
    let (ok, out) = kubectl(kc, &forced, Some(&third));
    assert!(ok && out.contains("serverside-applied"), "{out}");
    assert_eq!(jsonpath("{.spec.maxUnavailable}"), "3");
    assert_eq!(
        jsonpath(r#"{.metadata.managedFields[?(@.operation=="Apply")].manager}"#),
        "kubectl other"
    );
}
