//! Which of a caller's groups serve may impersonate. Its ClusterRole names the groups
//! (`resourceNames` on `impersonate groups`, `deploy/base/rbac.yaml`): RBAC cannot say "any
//! group but system:masters", so a role that let serve impersonate every group would let
//! whoever holds its token act as cluster-admin. serve asks Kubernetes, as itself, whether it
//! may impersonate each group a review names (a SelfSubjectAccessReview, which every
//! authenticated user may make), remembers the answer for the reviews' TTL, and carries only
//! the groups it may: leaving a group out can only take rights away under RBAC. A group left
//! out is said once in the log, with what to grant.

use ichor_model::{ApiError, Code};
use ichor_service::access::KubeAccess;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// The most groups of one caller that are considered; more are left out (and said).
pub(crate) const MAX_GROUPS: usize = 256;

/// The most group names remembered (answers and what was said); past it they are forgotten.
const MAX_REMEMBERED: usize = 4096;

/// SelfSubjectAccessReviews asked at once for one caller's groups.
const AT_ONCE: usize = 8;

const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

/// What serve may impersonate, as Kubernetes answered it.
pub(crate) struct Impersonable {
    access: KubeAccess,
    ttl: Duration,
    known: Mutex<HashMap<String, (Instant, bool)>>,
    said: Mutex<HashSet<String>>,
}

impl Impersonable {
    /// Asking with `access`'s own client; answers kept for `ttl`.
    pub(crate) fn new(access: KubeAccess, ttl: Duration) -> Impersonable {
        Impersonable {
            access,
            ttl,
            known: Mutex::new(HashMap::new()),
            said: Mutex::new(HashSet::new()),
        }
    }

    /// The groups of `groups` serve may impersonate, in their order (`system:authenticated`,
    /// which the API server adds to everyone, is not asked about and not carried).
    pub(crate) async fn groups(&self, groups: Vec<String>) -> Result<Vec<String>, ApiError> {
        use futures::StreamExt as _;
        let mut asked: Vec<String> = groups
            .into_iter()
            .filter(|g| g != "system:authenticated")
            .collect();
        if asked.len() > MAX_GROUPS {
            tracing::warn!(
                groups = asked.len(),
                kept = MAX_GROUPS,
                "a caller has more groups than serve considers: the rest are not impersonated"
            );
            asked.truncate(MAX_GROUPS);
        }
        let answers: Vec<Result<bool, ApiError>> = futures::stream::iter(asked.clone())
            .map(|g| async move { self.may_impersonate(&g).await })
            .buffered(AT_ONCE)
            .collect()
            .await;
        let mut kept = Vec::new();
        for (group, answer) in asked.into_iter().zip(answers) {
            match answer? {
                true => kept.push(group),
                false => self.say_left_out(&group),
            }
        }
        Ok(kept)
    }

    /// Whether serve may impersonate `group`, remembered or asked.
    async fn may_impersonate(&self, group: &str) -> Result<bool, ApiError> {
        if let Some(known) = self.remembered(group) {
            return Ok(known);
        }
        let allowed = self.ask(group).await?;
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        if known.len() >= MAX_REMEMBERED {
            known.clear();
        }
        known.insert(group.to_string(), (Instant::now(), allowed));
        Ok(allowed)
    }

    fn remembered(&self, group: &str) -> Option<bool> {
        let known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        known
            .get(group)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, allowed)| *allowed)
    }

    /// A SelfSubjectAccessReview as serve: may it impersonate the group?
    async fn ask(&self, group: &str) -> Result<bool, ApiError> {
        let body = json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "impersonate", "resource": "groups", "name": group}},
        });
        let request = http::Request::post(ACCESS_REVIEWS)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body.to_string().into_bytes())
            .map_err(|e| ApiError::new(Code::Internal, format!("building the review: {e}")))?;
        let client = self.access.own();
        let review: Value = self
            .access
            .call(
                "asking which groups the server may impersonate",
                client.request::<Value>(request),
            )
            .await?;
        Ok(review.pointer("/status/allowed").and_then(Value::as_bool) == Some(true))
    }

    /// Says once that `group` is left out.
    fn say_left_out(&self, group: &str) {
        let mut said = self.said.lock().unwrap_or_else(|p| p.into_inner());
        if said.len() >= MAX_REMEMBERED || !said.insert(group.to_string()) {
            return;
        }
        tracing::info!(
            group = %ichor_model::error_text::quoted(group),
            "serve may not impersonate this group: its members act without it through serve \
             (to carry it, name it in the resourceNames of ichor-tui-serve's impersonate rule on groups)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ichor_demo::apiserver::EmbeddedApi;
    use ichor_demo::apiserver::auth::users;

    #[tokio::test(start_paused = true)]
    async fn only_the_groups_the_role_names_are_kept_and_answers_are_remembered() {
        let api = EmbeddedApi::default();
        let access = KubeAccess::new(api.client(users::SERVER_TOKEN), "ichor-tui-server");
        let impersonable = Impersonable::new(access, Duration::from_secs(30));
        let asked = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let kept = impersonable
            .groups(asked(&[
                "system:masters",
                "ichor:operators",
                "system:authenticated",
                "platform-admins",
            ]))
            .await
            .unwrap();
        assert_eq!(kept, ["ichor:operators"]);
        let reviews = || {
            api.requests_by()
                .iter()
                .filter(|r| r.resource == "selfsubjectaccessreviews")
                .map(|r| r.count)
                .sum::<u64>()
        };
        assert_eq!(reviews(), 3, "system:authenticated is not asked about");
        impersonable
            .groups(asked(&["ichor:operators", "system:masters"]))
            .await
            .unwrap();
        assert_eq!(reviews(), 3, "remembered");
        tokio::time::advance(Duration::from_secs(30)).await;
        impersonable
            .groups(asked(&["ichor:operators"]))
            .await
            .unwrap();
        assert_eq!(reviews(), 4, "asked again after the TTL");
    }
}
