//! The remote client: OperationService and ClusterService at a server (`ichor-tui serve`, or
//! ichor-ui's connect-go server), over the Connect protocol or gRPC. One client, two transports:
//! the calls, deadlines, read-only refusal, version check and error mapping are the same on
//! both; only how a unary call travels differs.
//!
//! - Connect (the default): HTTP POST of the binary message, over HTTP/1.1 or HTTP/2 as the
//!   connection negotiates; what passes an HTTP/1.1-only proxy or a TLS-terminating ingress.
//! - gRPC: HTTP/2 (h2c for `http://`), through tonic.
//!
//! `https://` uses rustls with the system roots plus an optional CA file. Connections are made
//! lazily and again after a failure, so a server that is down at start, or goes away and comes
//! back, is reached again without a restart.

mod connect;
mod grpc;
mod options;
mod stream;

pub use options::{
    DEFAULT_DEADLINE, MAX_RESPONSE_BYTES, Protocol, RemoteOptions, TOKEN_ENV, load_token,
};

use ichor_model::{
    ApiError, Cluster, Code, Confirmed, Created, ListQuery, Operation, OperationPage,
    OperationRequest, Permissions, Plan, Reason,
};
use ichor_model::{OperationClient, ServerVersion};
use ichor_wire::{self as wire, Rpc, proto, version};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a unary call travels.
#[derive(Clone)]
enum Transport {
    Connect(Box<connect::ConnectTransport>),
    Grpc(Box<grpc::GrpcTransport>),
}

/// A call's answer, the server version its response said, and who the server took the caller
/// for.
struct Reply<T> {
    message: T,
    server_version: Option<String>,
    caller: Option<String>,
}

/// Who the server says the caller is ([`version::CALLER_HEADER`]), made inert and bounded.
fn said_caller(headers: &http::HeaderMap) -> Option<String> {
    let v = headers.get(version::CALLER_HEADER)?.to_str().ok()?;
    let v = ichor_model::inert::truncate(&ichor_model::inert::sanitize(v.trim()), 64);
    (!v.is_empty()).then_some(v)
}

impl Transport {
    async fn unary<Req, Resp>(
        &self,
        path: &'static str,
        req: Req,
        deadline: Duration,
    ) -> Result<Reply<Resp>, ApiError>
    where
        Req: prost::Message + Send + Sync + 'static,
        Resp: prost::Message + Default + Send + Sync + 'static,
    {
        match self {
            Transport::Connect(t) => t.unary(path, req, deadline).await,
            Transport::Grpc(t) => t.unary(path, req, deadline).await,
        }
    }
}

/// OperationClient at a server. Cheap to clone; clones share connections and what the server
/// said of its version.
#[derive(Clone)]
pub struct RemoteClient {
    transport: Transport,
    url: String,
    protocol: Protocol,
    deadline: Duration,
    has_token: bool,
    server_version: Arc<Mutex<ServerVersion>>,
    /// Who the server's last answer that said so took the caller for.
    caller: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for RemoteClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteClient")
            .field("url", &self.url)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

impl RemoteClient {
    /// A client for the server at `opts.url`. Connects on the first call, not here.
    pub fn new(opts: RemoteOptions) -> anyhow::Result<RemoteClient> {
        let target = opts.target()?;
        opts.check_token_transport()?;
        let transport = match opts.protocol {
            Protocol::Connect => {
                Transport::Connect(Box::new(connect::ConnectTransport::new(&target)?))
            }
            Protocol::Grpc => {
                Transport::Grpc(Box::new(grpc::GrpcTransport::new(&target, opts.deadline)?))
            }
        };
        Ok(RemoteClient::with(opts, &target, transport))
    }

    fn with(opts: RemoteOptions, target: &options::Target, transport: Transport) -> RemoteClient {
        RemoteClient {
            transport,
            url: opts.url,
            protocol: opts.protocol,
            deadline: opts.deadline,
            has_token: target.token.is_some(),
            server_version: Arc::new(Mutex::new(ServerVersion::NotYet)),
            caller: Arc::default(),
        }
    }

    /// A client that reaches the server through `tunnel` (plain HTTP over a port-forward;
    /// `opts.url` names the server for the Host header, e.g. `http://ichor-ui.ichor-system`).
    pub fn through(
        opts: RemoteOptions,
        tunnel: crate::tunnel::TunnelConnector,
    ) -> anyhow::Result<RemoteClient> {
        let target = opts.target()?;
        let transport = match opts.protocol {
            Protocol::Connect => Transport::Connect(Box::new(connect::ConnectTransport::through(
                &target, tunnel,
            ))),
            Protocol::Grpc => {
                Transport::Grpc(Box::new(grpc::GrpcTransport::through(&target, tunnel)?))
            }
        };
        Ok(RemoteClient::with(opts, &target, transport))
    }

