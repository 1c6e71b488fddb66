//! `ichor-tui serve`: OperationService and ClusterService over the Connect protocol, gRPC and
//! gRPC-Web on one port (tonic's routes behind our Connect layer), with the standard health
//! service and server reflection so grpcurl works. Every call is made as the caller, whose
//! bearer token Kubernetes verifies from the headers before any body is read (a TokenReview,
//! then impersonation; or, with [`AuthMode::Passthrough`], the caller's own token: see [`gate`]
//! and [`auth`]); the handlers run the same service the in-process dashboard runs. What a caller
//! can hold is bounded in [`listen`] and [`admission`], every pool shared by person ([`pools`],
//! [`shares`]); where it listens (IPv4, IPv6, both) is [`addr`]'s.

pub mod addr;
pub use addr::ListenAddr;
pub(crate) mod admission;
pub(crate) mod auth;
pub use auth::AuthMode;
pub(crate) mod connect;
pub(crate) mod connect_stream;
pub mod cors;
pub(crate) mod drain;
pub(crate) mod encoded;
pub mod fds;
pub(crate) mod front;
pub use front::{MAX_CALLS_IN_FLIGHT, RETRY_AFTER_SECONDS};
pub(crate) mod gate;
pub use gate::MAX_HEALTH_STREAMS;
pub(crate) mod grpc_health;
pub(crate) mod grpc_stream;
pub(crate) mod grpc_web;
pub(crate) mod gzip;
pub(crate) mod handlers;
pub(crate) mod head;
pub(crate) mod health;
pub(crate) mod impersonable;
pub use health::Health;
pub(crate) mod listen;
pub use listen::{AUTHENTICATED_WITHIN, MAX_CONNECTIONS, bind};
pub(crate) mod malformed;
pub mod memory;
pub(crate) mod metrics;
pub use metrics::Metrics;
pub mod pools;
pub use pools::{Fairness, MAX_SUBSCRIBING};
pub(crate) mod protocol;
pub(crate) mod push;
pub(crate) mod stream_bounds;
pub use stream_bounds::{
    MAX_ANONYMOUS_STREAMS, MAX_LIVE_QUERIES, MAX_LIVE_QUERIES_PER_CALLER,
    MAX_LIVE_QUERIES_PER_NAMESPACE, MAX_STREAMS, MAX_STREAMS_PER_CALLER,
};
pub(crate) mod reflection;
pub(crate) mod shares;
pub use ichor_wire as wire;
pub use shares::Queues;

use self::auth::Authenticator;
use self::handlers::Handlers;
use crate::wire::proto::cluster_service_server::ClusterServiceServer;
use crate::wire::proto::operation_service_server::OperationServiceServer;
use anyhow::Context as _;
use ichor_service::OperationService;
use ichor_service::access::KubeAccess;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tonic::codec::CompressionEncoding;

/// The actor recorded on what an anonymous caller (acting as the server) starts.
pub(crate) const SERVER_ACTOR: &str = "ichor-tui-server";

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
    /// The server's own Kubernetes client: may create tokenreviews and impersonate (or, in
    /// passthrough, read what it reads as itself).
    pub kube: kube::Client,
    /// How it acts as its callers: impersonation (the default) or their own tokens.
    pub auth: AuthMode,
    /// Calls without a token act as the server itself.
    pub allow_anonymous: bool,
    /// TLS; `None` is plaintext HTTP/2 (see [`check_transport`]).
    pub tls: Option<TlsPem>,
    /// How long a start whose create got no answer is settled: the API server's own request
    /// timeout ([`ichor_service::access::APISERVER_REQUEST_TIMEOUT`] unless it runs with
    /// another).
    pub settle_window: std::time::Duration,
    /// Where the calls are counted (served by [`metrics::serve`] when asked for).
    pub metrics: metrics::Metrics,
    /// Every start, pause, resume and delete is refused PERMISSION_DENIED (READ_ONLY).
    pub read_only: bool,
    /// How long Kubernetes' answer that a caller may list and watch holds before it is asked
    /// again (a subscription is cut off at the first no).
    pub recheck: std::time::Duration,
    /// How long a namespace's shared watch no stream holds stays open after a list last read
    /// it ([`ichor_service::shared::LINGER`]).
    pub watch_linger: std::time::Duration,
    /// What `/livez`, `/readyz` and `/healthz` answer, on this port and the metrics port.
    pub health: Health,
    /// How many streams and connections it holds at once.
    pub bounds: Bounds,
    /// The origins whose pages may call it from a browser ([`cors`]); none: no CORS.
    pub cors_origins: Vec<http::HeaderValue>,
}

