//! The base's manifests read into k8s-openapi's types, with nothing k8s-openapi does not know (a
//! field it would drop, a typo, a value of the wrong type), and saying what the tunnel, the
//! kubelet, the scheduler, Prometheus, the network and the binary need of each other.

use super::{Manifests, documents};
use ichor_demo::apiserver::auth::users;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;

/// Where `a` and `b` differ, as paths (`spec.template.metadata.labels`).
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let p = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(v), Some(w)) => differences(v, w, &p, out),
                    _ => out.push(p),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                differences(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(path.to_string()),
        _ => {}
    }
}

/// `doc` read into `T`, which must write it back as it was: a field `T` does not know (k8s-openapi
/// ignores those when reading) or reads otherwise fails.
pub(super) fn strictly<T: DeserializeOwned + Serialize>((file, doc): &(String, Value)) -> T {
    let what = format!("{file}: {} {}", doc["kind"], doc["metadata"]["name"]);
    let typed: T = serde_json::from_value(doc.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let back = serde_json::to_value(&typed).unwrap();
    let mut diff = Vec::new();
    differences(doc, &back, "", &mut diff);
    assert!(
        diff.is_empty(),
        "{what}: not as k8s-openapi reads it (unknown or mistyped): {diff:?}"
    );
    typed
}

/// `doc` read strictly into the k8s-openapi type of its kind (or, for a ServiceMonitor, into
/// [`ServiceMonitor`]); its kind.
pub(super) fn read_as_its_kind(doc: &(String, Value)) -> String {
    let kind = doc.1["kind"].as_str().unwrap_or_default().to_string();
    use k8s_openapi::api::{apps, core, networking, policy, rbac};
    match kind.as_str() {
        "ServiceAccount" => drop(strictly::<core::v1::ServiceAccount>(doc)),
        "ClusterRole" => drop(strictly::<rbac::v1::ClusterRole>(doc)),
        "ClusterRoleBinding" => drop(strictly::<rbac::v1::ClusterRoleBinding>(doc)),
        "Deployment" => drop(strictly::<apps::v1::Deployment>(doc)),
        "Service" => drop(strictly::<core::v1::Service>(doc)),
        "PodDisruptionBudget" => drop(strictly::<policy::v1::PodDisruptionBudget>(doc)),
        "NetworkPolicy" => drop(strictly::<networking::v1::NetworkPolicy>(doc)),
        "ServiceMonitor" => drop(strictly::<ServiceMonitor>(doc)),
        other => panic!("{}: a kind this test does not read: {other:?}", doc.0),
    }
    kind
}

/// The Prometheus Operator's ServiceMonitor (monitoring.coreos.com/v1), the fields the
/// component sets, and no others: k8s-openapi has no type for it.
#[derive(serde::Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct ServiceMonitor {
    pub api_version: String,
    pub kind: String,
    pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    pub spec: ServiceMonitorSpec,
}

#[derive(serde::Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct ServiceMonitorSpec {
    pub selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    pub endpoints: Vec<ScrapeEndpoint>,
}

#[derive(serde::Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct ScrapeEndpoint {
    pub port: String,
    pub path: String,
    pub scheme: String,
    pub interval: String,
}

#[test]
fn every_manifest_is_a_kubernetes_object_with_nothing_unknown() {
    let docs = documents();
    let mut kinds: Vec<String> = docs.iter().map(read_as_its_kind).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment",
            "NetworkPolicy",
            "PodDisruptionBudget",
            "Service",
            "ServiceAccount"
        ],
        "no Namespace: ichor-system is ichor's, and `kubectl delete -k` must leave it"
    );
    // Every object carries the recommended labels, the version this binary's.
    for (file, doc) in &docs {
        let labels = &doc["metadata"]["labels"];
        for (key, value) in [
            ("app.kubernetes.io/name", "ichor-tui"),
            ("app.kubernetes.io/component", "serve"),
            ("app.kubernetes.io/part-of", "ichor"),
            ("app.kubernetes.io/version", env!("CARGO_PKG_VERSION")),
        ] {
            assert_eq!(labels[key], value, "{file}: {} {key}", doc["kind"]);
        }
    }
    // A typo is caught: a field k8s-openapi does not know.
    let mut typo = docs
        .iter()
        .find(|d| d.1["kind"] == "Deployment")
        .unwrap()
        .clone();
    typo.1["spec"]["replica"] = Value::from(2);
    let caught = std::panic::catch_unwind(|| {
        strictly::<k8s_openapi::api::apps::v1::Deployment>(&typo);
    });
    assert!(caught.is_err(), "spec.replica is refused");
}

