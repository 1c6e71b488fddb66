//! The remote client: OperationService and ClusterService over gRPC (tonic). `https://` uses
//! rustls with the system roots plus an optional CA file; `http://` is HTTP/2 without TLS
//! (h2c). The channel connects lazily and reconnects by itself, so a server that is down at
//! start, or goes away and comes back, is reached again without a restart.

use super::{Backend, OperationClient, read_only_refusal};
use crate::model::{
    ApiError, Cluster, Code, Confirmed, Created, Operation, OperationRequest, Permissions, Plan,
    Reason,
};
use crate::wire::proto::cluster_service_client::ClusterServiceClient;
use crate::wire::proto::operation_service_client::OperationServiceClient;
use crate::wire::{self, error_from_status, proto};
use anyhow::Context as _;
use std::future::Future;
use std::path::Path;
use std::time::Duration;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

/// The default deadline of one call.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(15);

/// The environment variable that may hold the bearer token.
pub const TOKEN_ENV: &str = "ICHOR_TOKEN";

/// How to reach a server.
#[derive(Clone)]
pub struct GrpcOptions {
    /// `https://host:port` or `http://host:port`.
    pub url: String,
    /// The bearer token sent with every call (never logged).
    pub token: Option<String>,
    /// PEM certificates trusted in addition to the system roots (https only).
    pub ca_pem: Option<Vec<u8>>,
    /// The deadline of every call.
    pub deadline: Duration,
    /// Writes are refused locally, without a call.
    pub read_only: bool,
}

impl std::fmt::Debug for GrpcOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcOptions")
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("ca_pem", &self.ca_pem.as_ref().map(Vec::len))
            .field("deadline", &self.deadline)
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl GrpcOptions {
    /// Options with the default deadline, no token, no extra CA, writable.
    pub fn new(url: impl Into<String>) -> GrpcOptions {
        GrpcOptions {
            url: url.into(),
            token: None,
            ca_pem: None,
            deadline: DEFAULT_DEADLINE,
            read_only: false,
        }
    }
}

/// The bearer token: the first line of `token_file` when given, else `$ICHOR_TOKEN` (`env`),
/// else none. An empty file or variable is an error, not an anonymous call.
pub fn load_token(
    token_file: Option<&Path>,
    env: Option<String>,
) -> anyhow::Result<Option<String>> {
    let (token, from) = match (token_file, env) {
        (Some(path), _) => (
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the token file {}", path.display()))?,
            format!("the token file {}", path.display()),
        ),
        (None, Some(v)) => (v, format!("${TOKEN_ENV}")),
        (None, None) => return Ok(None),
    };
    let token = token.trim().to_string();
    if token.is_empty() {
        anyhow::bail!("{from} is empty");
    }
    Ok(Some(token))
}

/// Adds `authorization: Bearer …` to every call.
#[derive(Clone)]
pub struct BearerToken(Option<AsciiMetadataValue>);

