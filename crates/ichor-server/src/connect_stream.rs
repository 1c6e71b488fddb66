//! The Connect protocol's server streaming (connectrpc.com/docs/protocol, "Streaming RPCs"), for
//! WatchOperations: the request is one enveloped message (`application/connect+proto` or
//! `application/connect+json`), the answer a stream of enveloped messages ending with an
//! end-of-stream message (flag 0x02) that holds `{}` or `{"error": …}`. Messages are gzipped both
//! ways when `Connect-Content-Encoding` / `Connect-Accept-Encoding` say so.

use super::connect::{Codec, ConnectCalls, decode};
use super::front::AnswerCode;
use super::gzip;
use super::protocol::refused;
use crate::wire::Rpc;
use crate::wire::proto;
use bytes::{BufMut as _, Bytes, BytesMut};
use futures::StreamExt as _;
use http_body_util::{BodyExt, Limited, StreamBody};
use ichor_model::{ApiError, Code};
use std::sync::{Arc, OnceLock};
use tonic::body::Body;

/// The one streaming method.
pub(crate) const WATCH_PATH: &str = Rpc::WatchOperations.path();

/// An envelope's flags.
const COMPRESSED: u8 = 0x01;
const END_STREAM: u8 = 0x02;

/// The codec of a streaming content type (`application/connect+proto|json`), if it is one.
pub(crate) fn streaming_codec(headers: &http::HeaderMap) -> Option<Codec> {
    let ct = headers.get(http::header::CONTENT_TYPE)?.to_str().ok()?;
    match ct.split(';').next()?.trim() {
        "application/connect+proto" => Some(Codec::Proto),
        "application/connect+json" => Some(Codec::Json),
        _ => None,
    }
}

/// Whether the request's messages are gzipped, and whether the answer's may be.
fn encodings(headers: &http::HeaderMap) -> Result<(bool, bool), ApiError> {
    let request = match headers
        .get("connect-content-encoding")
        .map(|v| v.as_bytes())
    {
        None | Some(b"identity") => false,
        Some(b"gzip") => true,
        Some(_) => {
            return Err(refused(
                Code::Unimplemented,
                "connect-content-encoding",
                "Connect-Content-Encoding must be gzip or identity".into(),
            ));
        }
    };
    let response = headers
        .get("connect-accept-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim() == "gzip"));
    Ok((request, response))
}

/// One envelope: its flags, the length, the message.
fn envelope(flags: u8, message: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(5 + message.len());
    b.put_u8(flags);
    b.put_u32(u32::try_from(message.len()).unwrap_or(u32::MAX));
    b.put_slice(message);
    b.freeze()
}

/// The request's one message, out of its envelope.
fn unwrap_request(body: &[u8], gzipped: bool, max: usize) -> Result<Bytes, ApiError> {
    let bad = |what: &str| refused(Code::InvalidArgument, "body", what.to_string());
    let (head, rest) = body
        .split_at_checked(5)
        .ok_or_else(|| bad("the request is not an enveloped message"))?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if rest.len() != len {
        return Err(bad("the envelope's length is not the message's"));
    }
    match (head[0] & COMPRESSED != 0, gzipped) {
        (false, _) => Ok(Bytes::copy_from_slice(rest)),
        (true, true) => gzip::decompress(rest, max),
        (true, false) => Err(bad("a compressed message without Connect-Content-Encoding")),
    }
}

/// The end of the stream: `{}`, or the error.
fn end_stream(error: Option<&ApiError>) -> Bytes {
    let body = match error {
        None => b"{}".to_vec(),
        Some(e) => {
            let error = crate::wire::connect_error_body(e);
            let mut out = b"{\"error\":".to_vec();
            out.extend_from_slice(&error);
            out.push(b'}');
            out
        }
    };
    envelope(END_STREAM, &body)
}

/// Answers a streaming Connect call: never an HTTP error; every error is the stream's end.
pub(crate) async fn answer(
    calls: &ConnectCalls,
    req: http::Request<Body>,
    codec: Codec,
) -> http::Response<Body> {
    if let Some(refused) = super::connect::not_streaming(req.uri().path()) {
        return refused;
    }
    let (parts, body) = req.into_parts();
    let gzip_answer = encodings(&parts.headers).map(|(_, a)| a).unwrap_or(false);
    let frames = match open(calls, parts, body, codec).await {
        Ok(updates) => updates,
        Err(e) => return refusal(codec, &e),
    };
    let ended = StreamEnd::default();
    let ends = ended.clone();
    let frames = frames.map(move |b| {
        if b.first() == Some(&END_STREAM) {
            ends.said(&b[5..]);
        }
        Ok::<_, std::convert::Infallible>(http_body::Frame::data(match gzip_answer {
            // Only data messages are compressed; the end of the stream stays plain JSON.
            true if b.first() == Some(&0) => envelope(COMPRESSED, &gzip::compress(&b[5..])),
            _ => b,
        }))
    });
    let mut resp = streamed(codec, Body::new(StreamBody::new(frames)));
    if gzip_answer {
        resp.headers_mut().insert(
            "connect-content-encoding",
            http::HeaderValue::from_static("gzip"),
        );
    }
    resp.extensions_mut().insert(ended);
    resp
}

/// A streaming answer's head: HTTP 200 and the codec's content type.
fn streamed(codec: Codec, body: Body) -> http::Response<Body> {
    let mut resp = http::Response::new(body);
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(match codec {
            Codec::Proto => "application/connect+proto",
            Codec::Json => "application/connect+json",
        }),
    );
    headers.insert(
        "connect-accept-encoding",
        http::HeaderValue::from_static(gzip::SUPPORTED),
    );
    resp
}

