//! The gRPC handlers: authenticate the call, decode the request, run the one service as the
//! caller, encode the answer. No behaviour of their own: every refusal is the service's.

use super::auth::Authenticator;
use super::gate::CallDeadline;
use super::push::{Review, Stopped, WatchStream, Watched, as_messages, until_stopped};
use super::shares::{Person, Shares};
use super::stream_bounds::Streams;
use crate::wire;
use crate::wire::Rpc;
use crate::wire::proto;
use ichor_model::{ApiError, Code, Reason};
use ichor_service::OperationService;
use ichor_service::access::Caller;
use ichor_service::shared::SharedReads;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// OperationService and ClusterService over the service.
#[derive(Clone)]
pub(crate) struct Handlers {
    service: OperationService,
    auth: Arc<Authenticator>,
    read_only: bool,
    /// Turns to read the whole list from the API (see [`MAX_LISTS_IN_FLIGHT`]), shared by
    /// person.
    lists: Shares,
    /// The shared watches the summaries and the streams are read from.
    reads: SharedReads,
    streams: Streams,
    /// Turns true when the server begins to stop: streams end then, not at the drain's limit.
    stop: tokio::sync::watch::Receiver<bool>,
}

/// ListOperations reads every operation in scope from the API to answer one page (of metadata
/// only while the page is unchanged): at most this many at once, at most
/// [`super::pools::LISTS_PER_PERSON`] of one person; more wait their turn in their person's
/// queue, until their deadline. With 10,000 operations one such read holds megabytes while it
/// runs, so the number at once, not the number of callers, bounds the memory lists take.
pub(crate) const MAX_LISTS_IN_FLIGHT: usize = 8;

/// How long a list waits for a new shared watch's first list before it reads the API itself.
const FIRST_LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The namespace a list covers: one, or all with `all_namespaces`.
fn list_scope(namespace: &str, all: bool) -> Result<Option<&str>, ApiError> {
    match (all, namespace.is_empty()) {
        (true, _) => Ok(None),
        (false, false) => Ok(Some(namespace)),
        (false, true) => Err(ApiError::said(
            Code::InvalidArgument,
            Reason::InvalidNamespace,
            &[("value", "")],
        )),
    }
}

/// The answer to a call whose deadline passed: a read stopped there; a write once begun goes on
/// to its end without the caller (see [`detached`]), and the answer says so.
fn deadline_passed(rpc: Rpc) -> ApiError {
    match rpc.writes() {
        true => ApiError::deadline_passed("write"),
        false => ApiError::deadline_passed("read"),
    }
}

/// The refusal of a write by a read-only server.
fn read_only_refusal(rpc: Rpc) -> ApiError {
    ApiError::said(
        Code::PermissionDenied,
        Reason::ReadOnly,
        &[("what", rpc.method()), ("by", "server")],
    )
}

/// Runs a write to its end even when the caller goes away (a deadline, a dropped connection):
/// a start cut in half would leave the cluster claimed and its spec written with no operation.
/// The service's own deadlines bound it.
async fn detached<T: Send + 'static>(
    write: impl std::future::Future<Output = Result<T, ApiError>> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::spawn(write).await.unwrap_or_else(|e| {
        tracing::error!(error = %e, "a write's task ended early");
        Err(ApiError::said(
            Code::Internal,
            Reason::Internal,
            &[("detail", &e.to_string())],
        ))
    })
}

impl Handlers {
    /// A page of summaries from the shared watch of its namespace, for a caller Kubernetes says
    /// may list and watch there; `None` (read from the API, as the caller) for a full view, a
    /// caller it says no to, or while the watch is not following.
    async fn summaries_from_watch(
        &self,
        caller: &Caller,
        query: &ichor_model::ListQuery,
    ) -> Result<Option<ichor_model::OperationPage>, ApiError> {
        if query.view != ichor_model::View::Summary {
            return Ok(None);
        }
        ichor_service::list::check(query)?;
        let Ok(store) = self.reads.store(caller, query.namespace.as_deref()).await else {
            return Ok(None);
        };
        store.settled(FIRST_LIST_WAIT).await;
        store.page(query).transpose()
    }

    /// Streams end when `stop` turns true (the server's shutdown), with UNAVAILABLE: a live
    /// stream is never done by itself, so the drain would otherwise wait its whole limit.
    pub(crate) fn end_streams_on(&mut self, stop: tokio::sync::watch::Receiver<bool>) {
        self.stop = stop;
    }

    /// The subscribers are counted in `metrics`, under `bounds`.
    pub(crate) fn count_streams_in(
        &mut self,
        metrics: super::metrics::Metrics,
        bounds: &crate::Bounds,
    ) {
        self.streams = Streams::counted(metrics, bounds);
    }

    /// Whole-list reads take a turn of `lists`.
    pub(crate) fn share_lists(&mut self, lists: Shares) {
        self.lists = lists;
    }

    /// The shared watches (for readiness).
    pub(crate) fn reads(&self) -> &SharedReads {
        &self.reads
    }

