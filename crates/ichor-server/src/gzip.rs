//! gzip for the Connect protocol's unary calls, negotiated as connect-go negotiates it
//! (`protocol.go`'s `negotiateCompression`): a request's `Content-Encoding` (gzip or identity;
//! anything else is UNIMPLEMENTED, naming what is supported) is how its body is decoded, and
//! the answer is compressed the same way, or else with the first encoding of the request's
//! `Accept-Encoding` the server has. gRPC and gRPC-Web use tonic's own gzip.

use super::protocol::refused;
use bytes::Bytes;
use ichor_model::{ApiError, Code};
use std::io::{Read as _, Write as _};

/// The encodings the server has, as its `Accept-Encoding` answer names them.
pub(crate) const SUPPORTED: &str = "gzip";

/// How a body is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Identity,
    Gzip,
}

/// `(request, response)` encodings from the request's headers.
pub(crate) fn negotiate(headers: &http::HeaderMap) -> Result<(Encoding, Encoding), ApiError> {
    let request = match headers
        .get(http::header::CONTENT_ENCODING)
        .map(|v| v.as_bytes())
    {
        None | Some(b"" | b"identity") => Encoding::Identity,
        Some(b"gzip") => Encoding::Gzip,
        Some(other) => {
            return Err(refused(
                Code::Unimplemented,
                "content-encoding",
                format!(
                    "unknown compression {}: supported encodings are {SUPPORTED}",
                    ichor_model::error_text::quoted(&String::from_utf8_lossy(other))
                ),
            ));
        }
    };
    if request == Encoding::Gzip {
        return Ok((request, Encoding::Gzip));
    }
    let accepts_gzip = headers
        .get_all(http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split([',', ' ']))
        .any(|name| name.split(';').next().unwrap_or("").trim() == "gzip");
    let response = match accepts_gzip {
        true => Encoding::Gzip,
        false => Encoding::Identity,
    };
    Ok((request, response))
}

/// A gzip body decoded, refused when it is not gzip or decodes to more than `max` bytes.
pub(crate) fn decompress(body: &[u8], max: usize) -> Result<Bytes, ApiError> {
    let mut out = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    flate2::read::GzDecoder::new(body)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| {
            refused(
                Code::InvalidArgument,
                "body",
                format!(
                    "the request's body is not gzip: {}",
                    ichor_model::inert::truncate(&e.to_string(), 80)
                ),
            )
        })?;
    if out.len() > max {
        return Err(refused(
            Code::InvalidArgument,
            "size",
            format!("the request is larger than {max} bytes once decompressed"),
        ));
    }
    Ok(Bytes::from(out))
}

/// `body` gzipped.
pub(crate) fn compress(body: &[u8]) -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(body);
    Bytes::from(encoder.finish().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, http::HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn negotiation_follows_connect_go() {
        use Encoding::{Gzip, Identity};
        assert_eq!(negotiate(&headers(&[])).unwrap(), (Identity, Identity));
        let curl = headers(&[("accept-encoding", "deflate, gzip, br, zstd")]);
        assert_eq!(negotiate(&curl).unwrap(), (Identity, Gzip));
        let sent = headers(&[("content-encoding", "gzip")]);
        assert_eq!(negotiate(&sent).unwrap(), (Gzip, Gzip));
        let e = negotiate(&headers(&[("content-encoding", "br")])).unwrap_err();
        assert_eq!(e.code, Code::Unimplemented);
        assert!(
            e.message.contains("supported encodings are gzip"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_body_round_trips_and_a_bomb_is_refused() {
        let body = b"{\"namespace\":\"default\"}".repeat(10);
        assert_eq!(
            decompress(&compress(&body), 1024).unwrap(),
            Bytes::from(body)
        );
        let bomb = compress(&vec![0; 64 * 1024]);
        assert_eq!(
            decompress(&bomb, 1024).unwrap_err().code,
            Code::InvalidArgument
        );
        assert_eq!(
            decompress(b"not gzip", 1024).unwrap_err().code,
            Code::InvalidArgument
        );
    }
}
