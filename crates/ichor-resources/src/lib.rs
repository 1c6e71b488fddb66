//! The ichor resources (group `ichor.maesh.dev`, version `v1alpha1`), their label and annotation
//! names, and the one machine ordering that the plan and the controller share.

// The operation kinds and the CA rotation's passes are the model's: one vocabulary from the
// dashboard down to the CRD types.
pub use ichor_model::{CA_PASS_STAGES, CA_PASSES, OperationKind, ca_pass_of_stage};
use jiff::Timestamp;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub mod history;
pub mod tolerant;

/// A time as the controller and OperationService write it in statuses and annotations.
pub fn format_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Parses a time the controller or the API wrote.
pub fn parse_time(s: &str) -> Option<Timestamp> {
    s.parse().ok()
}

/// The API group of every ichor resource.
pub const GROUP: &str = "ichor.maesh.dev";
/// The API version of every ichor resource.
pub const VERSION: &str = "v1alpha1";

/// Every label and annotation name the program reads or writes.
pub mod names {
    /// Machine label: integer, ascending; unlabelled machines come after labelled ones.
    pub const UPGRADE_ORDER: &str = "ichor.maesh.dev/upgrade-order";
    /// Machine annotation: the machine is held back from rollouts; the value is the reason.
    pub const UPGRADE_HOLD: &str = "ichor.maesh.dev/upgrade-hold";
    /// TalosOperation annotation: who started the operation.
    pub const ACTOR: &str = "ichor.maesh.dev/actor";
    /// TalosOperation annotation: the route the start came by (`in-process`, `ichor-ui`).
    pub const ACTOR_ROUTE: &str = "ichor.maesh.dev/actor-route";
    /// TalosOperation annotation: the value before the start (set by CreateOperation).
    pub const CURRENT: &str = "ichor.maesh.dev/current";
    /// TalosOperation annotation: the target of the start (set by CreateOperation).
    pub const TARGET: &str = "ichor.maesh.dev/target";
    /// TalosOperation annotation: who did what to the operation through OperationService, a JSON
    /// list of `{action, actor, at, outcome}` (see [`crate::history`]).
    pub const HISTORY: &str = "ichor.maesh.dev/history";
    /// TalosOperation annotation: who last paused or resumed the operation (written before the
    /// history was kept; read only, for operations paused then).
    pub const PAUSED_BY: &str = "ichor.maesh.dev/paused-by";
    /// TalosOperation annotation: when the operation was last paused or resumed (RFC 3339;
    /// read only, as [`PAUSED_BY`]).
    pub const PAUSED_AT: &str = "ichor.maesh.dev/paused-at";
    /// TalosCluster annotation the admission policy requires on a `spec.cni.kubeProxy` change.
    pub const CONFIRM_KUBE_PROXY_SWITCH: &str = "ichor.maesh.dev/confirm-kube-proxy-switch";
    /// Demo only: a Machine annotation naming the operation kind that fails on this machine.
    pub const DEMO_FAIL: &str = "demo.ichor.maesh.dev/fail";
    /// Demo only: a Machine annotation making its steps take this many times as long (a whole
    /// number from 1 to 100); past two ordinary steps the simulated controller says it waits
    /// for the machine, with a Warning Event on it.
    pub const DEMO_SLOW: &str = "demo.ichor.maesh.dev/slow";
    /// TalosCluster condition: the backup of the cluster's secrets bundle predates a CA
    /// rotation (set by the controller when a rotation completes).
    pub const BUNDLE_BACKUP_STALE: &str = "BundleBackupStale";
    /// Argo CD tracking annotation.
    pub const ARGOCD_TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
    /// Argo CD (label tracking) and the common instance label.
    pub const APP_INSTANCE: &str = "app.kubernetes.io/instance";
    /// Flux kustomize-controller label.
    pub const FLUX_KUSTOMIZE_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
    /// Flux kustomize-controller namespace label.
    pub const FLUX_KUSTOMIZE_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
    /// Flux helm-controller label.
    pub const FLUX_HELM_NAME: &str = "helm.toolkit.fluxcd.io/name";
    /// Flux helm-controller namespace label.
    pub const FLUX_HELM_NAMESPACE: &str = "helm.toolkit.fluxcd.io/namespace";
    /// The TalosOperation condition type of an operation waiting for the cluster lock.
    pub const CLUSTER_LOCK_HELD: &str = "ClusterLockHeld";
    /// The name of the IchorInstallation in a cluster's namespace.
    pub const ICHOR_INSTALLATION_NAME: &str = "ichor";
    /// The id of the start that created a TalosOperation (OperationService; idempotent starts).
    pub const REQUEST_ID: &str = "ichor.maesh.dev/request-id";
    /// The start claim of a cluster: a `coordination.k8s.io/v1` Lease named this prefix and the
    /// cluster's name, held by the request id of the start under way.
    pub const START_CLAIM_PREFIX: &str = "ichor-start-";
    /// On the start claim: the name of the operation the claiming start creates.
    pub const CLAIM_OPERATION: &str = "ichor.maesh.dev/operation";
    /// On the start claim, while the start's create got no answer: the outcome is being
    /// settled (value `settling`); the claim stands until the create can no longer land.
    pub const CLAIM_STATE: &str = "ichor.maesh.dev/claim-state";
    /// The value of [`CLAIM_STATE`] while a start's outcome is being settled.
    pub const CLAIM_SETTLING: &str = "settling";
}

