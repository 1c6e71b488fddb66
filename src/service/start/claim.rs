//! The cluster's start claim: a `coordination.k8s.io/v1` Lease per cluster, taken by a start
//! with the API server's optimistic concurrency (create, or replace with the resourceVersion
//! read), so that of concurrent starts on one cluster exactly one goes on, across processes.

use super::super::access::Caller;
use super::super::{OperationService, World, plan};
use crate::model::{ApiError, Code, Reason};
use ichor_resources::names;
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

impl OperationService {
    pub(super) fn too_slow(&self, since: Instant) -> Result<(), ApiError> {
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
    pub(super) async fn claim(
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
    pub(crate) async fn release(&self, caller: &Caller, ns: &str, lease: &Lease) {
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
}