fn labels(m: &Option<BTreeMap<String, String>>) -> BTreeMap<String, String> {
    m.clone().unwrap_or_default()
}

#[test]
fn the_service_the_tunnel_finds_leads_to_the_pods_api_port() {
    let m = Manifests::read();
    let meta = &m.service.metadata;
    assert_eq!(
        (meta.namespace.as_deref(), meta.name.as_deref()),
        (Some("ichor-system"), Some("ichor-ui")),
        "the dashboards' tunnel looks for ichor-system/ichor-ui (src/client/tunnel.rs)"
    );
    let spec = m.service.spec.as_ref().unwrap();
    let api = spec
        .ports
        .iter()
        .flatten()
        .find(|p| p.name.as_deref() == Some("api"))
        .expect("a port named api");
    assert_eq!(api.target_port, Some(IntOrString::String("api".into())));
    assert_eq!(m.port("api"), 8080);
    // The Service, the Deployment, the budget and the anti-affinity select the pods.
    let pod_labels = labels(
        &m.deployment
            .spec
            .as_ref()
            .unwrap()
            .template
            .metadata
            .as_ref()
            .unwrap()
            .labels,
    );
    let selects =
        |s: &BTreeMap<String, String>| s.iter().all(|(k, v)| pod_labels.get(k) == Some(v));
    assert!(
        selects(&labels(&spec.selector)),
        "the Service selects the pods"
    );
    let deployment = m.deployment.spec.as_ref().unwrap();
    assert!(selects(&labels(&deployment.selector.match_labels)));
    let budget = m.budget.spec.as_ref().unwrap();
    assert!(selects(&labels(
        &budget.selector.as_ref().unwrap().match_labels
    )));
    assert_eq!(budget.min_available, Some(IntOrString::Int(1)));
    assert_eq!(deployment.replicas, Some(2));
    // Spread over zones, then nodes, without refusing to schedule where there are too few.
    let pod = deployment.template.spec.as_ref().unwrap();
    let spread = pod.topology_spread_constraints.as_ref().unwrap();
    let keys: Vec<&str> = spread.iter().map(|c| c.topology_key.as_str()).collect();
    assert_eq!(
        keys,
        ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
    );
    for c in spread {
        assert_eq!(c.when_unsatisfiable, "ScheduleAnyway");
        assert!(selects(&labels(
            &c.label_selector.as_ref().unwrap().match_labels
        )));
        assert_eq!(
            c.match_label_keys,
            Some(vec!["pod-template-hash".to_string()])
        );
    }
}

#[test]
fn the_network_policy_lets_in_the_metrics_port_from_the_namespace_a_label_names() {
    let m = Manifests::read();
    let spec = m.network_policy.spec.as_ref().unwrap();
    let pod_labels = labels(
        &m.deployment
            .spec
            .as_ref()
            .unwrap()
            .template
            .metadata
            .as_ref()
            .unwrap()
            .labels,
    );
    let selected = labels(&spec.pod_selector.as_ref().unwrap().match_labels);
    assert!(selected.iter().all(|(k, v)| pod_labels.get(k) == Some(v)));
    assert_eq!(spec.policy_types, Some(vec!["Ingress".to_string()]));
    let ingress = spec.ingress.as_ref().unwrap();
    assert_eq!(ingress.len(), 1, "one rule: the metrics port");
    let ports = ingress[0].ports.as_ref().unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0].port, Some(IntOrString::String("metrics".into())));
    let from = &ingress[0].from.as_ref().unwrap()[0];
    assert!(from.pod_selector.is_none() && from.ip_block.is_none());
    let namespaces = labels(&from.namespace_selector.as_ref().unwrap().match_labels);
    assert_eq!(
        namespaces.keys().collect::<Vec<_>>(),
        ["kubernetes.io/metadata.name"],
        "a namespace a label names"
    );
    // No rule for the API port: it listens on the pod's loopback, where port-forwards arrive.
    let args = m.container().args.clone().unwrap();
    let listen = args.iter().position(|a| a == "--listen").unwrap();
    assert!(args[listen + 1].starts_with("localhost:"), "{args:?}");
}

