//! The kustomize base and its overlays as `kubectl apply -k` would apply them: each built by
//! `kubectl kustomize` and every document read strictly into its k8s-openapi type (a
//! ServiceMonitor into a strict type of its own). The base builds to its files' objects in
//! ichor-system and no Namespace; the passthrough overlay asks serve for `--auth passthrough`
//! and gives its identity the component's role, with nothing to review or impersonate; the
//! Prometheus Operator's overlay adds a ServiceMonitor that scrapes the Service's metrics port.

use super::manifests::{ServiceMonitor, read_as_its_kind, strictly};
use super::{deploy_dir, documents, present};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::rbac::v1::ClusterRole;
use serde_json::Value;
use std::process::Command;

/// `kubectl kustomize deploy/DIR`: its documents, each with the directory's name.
fn built(dir: &str) -> Vec<(String, Value)> {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(deploy_dir().join(dir))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl kustomize deploy/{dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
        .unwrap_or_else(|e| panic!("deploy/{dir} built to YAML that does not parse: {e}"));
    docs.into_iter().map(|d| (dir.to_string(), d)).collect()
}

/// The one document of `kind` in `docs`.
fn one<'a>(docs: &'a [(String, Value)], kind: &str) -> &'a (String, Value) {
    let found: Vec<_> = docs.iter().filter(|(_, d)| d["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "one {kind}");
    found[0]
}

/// Every document read strictly; none is a Namespace; every namespaced one in ichor-system.
fn read_all(docs: &[(String, Value)]) -> Vec<String> {
    let cluster_scoped = ["ClusterRole", "ClusterRoleBinding"];
    let mut kinds = Vec::new();
    for doc in docs {
        let kind = read_as_its_kind(doc);
        let namespace = doc.1["metadata"]["namespace"].as_str();
        match cluster_scoped.contains(&kind.as_str()) {
            true => assert_eq!(namespace, None, "{kind}"),
            false => assert_eq!(namespace, Some("ichor-system"), "{kind}"),
        }
        kinds.push(kind);
    }
    kinds.sort();
    kinds
}

#[test]
fn the_base_and_each_overlay_build_and_read_strictly() {
    if !present("kubectl", &["version", "--client"]) {
        return;
    }
    // The base: its files' objects, as they are written.
    let base = built("base");
    let files = documents();
    assert_eq!(read_all(&base).len(), files.len());
    for (file, doc) in &files {
        assert!(
            base.iter().any(|(_, b)| b == doc),
            "{file}: {} {} is not built as it is written",
            doc["kind"],
            doc["metadata"]["name"]
        );
    }

    // Passthrough: serve asked for it, and its role reads and never reviews or impersonates.
    let passthrough = built("overlays/passthrough");
    assert_eq!(read_all(&passthrough), read_all(&base));
    let deployment: Deployment = strictly(one(&passthrough, "Deployment"));
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    let args = pod.containers[0].args.clone().unwrap();
    assert_eq!(
        args[args.len() - 2..],
        ["--auth", "passthrough"],
        "{args:?}"
    );
    let role: ClusterRole = strictly(one(&passthrough, "ClusterRole"));
    let rules = role.rules.unwrap();
    assert!(!rules.is_empty());
    for rule in &rules {
        assert!(
            !rule.verbs.iter().any(|v| v == "impersonate" || v == "*"),
            "{rule:?}"
        );
        let resources = rule.resources.as_deref().unwrap_or_default();
        assert!(!resources.iter().any(|r| r == "tokenreviews"), "{rule:?}");
    }
    let base_role: ClusterRole = strictly(one(&base, "ClusterRole"));
    assert_eq!(role.metadata.labels, base_role.metadata.labels);

    // The Prometheus Operator: a ServiceMonitor on the Service's metrics port.
    let monitored = built("overlays/prometheus-operator");
    let mut kinds = read_all(&base);
    kinds.push("ServiceMonitor".to_string());
    kinds.sort();
    assert_eq!(read_all(&monitored), kinds);
    let monitor: ServiceMonitor = strictly(one(&monitored, "ServiceMonitor"));
    assert_eq!(monitor.api_version, "monitoring.coreos.com/v1");
    let service: Service = strictly(one(&monitored, "Service"));
    let service_labels = service.metadata.labels.unwrap_or_default();
    let selects = monitor.spec.selector.match_labels.unwrap_or_default();
    assert!(!selects.is_empty());
    assert!(
        selects
            .iter()
            .all(|(k, v)| service_labels.get(k) == Some(v))
    );
    let ports = service.spec.unwrap().ports.unwrap_or_default();
    for endpoint in &monitor.spec.endpoints {
        assert!(
            ports
                .iter()
                .any(|p| p.name.as_deref() == Some(endpoint.port.as_str())),
            "{}",
            endpoint.port
        );
        assert_eq!(endpoint.path, "/metrics");
    }
}
