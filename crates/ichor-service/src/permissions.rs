//! What the caller may do, asked of Kubernetes with SelfSubjectAccessReviews made as the caller
//! (impersonated on `serve`, so the API server answers for the person, not for the server). The
//! answers decide what the dashboard offers; the API server still decides every write.

use super::OperationService;
use super::access::Caller;
use ichor_model::{ApiError, Permissions, Plan, Reason, Refusal};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

const ICHOR: &str = "ichor.maesh.dev";
const COORDINATION: &str = "coordination.k8s.io";

/// One question: may the caller `verb` the `resource` of `group` in the namespace?
#[derive(Clone, Copy, Debug)]
struct Question {
    verb: &'static str,
    group: &'static str,
    resource: &'static str,
}

const fn q(verb: &'static str, group: &'static str, resource: &'static str) -> Question {
    Question {
        verb,
        group,
        resource,
    }
}

const CREATE_OPERATIONS: Question = q("create", ICHOR, "talosoperations");
const CREATE_CLAIM: Question = q("create", COORDINATION, "leases");
const UPDATE_CLAIM: Question = q("update", COORDINATION, "leases");
const PATCH_OPERATIONS: Question = q("patch", ICHOR, "talosoperations");
const DELETE_OPERATIONS: Question = q("delete", ICHOR, "talosoperations");
const UPDATE_CLUSTERS: Question = q("update", ICHOR, "talosclusters");
const UPDATE_INSTALLATIONS: Question = q("update", ICHOR, "ichorinstallations");

const LIST_OPERATIONS: Question = q("list", ICHOR, "talosoperations");
const WATCH_OPERATIONS: Question = q("watch", ICHOR, "talosoperations");

impl OperationService {
    /// Whether the caller may list and watch TalosOperations in `namespace` (`None`: in every
    /// namespace): what reading them from a watch kept with another identity needs.
    pub async fn may_list_and_watch(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
    ) -> Result<bool, ApiError> {
        let ns = namespace.unwrap_or("");
        Ok(self.may(caller, ns, LIST_OPERATIONS).await?
            && self.may(caller, ns, WATCH_OPERATIONS).await?)
    }

    async fn may(
        &self,
        caller: &Caller,
        namespace: &str,
        question: Question,
    ) -> Result<bool, ApiError> {
        let api: Api<SelfSubjectAccessReview> = Api::all(self.access.as_caller(caller));
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
                    verb: Some(question.verb.to_string()),
                    group: Some(question.group.to_string()),
                    resource: Some(question.resource.to_string()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = self
            .access
            .call(
                "asking what you may do (SelfSubjectAccessReview)",
                api.create(&PostParams::default(), &review),
            )
            .await?;
        Ok(answer.status.is_some_and(|s| s.allowed))
    }

    /// GetPermissions: what the caller may do in `namespace`.
    pub async fn permissions(
        &self,
        caller: &Caller,
        namespace: &str,
    ) -> Result<Permissions, ApiError> {
        super::validate::namespace(namespace)?;
        let ask = |question| self.may(caller, namespace, question);
        let (create, claim, renew, patch, delete, clusters, installations) = futures::try_join!(
            ask(CREATE_OPERATIONS),
            ask(CREATE_CLAIM),
            ask(UPDATE_CLAIM),
            ask(PATCH_OPERATIONS),
            ask(DELETE_OPERATIONS),
            ask(UPDATE_CLUSTERS),
            ask(UPDATE_INSTALLATIONS),
        )?;
        Ok(Permissions {
            start: create && claim && renew,
            pause: patch,
            delete,
            edit_clusters: clusters,
            edit_installation: installations,
        })
    }

    /// Why the caller may not start `plan`, if they may not: the first write of the start they
    /// may not make. `None` when they may, or when the answer is not known (the start itself is
    /// still checked by the API server).
    pub(super) async fn start_denied(&self, caller: &Caller, plan: &Plan) -> Option<Refusal> {
        let mut needed = vec![CREATE_OPERATIONS, CREATE_CLAIM, UPDATE_CLAIM];
        match plan.spec_change.as_ref().map(|c| c.resource_kind.as_str()) {
            Some("TalosCluster") => needed.push(UPDATE_CLUSTERS),
            Some("IchorInstallation") => needed.push(UPDATE_INSTALLATIONS),
            _ => {}
        }
        for question in needed {
            match self.may(caller, &plan.namespace, question).await {
                Ok(true) => {}
                Ok(false) => return Some(not_permitted(&plan.namespace, question)),
                Err(e) => {
                    tracing::info!(error = %e.message, "could not ask what the caller may do");
                    return None;
                }
            }
        }
        None
    }
}

fn not_permitted(namespace: &str, question: Question) -> Refusal {
    Refusal::said(
        Reason::NotPermitted,
        &[
            ("verb", question.verb),
            ("resource", question.resource),
            ("namespace", namespace),
        ],
    )
}
