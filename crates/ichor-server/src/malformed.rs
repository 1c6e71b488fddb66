//! A request whose body is not a message is the caller's fault: INVALID_ARGUMENT, never
//! INTERNAL. tonic answers a body it cannot decode (a truncated varint, a string that is not
//! UTF-8, a compressed flag without a negotiated encoding, a frame cut short) with INTERNAL
//! before any handler runs, as gRPC's core does; this layer, around tonic's routes, rewrites
//! those answers (trailers-only, so their status is in the headers) to INVALID_ARGUMENT with the
//! same words, and a message that decompresses past the size limit to OUT_OF_RANGE, as one
//! sent over it is.

use super::protocol::{Protocol, refusal, refused};
use ichor_model::Code;
use tonic::body::Body;

/// The beginnings of tonic's words for a body that is not a message (tonic-web's for gRPC-Web
/// text that is not base64: an invalid symbol, length or padding, or bytes left over).
const DECODE_ERRORS: [&str; 7] = [
    "failed to decode Protobuf message",
    "protocol error: received message with",
    "Error decompressing:",
    "Unexpected EOF decoding stream",
    "Missing request message",
    "tonic-web: Invalid ",
    "tonic-web: malformed base64 request",
];

/// The answer `resp` should be: itself, or the INVALID_ARGUMENT (OUT_OF_RANGE) it stands for.
/// A map of answers only, so it is tower's `map_response` around tonic's routes. tonic says what
/// went wrong only in its words by then (the framing errors come from its stream decoder, before
/// any codec of ours runs), so the words are what is matched.
pub(crate) fn corrected(resp: http::Response<Body>) -> http::Response<Body> {
    let Some(status) = tonic::Status::from_header_map(resp.headers()) else {
        return resp;
    };
    let message = status.message();
    let is_decode_error = DECODE_ERRORS.iter().any(|p| message.starts_with(p));
    match status.code() {
        tonic::Code::Internal if is_decode_error => {
            let words = ichor_model::inert::truncate(message, 160);
            let e = refused(
                Code::InvalidArgument,
                "body",
                format!("the request is not a message: {words}"),
            );
            refusal(Protocol::Grpc, &e)
        }
        tonic::Code::ResourceExhausted if message.starts_with("Error decompressing") => {
            let mut resp = resp;
            resp.headers_mut().insert(
                "grpc-status",
                http::HeaderValue::from(tonic::Code::OutOfRange as i32),
            );
            resp
        }
        _ => resp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: tonic::Status) -> http::Response<Body> {
        let (parts, ()) = status.into_http::<()>().into_parts();
        http::Response::from_parts(parts, Body::empty())
    }

    fn code(resp: &http::Response<Body>) -> tonic::Code {
        tonic::Status::from_header_map(resp.headers())
            .unwrap()
            .code()
    }

    #[test]
    fn tonics_decode_errors_are_the_callers_fault() {
        for m in [
            "failed to decode Protobuf message: invalid varint",
            "protocol error: received message with compressed-flag but no grpc-encoding was specified",
            "Unexpected EOF decoding stream.",
            "tonic-web: Invalid symbol 33, offset 0.",
            "tonic-web: malformed base64 request",
        ] {
            let r = corrected(answer(tonic::Status::internal(m)));
            assert_eq!(code(&r), tonic::Code::InvalidArgument, "{m}");
        }
        let ours = corrected(answer(tonic::Status::internal(
            "the server cannot review tokens",
        )));
        assert_eq!(
            code(&ours),
            tonic::Code::Internal,
            "the server's own faults stay"
        );
        let bomb = corrected(answer(tonic::Status::resource_exhausted(
            "Error decompressing: size limit, of 1 bytes, exceeded while decompressing message",
        )));
        assert_eq!(code(&bomb), tonic::Code::OutOfRange);
    }
}
