//! gRPC over HTTP/2 (h2c for `http://`), through tonic's generic unary client. The channel
//! connects lazily and reconnects by itself.

use super::Reply;
use super::options::{MAX_RESPONSE_BYTES, Target};
use anyhow::Context as _;
use http::uri::PathAndQuery;
use ichor_model::{ApiError, Code};
use ichor_wire::error_from_status;
use ichor_wire::version;
use std::time::Duration;
use tonic::metadata::AsciiMetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

/// Adds `authorization: Bearer …` to every call.
#[derive(Clone)]
pub(crate) struct BearerToken(Option<AsciiMetadataValue>);

impl tonic::service::Interceptor for BearerToken {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

type Inner = InterceptedService<Channel, BearerToken>;

/// The target's token as gRPC metadata, marked sensitive.
fn metadata_token(target: &Target) -> anyhow::Result<Option<AsciiMetadataValue>> {
    match &target.token {
        Some(v) => {
            let mut m = AsciiMetadataValue::try_from(v.as_bytes()).map_err(|_| {
                anyhow::anyhow!("the bearer token contains characters a header cannot carry")
            })?;
            m.set_sensitive(true);
            Ok(Some(m))
        }
        None => Ok(None),
    }
}

#[derive(Clone)]
pub(super) struct GrpcTransport {
    grpc: tonic::client::Grpc<Inner>,
}

impl GrpcTransport {
    pub(super) fn new(target: &Target, deadline: Duration) -> anyhow::Result<GrpcTransport> {
        let mut endpoint = Endpoint::from(target.uri.clone())
            .connect_timeout(Duration::from_secs(5).min(deadline))
            .http2_keep_alive_interval(Duration::from_secs(20))
            .keep_alive_timeout(Duration::from_secs(10))
            .keep_alive_while_idle(true);
        if target.https {
            let mut tls = ClientTlsConfig::new().with_native_roots();
            if let Some(pem) = &target.ca_pem {
                tls = tls.ca_certificate(Certificate::from_pem(pem));
            }
            endpoint = endpoint
                .tls_config(tls)
                .context("setting up TLS for the server connection")?;
        }
        let token = metadata_token(target)?;
        Ok(GrpcTransport::over(endpoint.connect_lazy(), token))
    }

    fn over(channel: Channel, token: Option<AsciiMetadataValue>) -> GrpcTransport {
        let grpc = tonic::client::Grpc::new(InterceptedService::new(channel, BearerToken(token)))
            .max_decoding_message_size(MAX_RESPONSE_BYTES);
        GrpcTransport { grpc }
    }

    /// h2c through a tunnel (a port-forward to the server's pod).
    pub(super) fn through(
        target: &Target,
        tunnel: crate::tunnel::TunnelConnector,
    ) -> anyhow::Result<GrpcTransport> {
        let endpoint = Endpoint::from(target.uri.clone())
            .http2_keep_alive_interval(Duration::from_secs(20))
            .keep_alive_timeout(Duration::from_secs(10));
        Ok(GrpcTransport::over(
            endpoint.connect_with_connector_lazy(tunnel),
            metadata_token(target)?,
        ))
    }

    /// A server-streaming call.
    pub(super) async fn server_stream<Req, Resp>(
        &self,
        path: &'static str,
        req: Req,
    ) -> Result<super::stream::Messages<Resp>, ApiError>
    where
        Req: prost::Message + Send + Sync + 'static,
        Resp: prost::Message + Default + Send + Sync + 'static,
    {
        let mut grpc = self.grpc.clone();
        grpc.ready()
            .await
            .map_err(|e| super::not_sent(format!("connecting: {e}")))?;
        let codec = tonic_prost::ProstCodec::<Req, Resp>::default();
        let resp = grpc
            .server_streaming(
                tonic::Request::new(req),
                PathAndQuery::from_static(path),
                codec,
            )
            .await
            .map_err(|s| error_from_status(&s))?;
        Ok(super::stream::from_grpc(resp.into_inner()))
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
        let mut grpc = self.grpc.clone();
        grpc.ready()
            .await
            .map_err(|e| super::not_sent(format!("connecting: {e}")))?;
        // The deadline travels as `grpc-timeout`, so the server stops working on it too.
        let mut request = tonic::Request::new(req);
        request.set_timeout(deadline);
        let codec = tonic_prost::ProstCodec::<Req, Resp>::default();
        match grpc
            .unary(request, PathAndQuery::from_static(path), codec)
            .await
        {
            Ok(resp) => {
                let server_version = resp
                    .metadata()
                    .get(version::HEADER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let caller = super::said_caller(resp.metadata().as_ref());
                Ok(Reply {
                    message: resp.into_inner(),
                    server_version,
                    caller,
                })
            }
            // tonic reports its own deadline as a cancellation with this message.
            Err(s)
                if s.code() == tonic::Code::Cancelled
                    && s.message() == tonic::TimeoutExpired(()).to_string() =>
            {
                Err(ApiError::new(Code::DeadlineExceeded, s.message()))
            }
            // No connection could be made: the call never reached a server.
            Err(s) if s.code() == tonic::Code::Unavailable && refused(&s) => {
                Err(super::not_sent(s.message().to_string()))
            }
            Err(s) => Err(error_from_status(&s)),
        }
    }
}

/// Whether a status says the connection was refused: the call was never sent.
fn refused(s: &tonic::Status) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(s);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        source = e.source();
    }
    false
}
