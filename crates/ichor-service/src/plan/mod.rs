//! The plan: what an operation would do, and every reason it would be refused. Pure functions
//! over what the service read; PlanOperation and CreateOperation both call them.

mod refusals;

use super::tolerant::Unreadable;
use super::validate::shown;
use ichor_model::{
    ApiError, Code, HeldMachine, OperationEffect, OperationKind, OperationRequest, Plan,
    PlanMachine, Reason, SpecChange, Tracking, Version,
};
use ichor_resources::{
    CA_STAGES, IchorInstallation, Machine, TalosCluster, TalosOperation, names, plan_steps,
};
use kube::api::ObjectMeta;

/// Who tracks an object in Git, from Argo CD's and Flux's annotation and labels.
pub(crate) fn tracking(meta: &ObjectMeta) -> Option<Tracking> {
    let ann = |k: &str| {
        meta.annotations
            .as_ref()
            .and_then(|a| a.get(k))
            .filter(|v| !v.is_empty())
    };
    let label = |k: &str| {
        meta.labels
            .as_ref()
            .and_then(|l| l.get(k))
            .filter(|v| !v.is_empty())
    };
    if let Some(id) = ann(names::ARGOCD_TRACKING_ID) {
        let app = id.split(':').next().unwrap_or(id);
        return Some(Tracking {
            tool: "Argo CD".into(),
            object: app.to_string(),
        });
    }
    let flux = |name_key: &str, ns_key: &str, kind: &str| {
        label(name_key).map(|n| Tracking {
            tool: "Flux".into(),
            object: match label(ns_key) {
                Some(ns) => format!("{kind} {ns}/{n}"),
                None => format!("{kind} {n}"),
            },
        })
    };
    if let Some(t) = flux(
        names::FLUX_KUSTOMIZE_NAME,
        names::FLUX_KUSTOMIZE_NAMESPACE,
        "Kustomization",
    ) {
        return Some(t);
    }
    if let Some(t) = flux(
        names::FLUX_HELM_NAME,
        names::FLUX_HELM_NAMESPACE,
        "HelmRelease",
    ) {
        return Some(t);
    }
    label(names::APP_INSTANCE).map(|app| Tracking {
        tool: "Argo CD".into(),
        object: app.to_string(),
    })
}

/// A request whose arguments were checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Checked {
    pub(crate) kind: OperationKind,
    /// Normalised: versions with the leading v.
    pub(crate) target: Option<String>,
    pub(crate) max_unavailable: i32,
    /// Max unavailable was asked for (not the default 1): it is then checked against the
    /// cluster's workers.
    pub(crate) max_unavailable_given: bool,
}

fn invalid(reason: Reason, params: &[(&str, &str)]) -> ApiError {
    ApiError::said(Code::InvalidArgument, reason, params)
}

/// Checks the arguments before anything is read (see [`super::validate`]): the names, the
/// bounds, and InvalidArgument for a target given where none is taken, a missing or malformed
/// target. Refusals quote at most a short, inert prefix of what was given.
pub(crate) fn check_request(req: &OperationRequest) -> Result<Checked, ApiError> {
    super::validate::request(req)?;
    let kind = req.kind;
    let max_unavailable = req.max_unavailable.unwrap_or(1);
    super::validate::max_unavailable(max_unavailable)?;
    let target = req
        .target
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let target = match (kind.takes_target(), target) {
        (false, Some(t)) => {
            let value = shown(t);
            return Err(invalid(
                Reason::TargetNotTaken,
                &[("kind", kind.as_str()), ("value", &value)],
            ));
        }
        (false, None) => None,
        (true, None) => {
            return Err(invalid(Reason::TargetRequired, &[("kind", kind.as_str())]));
        }
        (true, Some(t)) if kind == OperationKind::Cni => {
            if t != "enabled" && t != "replaced" {
                let value = shown(t);
                return Err(invalid(Reason::InvalidKubeProxyMode, &[("value", &value)]));
            }
            Some(t.to_string())
        }
        (true, Some(t)) => match Version::parse(t) {
            Some(v) => Some(v.to_string()),
            None => {
                let value = shown(t);
                return Err(invalid(
                    Reason::InvalidVersion,
                    &[("value", &value), ("kind", kind.as_str())],
                ));
            }
        },
    };
    Ok(Checked {
        kind,
        target,
        max_unavailable,
        max_unavailable_given: req.max_unavailable.is_some(),
    })
}

