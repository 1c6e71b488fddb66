//! The Connect protocol's unary calls (connectrpc.com/docs/protocol) in front of tonic's gRPC
//! routes, on the same port: a request that is not gRPC or gRPC-Web (by its content type) is
//! answered here, by the same handlers. The
//! request's message is `application/proto` or `application/json` (the canonical proto3 JSON
//! mapping, through the descriptors), and so is the answer; an error is JSON
//! (`{"code","message","details"}`) with the `google.rpc.ErrorInfo` in its details.

use super::front::AnswerCode;
use super::gzip::{self, Encoding};
use super::handlers::Handlers;
use super::protocol::{Protocol, refused};
use crate::wire::Rpc;
use crate::wire::proto;
use crate::wire::proto::cluster_service_server::ClusterService;
use crate::wire::proto::operation_service_server::OperationService;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use ichor_model::{ApiError, Code};
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;

/// How a Connect message is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Codec {
    Proto,
    Json,
}

impl Codec {
    fn content_type(self) -> &'static str {
        match self {
            Codec::Proto => "application/proto",
            Codec::Json => "application/json",
        }
    }

    /// The codec a Connect unary request's content type names; `None`: not one.
    fn of(content_type: &str) -> Option<Codec> {
        let essence = content_type.split(';').next().unwrap_or("").trim();
        match essence {
            "application/proto" => Some(Codec::Proto),
            "application/json" => Some(Codec::Json),
            _ => None,
        }
    }
}

/// What the Connect protocol's calls are answered with: the one service's handlers, the API's
/// descriptors (for the JSON mapping) and the request size limit.
#[derive(Clone)]
pub(crate) struct ConnectCalls {
    pub(crate) handlers: Handlers,
    pub(crate) pool: DescriptorPool,
    pub(crate) max_request: usize,
}

impl ConnectCalls {
    pub(crate) fn new(handlers: Handlers, max_request: usize) -> anyhow::Result<ConnectCalls> {
        let pool = DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET)
            .map_err(|e| anyhow::anyhow!("reading the API's descriptors: {e}"))?;
        Ok(ConnectCalls {
            handlers,
            pool,
            max_request,
        })
    }
}

/// Connect here, everything else (gRPC, gRPC-Web, health, reflection) to `inner`: a service
/// made with tower's `layer_fn`.
#[derive(Clone)]
pub(crate) struct Connect<S> {
    inner: S,
    calls: ConnectCalls,
}

impl<S> Connect<S> {
    pub(crate) fn new(inner: S, calls: ConnectCalls) -> Connect<S> {
        Connect { inner, calls }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S> tower::Service<http::Request<Body>> for Connect<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if Protocol::of(&req) != Protocol::Connect {
            return Box::pin(self.inner.call(req));
        }
        let calls = self.calls.clone();
        Box::pin(async move {
            match answer(&calls, req).await {
                Ok(r) => Ok(r),
                Err(never) => match never {},
            }
        })
    }
}

/// A Connect error response.
fn error_response(e: &ApiError) -> http::Response<Body> {
    super::protocol::connect_error(e)
}

/// The request's codec and encodings, or the error response that refuses its method, content
/// type or encoding.
fn accepted(
    parts: &http::request::Parts,
) -> Result<(Codec, Encoding, Encoding), Box<http::Response<Body>>> {
    if parts.method != http::Method::POST {
        let mut resp = error_response(&refused(
            Code::Unimplemented,
            "method",
            "the Connect protocol's unary calls are POSTs".into(),
        ));
        *resp.status_mut() = http::StatusCode::METHOD_NOT_ALLOWED;
        return Err(Box::new(resp));
    }
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some(codec) = Codec::of(content_type) else {
        let mut resp = error_response(&refused(
            Code::Unimplemented,
            "content-type",
            format!(
                "unsupported content type {}: application/proto or application/json (Connect), application/grpc or application/grpc-web",
                ichor_model::error_text::quoted(content_type)
            ),
        ));
        *resp.status_mut() = http::StatusCode::UNSUPPORTED_MEDIA_TYPE;
        resp.headers_mut().insert(
            "accept-post",
            http::HeaderValue::from_static("application/proto, application/json"),
        );
        return Err(Box::new(resp));
    };
    let (request, response) = gzip::negotiate(&parts.headers).map_err(|e| {
        let mut resp = error_response(&e);
        resp.headers_mut().insert(
            http::header::ACCEPT_ENCODING,
            http::HeaderValue::from_static(gzip::SUPPORTED),
        );
        Box::new(resp)
    })?;
    Ok((codec, request, response))
}

