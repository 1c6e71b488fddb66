//! WatchOperations' updates, encoded once for every subscriber they go to. An update's page part
//! is shared by the subscribers of one list that held the same version
//! ([`ichor_service::feed`]); its encoding is made the first time one of them is sent it and
//! kept beside it, and every other subscriber is sent the same bytes (cloned, not made again),
//! in a gRPC frame ([`crate::grpc_stream`]; gRPC-Web is gRPC translated at the edge) or the
//! Connect protocol's envelope ([`crate::connect_stream`]). What a subscriber has of
//! its own (the operation it follows, its events, a heartbeat) is encoded for it alone and
//! follows the shared bytes: a protobuf message's fields may come in any order, and the two
//! parts set different fields.

use crate::wire::{self, proto};
use bytes::{BufMut as _, Bytes, BytesMut};
use ichor_model::{ApiError, Code, WatchUpdate};
use ichor_service::feed::{PagePart, Pushed};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage};

/// Where an update keeps its encodings ([`ichor_service::feed::SharedPage::encoded`]).
const PROTO: usize = 0;
const JSON: usize = 1;

/// The message's full name, for the JSON mapping.
const RESPONSE: &str = crate::wire::Rpc::WatchOperations.response();

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

#[cfg(test)]
mod tests;
