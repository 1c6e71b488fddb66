//! The kube-apiserver contract of the demo API: one table of behaviours, each row naming the
//! documented kube-apiserver behaviour it checks, run through the real kubectl (the one on
//! PATH, and `ICHOR_KUBECTL_EXTRA` when set: another kubectl binary, say a 1.33) and through
//! kube-rs. Every row starts from a fresh API: the small cluster `c1` and the operation `op1`
//! in `default`.

use crate::common;

#[path = "kube_contract/apply_checks.rs"]
mod apply_checks;
#[path = "kube_contract/kube_checks.rs"]
mod kube_checks;
#[path = "kube_contract/kubectl_checks.rs"]
mod kubectl_checks;
#[path = "kube_contract/watch_checks.rs"]
mod watch_checks;

use common::{op, small_cluster};
use ichor_demo::apiserver::EmbeddedApi;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};

/// A row's verdict: `Err` says what differed from kube-apiserver.
pub type Check = Result<(), String>;
/// A kube-rs check.
pub type KubeCheck = Pin<Box<dyn Future<Output = Check> + Send>>;

/// One behaviour of kube-apiserver and how each client checks it.
pub struct Row {
    /// What kube-apiserver does.
    pub behaviour: &'static str,
    /// Where that is documented (the Kubernetes API reference or concept page).
    pub documented: &'static str,
    pub kubectl: Option<fn(&Kubectl) -> Check>,
    pub kube: Option<fn(kube::Client, EmbeddedApi) -> KubeCheck>,
}

