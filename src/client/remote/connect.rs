//! The Connect protocol's unary calls (connectrpc.com/docs/protocol): an HTTP POST of the binary
//! message (`application/proto`) to `/package.Service/Method`, answered 200 with the binary
//! reply or with an error as JSON (`{"code","message","details"}`). Over HTTP/1.1 for `http://`
//! (what an HTTP/1.1-only proxy passes) and over HTTP/2 or HTTP/1.1 as TLS's ALPN negotiates for
//! `https://`.

use super::Reply;
use super::options::{MAX_RESPONSE_BYTES, Target};
use anyhow::Context as _;
use bytes::Bytes;
use http::HeaderValue;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use ichor_model::{ApiError, Code};
use ichor_wire::error_from_connect;
use ichor_wire::version;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::sync::Arc;
use std::time::Duration;

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// The HTTP client: straight to the server, or through a tunnel.
#[derive(Clone)]
enum Http {
    Direct(Client<Connector, Full<Bytes>>),
    Tunnel(Client<crate::tunnel::TunnelConnector, Full<Bytes>>),
}

impl Http {
    async fn request(
        &self,
        req: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<hyper::body::Incoming>, hyper_util::client::legacy::Error> {
        match self {
            Http::Direct(c) => c.request(req).await,
            Http::Tunnel(c) => c.request(req).await,
        }
    }
}

#[derive(Clone)]
pub(super) struct ConnectTransport {
    client: Http,
    /// `scheme://authority`, where the calls' paths are appended.
    base: String,
    token: Option<HeaderValue>,
}

/// The TLS configuration: the system roots and the CA file's certificates; h2 and http/1.1
/// offered by ALPN.
fn tls_config(ca_pem: Option<&[u8]>) -> anyhow::Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for cert in native.certs {
        // A system certificate rustls cannot use is skipped, as tonic does.
        let _ = roots.add(cert);
    }
    if let Some(pem) = ca_pem {
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.context("reading the CA file (PEM)")?;
            roots
                .add(cert)
                .context("adding the CA file's certificate")?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("setting up TLS")?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// `scheme://authority`.
fn base_of(target: &Target) -> String {
    let scheme = if target.https { "https" } else { "http" };
    let authority = target
        .uri
        .authority()
        .map(|a| a.as_str().to_string())
        .unwrap_or_default();
    format!("{scheme}://{authority}")
}

impl ConnectTransport {
    pub(super) fn new(target: &Target) -> anyhow::Result<ConnectTransport> {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(Duration::from_secs(5)));
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls_config(target.ca_pem.as_deref())?)
            .https_or_http()
            .enable_http1();
        // HTTP/2 only where TLS negotiates it: plain HTTP stays HTTP/1.1 (no h2c), which is what
        // proxies pass.
        let connector = if target.https {
            builder.enable_http2().wrap_connector(http)
        } else {
            builder.wrap_connector(http)
        };
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .build(connector);
        Ok(ConnectTransport {
            client: Http::Direct(client),
            base: base_of(target),
            token: target.token.clone(),
        })
    }

    /// Plain HTTP/1.1 through a tunnel (a port-forward to the server's pod).
    pub(super) fn through(
        target: &Target,
        tunnel: crate::tunnel::TunnelConnector,
    ) -> ConnectTransport {
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .build(tunnel);
        ConnectTransport {
            client: Http::Tunnel(client),
            base: base_of(target),
            token: target.token.clone(),
        }
    }

    /// A server-streaming call: the request in one envelope, the answer's messages as they
    /// come.
    pub(super) async fn server_stream<Req, Resp>(
        &self,
        path: &'static str,
        req: Req,
    ) -> Result<super::stream::Messages<Resp>, ApiError>
    where
        Req: prost::Message + Send + Sync + 'static,
        Resp: prost::Message + Default + Send + 'static,
    {
        let message = req.encode_to_vec();
        let mut body = Vec::with_capacity(5 + message.len());
        body.push(0);
        body.extend_from_slice(
            &u32::try_from(message.len())
                .unwrap_or(u32::MAX)
                .to_be_bytes(),
        );
        body.extend_from_slice(&message);
        let mut request = http::Request::post(format!("{}{path}", self.base))
            .header(http::header::CONTENT_TYPE, "application/connect+proto")
            .header("connect-protocol-version", "1")
            .header(
                http::header::USER_AGENT,
                concat!("ichor-tui/", env!("CARGO_PKG_VERSION")),
            )
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| ApiError::new(Code::Internal, format!("building the request: {e}")))?;
        if let Some(t) = &self.token {
            request
                .headers_mut()
                .insert(http::header::AUTHORIZATION, t.clone());
        }
        let response = self.client.request(request).await.map_err(|e| {
            ApiError::new(
                Code::Unavailable,
                ichor_model::error_text::one_line(&anyhow::Error::new(e)),
            )
        })?;
        let status = response.status();
        if !status.is_success() {
            let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            return Err(error_from_connect(status.as_u16(), &body));
        }
        Ok(super::stream::from_connect(response.into_body()))
    }

    pub(super) async fn unary<Req, Resp>(
        &self,
        path: &'static str,
        req: Req,
        deadline: Duration,
    ) -> Result<Reply<Resp>, ApiError>
    where
        Req: prost::Message + Send + Sync + 'static,
        Resp: prost::Message + Default + Send + Sync + 'static,
    {
        let mut request = http::Request::post(format!("{}{path}", self.base))
            .header(http::header::CONTENT_TYPE, "application/proto")
            .header("connect-protocol-version", "1")
            // The deadline travels, so the server stops working on it too.
            .header("connect-timeout-ms", deadline.as_millis().to_string())
            .header(
                http::header::USER_AGENT,
                concat!("ichor-tui/", env!("CARGO_PKG_VERSION")),
            )
            .body(Full::new(Bytes::from(req.encode_to_vec())))
            .map_err(|e| ApiError::new(Code::Internal, format!("building the request: {e}")))?;
        if let Some(t) = &self.token {
            request
                .headers_mut()
                .insert(http::header::AUTHORIZATION, t.clone());
        }
        let response = self.client.request(request).await.map_err(|e| {
            let connecting = e.is_connect();
            let message = ichor_model::error_text::one_line(&anyhow::Error::new(e));
            if connecting {
                super::not_sent(message)
            } else {
                ApiError::new(Code::Unavailable, message)
            }
        })?;
        let status = response.status();
        let server_version = response
            .headers()
            .get(version::HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let caller = super::said_caller(response.headers());
        let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|e| {
                ApiError::new(
                    Code::Unavailable,
                    format!(
                        "reading the answer: {}",
                        ichor_model::inert::truncate(&e.to_string(), 200)
                    ),
                )
            })?
            .to_bytes();
        if !status.is_success() {
            return Err(error_from_connect(status.as_u16(), &body));
        }
        let message = Resp::decode(body).map_err(|e| {
            ApiError::new(
                Code::Internal,
                format!("the server's answer could not be read: {e}"),
            )
        })?;
        Ok(Reply {
            message,
            server_version,
            caller,
        })
    }
}
