//! `ichor-tui serve`: OperationService and ClusterService over gRPC (tonic), with the standard
//! health service and server reflection so grpcurl works. Every call is made as the caller,
//! whose bearer token a Kubernetes TokenReview verifies (see [`auth`]); the handlers run the
//! same service the in-process dashboard runs.

pub mod auth;
pub mod connect;
pub mod handlers;
pub mod wire;

use self::auth::Authenticator;
use self::handlers::Handlers;
use crate::wire::proto;
use crate::wire::proto::cluster_service_server::ClusterServiceServer;
use crate::wire::proto::operation_service_server::OperationServiceServer;
use anyhow::Context as _;
use ichor_service::OperationService;
use ichor_service::access::KubeAccess;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, ServerTlsConfig};

/// The actor recorded on what an anonymous caller (acting as the server) starts.
pub const SERVER_ACTOR: &str = "ichor-tui-server";

/// How long a shutdown waits for calls in flight before it stops anyway.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// The largest request message the services decode. Our requests are a few names and a
/// version (well under 1 KiB); tonic's default is 4 MiB. A larger one is refused by tonic with
/// OUT_OF_RANGE ("decoded message length too large") before the handler runs, and the
/// connection stays usable.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The largest header list (all metadata of one call, HPACK-decoded) the server accepts: a
/// bearer token is a few KiB at most. A larger one is refused by HTTP/2 itself: a 431 answer
/// and a reset of that stream, which a gRPC client reports as UNKNOWN ("mapped from HTTP
/// status code 431"); the connection and the other calls go on. hyper's default is the same
/// today; it is set here so that no dependency update changes it unseen.
pub const MAX_HEADER_LIST_BYTES: u32 = 16 * 1024;

/// A certificate chain and its private key, PEM.
#[derive(Clone)]
pub struct TlsPem {
    pub cert: Vec<u8>,
    pub key: Vec<u8>,
}

impl TlsPem {
    /// Reads the two files.
    pub fn read(cert: &std::path::Path, key: &std::path::Path) -> anyhow::Result<TlsPem> {
        Ok(TlsPem {
            cert: std::fs::read(cert)
                .with_context(|| format!("reading the TLS certificate {}", cert.display()))?,
            key: std::fs::read(key)
                .with_context(|| format!("reading the TLS key {}", key.display()))?,
        })
    }
}

/// What a server needs.
pub struct ServerConfig {
    /// The server's own Kubernetes client: may create tokenreviews and impersonate.
    pub kube: kube::Client,
    /// Calls without a token act as the server itself.
    pub allow_anonymous: bool,
    /// TLS; `None` is plaintext HTTP/2 (see [`check_transport`]).
    pub tls: Option<TlsPem>,
    /// How long a start whose create got no answer is settled: the API server's own request
    /// timeout (kube-apiserver's default, 60 s, unless it runs with another).
    pub settle_window: std::time::Duration,
}

/// kube-apiserver's default request timeout (`--request-timeout`).
pub const APISERVER_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Refuses plaintext on an address other hosts can reach unless it was asked for.
pub fn check_transport(addr: &SocketAddr, tls: bool, insecure_listen: bool) -> anyhow::Result<()> {
    if !tls && !addr.ip().is_loopback() && !insecure_listen {
        anyhow::bail!(
            "refusing to serve plaintext on {addr}: bearer tokens would cross the network unencrypted; \
             give --tls-cert and --tls-key, listen on a loopback address, or pass --insecure-listen \
             (for example behind a TLS-terminating proxy)"
        );
    }
    Ok(())
}

/// Server reflection, in both the versions grpcurl and grpcio's tools ask for.
fn reflection() -> anyhow::Result<(
    tonic_reflection::server::v1::ServerReflectionServer<
        impl tonic_reflection::server::v1::ServerReflection,
    >,
    tonic_reflection::server::v1alpha::ServerReflectionServer<
        impl tonic_reflection::server::v1alpha::ServerReflection,
    >,
)> {
    let builder = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let v1 = builder()
        .build_v1()
        .context("building the reflection service")?;
    let v1alpha = builder()
        .build_v1alpha()
        .context("building the reflection service")?;
    Ok((v1, v1alpha))
}