/// Answers one Connect request (never fails: an error is a Connect error response).
async fn answer(
    calls: &ConnectCalls,
    req: http::Request<Body>,
) -> Result<http::Response<Body>, Infallible> {
    if let Some(codec) = super::connect_stream::streaming_codec(req.headers()) {
        return Ok(super::connect_stream::answer(calls, req, codec).await);
    }
    if Rpc::of_path(req.uri().path()).is_some_and(Rpc::streams) {
        return Ok(not_unary());
    }
    let (parts, body) = req.into_parts();
    let (codec, request_encoding, response_encoding) = match accepted(&parts) {
        Ok(negotiated) => negotiated,
        Err(resp) => return Ok(*resp),
    };
    let body = match Limited::new(body, calls.max_request).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Ok(error_response(&body_error(e, calls.max_request))),
    };
    let body = match request_encoding {
        Encoding::Identity => body,
        Encoding::Gzip => match gzip::decompress(&body, calls.max_request) {
            Ok(b) => b,
            Err(e) => return Ok(error_response(&e)),
        },
    };
    let path = parts.uri.path().to_string();
    let metadata = tonic::metadata::MetadataMap::from_headers(parts.headers);
    Ok(
        match dispatch(calls, &path, codec, body, metadata, parts.extensions).await {
            Ok(bytes) => answered(codec, response_encoding, bytes),
            Err(e) => {
                let mut resp = error_response(&e);
                resp.headers_mut().insert(
                    http::header::ACCEPT_ENCODING,
                    http::HeaderValue::from_static(gzip::SUPPORTED),
                );
                resp
            }
        },
    )
}

/// What the streaming method takes, sorted, as connect-go lists it in `Accept-Post`.
const STREAM_ACCEPT_POST: &str = "application/connect+json, application/connect+proto, application/grpc, application/grpc+proto, application/grpc-web, application/grpc-web+proto, application/grpc-web-text, application/grpc-web-text+proto";

/// What the unary methods take, sorted.
const UNARY_ACCEPT_POST: &str = "application/grpc, application/grpc+proto, application/grpc-web, application/grpc-web+proto, application/grpc-web-text, application/grpc-web-text+proto, application/json, application/proto";

/// A request in a content type none of its method's protocols takes (a unary Connect request
/// to the streaming method, a Connect stream to a unary one), answered as connect-go answers
/// it: HTTP 415, no body, and what the method takes in `Accept-Post`.
fn unsupported(accept_post: &'static str) -> http::Response<Body> {
    let mut resp = http::Response::new(Body::empty());
    *resp.status_mut() = http::StatusCode::UNSUPPORTED_MEDIA_TYPE;
    resp.headers_mut()
        .insert("accept-post", http::HeaderValue::from_static(accept_post));
    resp.extensions_mut().insert(AnswerCode("unimplemented"));
    resp
}

fn not_unary() -> http::Response<Body> {
    unsupported(STREAM_ACCEPT_POST)
}

/// A Connect stream sent to `path`: the 415 of a unary method of ours, or `None`.
pub(crate) fn not_streaming(path: &str) -> Option<http::Response<Body>> {
    let unary = Rpc::of_path(path).is_some_and(|rpc| !rpc.streams());
    unary.then(|| unsupported(UNARY_ACCEPT_POST))
}

/// A successful answer, compressed as negotiated; it names what the server accepts.
fn answered(codec: Codec, encoding: Encoding, bytes: Bytes) -> http::Response<Body> {
    let bytes = match encoding {
        Encoding::Identity => bytes,
        Encoding::Gzip => gzip::compress(&bytes),
    };
    let mut resp = http::Response::new(Body::new(Full::new(bytes)));
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(codec.content_type()),
    );
    headers.insert(
        http::header::ACCEPT_ENCODING,
        http::HeaderValue::from_static(gzip::SUPPORTED),
    );
    if encoding == Encoding::Gzip {
        headers.insert(
            http::header::CONTENT_ENCODING,
            http::HeaderValue::from_static("gzip"),
        );
    }
    resp.extensions_mut().insert(AnswerCode("ok"));
    resp
}

