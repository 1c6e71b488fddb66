//! The kubectl side of the contract table: each check drives the real kubectl.

use super::{Check, Kubectl};

fn want(out: &str, needle: &str) -> Check {
    if out.contains(needle) {
        Ok(())
    } else {
        Err(format!("wanted {needle:?} in {out}"))
    }
}

pub const OPERATION: &str = "apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosOperation
metadata:
  name: op2
spec:
  cluster: c1
  kind: talos
";

pub fn health(k: &Kubectl) -> Check {
    for path in ["/healthz", "/readyz", "/livez"] {
        let out = k.ok(&["get", "--raw", path], None)?;
        if out.trim() != "ok" {
            return Err(format!("{path}: {out}"));
        }
    }
    Ok(())
}

pub fn namespaces(k: &Kubectl) -> Check {
    let out = k.ok(&["get", "ns"], None)?;
    want(&out, "default")?;
    want(&out, "kube-system")?;
    want(&out, "Active")?;
    let one = k.json(&["get", "namespace", "default"])?;
    if one["status"]["phase"] != "Active" {
        return Err(format!("{one}"));
    }
    k.refused(
        &["get", "ns", "nope"],
        None,
        "namespaces \"nope\" not found",
    )
}

pub fn create_in_missing_namespace(k: &Kubectl) -> Check {
    k.refused(
        &["create", "-n", "nope", "-f", "-"],
        Some(OPERATION),
        "namespaces \"nope\" not found",
    )
}

pub fn nodes(k: &Kubectl) -> Check {
    let out = k.ok(&["get", "nodes"], None)?;
    want(&out, "No resources found")
}

fn resource_version(k: &Kubectl) -> Result<String, String> {
    let v = k.json(&["get", "top", "op1"])?;
    Ok(v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string())
}

pub fn no_op_write(k: &Kubectl) -> Check {
    k.ok(&["label", "top", "op1", "a=b"], None)?;
    let before = resource_version(k)?;
    k.ok(&["label", "--overwrite", "top", "op1", "a=b"], None)?;
    k.ok(
        &[
            "patch",
            "top",
            "op1",
            "--type=merge",
            "-p",
            r#"{"spec":{"paused":false}}"#,
        ],
        None,
    )?;
    let after = resource_version(k)?;
    if before != after {
        return Err(format!("resourceVersion {before} became {after}"));
    }
    Ok(())
}

fn with_spec(name: &str, spec_extra: &str) -> String {
    format!(
        "apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: {name}\nspec:\n  cluster: c1\n{spec_extra}"
    )
}

pub fn invalid_names_the_field(k: &Kubectl) -> Check {
    let body = "apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: op2\nspec:\n  cluster: c1\n  kind: bogus\n";
    k.refused(
        &["create", "-f", "-"],
        Some(body),
        "The TalosOperation \"op2\" is invalid: spec.kind: Unsupported value: \"bogus\"",
    )
}

pub fn wrong_type_names_the_type(k: &Kubectl) -> Check {
    let body = with_spec("op2", "  kind: talos\n  maxUnavailable: two\n");
    k.refused(
        &["create", "-f", "-"],
        Some(&body),
        "spec.maxUnavailable in body must be of type integer: \"string\"",
    )
}

pub fn strict_refuses_unknown_fields(k: &Kubectl) -> Check {
    let body = with_spec("op2", "  kind: talos\n  foo: bar\n");
    k.refused(
        &["create", "-f", "-"],
        Some(&body),
        "strict decoding error: unknown field \"spec.foo\"",
    )?;
    // kubectl patch has no --validate: the server's default, Warn.
    let out = k.ok(
        &[
            "patch",
            "top",
            "op1",
            "--type=merge",
            "-p",
            r#"{"spec":{"foo":"bar"}}"#,
        ],
        None,
    )?;
    want(&out, "Warning: unknown field \"spec.foo\"")
}

