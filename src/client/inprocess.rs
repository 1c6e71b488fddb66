//! The in-process client: the service's handlers called directly.

use ichor_model::OperationClient;
use ichor_model::{
    ApiError, Cluster, Code, Confirmed, Created, ListQuery, Operation, OperationPage,
    OperationRequest, Permissions, Plan, View,
};
use ichor_service::OperationService;
use ichor_service::access::Caller;

/// Calls the service in the same process, as the caller.
pub struct InProcessClient {
    service: OperationService,
    caller: Caller,
    /// The kubeconfig user the calls are made with, named when Kubernetes refuses its
    /// credentials.
    kubeconfig_user: Option<String>,
    /// The list's rows as a watch keeps them (see [`super::store`]).
    store: Option<ichor_service::store::OperationStore>,
}

/// How long a summary list waits for the watch's first list before it lists from the API.
const FIRST_LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl InProcessClient {
    pub fn new(service: OperationService, caller: Caller) -> InProcessClient {
        InProcessClient {
            service,
            caller,
            kubeconfig_user: None,
            store: None,
        }
    }

    /// Keeps the list's rows of `scope` (`None`: every namespace) with a watch made with
    /// `kube`'s credentials, so a poll of the list reads memory.
    pub fn with_watch(mut self, kube: kube::Client, scope: Option<String>) -> InProcessClient {
        self.store = Some(ichor_service::store::OperationStore::watch(kube, scope));
        self
    }

    /// The page from the watched rows, when the query is for summaries of a scope the watch
    /// holds and its first list has arrived.
    fn watched_page(&self, query: &ListQuery) -> Option<Result<OperationPage, ApiError>> {
        if query.view != View::Summary {
            return None;
        }
        let store = self.store.as_ref()?;
        if let Err(e) = ichor_service::list::check(query) {
            return Some(Err(e));
        }
        store.page(query)
    }

    /// Names the kubeconfig user whose credentials the calls carry.
    pub fn kubeconfig_user(mut self, user: String) -> InProcessClient {
        self.kubeconfig_user = Some(user);
        self
    }

    /// Says which credentials Kubernetes refused: the kubeconfig user's.
    fn explain(&self, mut e: ApiError) -> ApiError {
        if e.code == Code::Unauthenticated
            && let Some(user) = &self.kubeconfig_user
        {
            e.params.insert("via".into(), "kubeconfig".into());
            e.params.insert("user".into(), user.clone());
        }
        e
    }
}

#[async_trait::async_trait]
impl OperationClient for InProcessClient {
    fn user(&self) -> Option<String> {
        self.caller.identity.as_ref().map(|i| i.user.clone())
    }

    async fn list_page(&self, query: &ListQuery) -> Result<OperationPage, ApiError> {
        if let Some(store) = self.store.as_ref().filter(|_| query.view == View::Summary) {
            store.settled(FIRST_LIST_WAIT).await;
        }
        if let Some(page) = self.watched_page(query) {
            return page;
        }
        self.service
            .list_page(&self.caller, query)
            .await
            .map_err(|e| self.explain(e))
    }

    fn pushes(&self) -> bool {
        self.store.is_some()
    }

    /// Pushed from the watch this client keeps (with the person's own credentials); without
    /// one, Unimplemented, and the dashboard polls.
    async fn watch_operations(
        &self,
        req: &ichor_model::WatchRequest,
    ) -> Result<ichor_model::Updates, ApiError> {
        let Some(store) = self.store.clone() else {
            return Err(ApiError::new(
                Code::Unimplemented,
                "no watch is kept for this client",
            ));
        };
        self.service
            .watch_operations(self.caller.clone(), store, req.clone())
            .map_err(|e| self.explain(e))
    }

    async fn get_operation(&self, namespace: &str, name: &str) -> Result<Operation, ApiError> {
        self.service
            .get_operation(&self.caller, namespace, name)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn get_operation_manifest(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError> {
        self.service
            .get_operation_manifest(&self.caller, namespace, name)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn plan_operation(&self, req: &OperationRequest) -> Result<Plan, ApiError> {
        self.service
            .plan_operation(&self.caller, req)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError> {
        self.service
            .create_operation(&self.caller, req)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn set_operation_paused(
        &self,
        namespace: &str,
        name: &str,
        paused: bool,
        confirmed: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        self.service
            .set_operation_paused(&self.caller, namespace, name, paused, confirmed)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn delete_operation(
        &self,
        namespace: &str,
        name: &str,
        confirmed: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        self.service
            .delete_operation(&self.caller, namespace, name, confirmed)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn list_events(
        &self,
        namespace: &str,
        name: &str,
        wanted: ichor_model::EventsWanted,
    ) -> Result<ichor_model::OperationEvents, ApiError> {
        self.service
            .list_operation_events(&self.caller, namespace, name, wanted)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn permissions(&self, namespace: &str) -> Result<Permissions, ApiError> {
        self.service
            .permissions(&self.caller, namespace)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn list_clusters(&self, namespace: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        self.service
            .list_clusters(&self.caller, namespace)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn get_cluster(&self, namespace: &str, name: &str) -> Result<Cluster, ApiError> {
        self.service
            .get_cluster(&self.caller, namespace, name)
            .await
            .map_err(|e| self.explain(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ichor_demo::apiserver::EmbeddedApi;
    use ichor_model::Reason;
    use ichor_service::access::KubeAccess;

    #[tokio::test]
    async fn refused_credentials_name_the_kubeconfig_user() {
        let api = EmbeddedApi::default();
        let service = OperationService::new(KubeAccess::new(api.client("stale"), "ichor-tui"));
        let client = InProcessClient::new(service, Caller::in_process())
            .kubeconfig_user("admin@prod".into());
        let e = client.list_operations(Some("default")).await.unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::Unauthenticated, Some(Reason::Unauthenticated))
        );
        assert_eq!(e.param("via"), Some("kubeconfig"));
        assert_eq!(e.param("user"), Some("admin@prod"));
        assert_eq!(e.param("detail"), Some("Unauthorized"));
    }
}