/// Why a body could not be read: over the size limit, or cut off at its deadline (the gate's
/// [`super::listen::DeadlineBody`]), or the connection's fault.
fn body_error(e: Box<dyn std::error::Error + Send + Sync>, max: usize) -> ApiError {
    if e.is::<http_body_util::LengthLimitError>() {
        return refused(
            Code::InvalidArgument,
            "size",
            format!("the request is larger than {max} bytes"),
        );
    }
    match e.downcast::<tonic::Status>() {
        Ok(status) => crate::wire::error_from_status(&status),
        Err(_) => ApiError::new(Code::Unavailable, "the request's body could not be read"),
    }
}

/// A request message from its body.
pub(crate) fn decode<M: prost::Message + Default>(
    pool: &DescriptorPool,
    name: &str,
    codec: Codec,
    body: Bytes,
) -> Result<M, ApiError> {
    let bad = |detail: String| {
        refused(
            Code::InvalidArgument,
            "body",
            format!(
                "the request is not a {name}: {}",
                ichor_model::inert::truncate(&detail, 120)
            ),
        )
    };
    match codec {
        Codec::Proto => M::decode(body).map_err(|e| bad(e.to_string())),
        Codec::Json => {
            let desc = pool
                .get_message_by_name(name)
                .ok_or_else(|| bad("no such message".into()))?;
            let mut de = serde_json::Deserializer::from_slice(&body);
            // Unknown fields (and enum names) are skipped, as in the binary encoding and as
            // connect-go's JSON codec does: a client built from a newer schema still works.
            let options = DeserializeOptions::new().deny_unknown_fields(false);
            let dynamic = DynamicMessage::deserialize_with_options(desc, &mut de, &options)
                .map_err(|e| bad(e.to_string()))?;
            de.end().map_err(|e| bad(e.to_string()))?;
            dynamic.transcode_to::<M>().map_err(|e| bad(e.to_string()))
        }
    }
}

/// A response message as its body.
pub(crate) fn encode<M: prost::Message>(
    pool: &DescriptorPool,
    name: &str,
    codec: Codec,
    msg: &M,
) -> Result<Bytes, ApiError> {
    let bytes = msg.encode_to_vec();
    match codec {
        Codec::Proto => Ok(Bytes::from(bytes)),
        Codec::Json => {
            let internal = |detail: String| {
                ApiError::new(Code::Internal, format!("encoding {name}: {detail}"))
            };
            let desc = pool
                .get_message_by_name(name)
                .ok_or_else(|| internal("no such message".into()))?;
            let dynamic = DynamicMessage::decode(desc, bytes.as_slice())
                .map_err(|e| internal(e.to_string()))?;
            serde_json::to_vec(&dynamic)
                .map(Bytes::from)
                .map_err(|e| internal(e.to_string()))
        }
    }
}

/// The unary calls, routed by the table of calls ([`crate::wire::with_rpcs!`]): path → the
/// handler's method, with the messages' full names for JSON.
macro_rules! calls {
    (
        unary { $( $service:ident $method:ident $handler:ident ($req:ident => $resp:ident) $effect:ident, )* }
        streaming { $( $streaming:tt )* }
    ) => {
        async fn dispatch(
            calls: &ConnectCalls,
            path: &str,
            codec: Codec,
            body: Bytes,
            metadata: tonic::metadata::MetadataMap,
            extensions: http::Extensions,
        ) -> Result<Bytes, ApiError> {
            match Rpc::of_path(path) {
                $(
                    Some(Rpc::$method) => {
                        let req: proto::$req =
                            decode(&calls.pool, Rpc::$method.request(), codec, body)?;
                        let request = tonic::Request::from_parts(metadata, extensions, req);
                        let resp = <Handlers as $service>::$handler(&calls.handlers, request)
                            .await
                            .map_err(|s| crate::wire::error_from_status(&s))?
                            .into_inner();
                        encode(&calls.pool, Rpc::$method.response(), codec, &resp)
                    }
                )*
                _ => Err(refused(
                    Code::Unimplemented,
                    "path",
                    format!("no call {}", ichor_model::error_text::quoted(path)),
                )),
            }
        }
    };
}

crate::wire::with_rpcs!(calls);
