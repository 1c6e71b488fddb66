//! A start whose create got no answer: the claim is kept, marked settling, and a detached task
//! reads for the request id until the create can no longer land (the API server's own request
//! timeout after it was sent), then takes the kube-proxy confirmation back if the start set it
//! and gives the claim back. The caller is told the outcome is being settled, by whom and until
//! when; another start meanwhile is refused START_SETTLING.

use super::super::OperationService;
use super::super::access::{APISERVER_REQUEST_TIMEOUT, Caller};
use ichor_model::{ApiError, Code, Reason};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use std::time::Duration;

/// The API server's request timeout, as a span of time: the settle window when the one
/// configured cannot be one.
const REQUEST_TIMEOUT: SignedDuration =
    SignedDuration::from_secs(APISERVER_REQUEST_TIMEOUT.as_secs() as i64);

/// How often the settle task reads for the start's operation.
const SETTLE_READ_EVERY: Duration = Duration::from_secs(1);

/// What a settling start needs to finish.
pub(super) struct Settling {
    pub(crate) caller: Caller,
    pub(crate) namespace: String,
    pub(crate) cluster: String,
    /// The name the start gave its operation.
    pub(crate) operation: String,
    pub(crate) request_id: String,
    pub(crate) actor: String,
    /// The kube-proxy confirmation is on the cluster (set by this start, or stray): taken back
    /// once settled.
    pub(crate) confirmation: bool,
    /// When the create can no longer land.
    pub(crate) until: Timestamp,
}

impl OperationService {
    /// When a create sent at `sent` can no longer land: the API server's request timeout later.
    pub(super) fn settled_at(&self, sent: Timestamp) -> Timestamp {
        let window = SignedDuration::try_from(self.access.settle_window).unwrap_or(REQUEST_TIMEOUT);
        sent.checked_add(window).unwrap_or(sent)
    }

    /// Keeps the claim (marked settling) and hands it to a detached settle task; the answer is
    /// START_OUTCOME_UNKNOWN.
    pub(super) async fn settle(
        &self,
        s: Settling,
        lease: Option<Lease>,
        cause: &ApiError,
    ) -> ApiError {
        let lease = match lease {
            Some(held) => match self
                .mark_settling(&s.caller, &s.namespace, &held, s.until)
                .await
            {
                Ok(marked) => Some(marked),
                Err(e) => {
                    // The claim still stands as it was taken; it lapses on its own.
                    tracing::warn!(error = %e.message, "the start claim could not be marked settling");
                    Some(held)
                }
            },
            None => None,
        };
        let answer = outcome_unknown(&s, cause);
        tracing::warn!(
            cluster = %s.cluster,
            operation = %s.operation,
            until = %s.until,
            error = %cause.message,
            "a start's create got no answer: settling its outcome"
        );
        let service = self.clone();
        tokio::spawn(async move { service.settle_task(s, lease).await });
        answer
    }

    /// Reads for the start's operation until `until` (once more at the end), then gives back
    /// what the start held.
    async fn settle_task(self, s: Settling, lease: Option<Lease>) {
        let found = loop {
            let found = self
                .find_created(&s.caller, &s.namespace, &s.operation, &s.request_id)
                .await;
            if let Ok(Some(_)) = found {
                break true;
            }
            let left = s.until.duration_since(Timestamp::now());
            if left <= SignedDuration::ZERO {
                break false;
            }
            let wait = Duration::try_from(left)
                .unwrap_or(SETTLE_READ_EVERY)
                .min(SETTLE_READ_EVERY);
            tokio::time::sleep(wait).await;
        };
        if s.confirmation
            && let Err(e) = self
                .remove_confirmation(&s.caller, &s.namespace, &s.cluster)
                .await
        {
            tracing::warn!(cluster = %s.cluster, error = %e.message, "the kube-proxy confirmation annotation was left on the cluster");
        }
        if let Some(l) = lease {
            self.release(&s.caller, &s.namespace, &l).await;
        }
        tracing::info!(cluster = %s.cluster, operation = %s.operation, created = found, "a start's outcome is settled");
    }
}

/// START_OUTCOME_UNKNOWN: what was sent, by whom, that it is being settled and until when.
fn outcome_unknown(s: &Settling, cause: &ApiError) -> ApiError {
    let until = s.until.to_string();
    let detail = cause.param("detail").unwrap_or(&cause.message).to_string();
    ApiError::said(
        Code::Unavailable,
        Reason::StartOutcomeUnknown,
        &[
            ("cluster", &s.cluster),
            ("operation", &s.operation),
            ("actor", &s.actor),
            ("until", &until),
            ("request_id", &s.request_id),
            ("detail", &detail),
        ],
    )
}