pub fn warn_and_ignore_prune(k: &Kubectl) -> Check {
    let body = with_spec("op2", "  kind: talos\n  foo: bar\n");
    let out = k.ok(&["create", "--validate=warn", "-f", "-"], Some(&body))?;
    want(&out, "Warning: unknown field \"spec.foo\"")?;
    let stored = k.json(&["get", "top", "op2"])?;
    if stored["spec"].get("foo").is_some() {
        return Err(format!("spec.foo stored: {stored}"));
    }
    let body = with_spec("op3", "  kind: talos\n  foo: bar\n");
    let out = k.ok(&["create", "--validate=false", "-f", "-"], Some(&body))?;
    if out.contains("Warning") {
        return Err(format!("Ignore warned: {out}"));
    }
    let stored = k.json(&["get", "top", "op3"])?;
    match stored["spec"].get("foo") {
        None => Ok(()),
        Some(_) => Err(format!("spec.foo stored: {stored}")),
    }
}

pub fn json_patch(k: &Kubectl) -> Check {
    let replace = r#"[{"op":"test","path":"/spec/paused","value":false},{"op":"replace","path":"/spec/paused","value":true}]"#;
    k.ok(&["patch", "top", "op1", "--type=json", "-p", replace], None)?;
    let op = k.json(&["get", "top", "op1"])?;
    if op["spec"]["paused"] != true {
        return Err(format!("not patched: {op}"));
    }
    let failing = r#"[{"op":"test","path":"/spec/paused","value":false}]"#;
    k.refused(
        &["patch", "top", "op1", "--type=json", "-p", failing],
        None,
        "",
    )
}

const LEASE: &str = "apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: l1
spec:
  holderIdentity: a
  leaseDurationSeconds: 15
";

pub fn strategic_merge_patch(k: &Kubectl) -> Check {
    k.ok(&["create", "-f", "-"], Some(LEASE))?;
    k.ok(
        &[
            "patch",
            "lease",
            "l1",
            "-p",
            r#"{"spec":{"holderIdentity":"b"}}"#,
        ],
        None,
    )?;
    let lease = k.json(&["get", "lease", "l1"])?;
    if lease["spec"]["holderIdentity"] != "b" || lease["spec"]["leaseDurationSeconds"] != 15 {
        return Err(format!("not merged: {lease}"));
    }
    k.refused(
        &["patch", "top", "op1", "-p", r#"{"spec":{"paused":true}}"#],
        None,
        "the body of the request was in an unknown format",
    )
}

pub fn finalizers(k: &Kubectl) -> Check {
    let add = r#"{"metadata":{"finalizers":["example.com/x"]}}"#;
    k.ok(&["patch", "top", "op1", "--type=merge", "-p", add], None)?;
    k.ok(&["delete", "top", "op1", "--wait=false"], None)?;
    let held = k.json(&["get", "top", "op1"])?;
    if !held["metadata"]["deletionTimestamp"].is_string() {
        return Err(format!("no deletionTimestamp: {held}"));
    }
    let more = r#"{"metadata":{"finalizers":["example.com/x","example.com/y"]}}"#;
    k.refused(
        &["patch", "top", "op1", "--type=merge", "-p", more],
        None,
        "no new finalizers can be added if the object is being deleted",
    )?;
    let remove = r#"[{"op":"remove","path":"/metadata/finalizers"}]"#;
    k.ok(&["patch", "top", "op1", "--type=json", "-p", remove], None)?;
    k.refused(&["get", "top", "op1"], None, "not found")
}

pub fn explain(k: &Kubectl) -> Check {
    let out = k.ok(&["explain", "talosoperations.spec"], None)?;
    want(&out, "maxUnavailable")?;
    want(&out, "<integer>")?;
    let out = k.ok(&["explain", "lease.spec.holderIdentity"], None)?;
    want(&out, "holderIdentity")?;
    let out = k.ok(&["explain", "events"], None)?;
    want(&out, "involvedObject")?;
    let out = k.ok(&["explain", "top.metadata.finalizers"], None)?;
    want(&out, "finalizers")
}

pub fn can_i(k: &Kubectl) -> Check {
    let out = k.ok(&["auth", "can-i", "create", "talosoperations"], None)?;
    if out.trim() != "yes" {
        return Err(format!("admin: {out}"));
    }
    let viewer = ["--as", "viewer", "--as-group", "ichor:viewers"];
    let (ok, out) = k.run(
        &[&viewer[..], &["auth", "can-i", "create", "talosoperations"]].concat(),
        None,
    );
    if ok || out.trim() != "no" {
        return Err(format!("viewer create: {ok} {out}"));
    }
    let out = k.ok(
        &[&viewer[..], &["auth", "can-i", "list", "talosoperations"]].concat(),
        None,
    )?;
    if out.trim() != "yes" {
        return Err(format!("viewer list: {out}"));
    }
    let out = k.ok(
        &[&viewer[..], &["auth", "can-i", "get", "/healthz"]].concat(),
        None,
    )?;
    want(&out, "yes")
}

pub fn can_i_list(k: &Kubectl) -> Check {
    let viewer = ["--as", "viewer", "--as-group", "ichor:viewers"];
    let out = k.ok(&[&viewer[..], &["auth", "can-i", "--list"]].concat(), None)?;
    want(&out, "talosoperations")?;
    want(&out, "selfsubjectaccessreviews.authorization.k8s.io")?;
    want(&out, "/healthz")
}

fn raw(k: &Kubectl, path: &str) -> Result<serde_json::Value, String> {
    let out = k.ok(&["get", "--raw", path], None)?;
    serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))
}