    /// `read_only`: every write is refused (`serve --read-only`); summaries and streams are
    /// read from `reads`.
    pub(crate) fn new(
        service: OperationService,
        auth: Arc<Authenticator>,
        read_only: bool,
        reads: SharedReads,
    ) -> Handlers {
        Handlers {
            reads,
            service,
            auth,
            read_only,
            lists: super::pools::Pools::new(&crate::Bounds::default(), &Default::default()).lists,
            streams: Streams::default(),
            stop: tokio::sync::watch::channel(false).1,
        }
    }

    /// WatchOperations: the caller's updates until their stream ends, each page part shared
    /// with the other subscribers of the same list (every route sends these: gRPC through
    /// [`crate::encoded`], Connect through [`super::connect_stream`]).
    pub(crate) async fn watch(
        &self,
        request: Request<proto::WatchOperationsRequest>,
    ) -> Result<Response<Stopped>, Status> {
        let deadline = request.extensions().get::<CallDeadline>().map(|d| d.0);
        let mut token = http::HeaderMap::new();
        if let Some(v) = request.metadata().get("authorization")
            && let Ok(v) = http::HeaderValue::from_bytes(v.as_bytes())
        {
            token.insert(http::header::AUTHORIZATION, v);
        }
        self.handle(Rpc::WatchOperations, request, |caller, r| async move {
            let req = wire::watch_request_from_proto(r)?;
            // Taken first: a stream over a bound costs Kubernetes nothing.
            let place = self.streams.take(&caller, &req.list)?;
            let updates = self.reads.pushes(&caller, req).await?;
            let review = Review {
                auth: self.auth.clone(),
                headers: token,
                every: self.reads.recheck(),
            };
            let watched = Watched {
                place,
                refused: review.ends(),
                stop: self.stop.clone(),
                deadline,
            };
            Ok(until_stopped(updates, watched))
        })
        .await
    }

    /// Runs `call` as the caller (authenticated from the headers by the gate before the body
    /// was read; here again only when the gate did not run), until the call's deadline; logs
    /// the outcome (never the token) and maps the error to a status.
    async fn handle<Req, T, Fut>(
        &self,
        rpc: Rpc,
        request: Request<Req>,
        call: impl FnOnce(Caller, Req) -> Fut,
    ) -> Result<Response<T>, Status>
    where
        Fut: std::future::Future<Output = Result<T, ApiError>>,
    {
        let (metadata, extensions, message) = request.into_parts();
        let rpc_name = rpc.method();
        let deadline = extensions.get::<CallDeadline>().copied();
        let caller = match extensions.get::<Caller>() {
            Some(c) => c.clone(),
            None => match self.auth.caller(metadata.as_ref()).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::info!(rpc = rpc_name, code = ?e.code, error = %e.message, "call not authenticated");
                    return Err(wire::status_from_error(&e));
                }
            },
        };
        let user = caller
            .identity
            .as_ref()
            .map(|i| i.user.clone())
            .unwrap_or_else(|| "(anonymous: the server's identity)".to_string());
        if self.read_only && rpc.writes() {
            let e = read_only_refusal(rpc);
            tracing::info!(rpc = rpc_name, "write refused: the server is read-only");
            return Err(wire::status_from_error(&e));
        }
        let answer = match deadline {
            Some(CallDeadline(at)) => tokio::time::timeout_at(at, call(caller, message))
                .await
                .unwrap_or_else(|_| Err(deadline_passed(rpc))),
            None => call(caller, message).await,
        };
        match answer {
            Ok(v) => {
                tracing::debug!(rpc = rpc_name, user, "call answered");
                Ok(Response::new(v))
            }
            Err(e) => {
                tracing::info!(rpc = rpc_name, user, code = ?e.code, reason = ?e.reason, error = %e.message, "call refused");
                Err(wire::status_from_error(&e))
            }
        }
    }
}

#[tonic::async_trait]
impl proto::operation_service_server::OperationService for Handlers {
    async fn list_operations(
        &self,
        request: Request<proto::ListOperationsRequest>,
    ) -> Result<Response<proto::ListOperationsResponse>, Status> {
        self.handle(Rpc::ListOperations, request, |caller, r| async move {
            let query = wire::list_query_from_proto(r)?;
            if let Some(page) = self.summaries_from_watch(&caller, &query).await? {
                return Ok(wire::page_to_proto(&page));
            }
            let _turn = self
                .lists
                .take(&Person::of(&caller), None)
                .await
                .map_err(|r| r.error())?;
            let page = self.service.list_page(&caller, &query).await?;
            Ok(wire::page_to_proto(&page))
        })
        .await
    }

    async fn get_operation(
        &self,
        request: Request<proto::GetOperationRequest>,
    ) -> Result<Response<proto::GetOperationResponse>, Status> {
        self.handle(Rpc::GetOperation, request, |caller, r| async move {
            let op = self
                .service
                .get_operation(&caller, &r.namespace, &r.name)
                .await?;
            let manifest = match r.manifest {
                true => {
                    self.service
                        .get_operation_manifest(&caller, &r.namespace, &r.name)
                        .await?
                }
                false => String::new(),
            };
            Ok(proto::GetOperationResponse {
                operation: Some(wire::operation_to_proto(&op)),
                manifest,
            })
        })
        .await
    }