    /// Runs one call under the deadline (enforced here too, so a call waiting for a connection
    /// cannot outlast it either), notes the server's version, and maps the error.
    async fn call<Req, Resp>(&self, what: &str, rpc: Rpc, req: Req) -> Result<Resp, ApiError>
    where
        Req: prost::Message + Send + Sync + 'static,
        Resp: prost::Message + Default + Send + Sync + 'static,
    {
        let result = tokio::time::timeout(
            self.deadline,
            self.transport.unary(rpc.path(), req, self.deadline),
        )
        .await;
        match result {
            Ok(Ok(reply)) => {
                self.note_version(reply.server_version);
                if let Some(c) = reply.caller
                    && let Ok(mut slot) = self.caller.lock()
                {
                    *slot = Some(c);
                }
                Ok(reply.message)
            }
            Ok(Err(e)) => Err(self.explain(what, e)),
            Err(_) => Err(self.deadline_exceeded(what)),
        }
    }

    fn note_version(&self, v: Option<String>) {
        let v = match v {
            Some(v) => ServerVersion::Known(ichor_model::inert::truncate(
                &ichor_model::inert::sanitize(&v),
                32,
            )),
            None => ServerVersion::Unknown,
        };
        if let Ok(mut slot) = self.server_version.lock() {
            *slot = v;
        }
    }

    fn deadline_exceeded(&self, what: &str) -> ApiError {
        let message = format!(
            "{what}: {} did not answer within {} ms",
            self.url,
            self.deadline.as_millis()
        );
        ApiError::refused(
            Code::DeadlineExceeded,
            Reason::Unavailable,
            &[("what", what), ("server", &self.url), ("detail", &message)],
            message.clone(),
        )
    }

    /// Adds what the call was and where it went to an error without a reason of its own, and
    /// how to give a token to an unauthenticated one.
    fn explain(&self, what: &str, mut e: ApiError) -> ApiError {
        if e.code == Code::DeadlineExceeded && e.reason.is_none() {
            return self.deadline_exceeded(what);
        }
        if e.reason.is_none() && e.code.is_transient() {
            // No answer from the service itself: the connection failed.
            e.message = format!("{what}: {}: {}", self.url, e.message);
            e.params.insert("what".into(), what.to_string());
            e.params.insert("server".into(), self.url.clone());
        }
        if e.code == Code::Unauthenticated {
            // The server refused the token, or its absence: say how to give one.
            e.reason = Some(Reason::Unauthenticated);
            let via = if self.has_token { "token" } else { "no-token" };
            e.params.insert("via".into(), via.into());
            if !e.params.contains_key("detail") {
                e.params.insert("detail".into(), e.message.clone());
            }
        }
        e
    }

    /// Refuses a write locally: a server too far from this client's version.
    fn writable(&self, what: &str) -> Result<(), ApiError> {
        if let Ok(slot) = self.server_version.lock()
            && let ServerVersion::Known(server) = &*slot
            && let Some(refusal) = version::skew_refusal(version::CLIENT, server, what)
        {
            return Err(refusal);
        }
        Ok(())
    }
}

fn list_scope(namespace: Option<&str>) -> (String, bool) {
    match namespace {
        Some(ns) => (ns.to_string(), false),
        None => (String::new(), true),
    }
}

fn name_request(namespace: &str, name: &str) -> (String, String) {
    (namespace.to_string(), name.to_string())
}

#[async_trait::async_trait]
impl OperationClient for RemoteClient {
    fn user(&self) -> Option<String> {
        self.caller.lock().ok().and_then(|c| c.clone())
    }

    fn server_version(&self) -> ServerVersion {
        self.server_version
            .lock()
            .map(|v| v.clone())
            .unwrap_or(ServerVersion::NotYet)
    }

    async fn list_page(&self, query: &ListQuery) -> Result<OperationPage, ApiError> {
        let req = wire::list_query_to_proto(query);
        let resp: proto::ListOperationsResponse = self
            .call("listing operations", Rpc::ListOperations, req)
            .await?;
        Ok(wire::page_from_proto(resp))
    }

    async fn get_operation(&self, namespace: &str, name: &str) -> Result<Operation, ApiError> {
        let (namespace, name) = name_request(namespace, name);
        let req = proto::GetOperationRequest {
            namespace,
            name,
            manifest: false,
        };
        let resp: proto::GetOperationResponse = self
            .call("reading the operation", Rpc::GetOperation, req)
            .await?;
        wire::required_operation(resp.operation)
    }

