//! CreateOperation, in the ADR's order and bound to what was confirmed: the request id (a
//! repeat returns the operation it made), every refusal of the plan on a fresh read, the plan the
//! person reviewed (its fingerprint), a dry-run create as the caller, the cluster's start claim
//! (a Lease, taken with the API server's optimistic concurrency so that of concurrent starts on
//! one cluster exactly one goes on), the spec write preconditioned on the read the refusals were
//! checked on, the create, and for kube-proxy switches the removal of the confirmation
//! annotation. A conflict anywhere starts again from the read, re-checking everything.

use super::access::Caller;
use super::{OperationService, World, convert, plan};
use crate::model::{ApiError, Code, Created, OperationRequest, Plan, Reason, SpecChange, Warning};
use ichor_resources::{
    IchorInstallation, OperationKind, TalosCluster, TalosOperation, TalosOperationSpec, names,
};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, DeleteParams, PostParams, Preconditions};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long a start claim stands: other starts on the cluster are refused meanwhile, unless the
/// claiming start's operation exists by then.
pub const CLAIM_SECONDS: i32 = 60;

/// A start that holds the claim gives up before its writes once this much time has passed since
/// it took it, so that it never writes after its claim could have lapsed.
pub const CLAIM_WORK_LIMIT: Duration = Duration::from_secs(30);

/// The Lease that holds a cluster's start claim. Names stay within Kubernetes' 253 characters.
pub fn claim_name(cluster: &str) -> String {
    let name = format!("{}{cluster}", names::START_CLAIM_PREFIX);
    if name.len() <= 253 {
        return name;
    }
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(cluster.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let keep: String = name.chars().take(240).collect();
    format!("{}-{hash}", keep.trim_end_matches(['-', '.']))
}

/// The claim a Lease records.
pub fn claim_of(lease: &Lease) -> plan::Claim {
    let ann = |k: &str| {
        lease
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(k))
            .cloned()
            .unwrap_or_default()
    };
    let spec = lease.spec.clone().unwrap_or_default();
    let renewed = spec
        .renew_time
        .or(spec.acquire_time)
        .map(|t| t.0)
        .unwrap_or_default();
    let seconds = spec.lease_duration_seconds.unwrap_or(CLAIM_SECONDS).max(0);
    plan::Claim {
        holder: spec.holder_identity.unwrap_or_default(),
        operation: ann(names::CLAIM_OPERATION),
        actor: ann(names::ACTOR),
        expires: renewed + jiff::SignedDuration::from_secs(i64::from(seconds)),
    }
}

fn request_id_of(op: &TalosOperation) -> Option<&str> {
    op.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(names::REQUEST_ID))
        .map(String::as_str)
}

fn has_confirmation(c: &TalosCluster) -> bool {
    c.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(names::CONFIRM_KUBE_PROXY_SWITCH))
}

/// Five characters as the API server's generateName makes them.
fn name_suffix() -> String {
    const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| char::from(CHARS[fastrand::usize(..CHARS.len())]))
        .collect()
}

/// The operation a start creates. Its name is chosen here, so the claim can name it.
fn operation_object(plan: &Plan, actor: &str, request_id: &str) -> TalosOperation {
    let name = format!("{}-{}-{}", plan.cluster, plan.kind.as_str(), name_suffix());
    let mut op = TalosOperation::new(
        &name,
        TalosOperationSpec {
            cluster: plan.cluster.clone(),
            kind: plan.kind.as_str().to_string(),
            max_unavailable: plan.max_unavailable,
            paused: false,
        },
    );
    op.metadata.namespace = Some(plan.namespace.clone());
    let mut annotations = BTreeMap::from([
        (names::ACTOR.to_string(), actor.to_string()),
        (names::REQUEST_ID.to_string(), request_id.to_string()),
    ]);
    if !plan.target.is_empty() {
        annotations.insert(convert::CURRENT.to_string(), plan.current.clone());
        annotations.insert(convert::TARGET.to_string(), plan.target.clone());
    }
    op.metadata.annotations = Some(annotations);
    op
}

