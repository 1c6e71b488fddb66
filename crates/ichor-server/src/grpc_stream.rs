//! WatchOperations over gRPC (and gRPC-Web, which reaches here translated to gRPC), in front of
//! tonic's routes: the request is read as tonic reads it (one message in a gRPC frame, gzipped
//! when `grpc-encoding` says so, at most [`crate::MAX_REQUEST_BYTES`]), and the answer is
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
use http_body_util::{BodyExt as _, Limited, StreamBody};
use prost::Message as _;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;

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

/// The request's one message, out of its gRPC frame, as tonic would refuse what is not one.
async fn request(
    headers: &http::HeaderMap,
    body: Body,
) -> Result<proto::WatchOperationsRequest, tonic::Status> {
    let max = crate::MAX_REQUEST_BYTES;
    let body = Limited::new(body, max + 5)
        .collect()
        .await
        .map_err(|e| match e.downcast::<tonic::Status>() {
            Ok(status) => *status,
            Err(_) => tonic::Status::out_of_range(format!(
                "the request is over the limit of {max} bytes, or could not be read"
            )),
        })?
        .to_bytes();
    let (head, message) = body
        .split_at_checked(5)
        .ok_or_else(|| tonic::Status::internal("the request is not a gRPC message"))?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if message.len() != len {
        return Err(tonic::Status::internal(
            "the frame's length is not the message's",
        ));
    }
    let gzipped = headers.get("grpc-encoding").map(|v| v.as_bytes());
    let message = match (head[0], gzipped) {
        (0, _) => Bytes::copy_from_slice(message),
        (1, Some(b"gzip")) => {
            crate::gzip::decompress(message, max).map_err(|e| tonic::Status::internal(e.message))?
        }
        _ => {
            return Err(tonic::Status::unimplemented(
                "a compression this server does not read",
            ));
        }
    };
    proto::WatchOperationsRequest::decode(message)
        .map_err(|e| tonic::Status::internal(e.to_string()))
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
