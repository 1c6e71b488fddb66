//! PlanOperation, and what a plan or a start reads of the namespace first (the [`World`]: the
//! cluster, its machines and operations, the start claim, the ichor installation and whether
//! GitOps tracks what a start would write).

use super::OperationService;
use super::access::Caller;
use super::clusters::pick_cluster;
use super::tolerant::Unreadable;
use super::{plan, start};
use ichor_model::{ApiError, Code, OperationKind, OperationRequest, Plan, Reason};
use ichor_resources::{IchorInstallation, Machine, TalosCluster, TalosOperation, names};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;

/// What a plan or a start read.
pub(super) struct World {
    pub(super) cluster: TalosCluster,
    pub(super) clusters: Vec<String>,
    pub(super) machines: Vec<Machine>,
    /// Machines of the namespace that could not be read.
    pub(super) unreadable_machines: Vec<Unreadable>,
    pub(super) operations: Vec<TalosOperation>,
    /// Operations of the namespace that could not be read.
    pub(super) unreadable_operations: Vec<Unreadable>,
    pub(super) installation: Option<IchorInstallation>,
    /// The cluster's start claim, if there is one: the Lease, or what can be said of it.
    pub(super) lease: Option<Result<Lease, Unreadable>>,
    pub(super) tracking: Option<ichor_model::Tracking>,
}

impl World {
    pub(super) fn inputs<'a>(
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
    pub(super) async fn read_world(
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
}