/// A cluster's start claim (a Lease): which start holds it, the operation that start creates,
/// who made it and until when it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Claim {
    pub(crate) holder: String,
    pub(crate) operation: String,
    pub(crate) actor: String,
    /// The claim blocks other starts until then (unless its operation exists by then).
    pub(crate) expires: jiff::Timestamp,
    /// The claiming start's create got no answer: its outcome is being settled until
    /// `expires`.
    pub(crate) settling: bool,
}

/// A cluster's start claim as it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ClaimRead {
    Readable(Claim),
    /// The Lease cannot be read: which, and why.
    Unreadable {
        lease: String,
        why: String,
    },
}

/// What the service read for a plan.
pub(crate) struct PlanInputs<'a> {
    /// The names of every cluster in the namespace (an ichor upgrade changes them all).
    pub(crate) clusters: &'a [String],
    /// The cluster's start claim, if one stands or cannot be read.
    pub(crate) claim: Option<ClaimRead>,
    /// The request id of the start this plan is for (a plan for a Review has none).
    pub(crate) request_id: Option<&'a str>,
    /// Now, to tell a standing claim from a stale one.
    pub(crate) now: jiff::Timestamp,
    pub(crate) namespace: &'a str,
    pub(crate) cluster: &'a TalosCluster,
    pub(crate) machines: &'a [Machine],
    /// The machines of the namespace that could not be read.
    pub(crate) unreadable_machines: &'a [Unreadable],
    pub(crate) installation: Option<&'a IchorInstallation>,
    /// The operations in the cluster's namespace.
    pub(crate) operations: &'a [TalosOperation],
    /// The operations of the namespace that could not be read.
    pub(crate) unreadable_operations: &'a [Unreadable],
    /// The tracking of the object the spec write would change (read with the service's own
    /// client).
    pub(crate) tracking: Option<Tracking>,
}

/// The field a kind changes, and its current value.
fn spec_field(
    kind: OperationKind,
    inputs: &PlanInputs<'_>,
) -> Result<Option<(String, String, &'static str, String)>, ApiError> {
    let cluster_name = inputs.cluster.metadata.name.clone().unwrap_or_default();
    let spec = &inputs.cluster.spec;
    Ok(match kind {
        OperationKind::Talos => Some((
            "TalosCluster".into(),
            cluster_name,
            "spec.talosVersion",
            spec.talos_version.clone(),
        )),
        OperationKind::Kubernetes => Some((
            "TalosCluster".into(),
            cluster_name,
            "spec.kubernetesVersion",
            spec.kubernetes_version.clone(),
        )),
        OperationKind::Cni => Some((
            "TalosCluster".into(),
            cluster_name,
            "spec.cni.kubeProxy",
            spec.cni.kube_proxy.clone(),
        )),
        OperationKind::Ichor => {
            let inst = inputs.installation.ok_or_else(|| {
                ApiError::said(
                    Code::NotFound,
                    Reason::InstallationNotFound,
                    &[("namespace", inputs.namespace)],
                )
            })?;
            Some((
                "IchorInstallation".into(),
                names::ICHOR_INSTALLATION_NAME.into(),
                "spec.version",
                inst.spec.version.clone(),
            ))
        }
        OperationKind::Shutdown | OperationKind::CaRotation => None,
    })
}

