//! WatchOperations from a server: server streaming over gRPC (tonic) or the Connect protocol
//! (enveloped messages on one HTTP response, ending with an end-of-stream message).

use super::options::MAX_RESPONSE_BYTES;
use bytes::{Buf as _, Bytes, BytesMut};
use futures::StreamExt as _;
use http_body_util::BodyExt as _;
use ichor_model::{ApiError, Code};
use ichor_wire::{error_from_connect, error_from_status};

/// The messages of a stream, each decoded, until its end or its error.
pub(super) type Messages<M> = futures::stream::BoxStream<'static, Result<M, ApiError>>;

/// A gRPC stream's messages.
pub(super) fn from_grpc<M: Send + 'static>(stream: tonic::Streaming<M>) -> Messages<M> {
    stream
        .map(|item| item.map_err(|s| error_from_status(&s)))
        .boxed()
}

/// What the Connect stream's body has given so far.
struct Envelopes {
    body: hyper::body::Incoming,
    buf: BytesMut,
    ended: bool,
}

/// A Connect stream's messages from its response body.
pub(super) fn from_connect<M: prost::Message + Default + Send + 'static>(
    body: hyper::body::Incoming,
) -> Messages<M> {
    let state = Envelopes {
        body,
        buf: BytesMut::new(),
        ended: false,
    };
    futures::stream::unfold(state, |mut s| async move {
        if s.ended {
            return None;
        }
        match next_envelope(&mut s).await {
            Ok(Some((0, message))) => Some((decoded::<M>(message), s)),
            Ok(Some((flags, message))) if flags & 0x02 != 0 => {
                s.ended = true;
                end_of_stream(&message).map(|e| (Err(e), s))
            }
            Ok(Some(_)) => {
                s.ended = true;
                let e = ApiError::new(Code::Internal, "a compressed message was not asked for");
                Some((Err(e), s))
            }
            Ok(None) => {
                s.ended = true;
                let e = ApiError::new(Code::Unavailable, "the stream ended without its end");
                Some((Err(e), s))
            }
            Err(e) => {
                s.ended = true;
                Some((Err(e), s))
            }
        }
    })
    .boxed()
}

fn decoded<M: prost::Message + Default>(message: Bytes) -> Result<M, ApiError> {
    M::decode(message).map_err(|e| {
        ApiError::new(
            Code::Internal,
            format!("the server's update could not be read: {e}"),
        )
    })
}

/// The error an end-of-stream message holds, if any.
fn end_of_stream(message: &[u8]) -> Option<ApiError> {
    let v: serde_json::Value = serde_json::from_slice(message).ok()?;
    let error = v.get("error")?;
    let bytes = serde_json::to_vec(error).ok()?;
    Some(error_from_connect(200, &bytes))
}

/// The next envelope (flags, message), or `None` when the body ended between envelopes.
async fn next_envelope(s: &mut Envelopes) -> Result<Option<(u8, Bytes)>, ApiError> {
    loop {
        if s.buf.len() >= 5 {
            let len = u32::from_be_bytes([s.buf[1], s.buf[2], s.buf[3], s.buf[4]]) as usize;
            if len > MAX_RESPONSE_BYTES {
                return Err(ApiError::new(
                    Code::ResourceExhausted,
                    format!("an update of {len} bytes is over the limit of {MAX_RESPONSE_BYTES}"),
                ));
            }
            if s.buf.len() >= 5 + len {
                let flags = s.buf[0];
                s.buf.advance(5);
                return Ok(Some((flags, s.buf.split_to(len).freeze())));
            }
        }
        match s.body.frame().await {
            None => return Ok(None),
            Some(Err(e)) => {
                return Err(ApiError::new(
                    Code::Unavailable,
                    format!(
                        "reading the stream: {}",
                        ichor_model::inert::truncate(&e.to_string(), 200)
                    ),
                ));
            }
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    s.buf.extend_from_slice(&data);
                }
            }
        }
    }
}
