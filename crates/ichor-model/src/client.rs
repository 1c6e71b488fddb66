//! The one client trait the dashboard uses; its in-process and remote implementations and the
//! wrappers (retrying, read-only) are the client crate's, the only one above the service that
//! knows tonic and kube exist.

use crate::{
    ApiError, Cluster, Code, Confirmed, Created, EventsWanted, ListQuery, Operation,
    OperationEvent, OperationEvents, OperationPage, OperationRequest, Permissions, Plan, Updates,
    WatchRequest,
};

use crate::ServerVersion;

/// OperationService and ClusterService as the dashboard calls them. A shared, boxed or borrowed
/// client is a client too (the forwarding is written by `auto_impl`): wrappers (the retrying
/// one) take any backend chosen at run time.
#[async_trait::async_trait]
#[auto_impl::auto_impl(&, Box, Arc)]
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
    ApiError::said(
        crate::Code::PermissionDenied,
        crate::Reason::ReadOnly,
        &[("what", what)],
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
