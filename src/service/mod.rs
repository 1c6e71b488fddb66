//! OperationService and ClusterService over kube::Client, as ADR 0068 decides: one handler for
//! the in-process dashboard and for `ichor-tui serve`, so every refusal runs on both paths.

pub mod access;
pub mod convert;
pub mod plan;

use self::access::{Caller, KubeAccess};
use crate::cluster::controller::format_time;
use crate::cluster::resources::{
    IchorInstallation, Machine, OperationKind, TalosCluster, TalosOperation, TalosOperationSpec,
    names,
};
use crate::model::{
    ApiError, Cluster, Code, Created, Operation, OperationRequest, Plan, Reason, SpecChange,
    Warning,
};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use std::collections::BTreeMap;

/// How often a write is tried again after a conflict, each time with a fresh read.
pub const CONFLICT_RETRIES: usize = 5;

/// The service.
#[derive(Clone)]
pub struct OperationService {
    access: KubeAccess,
}

fn op_not_found(namespace: &str, name: &str, err: ApiError) -> ApiError {
    if err.code != Code::NotFound {
        return err;
    }
    ApiError::refused(
        Code::NotFound,
        Reason::OperationNotFound,
        &[("operation", name), ("namespace", namespace)],
        format!("operation {name} not found in namespace {namespace}"),
    )
}

impl OperationService {
    pub fn new(access: KubeAccess) -> OperationService {
        OperationService { access }
    }

