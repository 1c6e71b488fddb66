//! OperationService and ClusterService over kube::Client, as ADR 0068 decides: one handler for
//! the in-process dashboard and for `ichor-tui serve`, so every refusal runs on both paths.

pub mod access;
pub(crate) mod conflicts;
pub(crate) mod convert;
mod events;
pub mod feed;
pub mod list;
pub mod manager;
pub(crate) mod manifest;
pub(crate) mod permissions;
pub(crate) mod plan;
mod push;
mod record;
pub(crate) mod row;
pub mod shared;
mod start;
pub mod store;
pub(crate) mod tolerant;
pub(crate) mod validate;
mod watched;
mod writes;

pub use self::start::START_OUTCOME_KNOWN_WITHIN;

use self::access::{Caller, KubeAccess};
use self::tolerant::Unreadable;
use self::validate::NameOf;
use ichor_model::{
    ApiError, Cluster, Code, ListQuery, Operation, OperationKind, OperationPage, OperationRequest,
    Plan, Reason,
};
use ichor_resources::{IchorInstallation, Machine, TalosCluster, TalosOperation, names};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use serde_json::json;

/// The service.
#[derive(Clone)]
pub struct OperationService {
    access: KubeAccess,
    /// The request ids this process was sent, and for what.
    requests: std::sync::Arc<start::RequestLog>,
}

fn op_not_found(namespace: &str, name: &str, err: ApiError) -> ApiError {
    if err.code != Code::NotFound {
        return err;
    }
    operation_not_found(namespace, name)
}

/// OPERATION_NOT_FOUND, naming it.
fn operation_not_found(namespace: &str, name: &str) -> ApiError {
    ApiError::said(
        Code::NotFound,
        Reason::OperationNotFound,
        &[("operation", name), ("namespace", namespace)],
    )
}

fn cluster_not_found(namespace: &str, name: &str, err: ApiError) -> ApiError {
    if err.code != Code::NotFound {
        return err;
    }
    ApiError::said(
        Code::NotFound,
        Reason::ClusterNotFound,
        &[("cluster", name), ("namespace", namespace)],
    )
}

/// A cluster that exists but cannot be read: nothing can be planned or started on it.
fn cluster_unreadable(u: &Unreadable) -> ApiError {
    let name = u.name();
    ApiError::said(
        Code::FailedPrecondition,
        Reason::ClusterUnreadable,
        &[("cluster", &name), ("detail", &u.why)],
    )
}

/// The cluster a request names, from the namespace's clusters; with no name, the only one.
fn pick_cluster(
    namespace: &str,
    name: Option<&str>,
    mut all: Vec<TalosCluster>,
    unreadable: &[Unreadable],
) -> Result<TalosCluster, ApiError> {
    if let Some(name) = name {
        let found = all
            .iter()
            .position(|c| c.metadata.name.as_deref() == Some(name));
        return match found {
            Some(i) => Ok(all.swap_remove(i)),
            None => match unreadable.iter().find(|u| u.name() == name) {
                Some(u) => Err(cluster_unreadable(u)),
                None => Err(cluster_not_found(
                    namespace,
                    name,
                    ApiError::new(Code::NotFound, "not found"),
                )),
            },
        };
    }
    match (all.len(), unreadable) {
        (1, []) => Ok(all.remove(0)),
        (0, [u]) => Err(cluster_unreadable(u)),
        (0, []) => Err(ApiError::said(
            Code::NotFound,
            Reason::NoClusters,
            &[("namespace", namespace)],
        )),
        _ => {
            let mut names: Vec<String> = all
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .chain(unreadable.iter().map(Unreadable::name))
                .collect();
            names.sort();
            let choices = names.join(", ");
            Err(ApiError::said(
                Code::InvalidArgument,
                Reason::ClusterRequired,
                &[("namespace", namespace), ("choices", &choices)],
            ))
        }
    }
}

/// What a plan or a start read.
struct World {
    cluster: TalosCluster,
    clusters: Vec<String>,
    machines: Vec<Machine>,
    /// Machines of the namespace that could not be read.
    unreadable_machines: Vec<Unreadable>,
    operations: Vec<TalosOperation>,
    /// Operations of the namespace that could not be read.
    unreadable_operations: Vec<Unreadable>,
    installation: Option<IchorInstallation>,
    /// The cluster's start claim, if there is one: the Lease, or what can be said of it.
    lease: Option<Result<Lease, Unreadable>>,
    tracking: Option<ichor_model::Tracking>,
}

impl World {
    fn inputs<'a>(
        &'a self,
        namespace: &'a str,
        request_id: Option<&'a str>,
    ) -> plan::PlanInputs<'a> {
        let now = jiff::Timestamp::now();
        plan::PlanInputs {
            clusters: &self.clusters,
            claim: start::claim_read(self.lease.as_ref(), now),
            request_id,
            now,
            namespace,
            cluster: &self.cluster,
            machines: &self.machines,
            unreadable_machines: &self.unreadable_machines,
            installation: self.installation.as_ref(),
            operations: &self.operations,
            unreadable_operations: &self.unreadable_operations,
            tracking: self.tracking.clone(),
        }
    }
}