/// Serves on `listener` until `shutdown` completes; then stops accepting, lets the calls in
/// flight finish (for up to [`DRAIN_LIMIT`]) and returns.
pub async fn serve(
    config: ServerConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let mut access = KubeAccess::new(config.kube, SERVER_ACTOR);
    access.settle_window = config.settle_window;
    let service = OperationService::new(access.clone());
    let auth = Arc::new(Authenticator::new(access, config.allow_anonymous));
    let handlers = Handlers::new(service, auth);

    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_serving::<OperationServiceServer<Handlers>>()
        .await;
    health.set_serving::<ClusterServiceServer<Handlers>>().await;
    let (reflection_v1, reflection_v1alpha) = reflection()?;

    let connect = connect::ConnectLayer::new(handlers.clone(), MAX_REQUEST_BYTES)?;
    // HTTP/1.1 too (Connect and gRPC-Web travel over it), beside HTTP/2.
    let mut builder = tonic::transport::Server::builder()
        .http2_max_header_list_size(MAX_HEADER_LIST_BYTES)
        .accept_http1(true);
    if let Some(tls) = &config.tls {
        builder = builder
            .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(&tls.cert, &tls.key)))
            .context("setting up TLS (is the key the certificate's, both PEM?)")?;
    }
    // Connect first (it answers what is neither gRPC nor gRPC-Web), then gRPC-Web translated
    // to gRPC, then tonic's routes.
    let router = builder
        .layer(connect)
        .layer(tonic_web::GrpcWebLayer::new())
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(
            OperationServiceServer::new(handlers.clone())
                .max_decoding_message_size(MAX_REQUEST_BYTES),
        )
        .add_service(
            ClusterServiceServer::new(handlers).max_decoding_message_size(MAX_REQUEST_BYTES),
        );

    let (stopping_tx, mut stopping) = tokio::sync::watch::channel(false);
    let signal = async move {
        shutdown.await;
        tracing::info!("shutting down: no new calls; finishing the calls in flight");
        health
            .set_not_serving::<OperationServiceServer<Handlers>>()
            .await;
        health
            .set_not_serving::<ClusterServiceServer<Handlers>>()
            .await;
        let _ = stopping_tx.send(true);
    };
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let serving = router.serve_with_incoming_shutdown(incoming, signal);
    let drain_limit = async move {
        if stopping.wait_for(|s| *s).await.is_err() {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(DRAIN_LIMIT).await;
    };
    tokio::select! {
        r = serving => r.context("serving gRPC")?,
        _ = drain_limit => {
            tracing::warn!("calls still in flight {} s after the shutdown began; stopping", DRAIN_LIMIT.as_secs());
        }
    }
    tracing::info!("server stopped");
    Ok(())
}

/// Completes on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; Ctrl-C still stops the server");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// How `serve` listens.
#[derive(Clone)]
pub struct ListenOptions {
    /// Port 0 picks a free port.
    pub addr: SocketAddr,
    pub tls: Option<TlsPem>,
    /// Plaintext on an address other hosts can reach.
    pub insecure_listen: bool,
    pub allow_anonymous: bool,
}

/// `ichor-tui serve`: checks the transport, listens, prints `serving on ADDR`, and serves with
/// `kube` (the server's own identity) until SIGTERM or SIGINT.
pub async fn run(opts: ListenOptions, kube: kube::Client) -> anyhow::Result<()> {
    let addr = opts.addr;
    check_transport(&addr, opts.tls.is_some(), opts.insecure_listen)?;
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on {addr}"))?;
    let local = listener
        .local_addr()
        .context("reading the listen address")?;
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        writeln!(out, "serving on {local}").context("writing to stdout")?;
        out.flush().context("writing to stdout")?;
    }
    tracing::info!(
        %local,
        tls = opts.tls.is_some(),
        anonymous = opts.allow_anonymous,
        "serving OperationService and ClusterService"
    );
    serve(
        ServerConfig {
            kube,
            allow_anonymous: opts.allow_anonymous,
            tls: opts.tls,
            settle_window: APISERVER_REQUEST_TIMEOUT,
        },
        listener,
        shutdown_signal(),
    )
    .await
}