    fn api<K>(&self, caller: &Caller, namespace: Option<&str>) -> Api<K>
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        let client = self.access.as_caller(caller);
        match namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        }
    }

    /// ListOperations: one namespace, or every namespace with `None`.
    pub async fn list_operations(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
    ) -> Result<Vec<Operation>, ApiError> {
        let api: Api<TalosOperation> = self.api(caller, namespace);
        let list = self
            .access
            .call("listing operations", api.list(&ListParams::default()))
            .await?;
        Ok(list.items.iter().map(convert::operation).collect())
    }

    /// GetOperation.
    pub async fn get_operation(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<Operation, ApiError> {
        let api: Api<TalosOperation> = self.api(caller, Some(namespace));
        let op = self
            .access
            .call("reading the operation", api.get(name))
            .await
            .map_err(|e| op_not_found(namespace, name, e))?;
        Ok(convert::operation(&op))
    }

    async fn resolve_cluster(
        &self,
        caller: &Caller,
        namespace: &str,
        name: Option<&str>,
    ) -> Result<TalosCluster, ApiError> {
        let api: Api<TalosCluster> = self.api(caller, Some(namespace));
        if let Some(name) = name {
            return self
                .access
                .call("reading the cluster", api.get(name))
                .await
                .map_err(|e| {
                    if e.code != Code::NotFound {
                        return e;
                    }
                    ApiError::refused(
                        Code::NotFound,
                        Reason::ClusterNotFound,
                        &[("cluster", name), ("namespace", namespace)],
                        format!("cluster {name} not found in namespace {namespace}"),
                    )
                });
        }
        let mut all = self
            .access
            .call("listing clusters", api.list(&ListParams::default()))
            .await?
            .items;
        match all.len() {
            1 => Ok(all.remove(0)),
            0 => Err(ApiError::refused(
                Code::NotFound,
                Reason::NoClusters,
                &[("namespace", namespace)],
                format!("there is no TalosCluster in namespace {namespace}"),
            )),
            _ => {
                let choices = all
                    .iter()
                    .filter_map(|c| c.metadata.name.clone())
                    .collect::<Vec<_>>()
                    .join(", ");
                Err(ApiError::refused(
                    Code::InvalidArgument,
                    Reason::ClusterRequired,
                    &[("namespace", namespace), ("choices", &choices)],
                    format!("namespace {namespace} has several clusters; name one of: {choices}"),
                ))
            }
        }
    }

    /// PlanOperation: what a start would do and whether it would be refused. Writes nothing.
    pub async fn plan_operation(
        &self,
        caller: &Caller,
        req: &OperationRequest,
    ) -> Result<Plan, ApiError> {
        let checked = plan::check_request(req)?;
        let ns = req.namespace.as_str();
        let cluster = self
            .resolve_cluster(caller, ns, req.cluster.as_deref())
            .await?;
        let machines: Api<Machine> = self.api(caller, Some(ns));
        let machines = self
            .access
            .call("listing machines", machines.list(&ListParams::default()))
            .await?
            .items;
        let ops: Api<TalosOperation> = self.api(caller, Some(ns));
        let ops = self
            .access
            .call("listing operations", ops.list(&ListParams::default()))
            .await?
            .items;
        let installation = if checked.kind == OperationKind::Ichor {
            let api: Api<IchorInstallation> = self.api(caller, Some(ns));
            self.access
                .call(
                    "reading the ichor installation",
                    api.get_opt(names::ICHOR_INSTALLATION_NAME),
                )
                .await?
        } else {
            None
        };
        let tracking = self.tracking_check(ns, &cluster, checked.kind).await?;
        plan::compute(
            &checked,
            &plan::PlanInputs {
                namespace: ns,
                cluster: &cluster,
                machines: &machines,
                installation: installation.as_ref(),
                operations: &ops,
                tracking,
            },
        )
    }

    /// Whether the object a start would write is tracked by GitOps. The service's own client
    /// reads it (ADR 0062): this decides whether a write may happen and returns nothing else.
    async fn tracking_check(
        &self,
        ns: &str,
        cluster: &TalosCluster,
        kind: OperationKind,
    ) -> Result<Option<crate::model::Tracking>, ApiError> {
        let client = self.access.own();
        let meta = match kind {
            OperationKind::Shutdown | OperationKind::CaRotation => return Ok(None),
            OperationKind::Ichor => {
                let api: Api<IchorInstallation> = Api::namespaced(client, ns);
                self.access
                    .call(
                        "checking GitOps tracking",
                        api.get_opt(names::ICHOR_INSTALLATION_NAME),
                    )
                    .await?
                    .map(|i| i.metadata)
            }
            _ => {
                let api: Api<TalosCluster> = Api::namespaced(client, ns);
                let name = cluster.metadata.name.clone().unwrap_or_default();
                self.access
                    .call("checking GitOps tracking", api.get_opt(&name))
                    .await?
                    .map(|c| c.metadata)
            }
        };
        Ok(meta.as_ref().and_then(plan::tracking))
    }

    /// CreateOperation, in the ADR's order: every refusal of the plan; a dry-run create as the
    /// caller; the spec write (skipped when the spec already names the target); the create;
    /// for kube-proxy switches, the removal of the confirmation annotation.
    pub async fn create_operation(
        &self,
        caller: &Caller,
        req: &OperationRequest,
    ) -> Result<Created, ApiError> {
        let plan = self.plan_operation(caller, req).await?;
        if let Some(refusal) = plan.blocked.clone() {
            return Err(ApiError::from_refusal(refusal));
        }
        let ns = plan.namespace.as_str();
        let ops: Api<TalosOperation> = self.api(caller, Some(ns));
        let mut op = TalosOperation::new(
            "",
            TalosOperationSpec {
                cluster: plan.cluster.clone(),
                kind: plan.kind.as_str().to_string(),
                max_unavailable: plan.max_unavailable,
                paused: false,
            },
        );
        op.metadata.name = None;
        op.metadata.namespace = Some(ns.to_string());
        op.metadata.generate_name = Some(format!("{}-{}-", plan.cluster, plan.kind.as_str()));
        let mut annotations =
            BTreeMap::from([(names::ACTOR.to_string(), self.access.actor(caller))]);
        if !plan.target.is_empty() {
            annotations.insert(convert::CURRENT.to_string(), plan.current.clone());
            annotations.insert(convert::TARGET.to_string(), plan.target.clone());
        }
        op.metadata.annotations = Some(annotations);

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

        let spec_written = match &plan.spec_change {
            Some(change) => {
                self.write_spec(caller, ns, plan.kind, change).await?;
                Some(change.clone())
            }
            None => None,
        };

        let created = match self
            .access
            .call(
                "creating the operation",
                ops.create(&PostParams::default(), &op),
            )
            .await
        {
            Ok(c) => c,
            Err(e) => {
                return Err(match &spec_written {
                    Some(change) => half_failure(e, change),
                    None => e,
                });
            }
        };

        let mut warnings = Vec::new();
        if plan.kind == OperationKind::Cni
            && spec_written.is_some()
            && let Err(e) = self.remove_confirmation(caller, ns, &plan.cluster).await
        {
            let annotation = names::CONFIRM_KUBE_PROXY_SWITCH;
            let mut params = BTreeMap::new();
            params.insert("annotation".to_string(), annotation.to_string());
            params.insert("cluster".to_string(), plan.cluster.clone());
            params.insert("detail".to_string(), e.message.clone());
            warnings.push(Warning {
                    reason: Reason::AnnotationNotRemoved,
                    params,
                    message: format!(
                        "the operation was created, but the annotation {annotation} could not be removed from TalosCluster {} ({}); remove it by hand: kubectl annotate taloscluster {} {annotation}-",
                        plan.cluster, e.message, plan.cluster
                    ),
                });
        }
        Ok(Created {
            operation: convert::operation(&created),
            spec_written,
            warnings,
        })
    }

    /// The spec write of a start, as the caller, retried on a conflict with a fresh read.
    async fn write_spec(
        &self,
        caller: &Caller,
        ns: &str,
        kind: OperationKind,
        change: &SpecChange,
    ) -> Result<(), ApiError> {
        let mut last = None;
        for _ in 0..CONFLICT_RETRIES {
            let result = if kind == OperationKind::Ichor {
                let api: Api<IchorInstallation> = self.api(caller, Some(ns));
                let mut inst = self
                    .access
                    .call(
                        "reading the ichor installation",
                        api.get(&change.resource_name),
                    )
                    .await?;
                inst.spec.version = change.to.clone();
                self.access
                    .call(
                        "writing IchorInstallation spec.version",
                        api.replace(&change.resource_name, &PostParams::default(), &inst),
                    )
                    .await
                    .map(drop)
            } else {
                let api: Api<TalosCluster> = self.api(caller, Some(ns));
                let mut c = self
                    .access
                    .call("reading the cluster", api.get(&change.resource_name))
                    .await?;
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
                        &format!("writing TalosCluster {}", change.field),
                        api.replace(&change.resource_name, &PostParams::default(), &c),
                    )
                    .await
                    .map(drop)
            };
            match result {
                Err(e) if e.code == Code::Aborted => last = Some(e),
                other => return other,
            }
        }
        Err(last.unwrap_or_else(|| ApiError::new(Code::Aborted, "writing the spec: conflict")))
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
        for _ in 0..CONFLICT_RETRIES {
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

    /// SetOperationPaused: pause or resume, recording who and when. Resuming an operation that
    /// a failed machine paused is refused: the controller would ignore it.
    pub async fn set_operation_paused(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
        paused: bool,
    ) -> Result<Operation, ApiError> {
        let api: Api<TalosOperation> = self.api(caller, Some(namespace));
        let mut last = None;
        for _ in 0..CONFLICT_RETRIES {
            let current = self
                .access
                .call("reading the operation", api.get(name))
                .await
                .map_err(|e| op_not_found(namespace, name, e))?;
            let op = convert::operation(&current);
            if op.phase.is_finished() {
                return Err(ApiError::refused(
                    Code::FailedPrecondition,
                    Reason::OperationFinished,
                    &[("operation", name), ("phase", op.phase.as_str())],
                    format!(
                        "operation {name} is {}: there is nothing to {}",
                        op.phase.as_str(),
                        if paused { "pause" } else { "resume" }
                    ),
                ));
            }
            if !paused && op.paused_by_failure() {
                let machine = op
                    .failed_machine()
                    .map(|m| m.name.clone())
                    .unwrap_or_default();
                let reason = op.failure_reason.clone().unwrap_or_default();
                return Err(ApiError::refused(
                    Code::FailedPrecondition,
                    Reason::ResumeAfterFailure,
                    &[
                        ("operation", name),
                        ("machine", &machine),
                        ("reason", &reason),
                    ],
                    format!(
                        "operation {name} was paused by a failed machine ({reason}); resuming does nothing: nothing retries and nothing is rolled back, so delete it and start again"
                    ),
                ));
            }
            if op.paused == paused {
                return Ok(op);
            }
            let patch = json!({
                "metadata": {
                    "resourceVersion": current.metadata.resource_version,
                    "annotations": {
                        names::PAUSED_BY: self.access.actor(caller),
                        names::PAUSED_AT: format_time(jiff::Timestamp::now()),
                    }
                },
                "spec": {"paused": paused}
            });
            let what = if paused {
                "pausing the operation"
            } else {
                "resuming the operation"
            };
            match self
                .access
                .call(
                    what,
                    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)),
                )
                .await
            {
                Ok(o) => return Ok(convert::operation(&o)),
                Err(e) if e.code == Code::Aborted => last = Some(e),
                Err(e) => return Err(op_not_found(namespace, name, e)),
            }
        }
        Err(last.unwrap_or_else(|| ApiError::new(Code::Aborted, "conflict")))
    }

    /// DeleteOperation. A running operation stops after its current machine; nothing is rolled
    /// back.
    pub async fn delete_operation(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        let api: Api<TalosOperation> = self.api(caller, Some(namespace));
        self.access
            .call(
                "deleting the operation",
                api.delete(name, &DeleteParams::default()),
            )
            .await
            .map_err(|e| op_not_found(namespace, name, e))?;
        Ok(())
    }

    /// Who the caller is to Kubernetes: the impersonated user, or, in-process, the answer of a
    /// SelfSubjectReview for the kubeconfig's credentials. For the status bar.
    pub async fn who_am_i(&self, caller: &Caller) -> Result<String, ApiError> {
        if let Some(id) = &caller.identity {
            return Ok(id.user.clone());
        }
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
        let req = http::Request::post("/apis/authentication.k8s.io/v1/selfsubjectreviews")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&body).unwrap_or_default())
            .map_err(|e| {
                ApiError::new(Code::Internal, format!("building a SelfSubjectReview: {e}"))
            })?;
        let review: serde_json::Value = self
            .access
            .call(
                "asking who you are (SelfSubjectReview)",
                self.access.own().request(req),
            )
            .await?;
        review
            .pointer("/status/userInfo/username")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| ApiError::new(Code::Internal, "a SelfSubjectReview without a user name"))
    }

    /// ListClusters: one namespace, or every namespace with `None`.
    pub async fn list_clusters(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
    ) -> Result<Vec<Cluster>, ApiError> {
        let clusters: Api<TalosCluster> = self.api(caller, namespace);
        let clusters = self
            .access
            .call("listing clusters", clusters.list(&ListParams::default()))
            .await?
            .items;
        let machines: Api<Machine> = self.api(caller, namespace);
        let machines = self
            .access
            .call("listing machines", machines.list(&ListParams::default()))
            .await?
            .items;
        let installs: Api<IchorInstallation> = self.api(caller, namespace);
        let installs = self
            .access
            .call(
                "listing ichor installations",
                installs.list(&ListParams::default()),
            )
            .await?
            .items;
        let ops: Api<TalosOperation> = self.api(caller, namespace);
        let ops = self
            .access
            .call("listing operations", ops.list(&ListParams::default()))
            .await?
            .items;
        Ok(clusters
            .iter()
            .map(|c| {
                let ns = c.metadata.namespace.clone();
                let same_ns = |m: &Option<String>| *m == ns;
                let machines: Vec<Machine> = machines
                    .iter()
                    .filter(|m| same_ns(&m.metadata.namespace))
                    .cloned()
                    .collect();
                let ops: Vec<TalosOperation> = ops
                    .iter()
                    .filter(|o| same_ns(&o.metadata.namespace))
                    .cloned()
                    .collect();
                let install = installs.iter().find(|i| {
                    same_ns(&i.metadata.namespace)
                        && i.metadata.name.as_deref() == Some(names::ICHOR_INSTALLATION_NAME)
                });
                convert::cluster(c, &machines, install, &ops)
            })
            .collect())
    }

    /// GetCluster.
    pub async fn get_cluster(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<Cluster, ApiError> {
        let c = self.resolve_cluster(caller, namespace, Some(name)).await?;
        let machines: Api<Machine> = self.api(caller, Some(namespace));
        let machines = self
            .access
            .call("listing machines", machines.list(&ListParams::default()))
            .await?
            .items;
        let install: Api<IchorInstallation> = self.api(caller, Some(namespace));
        let install = self
            .access
            .call(
                "reading the ichor installation",
                install.get_opt(names::ICHOR_INSTALLATION_NAME),
            )
            .await?;
        let ops: Api<TalosOperation> = self.api(caller, Some(namespace));
        let ops = self
            .access
            .call("listing operations", ops.list(&ListParams::default()))
            .await?
            .items;
        Ok(convert::cluster(&c, &machines, install.as_ref(), &ops))
    }
}

/// The spec was written and the create failed: say what was written and that a rerun finishes.
fn half_failure(e: ApiError, change: &SpecChange) -> ApiError {
    let mut params = BTreeMap::new();
    params.insert("resource_kind".to_string(), change.resource_kind.clone());
    params.insert("resource_name".to_string(), change.resource_name.clone());
    params.insert("field".to_string(), change.field.clone());
    params.insert("current".to_string(), change.from.clone());
    params.insert("target".to_string(), change.to.clone());
    params.insert("detail".to_string(), e.message.clone());
    ApiError {
        code: e.code,
        reason: Some(Reason::SpecWrittenCreateFailed),
        params,
        message: format!(
            "wrote {}: {} → {} on {} {}, but creating the operation failed ({}); start the same operation again to finish: the spec already names {}, so only the operation will be created",
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