/// The table: every behaviour of the demo API that a client relies on.
pub fn rows() -> Vec<Row> {
    use apply_checks as a;
    use kube_checks as k;
    use kubectl_checks as c;
    use watch_checks as w;
    vec![
        Row {
            behaviour: "/healthz, /readyz and /livez answer 200 ok",
            documented: "https://kubernetes.io/docs/reference/using-api/health-checks/",
            kubectl: Some(c::health),
            kube: Some(k::health),
        },
        Row {
            behaviour: "Namespaces are listed and read; default and kube-system exist",
            documented: "https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/",
            kubectl: Some(c::namespaces),
            kube: Some(k::namespaces),
        },
        Row {
            behaviour: "a create in a namespace that does not exist is 404 NotFound (NamespaceLifecycle)",
            documented: "https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#namespacelifecycle",
            kubectl: Some(c::create_in_missing_namespace),
            kube: Some(k::create_in_missing_namespace),
        },
        Row {
            behaviour: "Nodes are a resource: a cluster without any lists none, not 404",
            documented: "https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/",
            kubectl: Some(c::nodes),
            kube: Some(k::nodes),
        },
        Row {
            behaviour: "a write that changes nothing keeps the resourceVersion and sends no watch event",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions",
            kubectl: Some(c::no_op_write),
            kube: Some(k::no_op_write),
        },
        Row {
            behaviour: "422 Invalid carries details.causes, one per field, which kubectl prints by field",
            documented: "https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/status/",
            kubectl: Some(c::invalid_names_the_field),
            kube: Some(k::invalid_names_the_field),
        },
        Row {
            behaviour: "a value of the wrong type is 422 naming the type the schema wants",
            documented: "https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation",
            kubectl: Some(c::wrong_type_names_the_type),
            kube: Some(k::wrong_type_names_the_type),
        },
        Row {
            behaviour: "fieldValidation=Strict (kubectl's default) refuses an unknown field with 400",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation",
            kubectl: Some(c::strict_refuses_unknown_fields),
            kube: Some(k::strict_refuses_unknown_fields),
        },
        Row {
            behaviour: "fieldValidation=Warn (the server's default) and Ignore store the object with unknown fields pruned; Warn says so in a Warning header",
            documented: "https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning",
            kubectl: Some(c::warn_and_ignore_prune),
            kube: Some(k::default_prunes),
        },
        Row {
            behaviour: "JSON patch (RFC 6902) applies to every resource; a failed test op is 422",
            documented: "https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/#use-a-json-patch-to-update-a-deployment",
            kubectl: Some(c::json_patch),
            kube: Some(k::json_patch),
        },
        Row {
            behaviour: "strategic merge patch applies to built-in kinds (Lease) and is 415 on a custom resource",
            documented: "https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/#use-a-strategic-merge-patch-to-update-a-deployment",
            kubectl: Some(c::strategic_merge_patch),
            kube: Some(k::strategic_merge_patch),
        },
        Row {
            behaviour: "a delete held by a finalizer sets deletionTimestamp (MODIFIED); removing the last finalizer deletes (DELETED); no finalizer may be added meanwhile",
            documented: "https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/",
            kubectl: Some(c::finalizers),
            kube: Some(k::finalizers),
        },
        Row {
            behaviour: "OpenAPI v3 (every group-version, each kind's schema with its group-version-kind) and v2 are served; kubectl explain works",
            documented: "https://kubernetes.io/docs/concepts/overview/kubernetes-api/#openapi-interface-definition",
            kubectl: Some(c::explain),
            kube: Some(k::openapi),
        },
        Row {
            behaviour: "SelfSubjectAccessReview is accepted as protobuf (kubectl 1.32+) and JSON; kubectl auth can-i answers yes/no",
            documented: "https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access",
            kubectl: Some(c::can_i),
            kube: Some(k::access_review_protobuf),
        },
        Row {
            behaviour: "SelfSubjectRulesReview lists what the user may do in a namespace (kubectl auth can-i --list)",
            documented: "https://kubernetes.io/docs/reference/kubernetes-api/authorization-resources/self-subject-rules-review-v1/",
            kubectl: Some(c::can_i_list),
            kube: Some(k::rules_review),
        },
        Row {
            behaviour: "a continue token lists from the first page's snapshot: later creations and changes are not in the next pages",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks",
            kubectl: Some(c::paging_snapshot),
            kube: Some(k::paging_snapshot),
        },
        Row {
            behaviour: "a continue token whose snapshot is compacted (here after 1,010 changes) is 410 Expired",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks",
            kubectl: None,
            kube: Some(k::paging_expired),
        },
        Row {
            behaviour: "resourceVersionMatch=Exact lists the objects as they were at that resourceVersion",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-get-and-list",
            kubectl: None,
            kube: Some(k::list_exact),
        },
        Row {
            behaviour: "a list from a resourceVersion the server has not reached waits for it (3 s), then is 504 Timeout \"Too large resource version: N, current: C\" with the cause ResourceVersionTooLarge and retryAfterSeconds 1 (and Retry-After: 1)",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-get-and-list",
            kubectl: None,
            kube: Some(w::list_too_large),
        },
        Row {
            behaviour: "a list from a resourceVersion the server reaches while the list waits is answered with it",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-get-and-list",
            kubectl: Some(w::list_waits_for_the_version_kubectl),
            kube: Some(w::list_waits_for_the_version),
        },
        Row {
            behaviour: "a watch from a resourceVersion the server has not reached is accepted and sends nothing, no bookmark either, until the server passes it; then the changes after it",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-watch",
            kubectl: None,
            kube: Some(w::watch_ahead_is_silent),
        },
        Row {
            behaviour: "a streaming list (sendInitialEvents) from a resourceVersion the server does not reach: one ERROR event, 504 Too large resource version, then the end",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#streaming-lists",
            kubectl: None,
            kube: Some(w::streaming_list_too_large),
        },
        Row {
            behaviour: "allowWatchBookmarks: BOOKMARK events carrying only metadata.resourceVersion, about once a minute (the demo's interval can be shortened); none without it",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#watch-bookmarks",
            kubectl: None,
            kube: Some(w::bookmarks_when_asked),
        },
        Row {
            behaviour: "client-side kubectl apply creates, then patches (merge patch for a custom resource, strategic merge patch for a Lease)",
            documented: "https://kubernetes.io/docs/tasks/manage-kubernetes-objects/declarative-config/",
            kubectl: Some(c::apply_twice),
            kube: None,
        },
        Row {
            behaviour: "the CustomResourceDefinitions of the custom resources served are listed, read and watched under apiextensions.k8s.io/v1 (read only here), established, in discovery; kubectl explain reads their schemas",
            documented: "https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/",
            kubectl: Some(a::crds_kubectl),
            kube: Some(a::crds_kube),
        },
        Row {
            behaviour: "server-side apply (application/apply-patch+yaml) creates and updates; each manager owns what it applied (managedFields); another manager's change of an owned field is 409 naming the field and its manager; force takes it; a field its only manager drops is removed; an apply needs fieldManager, and force is for applies only",
            documented: "https://kubernetes.io/docs/reference/using-api/server-side-apply/",
            kubectl: Some(a::server_side_apply_kubectl),
            kube: Some(a::server_side_apply_kube),
        },
        Row {
            behaviour: "an empty finalizers list (or labels, annotations) is left out of the object, as ObjectMeta omits it",
            documented: "https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/object-meta/",
            kubectl: Some(a::empty_metadata_kubectl),
            kube: Some(a::empty_metadata_kube),
        },
        Row {
            behaviour: "a merge patch whose body is not a JSON object is 400 (\"cannot unmarshal array into Go value of type map[string]interface {}\"; null: \"Invalid JSON Patch\") and writes nothing",
            documented: "https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/#use-a-json-merge-patch-to-update-a-deployment",
            kubectl: Some(a::merge_patch_not_an_object_kubectl),
            kube: Some(a::merge_patch_not_an_object_kube),
        },
        Row {
            behaviour: "a Table's columns carry priorities: kubectl shows priority 1 only with -o wide",
            documented: "https://kubernetes.io/docs/reference/using-api/api-concepts/#receiving-resources-as-tables",
            kubectl: Some(c::wide_columns),
            kube: None,
        },
    ]
}