pub fn paging_snapshot(k: &Kubectl) -> Check {
    const LIST: &str = "/apis/ichor.maesh.dev/v1alpha1/namespaces/default/talosoperations";
    k.ok(
        &["create", "-f", "-"],
        Some(&with_spec("op2", "  kind: talos\n")),
    )?;
    let first = raw(k, &format!("{LIST}?limit=1"))?;
    let token = first["metadata"]["continue"]
        .as_str()
        .ok_or(format!("no token: {first}"))?;
    k.ok(
        &["create", "-f", "-"],
        Some(&with_spec("op3", "  kind: talos\n")),
    )?;
    let rest = raw(k, &format!("{LIST}?limit=10&continue={token}"))?;
    let names: Vec<&str> = rest["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    if names != ["op2"] {
        return Err(format!("page 2: {names:?}"));
    }
    let out = k.ok(&["get", "top", "--chunk-size=1"], None)?;
    want(&out, "op3")
}

pub fn wide_columns(k: &Kubectl) -> Check {
    let narrow = k.ok(&["get", "top"], None)?;
    let wide = k.ok(&["get", "top", "-o", "wide"], None)?;
    want(&wide, "MAX-UNAVAILABLE")?;
    if narrow.contains("MAX-UNAVAILABLE") {
        return Err(format!("a wide column without -o wide: {narrow}"));
    }
    let pods = k.ok(&["get", "machines", "-o", "wide"], None)?;
    want(&pods, "UPGRADE-ORDER")
}

pub fn apply_twice(k: &Kubectl) -> Check {
    let first = with_spec("op2", "  kind: talos\n");
    want(&k.ok(&["apply", "-f", "-"], Some(&first))?, "created")?;
    let second = with_spec("op2", "  kind: talos\n  paused: true\n");
    want(&k.ok(&["apply", "-f", "-"], Some(&second))?, "configured")?;
    let op = k.json(&["get", "top", "op2"])?;
    if op["spec"]["paused"] != true {
        return Err(format!("not applied: {op}"));
    }
    want(&k.ok(&["apply", "-f", "-"], Some(LEASE))?, "created")?;
    let moved = LEASE.replace("holderIdentity: a", "holderIdentity: b");
    want(&k.ok(&["apply", "-f", "-"], Some(&moved))?, "configured")?;
    let lease = k.json(&["get", "lease", "l1"])?;
    if lease["spec"]["holderIdentity"] != "b" {
        return Err(format!("not applied: {lease}"));
    }
    Ok(())
}