/// What one pass of a start came to.
enum Pass {
    Done(Box<Created>),
    /// Someone wrote first: read again and re-check everything.
    Conflict(ApiError),
}

fn is_conflict(e: &ApiError) -> bool {
    matches!(e.code, Code::Aborted | Code::AlreadyExists)
}

impl OperationService {
    /// CreateOperation. See the module's documentation for the order.
    pub async fn create_operation(
        &self,
        caller: &Caller,
        req: &OperationRequest,
    ) -> Result<Created, ApiError> {
        let checked = plan::check_request(req)?;
        // check_request has checked the request id, if one was given.
        let request_id = req
            .request_id
            .clone()
            .unwrap_or_else(crate::model::new_request_id);
        // The claim this start holds, once taken: given back if the start ends without an
        // operation, so a rerun is not kept waiting.
        let mut held = None;
        let result = self
            .start_passes(caller, req, &checked, &request_id, &mut held)
            .await;
        if result.is_err()
            && let Some(lease) = held
        {
            self.release(caller, &req.namespace, &lease).await;
        }
        result
    }

    /// Passes over fresh reads until one is done or the conflicts are too many.
    async fn start_passes(
        &self,
        caller: &Caller,
        req: &OperationRequest,
        checked: &plan::Checked,
        request_id: &str,
        held: &mut Option<Lease>,
    ) -> Result<Created, ApiError> {
        let mut last = None;
        for _ in 0..super::CONFLICT_RETRIES {
            let world = self
                .read_world(
                    caller,
                    &req.namespace,
                    req.cluster.as_deref(),
                    checked.kind,
                    true,
                )
                .await?;
            match self
                .start_pass(caller, req, checked, request_id, &world, held)
                .await?
            {
                Pass::Done(created) => return Ok(*created),
                Pass::Conflict(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| ApiError::new(Code::Aborted, "starting: conflict")))
    }

    /// One pass over a fresh read.
    async fn start_pass(
        &self,
        caller: &Caller,
        req: &OperationRequest,
        checked: &plan::Checked,
        request_id: &str,
        world: &World,
        held: &mut Option<Lease>,
    ) -> Result<Pass, ApiError> {
        let ns = req.namespace.as_str();
        // A repeat of a start that already created its operation writes nothing.
        if let Some(op) = world
            .operations
            .iter()
            .find(|o| request_id_of(o) == Some(request_id))
        {
            return Ok(Pass::Done(Box::new(Created {
                operation: convert::operation(op),
                found: true,
                spec_written: None,
                warnings: Vec::new(),
            })));
        }
        let plan = plan::compute(checked, &world.inputs(ns, Some(request_id)))?;
        if let Some(refusal) = plan.blocked.clone() {
            return Err(ApiError::from_refusal(refusal));
        }
        if let Some(confirmed) = &req.confirmed_plan
            && *confirmed != plan.fingerprint
        {
            return Err(ApiError::refused(
                Code::FailedPrecondition,
                Reason::PlanChanged,
                &[("cluster", &plan.cluster), ("kind", plan.kind.as_str())],
                format!(
                    "the plan for this {} operation on cluster {} changed since it was reviewed: review it again",
                    plan.kind.as_str(),
                    plan.cluster
                ),
            ));
        }
        let actor = self.access.actor(caller);
        let op = operation_object(&plan, &actor, request_id);
        let op_name = op.metadata.name.clone().unwrap_or_default();
        let ops: Api<TalosOperation> = self.api(caller, Some(ns));
        let dry = PostParams {
            dry_run: true,
            ..Default::default()
        };
        self.access
            .call(
                "checking that you may create the operation (dry run)",
                ops.create(&dry, &op),
            )
            .await?;
        // The spec write as a dry run too: RBAC and admission refuse it before anything is
        // written (a caller who may start operations but not edit clusters changes nothing).
        if let Some(change) = &plan.spec_change {
            match self
                .write_spec(caller, ns, plan.kind, change, world, true)
                .await
            {
                Err(e) if is_conflict(&e) => return Ok(Pass::Conflict(e)),
                r => r?,
            }
        }

        *held = match self
            .claim(
                caller,
                ns,
                &plan.cluster,
                world,
                request_id,
                &op_name,
                &actor,
            )
            .await
        {
            Ok(lease) => Some(lease),
            Err(e) if is_conflict(&e) => return Ok(Pass::Conflict(e)),
            Err(e) => return Err(e),
        };
        let since = Instant::now();

        let spec_written = match &plan.spec_change {
            Some(change) => {
                let written = match self.too_slow(since) {
                    Err(e) => Err(e),
                    Ok(()) => {
                        self.write_spec(caller, ns, plan.kind, change, world, false)
                            .await
                    }
                };
                match written {
                    Ok(()) => Some(change.clone()),
                    // The claim stays ours (it names this request id): the next pass renews it.
                    Err(e) if is_conflict(&e) => return Ok(Pass::Conflict(e)),
                    Err(e) => return Err(e),
                }
            }
            None => None,
        };
        let confirmation_present = plan.kind == OperationKind::Cni
            && (spec_written.is_some() || has_confirmation(&world.cluster));

        let created = match self.too_slow(since) {
            Err(e) => Err(e),
            Ok(()) => {
                self.access
                    .call(
                        "creating the operation",
                        ops.create(&PostParams::default(), &op),
                    )
                    .await
            }
        };
        // An answer lost on the way back from the API server: the create may have happened.
        let created = match created {
            Err(e) if e.code.is_transient() => {
                match self.find_created(&ops, &op_name, request_id).await {
                    Ok(Some(found)) => Ok(found),
                    Ok(None) => Err(e),
                    // Unknown: say so (the client finds out by the request id); the claim stays,
                    // so no other start goes ahead while the operation may exist.
                    Err(_) => {
                        *held = None;
                        return Err(e);
                    }
                }
            }
            other => other,
        };
        let created = match created {
            Ok(c) => c,
            Err(e) => {
                // Nothing will carry the confirmation out: take it back before answering.
                let left = if confirmation_present {
                    Some(
                        self.remove_confirmation(caller, ns, &plan.cluster)
                            .await
                            .is_err(),
                    )
                } else {
                    None
                };
                return Err(match &spec_written {
                    Some(change) => half_failure(e, change, left),
                    None => e,
                });
            }
        };

        let mut warnings = Vec::new();
        if confirmation_present
            && let Err(e) = self.remove_confirmation(caller, ns, &plan.cluster).await
        {
            warnings.push(annotation_left(&plan.cluster, &e));
        }
        Ok(Pass::Done(Box::new(Created {
            operation: convert::operation(&created),
            found: false,
            spec_written,
            warnings,
        })))
    }

    /// The operation this start created, read back after its create got no answer.
    async fn find_created(
        &self,
        ops: &Api<TalosOperation>,
        name: &str,
        request_id: &str,
    ) -> Result<Option<TalosOperation>, ApiError> {
        let found = self
            .access
            .call(
                "checking whether the operation was created",
                ops.get_opt(name),
            )
            .await?;
        Ok(found.filter(|op| request_id_of(op) == Some(request_id)))
    }

    fn too_slow(&self, since: Instant) -> Result<(), ApiError> {
        if since.elapsed() < CLAIM_WORK_LIMIT {
            return Ok(());
        }
        Err(ApiError::refused(
            Code::DeadlineExceeded,
            Reason::Unavailable,
            &[("what", "starting the operation")],
            format!(
                "starting the operation took longer than {} s after the cluster was claimed: stopped before writing, so the claim cannot lapse under it",
                CLAIM_WORK_LIMIT.as_secs()
            ),
        ))
    }

    /// Takes the cluster's start claim for `request_id`: creates the Lease, or replaces it with
    /// the resourceVersion read in `world` (a conflict means another start got there first).
    #[allow(clippy::too_many_arguments)]
    async fn claim(
        &self,
        caller: &Caller,
        ns: &str,
        cluster: &str,
        world: &World,
        request_id: &str,
        operation: &str,
        actor: &str,
    ) -> Result<Lease, ApiError> {
        let api: Api<Lease> = self.api(caller, Some(ns));
        let now = MicroTime(jiff::Timestamp::now());
        let mut lease = world.lease.clone().unwrap_or_else(|| Lease {
            metadata: kube::api::ObjectMeta {
                name: Some(claim_name(cluster)),
                namespace: Some(ns.to_string()),
                ..Default::default()
            },
            spec: None,
        });
        let annotations = lease.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(names::CLAIM_OPERATION.to_string(), operation.to_string());
        annotations.insert(names::ACTOR.to_string(), actor.to_string());
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(request_id) {
            spec.acquire_time = Some(now.clone());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.holder_identity = Some(request_id.to_string());
        spec.renew_time = Some(now);
        spec.lease_duration_seconds = Some(CLAIM_SECONDS);
        let what = "claiming the cluster for this start";
        match &world.lease {
            None => {
                self.access
                    .call(what, api.create(&PostParams::default(), &lease))
                    .await
            }
            Some(_) => {
                let name = claim_name(cluster);
                self.access
                    .call(what, api.replace(&name, &PostParams::default(), &lease))
                    .await
            }
        }
    }

    /// Gives the claim back after a start that created nothing, so a rerun is not kept waiting.
    /// Best effort: a claim left behind lapses by itself.
    async fn release(&self, caller: &Caller, ns: &str, lease: &Lease) {
        let api: Api<Lease> = self.api(caller, Some(ns));
        let dp = DeleteParams {
            preconditions: Some(Preconditions {
                uid: lease.metadata.uid.clone(),
                resource_version: lease.metadata.resource_version.clone(),
            }),
            ..Default::default()
        };
        let name = lease.metadata.name.clone().unwrap_or_default();
        if let Err(e) = self
            .access
            .call("giving back the start claim", api.delete(&name, &dp))
            .await
        {
            tracing::info!(error = %e.message, "the start claim was left to lapse");
        }
    }

    /// The spec write of a start, as the caller, on the object as it was read for the refusals:
    /// its resourceVersion goes with it, so a change since then is a conflict, not overwritten.
    async fn write_spec(
        &self,
        caller: &Caller,
        ns: &str,
        kind: OperationKind,
        change: &SpecChange,
        world: &World,
        dry_run: bool,
    ) -> Result<(), ApiError> {
        let pp = PostParams {
            dry_run,
            ..Default::default()
        };
        let dry = if dry_run { " (dry run)" } else { "" };
        if kind == OperationKind::Ichor {
            let api: Api<IchorInstallation> = self.api(caller, Some(ns));
            let mut inst = world
                .installation
                .clone()
                .ok_or_else(|| ApiError::new(Code::NotFound, "the ichor installation is gone"))?;
            inst.spec.version = change.to.clone();
            return self
                .access
                .call(
                    &format!("writing IchorInstallation spec.version{dry}"),
                    api.replace(&change.resource_name, &pp, &inst),
                )
                .await
                .map(drop);
        }
        let api: Api<TalosCluster> = self.api(caller, Some(ns));
        let mut c = world.cluster.clone();
        match kind {
            OperationKind::Talos => c.spec.talos_version = change.to.clone(),
            OperationKind::Kubernetes => c.spec.kubernetes_version = change.to.clone(),
            OperationKind::Cni => {
                c.spec.cni.kube_proxy = change.to.clone();
                // The user's confirmation, for this one write (ADR 0013, 0066).
                c.metadata
                    .annotations
                    .get_or_insert_with(BTreeMap::new)
                    .insert(
                        names::CONFIRM_KUBE_PROXY_SWITCH.to_string(),
                        "true".to_string(),
                    );
            }
            _ => return Ok(()),
        }
        self.access
            .call(
                &format!("writing TalosCluster {}{dry}", change.field),
                api.replace(&change.resource_name, &pp, &c),
            )
            .await
            .map(drop)
    }

    /// Removes the kube-proxy confirmation annotation, retried on a conflict.
    async fn remove_confirmation(
        &self,
        caller: &Caller,
        ns: &str,
        cluster: &str,
    ) -> Result<(), ApiError> {
        let api: Api<TalosCluster> = self.api(caller, Some(ns));
        let mut last = None;
        for _ in 0..super::CONFLICT_RETRIES {
            let mut c = self
                .access
                .call("reading the cluster", api.get(cluster))
                .await?;
            let Some(a) = c.metadata.annotations.as_mut() else {
                return Ok(());
            };
            if a.remove(names::CONFIRM_KUBE_PROXY_SWITCH).is_none() {
                return Ok(());
            }
            match self
                .access
                .call(
                    "removing the kube-proxy confirmation annotation",
                    api.replace(cluster, &PostParams::default(), &c),
                )
                .await
            {
                Err(e) if e.code == Code::Aborted => last = Some(e),
                other => return other.map(drop),
            }
        }
        Err(last
            .unwrap_or_else(|| ApiError::new(Code::Aborted, "removing the annotation: conflict")))
    }
}

/// The warning of a start whose confirmation annotation could not be removed.
fn annotation_left(cluster: &str, e: &ApiError) -> Warning {
    let annotation = names::CONFIRM_KUBE_PROXY_SWITCH;
    let mut params = BTreeMap::new();
    params.insert("annotation".to_string(), annotation.to_string());
    params.insert("cluster".to_string(), cluster.to_string());
    params.insert("detail".to_string(), e.message.clone());
    Warning {
        reason: Reason::AnnotationNotRemoved,
        params,
        message: format!(
            "the operation was created, but the annotation {annotation} could not be removed from TalosCluster {cluster} ({}); remove it by hand: kubectl annotate taloscluster {cluster} {annotation}-",
            e.message
        ),
    }
}

/// The spec was written and the create failed: say what was written, what is left (the
/// confirmation annotation: `Some(true)` still there, `Some(false)` removed), and that a rerun
/// finishes.
fn half_failure(e: ApiError, change: &SpecChange, annotation_left: Option<bool>) -> ApiError {
    let annotation = match annotation_left {
        None => "none",
        Some(false) => "removed",
        Some(true) => "left",
    };
    let mut params = BTreeMap::new();
    params.insert("resource_kind".to_string(), change.resource_kind.clone());
    params.insert("resource_name".to_string(), change.resource_name.clone());
    params.insert("field".to_string(), change.field.clone());
    params.insert("current".to_string(), change.from.clone());
    params.insert("target".to_string(), change.to.clone());
    params.insert("detail".to_string(), e.message.clone());
    params.insert("annotation".to_string(), annotation.to_string());
    let left = match annotation_left {
        Some(true) => format!(
            "; the annotation {} is still on the cluster: remove it by hand",
            names::CONFIRM_KUBE_PROXY_SWITCH
        ),
        Some(false) => "; the kube-proxy confirmation annotation was removed".to_string(),
        None => String::new(),
    };
    ApiError {
        // An answer, not a lost one: the outcome is known, and only the person starts again.
        code: Code::Aborted,
        reason: Some(Reason::SpecWrittenCreateFailed),
        params,
        message: format!(
            "wrote {}: {} → {} on {} {}, but creating the operation failed ({}){left}; start the same operation again to finish: the spec already names {}, so only the operation will be created",
            change.field,
            change.from,
            change.to,
            change.resource_kind,
            change.resource_name,
            e.message,
            change.to
        ),
    }
}