/// A fresh API: the small cluster and one operation.
pub fn fresh_api() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api.seed(&op("op1", "c1", "talos", 1)).unwrap();
    api
}

/// kubectl against a demo API served on loopback.
pub struct Kubectl {
    pub bin: String,
    pub kubeconfig: PathBuf,
}

impl Kubectl {
    /// Runs kubectl: (success, stdout and stderr).
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> (bool, String) {
        run_kubectl(&self.bin, &self.kubeconfig, args, stdin)
    }

    /// Runs kubectl and wants success; `Err` carries its output.
    pub fn ok(&self, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
        match self.run(args, stdin) {
            (true, out) => Ok(out),
            (false, out) => Err(format!("kubectl {} failed: {out}", args.join(" "))),
        }
    }

    /// Runs kubectl and wants a refusal whose output contains `want`.
    pub fn refused(&self, args: &[&str], stdin: Option<&str>, want: &str) -> Check {
        match self.run(args, stdin) {
            (true, out) => Err(format!("kubectl {} succeeded: {out}", args.join(" "))),
            (false, out) if out.contains(want) => Ok(()),
            (false, out) => Err(format!(
                "kubectl {}: wanted {want:?} in {out}",
                args.join(" ")
            )),
        }
    }

    /// `kubectl get … -o json`, parsed.
    pub fn json(&self, args: &[&str]) -> Result<serde_json::Value, String> {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        let out = self.ok(&all, None)?;
        let start = out.find('{').ok_or_else(|| format!("no JSON in {out}"))?;
        serde_json::from_str(&out[start..]).map_err(|e| format!("{e}: {out}"))
    }
}

fn run_kubectl(bin: &str, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String) {
    let mut child = Command::new(bin)
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", kubeconfig.with_file_name("cache"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        pipe.write_all(input.as_bytes()).unwrap();
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

/// The kubectl binaries to run the table with: the one on PATH (CI installs Debian's), and
/// `ICHOR_KUBECTL_EXTRA` if set.
fn kubectls() -> Vec<String> {
    let mut found = Vec::new();
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok()
    {
        found.push("kubectl".to_string());
    } else {
        // .ci/run installs kubectl; a developer machine without it skips, CI never does.
        assert!(std::env::var_os("CI").is_none(), "kubectl is missing in CI");
        eprintln!("kubectl not found: skipping its rows");
    }
    if let Some(extra) = std::env::var_os("ICHOR_KUBECTL_EXTRA") {
        found.push(extra.to_string_lossy().into_owned());
    }
    found
}

/// `what failed` lines for the rows whose check did not hold.
fn verdict(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} rows differ from kube-apiserver:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn through_kubectl() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut failures = Vec::new();
    for bin in kubectls() {
        let version = run_kubectl(&bin, Path::new("/dev/null"), &["version", "--client"], None).1;
        for row in rows() {
            let Some(check) = row.kubectl else { continue };
            let dir = tempfile::tempdir().unwrap();
            let kubeconfig = dir.path().join("kubeconfig");
            let api = fresh_api();
            let listener = rt
                .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
                .unwrap();
            let addr = listener.local_addr().unwrap();
            ichor_demo::apiserver::server::write_kubeconfig(&kubeconfig, &addr).unwrap();
            let server = rt.spawn(ichor_demo::apiserver::server::serve(api, listener));
            let k = Kubectl {
                bin: bin.clone(),
                kubeconfig,
            };
            if let Err(e) = check(&k) {
                failures.push(format!(
                    "[{} {}] {} ({}): {e}",
                    bin,
                    version.lines().next().unwrap_or(""),
                    row.behaviour,
                    row.documented
                ));
            }
            server.abort();
        }
    }
    verdict(&failures);
}

#[tokio::test]
async fn through_kube_rs() {
    let mut failures = Vec::new();
    for row in rows() {
        let Some(check) = row.kube else { continue };
        let api = fresh_api();
        let client = api.client(ichor_demo::apiserver::auth::users::ADMIN_TOKEN);
        if let Err(e) = check(client, api).await {
            failures.push(format!("{} ({}): {e}", row.behaviour, row.documented));
        }
    }
    verdict(&failures);
}

/// Every row names the documented behaviour and is run by at least one client.
#[test]
fn every_row_names_its_source_and_runs() {
    for row in rows() {
        assert!(!row.behaviour.is_empty() && row.documented.starts_with("https://"));
        assert!(
            row.kubectl.is_some() || row.kube.is_some(),
            "{}",
            row.behaviour
        );
    }
}