    async fn get_operation_manifest(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError> {
        let (namespace, name) = name_request(namespace, name);
        let req = proto::GetOperationRequest {
            namespace,
            name,
            manifest: true,
        };
        let what = "reading the operation's resource";
        let resp: proto::GetOperationResponse = self.call(what, Rpc::GetOperation, req).await?;
        if resp.manifest.is_empty() {
            return Err(ichor_model::no_manifest(what));
        }
        Ok(resp.manifest)
    }

    async fn plan_operation(&self, req: &OperationRequest) -> Result<Plan, ApiError> {
        let req = wire::plan_request_to_proto(req);
        let resp = self
            .call("planning the operation", Rpc::PlanOperation, req)
            .await?;
        wire::plan_from_proto(resp)
    }

    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError> {
        self.writable("starting an operation")?;
        let req = wire::create_request_to_proto(req);
        let resp = self
            .call("starting the operation", Rpc::CreateOperation, req)
            .await?;
        wire::created_from_proto(resp)
    }

    async fn set_operation_paused(
        &self,
        namespace: &str,
        name: &str,
        paused: bool,
        confirmed: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        let what = if paused {
            "pausing an operation"
        } else {
            "resuming an operation"
        };
        self.writable(what)?;
        let (namespace, name) = name_request(namespace, name);
        let req = proto::SetOperationPausedRequest {
            namespace,
            name,
            paused,
            confirmed: confirmed.map(wire::confirmed_to_proto),
        };
        let resp: proto::SetOperationPausedResponse =
            self.call(what, Rpc::SetOperationPaused, req).await?;
        wire::required_operation(resp.operation)
    }

    async fn delete_operation(
        &self,
        namespace: &str,
        name: &str,
        confirmed: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        self.writable("deleting an operation")?;
        let (namespace, name) = name_request(namespace, name);
        let req = proto::DeleteOperationRequest {
            namespace,
            name,
            confirmed: confirmed.map(wire::confirmed_to_proto),
        };
        let _: proto::DeleteOperationResponse = self
            .call("deleting the operation", Rpc::DeleteOperation, req)
            .await?;
        Ok(())
    }

    async fn list_events(
        &self,
        namespace: &str,
        name: &str,
        wanted: ichor_model::EventsWanted,
    ) -> Result<ichor_model::OperationEvents, ApiError> {
        let (namespace, name) = name_request(namespace, name);
        let req = proto::ListOperationEventsRequest {
            namespace,
            name,
            all: wanted == ichor_model::EventsWanted::All,
        };
        let resp: proto::ListOperationEventsResponse = self
            .call("reading the events", Rpc::ListOperationEvents, req)
            .await?;
        Ok(wire::events_from_proto(resp, wanted))
    }

    fn pushes(&self) -> bool {
        true
    }

    async fn watch_operations(
        &self,
        req: &ichor_model::WatchRequest,
    ) -> Result<ichor_model::Updates, ApiError> {
        use futures::StreamExt as _;
        // Deltas on the wire, applied here, for a caller that takes pages whole; not when it
        // resumes with a version it holds (this stream would not hold that page).
        let applied_here = !req.page_deltas && req.list.known_version.is_none();
        let mut wire_req = wire::watch_request_to_proto(req);
        wire_req.page_deltas |= applied_here;
        let path = Rpc::WatchOperations.path();
        let messages: stream::Messages<proto::WatchOperationsResponse> = match &self.transport {
            Transport::Connect(t) => t.server_stream(path, wire_req).await?,
            Transport::Grpc(t) => t.server_stream(path, wire_req).await?,
        };
        let updates: ichor_model::Updates =
            Box::pin(messages.map(|m| m.map(wire::watch_update_from_proto)));
        Ok(match applied_here {
            true => stream::whole_pages(updates),
            false => updates,
        })
    }

    async fn permissions(&self, namespace: &str) -> Result<Permissions, ApiError> {
        let req = proto::GetPermissionsRequest {
            namespace: namespace.to_string(),
        };
        let resp: proto::GetPermissionsResponse = self
            .call("asking what you may do", Rpc::GetPermissions, req)
            .await?;
        Ok(wire::permissions_from_proto(&resp))
    }

    async fn list_clusters(&self, namespace: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        let (namespace, all_namespaces) = list_scope(namespace);
        let req = proto::ListClustersRequest {
            namespace,
            all_namespaces,
        };
        let resp: proto::ListClustersResponse = self
            .call("listing clusters", Rpc::ListClusters, req)
            .await?;
        Ok(resp
            .clusters
            .into_iter()
            .map(wire::cluster_from_proto)
            .collect())
    }

    async fn get_cluster(&self, namespace: &str, name: &str) -> Result<Cluster, ApiError> {
        let (namespace, name) = name_request(namespace, name);
        let req = proto::GetClusterRequest { namespace, name };
        let resp: proto::GetClusterResponse = self
            .call("reading the cluster", Rpc::GetCluster, req)
            .await?;
        wire::required_cluster(resp.cluster)
    }
}

#[cfg(test)]
mod tests;

/// UNAVAILABLE for a call that never left: no connection could be made, so no server got it.
/// A write that met it did not happen (param `sent`: `no`).
pub(crate) fn not_sent(message: String) -> ApiError {
    let mut e = ApiError::new(Code::Unavailable, message);
    e.params.insert("sent".into(), "no".into());
    e
}