/// How much serve holds at once, everyone's together (`serve --max-streams` and
/// `--max-connections`), and how much of it one person may hold (docs/limits.md says what each
/// costs and why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Streams of live updates ([`MAX_STREAMS`] unless said).
    pub streams: usize,
    /// Connections open ([`MAX_CONNECTIONS`] unless said); each is a file descriptor.
    pub connections: usize,
    /// One person's shares of every pool, and how waiters queue.
    pub fairness: Fairness,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            streams: MAX_STREAMS,
            connections: MAX_CONNECTIONS,
            fairness: Fairness::default(),
        }
    }
}

impl ServerConfig {
    /// A server acting with `kube`: tokens required, plaintext, its own metrics.
    pub fn new(kube: kube::Client) -> ServerConfig {
        ServerConfig {
            health: Health::new(kube.clone()),
            kube,
            auth: AuthMode::Impersonate,
            allow_anonymous: false,
            tls: None,
            metrics: metrics::Metrics::new(),
            read_only: false,
            settle_window: ichor_service::access::APISERVER_REQUEST_TIMEOUT,
            recheck: ichor_service::shared::RECHECK,
            watch_linger: ichor_service::shared::LINGER,
            bounds: Bounds::default(),
            cors_origins: Vec::new(),
        }
    }
}

