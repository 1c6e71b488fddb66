//! OperationService and ClusterService over kube::Client, as ADR 0068 decides: one handler for
//! the in-process dashboard and for `ichor-tui serve`, so every refusal runs on both paths.

pub mod access;
pub mod convert;
pub mod permissions;
pub mod plan;
mod start;
mod writes;

use self::access::{Caller, KubeAccess};
use crate::cluster::resources::{
    IchorInstallation, Machine, OperationKind, TalosCluster, TalosOperation, names,
};
use crate::model::{ApiError, Cluster, Code, Operation, OperationRequest, Plan, Reason};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams};
use serde_json::json;

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

fn cluster_not_found(namespace: &str, name: &str, err: ApiError) -> ApiError {
    if err.code != Code::NotFound {
        return err;
    }
    ApiError::refused(
        Code::NotFound,
        Reason::ClusterNotFound,
        &[("cluster", name), ("namespace", namespace)],
        format!("cluster {name} not found in namespace {namespace}"),
    )
}

/// The cluster a request names, from the namespace's clusters; with no name, the only one.
fn pick_cluster(
    namespace: &str,
    name: Option<&str>,
    mut all: Vec<TalosCluster>,
) -> Result<TalosCluster, ApiError> {
    if let Some(name) = name {
        let found = all
            .iter()
            .position(|c| c.metadata.name.as_deref() == Some(name));
        return match found {
            Some(i) => Ok(all.swap_remove(i)),
            None => Err(cluster_not_found(
                namespace,
                name,
                ApiError::new(Code::NotFound, "not found"),
            )),
        };
    }
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

/// What a plan or a start read.
struct World {
    cluster: TalosCluster,
    clusters: Vec<String>,
    machines: Vec<Machine>,
    operations: Vec<TalosOperation>,
    installation: Option<IchorInstallation>,
    lease: Option<Lease>,
    tracking: Option<crate::model::Tracking>,
}

impl World {
    fn inputs<'a>(
        &'a self,
        namespace: &'a str,
        request_id: Option<&'a str>,
    ) -> plan::PlanInputs<'a> {
        plan::PlanInputs {
            clusters: &self.clusters,
            claim: self.lease.as_ref().map(start::claim_of),
            request_id,
            now: jiff::Timestamp::now(),
            namespace,
            cluster: &self.cluster,
            machines: &self.machines,
            installation: self.installation.as_ref(),
            operations: &self.operations,
            tracking: self.tracking.clone(),
        }
    }
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
                .map_err(|e| cluster_not_found(namespace, name, e));
        }
        let all = self
            .access
            .call("listing clusters", api.list(&ListParams::default()))
            .await?
            .items;
        pick_cluster(namespace, None, all)
    }

    async fn read_world(
        &self,
        caller: &Caller,
        ns: &str,
        cluster: Option<&str>,
        kind: OperationKind,
        claim_needed: bool,
    ) -> Result<World, ApiError> {
        let (cluster, clusters) = if kind == OperationKind::Ichor || cluster.is_none() {
            let api: Api<TalosCluster> = self.api(caller, Some(ns));
            let all = self
                .access
                .call("listing clusters", api.list(&ListParams::default()))
                .await?
                .items;
            let names = all.iter().filter_map(|c| c.metadata.name.clone()).collect();
            (pick_cluster(ns, cluster, all)?, names)
        } else {
            let c = self.resolve_cluster(caller, ns, cluster).await?;
            (c, Vec::new())
        };
        let cluster_name = cluster.metadata.name.clone().unwrap_or_default();
        let machines: Api<Machine> = self.api(caller, Some(ns));
        let machines = self
            .access
            .call("listing machines", machines.list(&ListParams::default()))
            .await?
            .items;
        let ops: Api<TalosOperation> = self.api(caller, Some(ns));
        let operations = self
            .access
            .call("listing operations", ops.list(&ListParams::default()))
            .await?
            .items;
        let installation = if kind == OperationKind::Ichor {
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
        let leases: Api<Lease> = self.api(caller, Some(ns));
        let lease = match self
            .access
            .call(
                "reading the cluster's start claim",
                leases.get_opt(&start::claim_name(&cluster_name)),
            )
            .await
        {
            Ok(l) => l,
            // A Review for someone who may not read the claim still shows the plan; a start
            // needs it (and would be refused taking it anyway).
            Err(e) if !claim_needed && e.code == Code::PermissionDenied => None,
            Err(e) => return Err(e),
        };
        let tracking = self.tracking_check(ns, &cluster, kind).await?;
        Ok(World {
            cluster,
            clusters,
            machines,
            operations,
            installation,
            lease,
            tracking,
        })
    }

    /// PlanOperation: what a start would do, whether it would be refused, and whether the
    /// caller may start it. Writes nothing.
    pub async fn plan_operation(
        &self,
        caller: &Caller,
        req: &OperationRequest,
    ) -> Result<Plan, ApiError> {
        let checked = plan::check_request(req)?;
        let ns = req.namespace.as_str();
        let world = self
            .read_world(caller, ns, req.cluster.as_deref(), checked.kind, false)
            .await?;
        let mut plan = plan::compute(&checked, &world.inputs(ns, None))?;
        plan.denied = self.start_denied(caller, &plan).await;
        Ok(plan)
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