/// A Talos cluster managed by ichor.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "ichor.maesh.dev",
    version = "v1alpha1",
    kind = "TalosCluster",
    namespaced,
    status = "TalosClusterStatus",
    shortname = "tc"
)]
#[serde(rename_all = "camelCase")]
pub struct TalosClusterSpec {
    pub talos_version: String,
    pub kubernetes_version: String,
    #[serde(default)]
    pub cni: CniSpec,
}

/// The CNI settings of a cluster.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CniSpec {
    /// `enabled` or `replaced`.
    #[serde(default = "default_kube_proxy")]
    pub kube_proxy: String,
}

fn default_kube_proxy() -> String {
    "enabled".to_string()
}

/// The observed state of a cluster.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TalosClusterStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The operation holding the cluster lock (the controller's lease), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_holder: Option<String>,
}

/// A machine of a cluster.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "ichor.maesh.dev",
    version = "v1alpha1",
    kind = "Machine",
    namespaced,
    status = "MachineStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    pub cluster: String,
    /// `controlplane` or `worker`.
    pub role: String,
    #[serde(default)]
    pub approved: bool,
}

/// What a machine reports it runs (written by the controller as each step completes).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachineStatus {
    /// The Talos version the machine runs ("v1.9.2").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub talos_version: Option<String>,
    /// The Kubernetes version its kubelet runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
}

/// The ichor installation of a cluster's namespace (the one named `ichor`).
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "ichor.maesh.dev",
    version = "v1alpha1",
    kind = "IchorInstallation",
    namespaced
)]
#[serde(rename_all = "camelCase")]
pub struct IchorInstallationSpec {
    pub version: String,
}

/// One rolling operation on a cluster, carried out by the controller.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "ichor.maesh.dev",
    version = "v1alpha1",
    kind = "TalosOperation",
    namespaced,
    status = "TalosOperationStatus",
    shortname = "top"
)]
#[serde(rename_all = "camelCase")]
pub struct TalosOperationSpec {
    pub cluster: String,
    /// `talos`, `kubernetes`, `ichor`, `cni`, `shutdown` or `ca-rotation`.
    pub kind: String,
    #[serde(default = "default_max_unavailable")]
    pub max_unavailable: i32,
    #[serde(default)]
    pub paused: bool,
}

fn default_max_unavailable() -> i32 {
    1
}

/// The progress of an operation, as the controller reports it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TalosOperationStatus {
    /// `Pending`, `Running`, `Paused`, `Completed` or `Failed`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machines: Vec<MachineProgress>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_rotation: Option<CaRotationStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