    async fn plan_operation(
        &self,
        request: Request<proto::PlanOperationRequest>,
    ) -> Result<Response<proto::PlanOperationResponse>, Status> {
        self.handle(Rpc::PlanOperation, request, |caller, r| async move {
            let req = wire::request_from_proto(
                r.namespace,
                r.cluster,
                r.kind,
                r.target,
                r.max_unavailable,
            )?;
            let plan = self.service.plan_operation(&caller, &req).await?;
            Ok(wire::plan_to_proto(&plan))
        })
        .await
    }

    async fn create_operation(
        &self,
        request: Request<proto::CreateOperationRequest>,
    ) -> Result<Response<proto::CreateOperationResponse>, Status> {
        self.handle(Rpc::CreateOperation, request, |caller, r| async move {
            let mut req = wire::request_from_proto(
                r.namespace,
                r.cluster,
                r.kind,
                r.target,
                r.max_unavailable,
            )?;
            req.request_id = wire::non_empty(r.request_id);
            req.confirmed_plan = wire::non_empty(r.plan_fingerprint);
            let service = self.service.clone();
            let created =
                detached(async move { service.create_operation(&caller, &req).await }).await?;
            tracing::info!(
                operation = %created.operation.name,
                namespace = %created.operation.namespace,
                actor = ?created.operation.actor,
                "operation started"
            );
            Ok(wire::created_to_proto(&created))
        })
        .await
    }

    async fn set_operation_paused(
        &self,
        request: Request<proto::SetOperationPausedRequest>,
    ) -> Result<Response<proto::SetOperationPausedResponse>, Status> {
        self.handle(Rpc::SetOperationPaused, request, |caller, r| async move {
            let service = self.service.clone();
            let op = detached(async move {
                service
                    .set_operation_paused(
                        &caller,
                        &r.namespace,
                        &r.name,
                        r.paused,
                        r.confirmed.map(wire::confirmed_from_proto).as_ref(),
                    )
                    .await
            })
            .await?;
            Ok(proto::SetOperationPausedResponse {
                operation: Some(wire::operation_to_proto(&op)),
            })
        })
        .await
    }

    async fn delete_operation(
        &self,
        request: Request<proto::DeleteOperationRequest>,
    ) -> Result<Response<proto::DeleteOperationResponse>, Status> {
        self.handle(Rpc::DeleteOperation, request, |caller, r| async move {
            let service = self.service.clone();
            detached(async move {
                service
                    .delete_operation(
                        &caller,
                        &r.namespace,
                        &r.name,
                        r.confirmed.map(wire::confirmed_from_proto).as_ref(),
                    )
                    .await
            })
            .await?;
            Ok(proto::DeleteOperationResponse {})
        })
        .await
    }

    type WatchOperationsStream = WatchStream;

    async fn watch_operations(
        &self,
        request: Request<proto::WatchOperationsRequest>,
    ) -> Result<Response<WatchStream>, Status> {
        let updates = self.watch(request).await?;
        Ok(updates.map(as_messages))
    }

    async fn list_operation_events(
        &self,
        request: Request<proto::ListOperationEventsRequest>,
    ) -> Result<Response<proto::ListOperationEventsResponse>, Status> {
        self.handle(Rpc::ListOperationEvents, request, |caller, r| async move {
            let wanted = match r.all {
                true => ichor_model::EventsWanted::All,
                false => ichor_model::EventsWanted::Newest,
            };
            let events = self
                .service
                .list_operation_events(&caller, &r.namespace, &r.name, wanted)
                .await?;
            Ok(wire::events_to_proto(&events))
        })
        .await
    }

    async fn get_permissions(
        &self,
        request: Request<proto::GetPermissionsRequest>,
    ) -> Result<Response<proto::GetPermissionsResponse>, Status> {
        self.handle(Rpc::GetPermissions, request, |caller, r| async move {
            let p = self.service.permissions(&caller, &r.namespace).await?;
            Ok(wire::permissions_to_proto(&p))
        })
        .await
    }
}

#[tonic::async_trait]
impl proto::cluster_service_server::ClusterService for Handlers {
    async fn list_clusters(
        &self,
        request: Request<proto::ListClustersRequest>,
    ) -> Result<Response<proto::ListClustersResponse>, Status> {
        self.handle(Rpc::ListClusters, request, |caller, r| async move {
            let ns = list_scope(&r.namespace, r.all_namespaces)?;
            let clusters = self.service.list_clusters(&caller, ns).await?;
            Ok(proto::ListClustersResponse {
                clusters: clusters.iter().map(wire::cluster_to_proto).collect(),
            })
        })
        .await
    }

    async fn get_cluster(
        &self,
        request: Request<proto::GetClusterRequest>,
    ) -> Result<Response<proto::GetClusterResponse>, Status> {
        self.handle(Rpc::GetCluster, request, |caller, r| async move {
            let cluster = self
                .service
                .get_cluster(&caller, &r.namespace, &r.name)
                .await?;
            Ok(proto::GetClusterResponse {
                cluster: Some(wire::cluster_to_proto(&cluster)),
            })
        })
        .await
    }
}