/// The rustls acceptor for `pem`, offering HTTP/2 and HTTP/1.1 (ALPN).
fn tls_acceptor(pem: &TlsPem) -> anyhow::Result<tokio_rustls::TlsAcceptor> {
    use rustls_pki_types::pem::PemObject as _;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_slice_iter(&pem.cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("reading the TLS certificate (PEM): {e}"))?;
    let key = PrivateKeyDer::from_pem_slice(&pem.key)
        .map_err(|e| anyhow::anyhow!("reading the TLS key (PEM): {e}"))?;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("setting up TLS")?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("setting up TLS (is the key the certificate's, both PEM?)")?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// Refuses plaintext on an address other hosts can reach unless it was asked for.
pub fn check_transport(addr: &ListenAddr, tls: bool, insecure_listen: bool) -> anyhow::Result<()> {
    if !tls && !addr.is_loopback() && !insecure_listen {
        anyhow::bail!(
            "refusing to serve plaintext on {addr}: bearer tokens would cross the network unencrypted; \
             give --tls-cert and --tls-key, listen on a loopback address, or pass --insecure-listen \
             (for example behind a TLS-terminating proxy)"
        );
    }
    Ok(())
}

/// The largest request message of health and reflection: theirs are a few names.
pub(crate) const MAX_SMALL_REQUEST_BYTES: usize = 16 * 1024;

/// The handlers over the one service as `config` says, with the pools they and the gate take
/// turns of, and the authenticator.
fn handlers(
    config: &ServerConfig,
    stop: tokio::sync::watch::Receiver<bool>,
) -> (Handlers, Arc<Authenticator>, pools::Pools) {
    let mut access = KubeAccess::new(config.kube.clone(), SERVER_ACTOR)
        .on_route(ichor_service::access::ROUTE_ICHOR_UI);
    if let AuthMode::Passthrough { bare } = &config.auth {
        access = access.passing_tokens_through(bare.clone());
    }
    access.settle_window = config.settle_window;
    let service = OperationService::new(access.clone());
    let pools = pools::Pools::new(&config.bounds, &config.metrics);
    let auth = Arc::new(
        Authenticator::new(access, config.allow_anonymous, &config.auth)
            .trusting_reviews_for(config.recheck)
            .reviewing_in_turn(pools.reviews.clone()),
    );
    let reads = ichor_service::shared::SharedReads::lingering(
        service.clone(),
        config.recheck,
        config.watch_linger,
    );
    let mut handlers = Handlers::new(service, auth.clone(), config.read_only, reads);
    config.health.follow(handlers.reads().clone());
    handlers.end_streams_on(stop);
    handlers.count_streams_in(config.metrics.clone(), &config.bounds);
    handlers.share_lists(pools.lists.clone());
    (handlers, auth, pools)
}

/// Every call's way, outermost first: CORS when origins are given (preflights answered
/// there), the front (health, version header, metrics), the gate (headers, deadline, the token
/// decided, the connection counted to its person), admission (the priority level by method, the
/// body read under its person's share, then a seat of the level under its person's share:
/// [`pools`]), the Connect layer, gRPC-Web's content types checked and translated to gRPC, and
/// tonic's routes.
fn stack(
    config: &ServerConfig,
    stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<(impl listen::RequestService, grpc_health::Health)> {
    let (handlers, auth, pools) = handlers(config, stop);
    let health = grpc_health::Health::new();
    let routes = routes(&handlers, &health)?;
    let watch_handlers = handlers.clone();
    let calls = connect::ConnectCalls::new(handlers, MAX_REQUEST_BYTES)?;
    let health_streams = gate::HealthStreams::counted(config.metrics.clone());
    let connections = pools.connections.clone();
    let metrics = config.metrics.clone();
    let gated = tower::ServiceBuilder::new()
        .layer(tower::layer::layer_fn(move |inner| {
            gate::Gate::new(
                inner,
                auth.clone(),
                health_streams.clone(),
                connections.clone(),
            )
        }))
        .layer(tower::layer::layer_fn(move |inner| {
            admission::Admission::new(inner, pools.clone(), metrics.clone())
        }))
        .layer(tower::layer::layer_fn(move |inner| {
            connect::Connect::new(inner, calls.clone())
        }))
        .layer(tower::layer::layer_fn(grpc_web::GrpcWebEdges::new))
        .layer(tonic_web::GrpcWebLayer::new())
        .map_response(malformed::corrected)
        .map_err(|e: std::convert::Infallible| -> tower::BoxError { match e {} })
        .service(grpc_stream::WatchRoute::new(routes, watch_handlers));
    let front = front::Front::new(gated, config.metrics.clone(), config.health.clone());
    let served = tower::ServiceBuilder::new()
        .option_layer(cors::layer(&config.cors_origins))
        .service(front);
    Ok((served, health))
}

/// tonic's routes: health and reflection (small requests), then OperationService and
/// ClusterService (gzip both ways).
fn routes(
    handlers: &Handlers,
    health: &grpc_health::Health,
) -> anyhow::Result<tonic::service::Routes> {
    let reflection = reflection::Reflection::new()?;
    let reflection_v1 = reflection::v1::server(reflection.clone());
    let reflection_v1alpha = reflection::v1alpha::server(reflection);
    let routes = tonic::service::Routes::new(
        health
            .server()
            .max_decoding_message_size(MAX_SMALL_REQUEST_BYTES),
    )
    .add_service(reflection_v1.max_decoding_message_size(MAX_SMALL_REQUEST_BYTES))
    .add_service(reflection_v1alpha.max_decoding_message_size(MAX_SMALL_REQUEST_BYTES))
    .add_service(
        OperationServiceServer::new(handlers.clone())
            .max_decoding_message_size(MAX_REQUEST_BYTES)
            .accept_compressed(CompressionEncoding::Gzip)
            .send_compressed(CompressionEncoding::Gzip),
    )
    .add_service(
        ClusterServiceServer::new(handlers.clone())
            .max_decoding_message_size(MAX_REQUEST_BYTES)
            .accept_compressed(CompressionEncoding::Gzip)
            .send_compressed(CompressionEncoding::Gzip),
    )
    .prepare();
    Ok(routes)
}

/// The services whose health `grpc.health.v1.Health` says (besides the server's, `""`).
const SERVICES: [&str; 2] = [
    <OperationServiceServer<Handlers> as tonic::server::NamedService>::NAME,
    <ClusterServiceServer<Handlers> as tonic::server::NamedService>::NAME,
];

/// Serves on `listener` until `shutdown` completes; then stops accepting, lets the calls in
/// flight finish (for up to [`DRAIN_LIMIT`]) and returns.
pub async fn serve(
    config: ServerConfig,
    listener: impl Into<addr::Listeners>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = listener.into();
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let (service, health) = stack(&config, stop.clone())?;
    let tls = config.tls.as_ref().map(tls_acceptor).transpose()?;
    for name in SERVICES {
        health.set(
            name,
            grpc_health::pb::health_check_response::ServingStatus::Serving,
        );
    }

    let stopping = stop.clone();
    let ready = config.health.clone();
    tokio::spawn(async move {
        shutdown.await;
        tracing::info!("shutting down: no new calls; finishing the calls in flight");
        ready.stopping();
        health.stopping();
        let _ = stop_tx.send(true);
        // Keep the sender until the accept loop is done with it.
        stop_tx.closed().await;
    });
    let serving = listen::accept(
        listener,
        tls,
        service,
        (config.metrics.clone(), config.bounds.connections),
        stop,
    );
    let drain_limit = async move {
        let mut stopping = stopping;
        if stopping.wait_for(|s| *s).await.is_err() {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(DRAIN_LIMIT).await;
    };
    tokio::select! {
        () = serving => {}
        _ = drain_limit => {
            tracing::warn!("calls still in flight {} s after the shutdown began; stopping", DRAIN_LIMIT.as_secs());
        }
    }
    tracing::info!("server stopped");
    Ok(())
}

/// Completes on SIGTERM or SIGINT (Ctrl-C).
pub(crate) async fn shutdown_signal() {
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
    pub addr: ListenAddr,
    pub tls: Option<TlsPem>,
    /// Plaintext on an address other hosts can reach.
    pub insecure_listen: bool,
    pub allow_anonymous: bool,
    /// How it acts as its callers (`--auth`).
    pub auth: AuthMode,
    /// Every write refused (see [`ServerConfig::read_only`]).
    pub read_only: bool,
    /// Where Prometheus scrapes the metrics (`GET /metrics`); `None`: not served.
    pub metrics: Option<ListenAddr>,
    /// How many streams and connections it holds at once.
    pub bounds: Bounds,
    /// The origins whose pages may call it from a browser (`--cors-origin`, each as
    /// [`cors::parse_origin`] takes it).
    pub cors_origins: Vec<String>,
}

/// `ichor-tui serve`: checks the transport, listens, prints `serving on ADDR` (a line for each
/// address: `localhost` is two), and serves with
/// `kube` (the server's own identity) until SIGTERM or SIGINT.
pub async fn run(opts: ListenOptions, kube: kube::Client) -> anyhow::Result<()> {
    let addr = opts.addr;
    check_transport(&addr, opts.tls.is_some(), opts.insecure_listen)?;
    let listener = addr::bind_all(addr, opts.bounds.connections)
        .with_context(|| format!("listening on {addr}"))?;
    let local = listener
        .local_addrs()
        .context("reading the listen address")?;
    memory::trim_periodically();
    fds::make_room(opts.bounds.connections);
    let passthrough = matches!(opts.auth, AuthMode::Passthrough { .. });
    let config = ServerConfig {
        allow_anonymous: opts.allow_anonymous,
        auth: opts.auth.clone(),
        tls: opts.tls.clone(),
        read_only: opts.read_only,
        bounds: opts.bounds,
        cors_origins: opts
            .cors_origins
            .iter()
            .map(|o| cors::parse_origin(o).map_err(anyhow::Error::msg))
            .collect::<anyhow::Result<_>>()?,
        ..ServerConfig::new(kube)
    };
    let scraped = opts.metrics.map(metrics::bind).transpose()?;
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        for at in &local {
            writeln!(out, "serving on {at}").context("writing to stdout")?;
        }
        if let Some(l) = &scraped {
            let at = l.local_addrs().context("reading the metrics address")?;
            for at in at {
                writeln!(out, "metrics on http://{at}/metrics").context("writing to stdout")?;
            }
        }
        out.flush().context("writing to stdout")?;
    }
    let scraping = scraped.map(|l| {
        tokio::spawn(metrics::serve(
            config.metrics.clone(),
            config.health.clone(),
            l,
            std::future::pending::<()>(),
        ))
    });
    let local: Vec<String> = local.iter().map(SocketAddr::to_string).collect();
    tracing::info!(
        local = %local.join(" "),
        tls = opts.tls.is_some(),
        anonymous = opts.allow_anonymous,
        auth = if passthrough { "passthrough" } else { "impersonate" },
        "serving OperationService and ClusterService"
    );
    let served = serve(config, listener, shutdown_signal()).await;
    if let Some(task) = scraping {
        task.abort();
    }
    served
}