/// One machine's part in an operation.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachineProgress {
    pub name: String,
    /// `Pending`, `Running`, `Completed`, `Failed` or `Skipped`.
    pub phase: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

/// Where a CA rotation is.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CaRotationStatus {
    /// `Accepting`, `Issuing`, `AwaitingCredentials` or `Dropping`.
    #[serde(default)]
    pub stage: String,
    #[serde(default)]
    pub pass: i32,
    #[serde(default)]
    pub passes: i32,
}

/// A status condition (the subset of metav1.Condition we use).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// The CA rotation stages, in order.
pub const CA_STAGES: [&str; 4] = ["Accepting", "Issuing", "AwaitingCredentials", "Dropping"];

/// A machine's upgrade-order label, if it is present and an integer.
pub fn upgrade_order(m: &Machine) -> Option<i64> {
    m.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(names::UPGRADE_ORDER))
        .and_then(|v| v.trim().parse::<i64>().ok())
}

/// A machine's hold reason, if it carries the hold annotation.
pub fn hold_reason(m: &Machine) -> Option<&str> {
    m.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(names::UPGRADE_HOLD))
        .map(String::as_str)
}

/// Orders machines as the executor handles them: by the upgrade-order label ascending,
/// unlabelled (or unparseable) after labelled, ties by name. The plan and the controller
/// both call this, so the order a person confirms is the order that runs.
pub fn sort_by_order(machines: &mut [Machine]) {
    machines.sort_by(|a, b| {
        let key = |m: &Machine| (upgrade_order(m).is_none(), upgrade_order(m).unwrap_or(0));
        key(a)
            .cmp(&key(b))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
}

/// The machines of an operation in the order and the steps the executor handles them, and the
/// machines it skips with their reasons. One function for the plan and the controller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MachineSteps {
    /// Each step's machine names; a step's machines are handled together.
    pub steps: Vec<Vec<String>>,
    /// Held machines that are skipped, with the hold reason.
    pub held: Vec<(String, String)>,
    /// Control plane names among the steps (for display).
    pub control_planes: Vec<String>,
}

impl MachineSteps {
    /// Every machine in the steps, in order.
    pub fn order(&self) -> impl Iterator<Item = &str> {
        self.steps.iter().flatten().map(String::as_str)
    }
}

/// Plans the steps of an operation of `kind` over `machines` (any order; only the cluster's
/// approved machines should be passed in, or they are filtered here).
pub fn plan_steps(kind: OperationKind, machines: &[Machine], max_unavailable: i32) -> MachineSteps {
    let mut sorted: Vec<Machine> = machines
        .iter()
        .filter(|m| m.spec.approved)
        .cloned()
        .collect();
    sort_by_order(&mut sorted);
    let mut out = MachineSteps::default();
    if !kind.touches_machines() {
        return out;
    }
    let mut cps = Vec::new();
    let mut workers = Vec::new();
    for m in &sorted {
        let name = m.metadata.name.clone().unwrap_or_default();
        if kind.skips_held()
            && let Some(reason) = hold_reason(m)
        {
            out.held.push((name, reason.to_string()));
            continue;
        }
        if m.spec.role == "controlplane" {
            cps.push(name);
        } else {
            workers.push(name);
        }
    }
    out.control_planes = cps.clone();
    let group = usize::try_from(max_unavailable.max(1)).unwrap_or(1);
    match kind {
        OperationKind::Shutdown => {
            if !workers.is_empty() {
                out.steps.push(workers);
            }
            if !cps.is_empty() {
                out.steps.push(cps);
            }
        }
        OperationKind::CaRotation => {
            out.steps
                .extend(cps.into_iter().chain(workers).map(|n| vec![n]));
        }
        _ => {
            out.steps.extend(cps.into_iter().map(|n| vec![n]));
            out.steps
                .extend(workers.chunks(group).map(<[String]>::to_vec));
        }
    }
    out
}

/// Builds a Machine object (used by the demo data and tests).
pub fn machine(
    cluster: &str,
    name: &str,
    role: &str,
    order: Option<i64>,
    approved: bool,
    hold: Option<&str>,
) -> Machine {
    let mut m = Machine::new(
        name,
        MachineSpec {
            cluster: cluster.to_string(),
            role: role.to_string(),
            approved,
        },
    );
    let mut labels = BTreeMap::new();
    labels.insert("ichor.maesh.dev/cluster".to_string(), cluster.to_string());
    if let Some(o) = order {
        labels.insert(names::UPGRADE_ORDER.to_string(), o.to_string());
    }
    m.metadata.labels = Some(labels);
    if let Some(h) = hold {
        m.metadata.annotations = Some(BTreeMap::from([(
            names::UPGRADE_HOLD.to_string(),
            h.to_string(),
        )]));
    }
    m
}

/// The label every demo Machine carries with its cluster's name, so a list can select by cluster.
pub const CLUSTER_LABEL: &str = "ichor.maesh.dev/cluster";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pass_names_a_stage_the_crd_knows() {
        for (stage, _) in CA_PASS_STAGES {
            assert!(CA_STAGES.contains(&stage), "{stage}");
        }
        assert!(CA_STAGES.contains(&ichor_model::AWAITING_CREDENTIALS));
        assert_eq!(CA_PASS_STAGES.len(), usize::try_from(CA_PASSES).unwrap());
    }

    #[test]
    fn sort_by_order_puts_labelled_first_then_name() {
        let mut ms = vec![
            machine("c", "w-b", "worker", None, true, None),
            machine("c", "w-a", "worker", None, true, None),
            machine("c", "cp-2", "controlplane", Some(2), true, None),
            machine("c", "cp-1", "controlplane", Some(10), true, None),
            machine("c", "cp-0", "controlplane", Some(2), true, None),
        ];
        sort_by_order(&mut ms);
        let names: Vec<_> = ms
            .iter()
            .map(|m| m.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["cp-0", "cp-2", "cp-1", "w-a", "w-b"]);
    }

    #[test]
    fn plan_steps_rollout_shutdown_and_ca_rotation() {
        let ms = vec![
            machine("c", "cp1", "controlplane", Some(1), true, None),
            machine("c", "cp2", "controlplane", Some(2), true, None),
            machine("c", "w1", "worker", Some(3), true, None),
            machine("c", "w2", "worker", Some(4), true, Some("disk swap")),
            machine("c", "w3", "worker", Some(5), true, None),
            machine("c", "w4", "worker", Some(6), true, None),
            machine("c", "w5", "worker", None, false, None),
        ];
        let r = plan_steps(OperationKind::Talos, &ms, 2);
        assert_eq!(
            r.steps,
            vec![vec!["cp1"], vec!["cp2"], vec!["w1", "w3"], vec!["w4"]]
        );
        assert_eq!(r.held, vec![("w2".to_string(), "disk swap".to_string())]);
        let s = plan_steps(OperationKind::Shutdown, &ms, 1);
        assert_eq!(
            s.steps,
            vec![vec!["w1", "w2", "w3", "w4"], vec!["cp1", "cp2"]]
        );
        assert!(s.held.is_empty());
        let ca = plan_steps(OperationKind::CaRotation, &ms, 3);
        assert_eq!(
            ca.order().collect::<Vec<_>>(),
            ["cp1", "cp2", "w1", "w2", "w3", "w4"]
        );
        assert!(ca.steps.iter().all(|s| s.len() == 1));
        assert!(plan_steps(OperationKind::Ichor, &ms, 1).steps.is_empty());
    }

    #[test]
    fn a_stage_names_its_pass() {
        assert_eq!(ca_pass_of_stage("Accepting"), Some(1));
        assert_eq!(ca_pass_of_stage("Issuing"), Some(2));
        assert_eq!(ca_pass_of_stage("AwaitingCredentials"), Some(3));
        assert_eq!(ca_pass_of_stage("Dropping"), Some(4));
        assert_eq!(ca_pass_of_stage(""), None);
        assert_eq!(ca_pass_of_stage("Rebooting"), None);
    }
}
