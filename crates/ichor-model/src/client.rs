//! The one client trait the dashboard uses; its in-process and remote implementations and the
//! wrappers (retrying, read-only) are the client crate's, the only one above the service that
//! knows tonic and kube exist.

use crate::{
    ApiError, Cluster, Code, Confirmed, Created, EventsWanted, ListQuery, Operation,
    OperationEvent, OperationEvents, OperationPage, OperationRequest, Permissions, Plan, Updates,
    WatchRequest,
};

use crate::ServerVersion;

/// OperationService and ClusterService as the dashboard calls them.
#[async_trait::async_trait]
pub trait OperationClient: Send + Sync {
    /// The user the calls act as, when known.
    fn user(&self) -> Option<String> {
        None
    }
    /// The server's version, as its last answer said (remote backends).
    fn server_version(&self) -> ServerVersion {
        ServerVersion::NotYet
    }
    /// One page of the operations list.
    async fn list_page(&self, query: &ListQuery) -> Result<OperationPage, ApiError>;
    /// Every operation in `namespace` (`None`: every namespace), whole: page after page.
    async fn list_operations(&self, namespace: Option<&str>) -> Result<Vec<Operation>, ApiError> {
        let mut query = ListQuery::everything(namespace);
        let mut all = Vec::new();
        loop {
            let page = self.list_page(&query).await?;
            all.extend(page.operations);
            match page.next_page_token {
                Some(token) => query = query.after(token),
                None => return Ok(all),
            }
        }
    }
    /// The operation a start with `request_id` created in `namespace`, if there is one.
    async fn find_start(
        &self,
        namespace: &str,
        request_id: &str,
    ) -> Result<Option<Operation>, ApiError> {
        Ok(self
            .list_operations(Some(namespace))
            .await?
            .into_iter()
            .find(|o| o.request_id.as_deref() == Some(request_id)))
    }
    async fn get_operation(&self, namespace: &str, name: &str) -> Result<Operation, ApiError>;
    /// The operation's resource as YAML (read only). A backend without it says so.
    async fn get_operation_manifest(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError> {
        let _ = (namespace, name);
        Err(no_manifest("reading the operation's resource"))
    }
    async fn plan_operation(&self, req: &OperationRequest) -> Result<Plan, ApiError>;
    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError>;
    /// Pause or resume. `confirmed`: what the person confirmed; the service refuses the write
    /// if the operation differs from it.
    async fn set_operation_paused(
        &self,
        namespace: &str,
        name: &str,
        paused: bool,
        confirmed: Option<&Confirmed>,
    ) -> Result<Operation, ApiError>;
    /// Delete, bound to `confirmed` like a pause.
    async fn delete_operation(
        &self,
        namespace: &str,
        name: &str,
        confirmed: Option<&Confirmed>,
    ) -> Result<(), ApiError>;
    /// The events of an operation and its machines, newest first: the newest or all of them
    /// (bounded), with how many there are. A server from before events answers Unimplemented.
    async fn list_events(
        &self,
        _namespace: &str,
        _name: &str,
        _wanted: EventsWanted,
    ) -> Result<OperationEvents, ApiError> {
        Err(ApiError::new(
            Code::Unimplemented,
            "this backend does not list events",
        ))
    }
    /// The newest events of an operation and its machines (see [`OperationClient::list_events`]).
    async fn list_operation_events(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<OperationEvent>, ApiError> {
        self.list_events(namespace, name, EventsWanted::Newest)
            .await
            .map(|e| e.events)
    }
    /// Whether [`OperationClient::watch_operations`] may push (a server may still answer
    /// Unimplemented); `false`: the dashboard only polls.
    fn pushes(&self) -> bool {
        false
    }
    /// The page and the followed operation pushed as they change (WatchOperations). A backend
    /// without it answers Unimplemented, and the dashboard polls.
    async fn watch_operations(&self, _req: &WatchRequest) -> Result<Updates, ApiError> {
        Err(ApiError::new(
            Code::Unimplemented,
            "this backend does not push updates",
        ))
    }
    /// What the caller may do in `namespace`.
    async fn permissions(&self, namespace: &str) -> Result<Permissions, ApiError>;
    async fn list_clusters(&self, namespace: Option<&str>) -> Result<Vec<Cluster>, ApiError>;
    async fn get_cluster(&self, namespace: &str, name: &str) -> Result<Cluster, ApiError>;
}

/// A server (or backend) that does not send an operation's resource.
pub fn no_manifest(what: &str) -> ApiError {
    ApiError::new(
        crate::Code::Unimplemented,
        format!("{what}: this server does not send the operation's resource"),
    )
}

/// The refusal a read-only client gives every write, without calling anything.
pub fn read_only_refusal(what: &str) -> ApiError {
    ApiError::refused(
        crate::Code::PermissionDenied,
        crate::Reason::ReadOnly,
        &[("what", what)],
        format!("{what}: ichor-tui runs read-only (--read-only)"),
    )
}

/// What a retrying client reports while it retries a transient fault, so the dashboard can say
/// "Kubernetes API not answering, retrying in N s (since HH:MM)".
#[derive(Clone, Debug, PartialEq)]
pub enum RetryEvent {
    /// Attempt `attempt` of `what` met a transient fault; the next attempt is in `delay`.
    Retrying {
        what: String,
        attempt: u32,
        delay: std::time::Duration,
        /// When the first failed attempt of this call happened.
        since: jiff::Timestamp,
        error: ApiError,
    },
    /// A call succeeded after at least one retry.
    Recovered { what: String },
    /// Retrying stopped (10 minutes passed); the last error was returned to the caller.
    GaveUp {
        what: String,
        since: jiff::Timestamp,
        error: ApiError,
    },
}

/// A shared client is a client: wrappers (the retrying one) take any backend chosen at run time.
#[async_trait::async_trait]
impl<C: OperationClient + ?Sized> OperationClient for std::sync::Arc<C> {
    fn user(&self) -> Option<String> {
        (**self).user()
    }
    fn server_version(&self) -> ServerVersion {
        (**self).server_version()
    }
    async fn list_page(&self, query: &ListQuery) -> Result<OperationPage, ApiError> {
        (**self).list_page(query).await
    }
    async fn get_operation(&self, namespace: &str, name: &str) -> Result<Operation, ApiError> {
        (**self).get_operation(namespace, name).await
    }
    async fn get_operation_manifest(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError> {
        (**self).get_operation_manifest(namespace, name).await
    }
    async fn plan_operation(&self, req: &OperationRequest) -> Result<Plan, ApiError> {
        (**self).plan_operation(req).await
    }
    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError> {
        (**self).create_operation(req).await
    }
    async fn set_operation_paused(
        &self,
        namespace: &str,
        name: &str,
        paused: bool,
        confirmed: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        (**self)
            .set_operation_paused(namespace, name, paused, confirmed)
            .await
    }
    async fn delete_operation(
        &self,
        namespace: &str,
        name: &str,
        confirmed: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        (**self).delete_operation(namespace, name, confirmed).await
    }
    async fn permissions(&self, namespace: &str) -> Result<Permissions, ApiError> {
        (**self).permissions(namespace).await
    }
    async fn list_events(
        &self,
        namespace: &str,
        name: &str,
        wanted: EventsWanted,
    ) -> Result<OperationEvents, ApiError> {
        (**self).list_events(namespace, name, wanted).await
    }
    fn pushes(&self) -> bool {
        (**self).pushes()
    }
    async fn watch_operations(&self, req: &WatchRequest) -> Result<Updates, ApiError> {
        (**self).watch_operations(req).await
    }
    async fn list_clusters(&self, namespace: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        (**self).list_clusters(namespace).await
    }
    async fn get_cluster(&self, namespace: &str, name: &str) -> Result<Cluster, ApiError> {
        (**self).get_cluster(namespace, name).await
    }
}
