//! WatchOperations over gRPC (and gRPC-Web, which reaches here translated to gRPC), in front of
//! tonic's routes: the request is read by tonic's own decoder, as a unary request is (so a
//! malformed body is answered as ListOperations answers it), and the answer is
//! written here: each update as its frame header and the update's bytes as made once for every
//! subscriber ([`crate::encoded`]), then the trailers. tonic's own server streaming encodes
//! into a buffer of the stream's that keeps the size of the largest message sent (the first
//! page, about 22 KiB) for as long as the stream lives; a frame made for each update is freed
//! once written. Updates are sent uncompressed (gRPC lets a server answer so whatever the
//! client accepts; a delta is a few hundred bytes).

use super::connect_stream::WATCH_PATH;
use super::encoded::proto_bytes;
use super::handlers::Handlers;
use crate::wire::{self, proto};
use bytes::{BufMut as _, Bytes, BytesMut};
use futures::StreamExt as _;
use http_body_util::StreamBody;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::codec::{CompressionEncoding, Streaming};
use tonic_prost::ProstDecoder;

/// Answers WatchOperations over gRPC; every other call goes on to the routes.
#[derive(Clone)]
pub(crate) struct WatchRoute<S> {
    routes: S,
    handlers: Handlers,
}

impl<S> WatchRoute<S> {
    pub(crate) fn new(routes: S, handlers: Handlers) -> WatchRoute<S> {
        WatchRoute { routes, handlers }
    }
}

/// Whether the request is WatchOperations in gRPC's binary encoding (another, JSON say, goes
/// to tonic's routes as before).
fn ours(req: &http::Request<Body>) -> bool {
    let grpc = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| matches!(ct, "application/grpc" | "application/grpc+proto"));
    grpc && req.uri().path() == WATCH_PATH
}

impl<S> tower::Service<http::Request<Body>> for WatchRoute<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.routes.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if !ours(&req) {
            return Box::pin(self.routes.call(req));
        }
        let handlers = self.handlers.clone();
        Box::pin(async move { Ok(answer(&handlers, req).await) })
    }
}

/// The request's message, read by tonic's own decoder as it reads every unary request
/// (`Grpc::map_request_unary`: the first message, the rest of the body read and dropped;
/// gzipped when `grpc-encoding` says so; at most [`crate::MAX_REQUEST_BYTES`]), so a body that is
/// not one is refused in tonic's words, which [`super::malformed::corrected`] turns into the
/// codes ListOperations answers with (INVALID_ARGUMENT, OUT_OF_RANGE).
async fn request(
    headers: &http::HeaderMap,
    body: Body,
) -> Result<proto::WatchOperationsRequest, tonic::Status> {
    let encoding = match headers.get("grpc-encoding").map(|v| v.as_bytes()) {
        None | Some(b"identity") => None,
        Some(b"gzip") => Some(CompressionEncoding::Gzip),
        Some(other) => {
            return Err(tonic::Status::unimplemented(format!(
                "Content is compressed with {} which isn't supported",
                ichor_model::error_text::quoted(&String::from_utf8_lossy(other))
            )));
        }
    };
    let mut stream = Streaming::new_request(
        ProstDecoder::<proto::WatchOperationsRequest>::default(),
        body,
        encoding,
        Some(crate::MAX_REQUEST_BYTES),
    );
    let message = stream
        .message()
        .await?
        .ok_or_else(|| tonic::Status::internal("Missing request message."))?;
    stream.trailers().await?;
    Ok(message)
}

/// One update in its gRPC frame.
fn frame(message: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(5 + message.len());
    b.put_u8(0);
    b.put_u32(u32::try_from(message.len()).unwrap_or(u32::MAX));
    b.put_slice(message);
    b.freeze()
}

/// The stream's end: its status in trailers.
fn trailers(status: &tonic::Status) -> http_body::Frame<Bytes> {
    let mut map = http::HeaderMap::new();
    if status.add_header(&mut map).is_err() {
        map.insert("grpc-status", http::HeaderValue::from_static("13"));
    }
    http_body::Frame::trailers(map)
}

/// WatchOperations: refused before its stream (a trailers-only answer, as tonic gives), or the
/// stream of updates, ending with its status.
async fn answer(handlers: &Handlers, req: http::Request<Body>) -> http::Response<Body> {
    let (parts, body) = req.into_parts();
    let message = match request(&parts.headers, body).await {
        Ok(m) => m,
        Err(status) => return status.into_http(),
    };
    let metadata = tonic::metadata::MetadataMap::from_headers(parts.headers);
    let call = tonic::Request::from_parts(metadata, parts.extensions, message);
    let updates = match handlers.watch(call).await {
        Ok(updates) => updates.into_inner(),
        Err(status) => return status.into_http(),
    };
    let frames = futures::stream::unfold(Some(updates), |updates| async move {
        let mut updates = updates?;
        let (frame, more) = match updates.next().await {
            Some(Ok(update)) => (http_body::Frame::data(frame(&proto_bytes(&update))), true),
            Some(Err(e)) => (trailers(&wire::status_from_error(&e)), false),
            None => (trailers(&tonic::Status::ok("")), false),
        };
        Some((Ok::<_, Infallible>(frame), more.then_some(updates)))
    });
    let mut resp = http::Response::new(Body::new(StreamBody::new(frames)));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    resp
}
