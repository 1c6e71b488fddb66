//! `ichor-tui serve` run in-process on loopback against an embedded API, for the gRPC path.
#![allow(dead_code)]

use ichor_client::remote::{Protocol, RemoteClient, RemoteOptions};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_server::{ServerConfig, TlsPem, serve};
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long the tests' services settle a start whose create got no answer: the embedded API's
/// "request timeout" (no fault in the tests delays a request longer than 3 s).
pub const SETTLE_WINDOW: std::time::Duration = std::time::Duration::from_secs(4);

/// How a test server is set up.
#[derive(Clone, Default)]
pub struct Options {
    pub allow_anonymous: bool,
    pub tls: Option<TlsPem>,
    /// How long the server trusts Kubernetes' answer that a caller may watch (default a minute).
    pub recheck: Option<std::time::Duration>,
    /// How long a namespace watch no one uses stays open (default 30 s).
    pub linger: Option<std::time::Duration>,
    /// How many streams and connections it holds (default: serve's).
    pub bounds: Option<ichor_server::Bounds>,
    /// The origins whose pages may call it from a browser (default: none).
    pub cors_origins: Vec<http::HeaderValue>,
    /// `--auth passthrough`: callers' own tokens, through the API's bare client (the API
    /// should grant serve the passthrough role: `EmbeddedApi::deploy_passthrough`).
    pub passthrough: bool,
}

/// A server running on a task; stopped gracefully by [`Running::stop`], aborted when dropped.
/// When it goes, nothing was refused to its own identity: the API grants that identity exactly
/// `deploy/base/rbac.yaml`'s ClusterRole, so every test that runs a server checks the role
/// suffices.
pub struct Running {
    pub addr: SocketAddr,
    /// The server's metrics, as `GET /metrics` would answer them.
    pub metrics: ichor_server::Metrics,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<anyhow::Result<()>>>,
    api: EmbeddedApi,
}

impl Running {
    /// `http://ADDR` (or `https://localhost:PORT` with TLS: the test certificate names localhost).
    pub fn url(&self, tls: bool) -> String {
        if tls {
            format!("https://localhost:{}", self.addr.port())
        } else {
            format!("http://{}", self.addr)
        }
    }

    /// Sends the shutdown signal and waits until the server has stopped.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        match self.task.take() {
            Some(t) => t.await?,
            None => Ok(()),
        }
    }

    /// Sends the shutdown signal without waiting.
    pub fn begin_stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }

    /// Waits for a server whose stop has begun.
    pub async fn stopped(mut self) -> anyhow::Result<()> {
        match self.task.take() {
            Some(t) => t.await?,
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
        if !std::thread::panicking() {
            let denied = self.api.deployed_role_usage().denied;
            assert!(
                denied.is_empty(),
                "refused to serve's identity (deploy/base/rbac.yaml's ClusterRole): {denied:?}"
            );
        }
    }
}

/// Serves `api` with the server's identity on `listener`.
pub fn start_on(api: &EmbeddedApi, listener: TcpListener, opts: Options) -> Running {
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let auth = match opts.passthrough {
        true => ichor_server::AuthMode::Passthrough {
            bare: api.bare_client(),
        },
        false => ichor_server::AuthMode::Impersonate,
    };
    let config = ServerConfig {
        allow_anonymous: opts.allow_anonymous,
        auth,
        tls: opts.tls,
        settle_window: SETTLE_WINDOW,
        recheck: opts.recheck.unwrap_or(ichor_service::shared::RECHECK),
        watch_linger: opts.linger.unwrap_or(ichor_service::shared::LINGER),
        bounds: opts.bounds.unwrap_or_default(),
        cors_origins: opts.cors_origins,
        ..ServerConfig::new(api.client(users::SERVER_TOKEN))
    };
    let metrics = config.metrics.clone();
    let task = tokio::spawn(serve(config, listener, async move {
        let _ = rx.await;
    }));
    Running {
        addr,
        metrics,
        stop: Some(tx),
        task: Some(task),
        api: api.clone(),
    }
}

/// Serves `api` on 127.0.0.1 and a free port.
pub async fn start(api: &EmbeddedApi, opts: Options) -> Running {
    let connections = opts.bounds.unwrap_or_default().connections;
    let listener = ichor_server::bind(([127, 0, 0, 1], 0).into(), connections).unwrap();
    start_on(api, listener, opts)
}

/// Serves `api` as [`start`] does, taking calls without a token as its own identity (which
/// the API then lets do what those callers do).
pub async fn start_anonymous(api: &EmbeddedApi) -> Running {
    api.grant_anonymous_callers_to_the_server();
    let opts = Options {
        allow_anonymous: true,
        ..Options::default()
    };
    start(api, opts).await
}

/// A client of `url` sending `token`.
pub fn client(url: &str, token: Option<&str>) -> RemoteClient {
    client_over(url, token, Protocol::Grpc)
}

/// A client of `url` sending `token`, speaking `protocol`.
pub fn client_over(url: &str, token: Option<&str>, protocol: Protocol) -> RemoteClient {
    let mut o = RemoteOptions::new(url).with_protocol(protocol);
    o.token = token.map(str::to_string);
    RemoteClient::new(o).unwrap()
}
