//! OperationService and ClusterService over kube::Client, as ADR 0068 decides: one handler for
//! the in-process dashboard and for `ichor-tui serve`, so every refusal runs on both paths.
//!
//! Here: the service type, its construction (in-process, as the kubeconfig's user) and who the
//! caller is. Each call lives in the module of its concern: the operation reads in
//! `operations.rs`, the cluster reads in `clusters.rs`, PlanOperation and what a plan or a start
//! reads in `world.rs`, the writes in `start/` and `writes.rs`, the shared refusals of a read in
//! `missing.rs`.

pub mod access;
mod clusters;
pub(crate) mod conflicts;
pub(crate) mod convert;
mod events;
pub mod feed;
pub mod list;
pub mod manager;
pub(crate) mod manifest;
mod missing;
mod operations;
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
mod world;
mod writes;

pub use self::start::START_OUTCOME_KNOWN_WITHIN;

use self::access::{Caller, KubeAccess};
use ichor_model::{ApiError, Code};
use kube::api::Api;
use serde_json::json;

/// The service.
#[derive(Clone)]
pub struct OperationService {
    access: KubeAccess,
    /// The request ids this process was sent, and for what.
    requests: std::sync::Arc<start::RequestLog>,
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
}