impl tonic::service::Interceptor for BearerToken {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

type Transport = InterceptedService<Channel, BearerToken>;

/// The largest response the client accepts. tonic's default (4 MiB) is about 7,500 operations
/// in one ListOperations answer; 64 MiB is over 100,000.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// OperationClient over gRPC.
#[derive(Clone)]
pub struct GrpcClient {
    operations: OperationServiceClient<Transport>,
    clusters: ClusterServiceClient<Transport>,
    url: String,
    deadline: Duration,
    read_only: bool,
    /// Whether the calls carry a bearer token (said when the server refuses them).
    has_token: bool,
}

impl std::fmt::Debug for GrpcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcClient")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl GrpcClient {
    /// A client for the server at `opts.url`. Connects on the first call, not here.
    pub fn new(opts: GrpcOptions) -> anyhow::Result<GrpcClient> {
        let uri: http::Uri = opts.url.parse().with_context(|| {
            format!(
                "the server URL {} is not a URL",
                crate::errors::quoted(&opts.url)
            )
        })?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => anyhow::bail!(
                "the server URL {} must start with https:// or http://",
                crate::errors::quoted(&opts.url)
            ),
        };
        if uri.host().is_none() {
            anyhow::bail!(
                "the server URL {} names no host",
                crate::errors::quoted(&opts.url)
            );
        }
        let mut endpoint = Endpoint::from(uri)
            .connect_timeout(Duration::from_secs(5).min(opts.deadline))
            .http2_keep_alive_interval(Duration::from_secs(20))
            .keep_alive_timeout(Duration::from_secs(10))
            .keep_alive_while_idle(true);
        if https {
            let mut tls = ClientTlsConfig::new().with_native_roots();
            if let Some(pem) = &opts.ca_pem {
                tls = tls.ca_certificate(Certificate::from_pem(pem));
            }
            endpoint = endpoint
                .tls_config(tls)
                .context("setting up TLS for the server connection")?;
        } else if opts.ca_pem.is_some() {
            anyhow::bail!(
                "--ca-file is given but the server URL {} is not https",
                crate::errors::quoted(&opts.url)
            );
        }
        let has_token = opts.token.is_some();
        let token = match &opts.token {
            Some(t) => {
                let mut v: AsciiMetadataValue = MetadataValue::try_from(format!("Bearer {t}"))
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "the bearer token contains characters a header cannot carry"
                        )
                    })?;
                v.set_sensitive(true);
                Some(v)
            }
            None => None,
        };
        let channel = endpoint.connect_lazy();
        let intercepted = InterceptedService::new(channel, BearerToken(token));
        Ok(GrpcClient {
            operations: OperationServiceClient::new(intercepted.clone())
                .max_decoding_message_size(MAX_RESPONSE_BYTES),
            clusters: ClusterServiceClient::new(intercepted)
                .max_decoding_message_size(MAX_RESPONSE_BYTES),
            url: opts.url,
            deadline: opts.deadline,
            read_only: opts.read_only,
            has_token,
        })
    }

    /// A request carrying the deadline (`grpc-timeout`), so the server stops working on it too.
    fn request<T>(&self, msg: T) -> tonic::Request<T> {
        let mut req = tonic::Request::new(msg);
        req.set_timeout(self.deadline);
        req
    }

    /// Runs one call under the deadline and maps its status. The deadline is enforced here as
    /// well as by tonic, so a call waiting for a connection cannot outlast it either.
    async fn call<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, ApiError> {
        match tokio::time::timeout(self.deadline, fut).await {
            Ok(Ok(resp)) => Ok(resp.into_inner()),
            Ok(Err(status)) => Err(self.map_status(what, &status)),
            Err(_) => Err(self.deadline_exceeded(what)),
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

    fn map_status(&self, what: &str, status: &tonic::Status) -> ApiError {
        // tonic reports its own deadline as a cancellation with this message.
        if status.code() == tonic::Code::Cancelled
            && status.message() == tonic::TimeoutExpired(()).to_string()
        {
            return self.deadline_exceeded(what);
        }
        let mut e = error_from_status(status);
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

    fn writable(&self, what: &str) -> Result<(), ApiError> {
        if self.read_only {
            return Err(read_only_refusal(what));
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

#[async_trait::async_trait]
impl OperationClient for GrpcClient {
    fn backend(&self) -> Backend {
        Backend::Remote {
            url: self.url.clone(),
        }
    }

    async fn list_operations(&self, namespace: Option<&str>) -> Result<Vec<Operation>, ApiError> {
        let (namespace, all_namespaces) = list_scope(namespace);
        let req = self.request(proto::ListOperationsRequest {
            namespace,
            all_namespaces,
        });
        let mut c = self.operations.clone();
        let resp = self
            .call("listing operations", c.list_operations(req))
            .await?;
        Ok(resp
            .operations
            .into_iter()
            .map(wire::operation_from_proto)
            .collect())
    }

    async fn get_operation(&self, namespace: &str, name: &str) -> Result<Operation, ApiError> {
        let req = self.request(proto::GetOperationRequest {
            namespace: namespace.to_string(),
            name: name.to_string(),
        });
        let mut c = self.operations.clone();
        let resp = self
            .call("reading the operation", c.get_operation(req))
            .await?;
        wire::required_operation(resp.operation)
    }

    async fn plan_operation(&self, req: &OperationRequest) -> Result<Plan, ApiError> {
        let req = self.request(wire::plan_request_to_proto(req));
        let mut c = self.operations.clone();
        let resp = self
            .call("planning the operation", c.plan_operation(req))
            .await?;
        wire::plan_from_proto(resp)
    }

    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError> {
        self.writable("starting an operation")?;
        let req = self.request(wire::create_request_to_proto(req));
        let mut c = self.operations.clone();
        let resp = self
            .call("starting the operation", c.create_operation(req))
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
        let req = self.request(proto::SetOperationPausedRequest {
            namespace: namespace.to_string(),
            name: name.to_string(),
            paused,
            confirmed: confirmed.map(wire::confirmed_to_proto),
        });
        let mut c = self.operations.clone();
        let resp = self.call(what, c.set_operation_paused(req)).await?;
        wire::required_operation(resp.operation)
    }

    async fn delete_operation(
        &self,
        namespace: &str,
        name: &str,
        confirmed: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        self.writable("deleting an operation")?;
        let req = self.request(proto::DeleteOperationRequest {
            namespace: namespace.to_string(),
            name: name.to_string(),
            confirmed: confirmed.map(wire::confirmed_to_proto),
        });
        let mut c = self.operations.clone();
        self.call("deleting the operation", c.delete_operation(req))
            .await?;
        Ok(())
    }

    async fn permissions(&self, namespace: &str) -> Result<Permissions, ApiError> {
        if self.read_only {
            return Ok(Permissions::default());
        }
        let req = self.request(proto::GetPermissionsRequest {
            namespace: namespace.to_string(),
        });
        let mut c = self.operations.clone();
        let resp = self
            .call("asking what you may do", c.get_permissions(req))
            .await?;
        Ok(wire::permissions_from_proto(&resp))
    }

    async fn list_clusters(&self, namespace: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        let (namespace, all_namespaces) = list_scope(namespace);
        let req = self.request(proto::ListClustersRequest {
            namespace,
            all_namespaces,
        });
        let mut c = self.clusters.clone();
        let resp = self.call("listing clusters", c.list_clusters(req)).await?;
        Ok(resp
            .clusters
            .into_iter()
            .map(wire::cluster_from_proto)
            .collect())
    }

    async fn get_cluster(&self, namespace: &str, name: &str) -> Result<Cluster, ApiError> {
        let req = self.request(proto::GetClusterRequest {
            namespace: namespace.to_string(),
            name: name.to_string(),
        });
        let mut c = self.clusters.clone();
        let resp = self.call("reading the cluster", c.get_cluster(req)).await?;
        wire::required_cluster(resp.cluster)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_comes_from_the_file_before_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "from-file\n").unwrap();
        assert_eq!(
            load_token(Some(&file), Some("from-env".into())).unwrap(),
            Some("from-file".into())
        );
        assert_eq!(
            load_token(None, Some(" from-env ".into())).unwrap(),
            Some("from-env".into())
        );
        assert_eq!(load_token(None, None).unwrap(), None);
        std::fs::write(&file, "\n").unwrap();
        let e = load_token(Some(&file), None).unwrap_err();
        assert!(format!("{e:#}").contains("is empty"), "{e:#}");
        let e = load_token(Some(&dir.path().join("missing")), None).unwrap_err();
        assert!(format!("{e:#}").contains("reading the token file"), "{e:#}");
    }

    #[tokio::test]
    async fn bad_urls_are_refused_at_start() {
        for url in ["ftp://x:1", "localhost:50051", "not a url"] {
            assert!(GrpcClient::new(GrpcOptions::new(url)).is_err(), "{url}");
        }
        let mut o = GrpcOptions::new("http://127.0.0.1:1");
        o.ca_pem = Some(b"x".to_vec());
        assert!(GrpcClient::new(o).is_err());
    }

    #[tokio::test]
    async fn tokens_never_show_in_debug_output() {
        let mut o = GrpcOptions::new("http://127.0.0.1:1");
        o.token = Some("s3cret".into());
        assert!(!format!("{o:?}").contains("s3cret"));
        let c = GrpcClient::new(o).unwrap();
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    #[tokio::test]
    async fn read_only_refuses_writes_without_a_call() {
        // Nothing listens on port 1: a call would fail Unavailable, not ReadOnly.
        let mut o = GrpcOptions::new("http://127.0.0.1:1");
        o.read_only = true;
        let c = GrpcClient::new(o).unwrap();
        let e = c.delete_operation("default", "x", None).await.unwrap_err();
        assert_eq!(e.reason, Some(Reason::ReadOnly));
        let e = c.list_operations(None).await.unwrap_err();
        assert_eq!(e.code, Code::Unavailable);
    }
}
