//! A SPDY/3.1 frame codec, as much of it as kubectl's port-forward uses (moby/spdystream on
//! its side): SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS,
//! WINDOW_UPDATE and DATA frames, with the zlib-compressed name/value header blocks (one zlib
//! stream per direction and connection, sync-flushed after each block, primed with SPDY/3's
//! dictionary).
//!
//! Hand-written: no maintained Rust crate speaks SPDY/3.1 (the protocol was retired in favour
//! of HTTP/2 outside Kubernetes), and this side needs only the frames above. Flow control is
//! not enforced: spdystream neither sends nor honours WINDOW_UPDATE, so these frames are read
//! and ignored, and never sent.

mod decode;
mod dictionary;
mod encode;

pub(crate) use self::decode::Decoder;
pub(crate) use self::encode::Encoder;

use bytes::Bytes;

/// The protocol version in every control frame.
const VERSION: u16 = 3;

const SYN_STREAM: u16 = 1;
const SYN_REPLY: u16 = 2;
const RST_STREAM: u16 = 3;
const SETTINGS: u16 = 4;
const PING: u16 = 6;
const GOAWAY: u16 = 7;
const HEADERS: u16 = 8;
const WINDOW_UPDATE: u16 = 9;

/// FLAG_FIN, on control and data frames alike.
const FLAG_FIN: u8 = 0x01;

/// The largest control frame read (header blocks are small; a bigger one is an attack).
const MAX_CONTROL_FRAME: usize = 64 * 1024;
/// The largest header block after decompression.
const MAX_HEADER_BLOCK: usize = 256 * 1024;

/// RST_STREAM status codes (SPDY/3 section 2.6.3).
pub(crate) const PROTOCOL_ERROR: u32 = 1;
pub(crate) const REFUSED_STREAM: u32 = 3;
/// GOAWAY status codes.
pub(crate) const GOAWAY_OK: u32 = 0;
pub(crate) const GOAWAY_PROTOCOL_ERROR: u32 = 1;

/// Header names and values, in order, names lowercase.
pub(crate) type Headers = Vec<(String, String)>;

/// One SPDY/3 frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    SynStream {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    SynReply {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    RstStream {
        stream_id: u32,
        status: u32,
    },
    /// Settings are read and ignored.
    Settings,
    Ping {
        id: u32,
    },
    GoAway {
        last_good_stream_id: u32,
        status: u32,
    },
    Headers {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    WindowUpdate {
        stream_id: u32,
        delta: u32,
    },
    Data {
        stream_id: u32,
        fin: bool,
        data: Bytes,
    },
}

/// A frame that cannot be read: the connection must end (with GOAWAY PROTOCOL_ERROR).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ProtocolError(pub(crate) String);

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SPDY protocol error: {}", self.0)
    }
}

fn protocol_error(msg: impl Into<String>) -> ProtocolError {
    ProtocolError(msg.into())
}

/// The first value of header `name` (lowercase).
pub(crate) fn header<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::dictionary::dictionary;
    use super::*;
    use bytes::{BufMut, BytesMut};
    use flate2::{Compress, Compression};

    /// The dictionary is the one SPDY/3 peers use: its length and Adler-32 (the DICTID that a
    /// peer's zlib header names) are the spec's.
    #[test]
    fn dictionary_is_spdy3s() {
        let d = dictionary();
        assert_eq!(d.len(), 1423);
        let mut z = Compress::new(Compression::default(), true);
        assert_eq!(z.set_dictionary(&d).ok(), Some(0xe3c6_a7c2));
    }

    /// Every frame kind survives encoding and decoding, header blocks across one shared zlib
    /// stream, and a frame split across reads is read once whole.
    #[test]
    fn frames_round_trip() {
        let frames = vec![
            Frame::SynStream {
                stream_id: 1,
                fin: false,
                headers: vec![
                    ("streamtype".into(), "error".into()),
                    ("port".into(), "8080".into()),
                    ("requestid".into(), "0".into()),
                ],
            },
            Frame::SynReply {
                stream_id: 1,
                fin: false,
                headers: vec![],
            },
            Frame::Headers {
                stream_id: 3,
                fin: true,
                headers: vec![("a".into(), "1".into()), ("a".into(), "2".into())],
            },
            Frame::Data {
                stream_id: 3,
                fin: true,
                data: Bytes::from_static(b"hello"),
            },
            Frame::RstStream {
                stream_id: 3,
                status: REFUSED_STREAM,
            },
            Frame::Ping { id: 1 },
            Frame::GoAway {
                last_good_stream_id: 3,
                status: GOAWAY_OK,
            },
            Frame::WindowUpdate {
                stream_id: 1,
                delta: 1000,
            },
            Frame::Settings,
        ];
        let mut enc = Encoder::new().expect("encoder");
        let mut bytes = Vec::new();
        for f in &frames {
            enc.encode(f, &mut bytes).expect("encodes");
        }
        let mut dec = Decoder::new();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        // One byte at a time: no frame is read before it is whole.
        for b in bytes {
            buf.put_u8(b);
            while let Some(f) = dec.next(&mut buf).expect("decodes") {
                got.push(f);
            }
        }
        assert_eq!(got, frames);
        assert!(buf.is_empty());
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        let mut dec = Decoder::new();
        let mut buf = BytesMut::from(&[0x80, 0x03, 0x00, 0x63, 0, 0, 0, 0][..]);
        assert!(dec.next(&mut buf).is_err(), "unknown control frame type");
        let mut buf = BytesMut::from(&[0x80, 0x02, 0x00, 0x01, 0, 0, 0, 0][..]);
        assert!(dec.next(&mut buf).is_err(), "SPDY/2");
        let mut buf = BytesMut::from(
            &[
                0x80, 0x03, 0x00, 0x01, 0, 0, 0, 14, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4,
            ][..],
        );
        assert!(
            dec.next(&mut buf).is_err(),
            "a header block that is not zlib"
        );
        let mut buf = BytesMut::from(&[0x80, 0x03, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff][..]);
        assert!(dec.next(&mut buf).is_err(), "an oversized control frame");
    }
}
