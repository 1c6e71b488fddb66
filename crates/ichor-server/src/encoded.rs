//! WatchOperations' updates, encoded once for every subscriber they go to. An update's page part
//! is shared by the subscribers of one list that held the same version
//! ([`ichor_service::feed`]); its encoding is made the first time one of them is sent it and
//! kept beside it, and every other subscriber is sent the same bytes (cloned, not made again):
//! over gRPC through [`UpdateCodec`], whose encoder writes them as they are; over the Connect
//! protocol in its envelope; gRPC-Web is gRPC translated at the edge. What a subscriber has of
//! its own (the operation it follows, its events, a heartbeat) is encoded for it alone and
//! follows the shared bytes: a protobuf message's fields may come in any order, and the two
//! parts set different fields.

use super::connect_stream::WATCH_PATH;
use super::handlers::Handlers;
use crate::wire::{self, proto};
use bytes::{BufMut as _, Bytes, BytesMut};
use futures::{Stream, StreamExt as _};
use ichor_model::{ApiError, Code, WatchUpdate};
use ichor_service::feed::{PagePart, Pushed};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::codec::CompressionEncoding;

/// Where an update keeps its encodings ([`ichor_service::feed::SharedPage::encoded`]).
const PROTO: usize = 0;
const JSON: usize = 1;

/// The message's full name, for the JSON mapping.
const RESPONSE: &str = "ichor.v1alpha1.WatchOperationsResponse";

/// The page part alone as a message.
fn page_part(part: &PagePart) -> proto::WatchOperationsResponse {
    match part {
        PagePart::Whole(page) => proto::WatchOperationsResponse {
            page: Some(wire::page_to_proto(page)),
            ..Default::default()
        },
        PagePart::Delta(delta) => proto::WatchOperationsResponse {
            page_delta: Some(wire::page_delta_to_proto(delta)),
            ..Default::default()
        },
    }
}

/// Whether the update has nothing of its own to send.
fn nothing_own(own: &WatchUpdate) -> bool {
    own.followed.is_none() && own.events.is_none() && !own.heartbeat
}

/// The update as a WatchOperationsResponse in protobuf: the page part's bytes as made once,
/// then the subscriber's own fields, if any.
pub(crate) fn proto_bytes(pushed: &Pushed) -> Bytes {
    let shared = pushed
        .page
        .as_ref()
        .map(|p| p.encoded(PROTO, |part| page_part(part).encode_to_vec().into()));
    if nothing_own(&pushed.own) {
        return shared.unwrap_or_default();
    }
    let own = wire::watch_update_to_proto(&pushed.own);
    let shared = shared.unwrap_or_default();
    let mut out = BytesMut::with_capacity(shared.len() + own.encoded_len());
    out.put_slice(&shared);
    // A BytesMut grows as it needs: encoding into it cannot fail.
    let _ = own.encode(&mut out);
    out.freeze()
}

/// The update in the canonical proto3 JSON mapping (Connect's `application/connect+json`): the
/// page part's JSON as made once when the update has nothing of its own; else made for it.
pub(crate) fn json_bytes(pushed: &Pushed, pool: &DescriptorPool) -> Result<Bytes, ApiError> {
    let to_json = |bytes: &[u8]| -> Result<Bytes, ApiError> {
        let internal =
            |d: String| ApiError::new(Code::Internal, format!("encoding {RESPONSE}: {d}"));
        let desc = pool
            .get_message_by_name(RESPONSE)
            .ok_or_else(|| internal("no such message".into()))?;
        let dynamic = DynamicMessage::decode(desc, bytes).map_err(|e| internal(e.to_string()))?;
        serde_json::to_vec(&dynamic)
            .map(Bytes::from)
            .map_err(|e| internal(e.to_string()))
    };
    match &pushed.page {
        Some(shared) if nothing_own(&pushed.own) => {
            let mut failed = None;
            let json = shared.encoded(JSON, |part| {
                to_json(&page_part(part).encode_to_vec()).unwrap_or_else(|e| {
                    failed = Some(e);
                    Bytes::new()
                })
            });
            match failed {
                Some(e) => Err(e),
                None => Ok(json),
            }
        }
        _ => to_json(&proto_bytes(pushed)),
    }
}

/// WatchOperations' codec over gRPC: the request decoded by tonic's prost codec,
/// each update written as the bytes [`proto_bytes`] gives (tonic frames and, when the client
/// accepts it, compresses them).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UpdateCodec;

/// Writes an update's bytes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BytesEncoder;

impl tonic::codec::Codec for UpdateCodec {
    type Encode = Bytes;
    type Decode = proto::WatchOperationsRequest;
    type Encoder = BytesEncoder;
    type Decoder = tonic_prost::ProstDecoder<proto::WatchOperationsRequest>;

    fn encoder(&mut self) -> BytesEncoder {
        BytesEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstCodec::<proto::WatchOperationsResponse, proto::WatchOperationsRequest>::default()
            .decoder()
    }
}

impl tonic::codec::Encoder for BytesEncoder {
    type Item = Bytes;
    type Error = tonic::Status;

    fn encode(
        &mut self,
        item: Bytes,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

/// WatchOperations over gRPC (and gRPC-Web, translated to gRPC before it reaches here) in
/// front of tonic's routes: answered by tonic's own server machinery (framing, compression,
/// the request's size limit, as the generated service sets them) with [`UpdateCodec`]; every
/// other call goes on to the routes.
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

/// The updates as bytes, for tonic.
type Sent = Pin<Box<dyn Stream<Item = Result<Bytes, tonic::Status>> + Send>>;

/// One WatchOperations call, for tonic's server streaming.
struct Watch(Handlers);

impl tonic::server::ServerStreamingService<proto::WatchOperationsRequest> for Watch {
    type Response = Bytes;
    type ResponseStream = Sent;
    type Future =
        Pin<Box<dyn Future<Output = Result<tonic::Response<Sent>, tonic::Status>> + Send>>;

    fn call(&mut self, request: tonic::Request<proto::WatchOperationsRequest>) -> Self::Future {
        let handlers = self.0.clone();
        Box::pin(async move {
            let updates = handlers.watch(request).await?;
            Ok(updates.map(|updates| -> Sent {
                Box::pin(updates.map(|item| match item {
                    Ok(update) => Ok(proto_bytes(&update)),
                    Err(e) => Err(wire::status_from_error(&e)),
                }))
            }))
        })
    }
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
        if req.uri().path() != WATCH_PATH {
            return Box::pin(self.routes.call(req));
        }
        let handlers = self.handlers.clone();
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(UpdateCodec)
                .accept_compressed(CompressionEncoding::Gzip)
                .send_compressed(CompressionEncoding::Gzip)
                .max_decoding_message_size(crate::MAX_REQUEST_BYTES);
            Ok(grpc.server_streaming(Watch(handlers), req).await)
        })
    }
}

#[cfg(test)]
mod tests;