impl OperationService {
    pub fn new(access: KubeAccess) -> OperationService {
        OperationService {
            access,
            requests: Default::default(),
        }
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

    /// ListOperations: one page of the operations the query names (an object that cannot be
    /// read is listed as such, never dropped).
    pub async fn list_page(
        &self,
        caller: &Caller,
        query: &ListQuery,
    ) -> Result<OperationPage, ApiError> {
        list::check(query)?;
        let ns = query.namespace.as_deref();
        if list::unfiltered(query) {
            if query.known_version.is_none() {
                // A first page: the list's first chunk says whether it is small (then it is
                // the whole list, in one request, as before).
                let (good, bad, more) = self
                    .list_chunk::<TalosOperation>(caller, ns, "listing operations", None)
                    .await?;
                if more.is_none() {
                    return list::page(operations_of(&good, &bad), query);
                }
            }
            if let Some(page) = self.page_by_metadata(caller, query).await? {
                return Ok(page);
            }
        }
        let ops = self.read_operations(caller, ns).await?;
        list::page(ops, query)
    }

    /// The operations in scope, as the caller may read them.
    async fn read_operations(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
    ) -> Result<Vec<Operation>, ApiError> {
        let (ops, unreadable) = self
            .list_tolerant::<TalosOperation>(caller, namespace, "listing operations")
            .await?;
        Ok(operations_of(&ops, &unreadable))
    }

    /// GetOperation. An object that cannot be read comes back saying so.
    pub async fn get_operation(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<Operation, ApiError> {
        validate::namespace(namespace)?;
        validate::name(NameOf::Operation, name)?;
        match self
            .get_tolerant::<TalosOperation>(caller, namespace, name, "reading the operation")
            .await?
        {
            Some(Ok(op)) => Ok(convert::operation(&op)),
            Some(Err(u)) => Ok(convert::unreadable_operation(&u)),
            None => Err(op_not_found(
                namespace,
                name,
                ApiError::new(Code::NotFound, "not found"),
            )),
        }
    }

    /// The cluster named `name`, or the only one in the namespace.
    async fn resolve_cluster(
        &self,
        caller: &Caller,
        namespace: &str,
        name: Option<&str>,
    ) -> Result<TalosCluster, ApiError> {
        if let Some(name) = name {
            return match self
                .get_tolerant::<TalosCluster>(caller, namespace, name, "reading the cluster")
                .await?
            {
                Some(Ok(c)) => Ok(c),
                Some(Err(u)) => Err(cluster_unreadable(&u)),
                None => Err(cluster_not_found(
                    namespace,
                    name,
                    ApiError::new(Code::NotFound, "not found"),
                )),
            };
        }
        let (all, unreadable) = self
            .list_tolerant::<TalosCluster>(caller, Some(namespace), "listing clusters")
            .await?;
        pick_cluster(namespace, None, all, &unreadable)
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
            let (all, unreadable) = self
                .list_tolerant::<TalosCluster>(caller, Some(ns), "listing clusters")
                .await?;
            let names = all
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .chain(unreadable.iter().map(Unreadable::name))
                .collect();
            (pick_cluster(ns, cluster, all, &unreadable)?, names)
        } else {
            let c = self.resolve_cluster(caller, ns, cluster).await?;
            (c, Vec::new())
        };
        let cluster_name = cluster.metadata.name.clone().unwrap_or_default();
        // The claim before the operations: a start that claimed, created and gave the claim back
        // since this read is seen in the operations, or conflicts when this start claims.
        let lease = self
            .read_claim(caller, ns, &cluster_name, claim_needed)
            .await?;
        let (machines, unreadable_machines) = self
            .list_tolerant::<Machine>(caller, Some(ns), "listing machines")
            .await?;
        let (operations, unreadable_operations) = self
            .list_tolerant::<TalosOperation>(caller, Some(ns), "listing operations")
            .await?;
        let installation = if kind == OperationKind::Ichor {
            self.read_installation(caller, ns).await?
        } else {
            None
        };
        let tracking = self.tracking_check(ns, &cluster, kind).await?;
        Ok(World {
            cluster,
            clusters,
            machines,
            unreadable_machines,
            operations,
            unreadable_operations,
            installation,
            lease,
            tracking,
        })
    }

    /// The namespace's ichor installation, if there is one; one that cannot be read is refused.
    async fn read_installation(
        &self,
        caller: &Caller,
        ns: &str,
    ) -> Result<Option<IchorInstallation>, ApiError> {
        let what = "reading the ichor installation";
        match self
            .get_tolerant::<IchorInstallation>(caller, ns, names::ICHOR_INSTALLATION_NAME, what)
            .await?
        {
            Some(Ok(i)) => Ok(Some(i)),
            None => Ok(None),
            Some(Err(u)) => Err(ApiError::refused(
                Code::FailedPrecondition,
                Reason::Internal,
                &[("what", what), ("detail", &u.why)],
                format!("the ichor installation cannot be read ({})", u.why),
            )),
        }
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
    ) -> Result<Option<ichor_model::Tracking>, ApiError> {
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

    /// The service in the dashboard's own process, acting with the kubeconfig's credentials in
    /// `access`, and who those credentials are (a SelfSubjectReview, `None` when Kubernetes does
    /// not say within 3 s: older clusters have none). What it starts, pauses or resumes is
    /// recorded as that person, with the route `in-process` beside a start.
    pub async fn in_process(access: KubeAccess) -> (OperationService, Option<String>) {
        let asked = OperationService::new(access.clone());
        let caller = Caller::in_process();
        let limit = std::time::Duration::from_secs(3);
        let user = match tokio::time::timeout(limit, asked.who_am_i(&caller)).await {
            Ok(Ok(user)) => Some(user),
            Ok(Err(e)) => {
                tracing::info!(error = %e, "could not learn who the kubeconfig's user is");
                None
            }
            Err(_) => None,
        };
        let access = match &user {
            Some(person) => access.acting_for(person),
            None => access,
        };
        (OperationService::new(access), user)
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

    /// ListClusters: one namespace, or every namespace with `None`. A cluster or machine that
    /// cannot be read is listed as such; the rest is as the cluster holds it.
    pub async fn list_clusters(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
    ) -> Result<Vec<Cluster>, ApiError> {
        validate::list_scope(namespace)?;
        let (clusters, bad_clusters) = self
            .list_tolerant::<TalosCluster>(caller, namespace, "listing clusters")
            .await?;
        let (machines, bad_machines) = self
            .list_tolerant::<Machine>(caller, namespace, "listing machines")
            .await?;
        let (installs, _) = self
            .list_tolerant::<IchorInstallation>(caller, namespace, "listing ichor installations")
            .await?;
        let (ops, _) = self
            .list_tolerant::<TalosOperation>(caller, namespace, "listing operations")
            .await?;
        let readable = clusters.iter().map(|c| {
            let ns = &c.metadata.namespace;
            let ops = in_namespace(&ops, ns, |o| &o.metadata.namespace);
            let install = installs.iter().find(|i| {
                i.metadata.namespace == *ns
                    && i.metadata.name.as_deref() == Some(names::ICHOR_INSTALLATION_NAME)
            });
            let (machines, bad) = machines_in(&machines, &bad_machines, ns);
            convert::cluster(c, &machines, &bad, install, &ops)
        });
        let unreadable = bad_clusters.iter().map(|u| {
            let (machines, bad) = machines_in(&machines, &bad_machines, &u.meta.namespace);
            convert::unreadable_cluster(u, &machines, &bad)
        });
        Ok(readable.chain(unreadable).collect())
    }

    /// GetCluster. A cluster that cannot be read comes back saying so.
    pub async fn get_cluster(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<Cluster, ApiError> {
        validate::namespace(namespace)?;
        validate::name(NameOf::Cluster, name)?;
        let c = self
            .get_tolerant::<TalosCluster>(caller, namespace, name, "reading the cluster")
            .await?;
        let (machines, bad_machines) = self
            .list_tolerant::<Machine>(caller, Some(namespace), "listing machines")
            .await?;
        let c = match c {
            Some(Ok(c)) => c,
            Some(Err(u)) => return Ok(convert::unreadable_cluster(&u, &machines, &bad_machines)),
            None => {
                return Err(cluster_not_found(
                    namespace,
                    name,
                    ApiError::new(Code::NotFound, "not found"),
                ));
            }
        };
        let install = match self
            .get_tolerant::<IchorInstallation>(
                caller,
                namespace,
                names::ICHOR_INSTALLATION_NAME,
                "reading the ichor installation",
            )
            .await?
        {
            Some(Ok(i)) => Some(i),
            _ => None,
        };
        let (ops, _) = self
            .list_tolerant::<TalosOperation>(caller, Some(namespace), "listing operations")
            .await?;
        Ok(convert::cluster(
            &c,
            &machines,
            &bad_machines,
            install.as_ref(),
            &ops,
        ))
    }
}

/// Operations as listed: the readable ones, and a row for each one that cannot be read.
fn operations_of(ops: &[TalosOperation], unreadable: &[tolerant::Unreadable]) -> Vec<Operation> {
    if let Some(first) = unreadable.first() {
        tracing::info!(
            count = unreadable.len(),
            first = %first.name(),
            why = %first.why,
            "operations that cannot be read are listed as such"
        );
    }
    ops.iter()
        .map(convert::operation)
        .chain(unreadable.iter().map(convert::unreadable_operation))
        .collect()
}

/// The items of `all` in the namespace `ns` (`namespace` reads an item's).
fn in_namespace<T: Clone>(
    all: &[T],
    ns: &Option<String>,
    namespace: impl Fn(&T) -> &Option<String>,
) -> Vec<T> {
    all.iter().filter(|x| namespace(x) == ns).cloned().collect()
}

/// A cluster's machines: those of its namespace that could be read, and those that could not.
fn machines_in(
    machines: &[Machine],
    bad: &[Unreadable],
    ns: &Option<String>,
) -> (Vec<Machine>, Vec<Unreadable>) {
    (
        in_namespace(machines, ns, |m| &m.metadata.namespace),
        in_namespace(bad, ns, |u| &u.meta.namespace),
    )
}