#[test]
fn the_pod_runs_unprivileged_as_its_service_account() {
    let m = Manifests::read();
    let pod = m
        .deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap();
    let sc = pod.security_context.as_ref().unwrap();
    assert_eq!(sc.run_as_non_root, Some(true));
    assert!(sc.run_as_user.is_some_and(|u| u != 0));
    assert_eq!(sc.seccomp_profile.as_ref().unwrap().type_, "RuntimeDefault");
    let c = m.container().security_context.as_ref().unwrap();
    assert_eq!(c.read_only_root_filesystem, Some(true));
    assert_eq!(c.allow_privilege_escalation, Some(false));
    assert_eq!(
        c.capabilities.as_ref().unwrap().drop,
        Some(vec!["ALL".to_string()])
    );
    // Its service account is the one the ClusterRole is bound to, and the one the demo's
    // `serve` authenticates as.
    let sa = &m.service_account.metadata;
    assert_eq!(pod.service_account_name, sa.name);
    let subject = &m.binding.subjects.as_ref().unwrap()[0];
    assert_eq!(
        (
            subject.kind.as_str(),
            Some(&subject.name),
            subject.namespace.as_ref()
        ),
        ("ServiceAccount", sa.name.as_ref(), sa.namespace.as_ref())
    );
    assert_eq!(
        m.binding.role_ref.name,
        m.cluster_role.metadata.name.clone().unwrap()
    );
    assert_eq!(
        users::SERVER,
        format!(
            "system:serviceaccount:{}:{}",
            sa.namespace.as_deref().unwrap(),
            sa.name.as_deref().unwrap()
        )
    );
    // The image is this version's.
    let image = m.container().image.as_deref().unwrap();
    assert_eq!(
        image.rsplit_once(':').map(|(_, tag)| tag),
        Some(env!("CARGO_PKG_VERSION")),
        "{image}"
    );
}

#[test]
fn probes_resources_and_scraping_name_what_the_binary_serves() {
    let m = Manifests::read();
    let c = m.container();
    let args = c.args.clone().unwrap();
    let flag = |name: &str| {
        let i = args
            .iter()
            .position(|a| a == name)
            .unwrap_or_else(|| panic!("{name} in {args:?}"));
        args[i + 1].clone()
    };
    // The API on both loopbacks; metrics and probes on every address, IPv6 and IPv4.
    assert_eq!(flag("--listen"), format!("localhost:{}", m.port("api")));
    assert_eq!(
        flag("--metrics-listen"),
        format!("[::]:{}", m.port("metrics"))
    );
    assert_eq!(flag("--log-format"), "json");
    for (what, probe, path) in [
        ("liveness", c.liveness_probe.as_ref(), "/livez"),
        ("readiness", c.readiness_probe.as_ref(), "/readyz"),
    ] {
        let get = probe
            .and_then(|p| p.http_get.as_ref())
            .unwrap_or_else(|| panic!("{what}"));
        assert_eq!(get.path.as_deref(), Some(path), "{what}");
        assert_eq!(
            get.port,
            IntOrString::String("metrics".into()),
            "{what}: the kubelet reaches the pod's address, where only the metrics port listens"
        );
    }
    let annotations = labels(
        &m.deployment
            .spec
            .as_ref()
            .unwrap()
            .template
            .metadata
            .as_ref()
            .unwrap()
            .annotations,
    );
    assert_eq!(
        annotations.get("prometheus.io/scrape").map(String::as_str),
        Some("true")
    );
    assert_eq!(
        annotations.get("prometheus.io/port"),
        Some(&m.port("metrics").to_string())
    );
    assert_eq!(
        annotations.get("prometheus.io/path").map(String::as_str),
        Some("/metrics")
    );
    let resources = c.resources.as_ref().unwrap();
    let requests = resources.requests.as_ref().unwrap();
    assert!(requests.contains_key("cpu") && requests.contains_key("memory"));
    assert!(resources.limits.as_ref().unwrap().contains_key("memory"));
    // serve drains for up to 30 s after SIGTERM: the kubelet waits longer before it kills.
    let pod = m
        .deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap();
    let grace = pod.termination_grace_period_seconds.unwrap();
    assert!(
        grace > i64::try_from(ichor_server::DRAIN_LIMIT.as_secs()).unwrap(),
        "{grace}"
    );
}