fn same_value(kind: OperationKind, a: &str, b: &str) -> bool {
    if kind == OperationKind::Cni {
        return a == b;
    }
    match (Version::parse(a), Version::parse(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Max unavailable, when asked for a rollout, is at most the cluster's workers (or 1 when it has
/// none): a larger group would say something the executor cannot do.
fn check_workers(req: &Checked, cluster: &str, machines: &[Machine]) -> Result<(), ApiError> {
    if !req.max_unavailable_given || !req.kind.takes_max_unavailable() {
        return Ok(());
    }
    let workers = machines.iter().filter(|m| m.spec.role == "worker").count();
    let limit = i32::try_from(workers.max(1)).unwrap_or(i32::MAX);
    if req.max_unavailable <= limit {
        return Ok(());
    }
    let (value, workers) = (req.max_unavailable.to_string(), workers.to_string());
    Err(invalid(
        Reason::MaxUnavailableOverWorkers,
        &[
            ("value", &value),
            ("workers", &workers),
            ("cluster", cluster),
        ],
    ))
}

/// Computes the plan, with the reason a start would be refused, if any.
pub(crate) fn compute(req: &Checked, inputs: &PlanInputs<'_>) -> Result<Plan, ApiError> {
    let kind = req.kind;
    let cluster_name = inputs.cluster.metadata.name.clone().unwrap_or_default();
    let (current, target, spec_change) = values(req, inputs)?;
    let mine: Vec<Machine> = inputs
        .machines
        .iter()
        .filter(|m| m.spec.cluster == cluster_name)
        .cloned()
        .collect();
    check_workers(req, &cluster_name, &mine)?;
    let (steps, held) = steps_and_held(kind, &mine, req.max_unavailable, &target);
    let (held_not_skipped, unapproved) = not_in_the_plain_steps(kind, &mine);
    let mut plan = Plan {
        namespace: inputs.namespace.to_string(),
        cluster: cluster_name.clone(),
        kind,
        effect: OperationEffect::of(kind),
        max_unavailable: req.max_unavailable,
        steps,
        held,
        current,
        target,
        spec_change,
        blocked: None,
        also_blocked: Vec::new(),
        stages: Vec::new(),
        replaces_secrets_bundle: false,
        shared_with: Vec::new(),
        denied: None,
        fingerprint: String::new(),
        credentials_stop_working: false,
        held_not_skipped,
        unapproved,
        shut_down: crate::convert::last_shutdown(&cluster_name, inputs.operations)
            .filter(|r| r.still_down),
        stray_confirmation: crate::convert::has_confirmation(inputs.cluster),
    };
    if kind == OperationKind::CaRotation {
        plan.stages = CA_STAGES.iter().map(|s| s.to_string()).collect();
        plan.replaces_secrets_bundle = true;
        plan.credentials_stop_working = true;
    }
    if kind == OperationKind::Ichor {
        plan.shared_with = inputs
            .clusters
            .iter()
            .filter(|c| **c != cluster_name)
            .cloned()
            .collect();
        plan.shared_with.sort();
    }
    let mut blocked = refusals::blocked(kind, inputs, &plan).into_iter();
    plan.blocked = blocked.next();
    plan.also_blocked = blocked.collect();
    plan.fingerprint = fingerprint(&plan);
    Ok(plan)
}

/// The current value and the target as the Review shows them (versions with the leading v), and
/// the spec write a start makes (none when the spec already names the target).
fn values(
    req: &Checked,
    inputs: &PlanInputs<'_>,
) -> Result<(String, String, Option<SpecChange>), ApiError> {
    let kind = req.kind;
    let field = spec_field(kind, inputs)?;
    let (current, target) = match (&field, &req.target) {
        (Some((_, _, _, cur)), Some(t)) => {
            let cur_display = if kind == OperationKind::Cni {
                cur.clone()
            } else {
                Version::parse(cur).map_or_else(|| cur.clone(), |v| v.to_string())
            };
            (cur_display, t.clone())
        }
        _ => (String::new(), String::new()),
    };
    let spec_change = match &field {
        Some((rk, rn, f, cur)) if !same_value(kind, cur, &target) => Some(SpecChange {
            resource_kind: rk.clone(),
            resource_name: rn.clone(),
            field: f.to_string(),
            from: current.clone(),
            to: target.clone(),
        }),
        _ => None,
    };
    Ok((current, target, spec_change))
}

/// Whether the machine `name` reports it already runs `target` (Talos and Kubernetes
/// upgrades; the other kinds have no version a machine reports).
fn runs_target(kind: OperationKind, mine: &[Machine], name: &str, target: &str) -> bool {
    let Some(status) = mine
        .iter()
        .find(|m| m.metadata.name.as_deref() == Some(name))
        .and_then(|m| m.status.as_ref())
    else {
        return false;
    };
    let running = match kind {
        OperationKind::Talos => status.talos_version.as_deref(),
        OperationKind::Kubernetes => status.kubernetes_version.as_deref(),
        _ => None,
    };
    !target.is_empty() && running == Some(target)
}

/// The machines in the executor's order, a step at a time, with their roles; and the held ones.
fn steps_and_held(
    kind: OperationKind,
    mine: &[Machine],
    max_unavailable: i32,
    target: &str,
) -> (Vec<Vec<PlanMachine>>, Vec<HeldMachine>) {
    let steps = plan_steps(kind, mine, max_unavailable);
    let role = |n: &str| {
        mine.iter()
            .find(|m| m.metadata.name.as_deref() == Some(n))
            .map(|m| m.spec.role.clone())
            .unwrap_or_default()
    };
    let planned = steps
        .steps
        .iter()
        .map(|s| {
            s.iter()
                .map(|n| PlanMachine {
                    name: n.clone(),
                    role: role(n),
                    runs_target: runs_target(kind, mine, n, target),
                })
                .collect()
        })
        .collect();
    let held = steps
        .held
        .iter()
        .map(|(n, r)| HeldMachine {
            name: n.clone(),
            reason: r.clone(),
        })
        .collect();
    (planned, held)
}

/// What a Review says besides the steps: the held machines this kind handles anyway (they are
/// in the steps), and the machines that are not approved (not touched), in executor order.
fn not_in_the_plain_steps(
    kind: OperationKind,
    mine: &[Machine],
) -> (Vec<HeldMachine>, Vec<PlanMachine>) {
    if !kind.touches_machines() {
        return (Vec::new(), Vec::new());
    }
    let mut sorted = mine.to_vec();
    ichor_resources::sort_by_order(&mut sorted);
    let name = |m: &Machine| m.metadata.name.clone().unwrap_or_default();
    let held = sorted
        .iter()
        .filter(|m| m.spec.approved && !kind.skips_held())
        .filter_map(|m| {
            ichor_resources::hold_reason(m).map(|r| HeldMachine {
                name: name(m),
                reason: r.to_string(),
            })
        })
        .collect();
    let unapproved = sorted
        .iter()
        .filter(|m| !m.spec.approved)
        .map(|m| PlanMachine {
            name: name(m),
            role: m.spec.role.clone(),
            runs_target: false,
        })
        .collect();
    (held, unapproved)
}

/// What a person reviews, as one value: everything the Review shows of the plan. Two plans
/// with the same fingerprint do the same thing.
pub(crate) fn fingerprint(plan: &Plan) -> String {
    use sha2::Digest as _;
    let canonical = serde_json::json!({
        "namespace": plan.namespace,
        "cluster": plan.cluster,
        "kind": plan.kind.as_str(),
        "effect": format!("{:?}", plan.effect),
        "maxUnavailable": plan.max_unavailable,
        "steps": plan.steps.iter().map(|s| s.iter().map(|m| serde_json::json!([&m.name, &m.role, m.runs_target])).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "held": plan.held.iter().map(|h| [&h.name, &h.reason]).collect::<Vec<_>>(),
        "current": plan.current,
        "target": plan.target,
        "specChange": plan.spec_change.as_ref().map(|c| [&c.resource_kind, &c.resource_name, &c.field, &c.from, &c.to]),
        "stages": plan.stages,
        "replacesSecretsBundle": plan.replaces_secrets_bundle,
        "sharedWith": plan.shared_with,
        "credentialsStopWorking": plan.credentials_stop_working,
        "heldNotSkipped": plan.held_not_skipped.iter().map(|h| [&h.name, &h.reason]).collect::<Vec<_>>(),
        "unapproved": plan.unapproved.iter().map(|m| [&m.name, &m.role]).collect::<Vec<_>>(),
        "shutDown": plan.shut_down.as_ref().map(|r| &r.operation),
        "strayConfirmation": plan.stray_confirmation,
    });
    let digest = sha2::Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracking_by_argo_and_flux() {
        let mut meta = ObjectMeta::default();
        assert!(tracking(&meta).is_none());
        meta.labels = Some(
            [
                (
                    names::FLUX_KUSTOMIZE_NAME.to_string(),
                    "clusters".to_string(),
                ),
                (
                    names::FLUX_KUSTOMIZE_NAMESPACE.to_string(),
                    "flux-system".to_string(),
                ),
            ]
            .into(),
        );
        assert_eq!(
            tracking(&meta).unwrap().object,
            "Kustomization flux-system/clusters"
        );
        meta.annotations = Some(
            [(
                names::ARGOCD_TRACKING_ID.to_string(),
                "platform:ichor.maesh.dev/TalosCluster:default/prod".to_string(),
            )]
            .into(),
        );
        let t = tracking(&meta).unwrap();
        assert_eq!(
            (t.tool.as_str(), t.object.as_str()),
            ("Argo CD", "platform")
        );
    }
}