/// The refusal of a streaming call before its stream began, as connect-go's handlers (and its
/// `ErrorWriter`) write one: HTTP 200 and only the end of the stream, which carries the code,
/// the message and the ErrorInfo (a Connect client reads nothing else of a stream).
pub(crate) fn refusal(codec: Codec, e: &ApiError) -> http::Response<Body> {
    let end = end_stream(Some(e));
    let mut resp = streamed(codec, Body::new(http_body_util::Full::new(end)));
    resp.extensions_mut()
        .insert(AnswerCode(crate::wire::code_to_connect(e.code)));
    resp
}

/// How a Connect stream ended, for the metrics: its end's code once it was sent (`ok`, or the
/// error's), read when the answer's body ends.
#[derive(Clone, Default)]
pub(crate) struct StreamEnd(Arc<OnceLock<&'static str>>);

impl StreamEnd {
    /// Notes the end of the stream whose JSON is `end`.
    fn said(&self, end: &[u8]) {
        let code = serde_json::from_slice::<serde_json::Value>(end)
            .ok()
            .and_then(|v| v.pointer("/error/code")?.as_str().map(str::to_string));
        let name = match code {
            None => "ok",
            Some(c) => crate::wire::code_from_connect(&c)
                .map(crate::wire::code_to_connect)
                .unwrap_or("unknown"),
        };
        let _ = self.0.set(name);
    }

    /// The code of the end, once sent.
    pub(crate) fn code(&self) -> Option<&'static str> {
        self.0.get().copied()
    }
}

/// Reads the request and opens the stream: its envelopes, ending with the end of the stream.
async fn open(
    calls: &ConnectCalls,
    parts: http::request::Parts,
    body: Body,
    codec: Codec,
) -> Result<futures::stream::BoxStream<'static, Bytes>, ApiError> {
    if parts.uri.path() != WATCH_PATH {
        return Err(refused(
            Code::Unimplemented,
            "path",
            "no streaming method at this path: WatchOperations is the one".into(),
        ));
    }
    let (gzipped, _) = encodings(&parts.headers)?;
    let max = calls.max_request + 5;
    let body = Limited::new(body, max)
        .collect()
        .await
        .map_err(|_| {
            refused(
                Code::InvalidArgument,
                "body",
                "the request's body could not be read, or is over the limit".into(),
            )
        })?
        .to_bytes();
    let message = unwrap_request(&body, gzipped, calls.max_request)?;
    let name = Rpc::WatchOperations.request();
    let req: proto::WatchOperationsRequest = decode(&calls.pool, name, codec, message)?;
    let metadata = tonic::metadata::MetadataMap::from_headers(parts.headers);
    let request = tonic::Request::from_parts(metadata, parts.extensions, req);
    let updates = calls
        .handlers
        .watch(request)
        .await
        .map_err(|s| crate::wire::error_from_status(&s))?
        .into_inner();
    let pool = calls.pool.clone();
    // Each update's shared part encoded once for every subscriber (crate::encoded).
    let frames = updates.map(move |item| {
        let bytes = item.and_then(|update| match codec {
            Codec::Proto => Ok(crate::encoded::proto_bytes(&update)),
            Codec::Json => crate::encoded::json_bytes(&update, &pool),
        });
        match bytes {
            Ok(bytes) => envelope(0, &bytes),
            Err(e) => end_stream(Some(&e)),
        }
    });
    Ok(with_end(frames).boxed())
}

/// `frames` up to the first end of the stream (an error), or then `{}` when they end.
fn with_end(
    frames: impl futures::Stream<Item = Bytes> + Send + 'static,
) -> impl futures::Stream<Item = Bytes> + Send + 'static {
    futures::stream::unfold((Box::pin(frames), false), |(mut frames, done)| async move {
        if done {
            return None;
        }
        match frames.next().await {
            Some(b) if b.first() == Some(&END_STREAM) => Some((b, (frames, true))),
            Some(b) => Some((b, (frames, false))),
            None => Some((end_stream(None), (frames, true))),
        }
    })
}
