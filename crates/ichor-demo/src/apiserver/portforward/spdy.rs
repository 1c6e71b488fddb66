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

use bytes::{Buf, BufMut, Bytes, BytesMut};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress};

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

/// SPDY/3's header compression dictionary (draft-mbelshe-httpbis-spdy-00, section 2.6.10.1):
/// length-prefixed header names and values, then a run of common status lines, dates and
/// media types. Built from its parts rather than spelt out as 1,423 bytes.
pub(crate) fn dictionary() -> Vec<u8> {
    const WORDS: [&str; 65] = [
        "options",
        "head",
        "post",
        "put",
        "delete",
        "trace",
        "accept",
        "accept-charset",
        "accept-encoding",
        "accept-language",
        "accept-ranges",
        "age",
        "allow",
        "authorization",
        "cache-control",
        "connection",
        "content-base",
        "content-encoding",
        "content-language",
        "content-length",
        "content-location",
        "content-md5",
        "content-range",
        "content-type",
        "date",
        "etag",
        "expect",
        "expires",
        "from",
        "host",
        "if-match",
        "if-modified-since",
        "if-none-match",
        "if-range",
        "if-unmodified-since",
        "last-modified",
        "location",
        "max-forwards",
        "pragma",
        "proxy-authenticate",
        "proxy-authorization",
        "range",
        "referer",
        "retry-after",
        "server",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "user-agent",
        "vary",
        "via",
        "warning",
        "www-authenticate",
        "method",
        "get",
        "status",
        "200 OK",
        "version",
        "HTTP/1.1",
        "url",
        "public",
        "set-cookie",
        "keep-alive",
        "origin",
    ];
    // Then, without length prefixes:
    const TAIL: [&str; 5] = [
        "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505",
        "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request\
         401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented\
         503 Service Unavailable",
        "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT",
        "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,\
         text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdch",
        "charset=utf-8charset=iso-8859-1,utf-,*,enq=0.",
    ];
    let mut d = Vec::with_capacity(1423);
    for w in WORDS {
        d.put_u32(w.len() as u32);
        d.extend_from_slice(w.as_bytes());
    }
    for t in TAIL {
        d.extend_from_slice(t.as_bytes());
    }
    d
}

/// Reads frames from the bytes a peer sent, decompressing its header blocks.
pub(crate) struct Decoder {
    inflate: Decompress,
    dictionary: Vec<u8>,
}

impl Decoder {
    pub(crate) fn new() -> Decoder {
        Decoder {
            inflate: Decompress::new(true),
            dictionary: dictionary(),
        }
    }

    /// The next whole frame at the front of `buf` (consumed), or `None` until more bytes come.
    pub(crate) fn next(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, ProtocolError> {
        if buf.len() < 8 {
            return Ok(None);
        }
        let first = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
        let flags = buf[4];
        let len = u32::from_be_bytes([0, buf[5], buf[6], buf[7]]) as usize;
        let control = first & 0x8000_0000 != 0;
        if control && len > MAX_CONTROL_FRAME {
            return Err(protocol_error(format!("control frame of {len} bytes")));
        }
        if buf.len() < 8 + len {
            buf.reserve(8 + len - buf.len());
            return Ok(None);
        }
        buf.advance(8);
        let mut payload = buf.split_to(len).freeze();
        let fin = flags & FLAG_FIN != 0;
        if !control {
            let stream_id = first & 0x7fff_ffff;
            if stream_id == 0 {
                return Err(protocol_error("data frame on stream 0"));
            }
            return Ok(Some(Frame::Data {
                stream_id,
                fin,
                data: payload,
            }));
        }
        let version = ((first >> 16) & 0x7fff) as u16;
        if version != VERSION {
            return Err(protocol_error(format!("SPDY version {version}")));
        }
        let kind = (first & 0xffff) as u16;
        let frame = match kind {
            SYN_STREAM => {
                let stream_id = read_u32(&mut payload)? & 0x7fff_ffff;
                let _associated = read_u32(&mut payload)?;
                let _priority_and_slot = read_u16(&mut payload)?;
                let headers = self.header_block(&payload)?;
                nonzero(stream_id)?;
                Frame::SynStream {
                    stream_id,
                    fin,
                    headers,
                }
            }
            SYN_REPLY | HEADERS => {
                let stream_id = read_u32(&mut payload)? & 0x7fff_ffff;
                let headers = self.header_block(&payload)?;
                nonzero(stream_id)?;
                if kind == SYN_REPLY {
                    Frame::SynReply {
                        stream_id,
                        fin,
                        headers,
                    }
                } else {
                    Frame::Headers {
                        stream_id,
                        fin,
                        headers,
                    }
                }
            }
            RST_STREAM => Frame::RstStream {
                stream_id: nonzero(read_u32(&mut payload)? & 0x7fff_ffff)?,
                status: read_u32(&mut payload)?,
            },
            SETTINGS => Frame::Settings,
            PING => Frame::Ping {
                id: read_u32(&mut payload)?,
            },
            GOAWAY => Frame::GoAway {
                last_good_stream_id: read_u32(&mut payload)? & 0x7fff_ffff,
                status: read_u32(&mut payload)?,
            },
            WINDOW_UPDATE => Frame::WindowUpdate {
                stream_id: read_u32(&mut payload)? & 0x7fff_ffff,
                delta: read_u32(&mut payload)? & 0x7fff_ffff,
            },
            other => {
                return Err(protocol_error(format!(
                    "unknown control frame type {other}"
                )));
            }
        };
        Ok(Some(frame))
    }

    /// A compressed name/value header block.
    fn header_block(&mut self, compressed: &[u8]) -> Result<Headers, ProtocolError> {
        let block = self.inflate(compressed)?;
        parse_header_block(&block)
    }

    /// Decompresses one header block: all of `input`, sync-flushed by the peer.
    fn inflate(&mut self, input: &[u8]) -> Result<Vec<u8>, ProtocolError> {
        let mut out = Vec::with_capacity(input.len() * 4 + 256);
        let mut pos = 0;
        loop {
            let (in_before, out_before) = (self.inflate.total_in(), out.len());
            let res = self
                .inflate
                .decompress_vec(&input[pos..], &mut out, FlushDecompress::Sync);
            pos += (self.inflate.total_in() - in_before) as usize;
            match res {
                Ok(_) => {}
                Err(e) if e.needs_dictionary().is_some() => {
                    self.inflate
                        .set_dictionary(&self.dictionary)
                        .map_err(|e| protocol_error(format!("header dictionary: {e}")))?;
                    continue;
                }
                Err(e) => return Err(protocol_error(format!("header block: {e}"))),
            }
            let full = out.len() == out.capacity();
            if pos == input.len() && !full {
                return Ok(out);
            }
            if out.len() >= MAX_HEADER_BLOCK {
                return Err(protocol_error("header block too large"));
            }
            if full {
                out.reserve(out.capacity());
            } else if out.len() == out_before && pos < input.len() {
                // Input left, room left, nothing produced: the stream is stuck.
                return Err(protocol_error("header block does not decompress"));
            }
        }
    }
}

fn nonzero(stream_id: u32) -> Result<u32, ProtocolError> {
    if stream_id == 0 {
        return Err(protocol_error("stream id 0"));
    }
    Ok(stream_id)
}

fn read_u32(b: &mut Bytes) -> Result<u32, ProtocolError> {
    if b.remaining() < 4 {
        return Err(protocol_error("frame too short"));
    }
    Ok(b.get_u32())
}

fn read_u16(b: &mut Bytes) -> Result<u16, ProtocolError> {
    if b.remaining() < 2 {
        return Err(protocol_error("frame too short"));
    }
    Ok(b.get_u16())
}

/// `count, (name length, name, value length, value)*`, values NUL-separated when repeated.
fn parse_header_block(block: &[u8]) -> Result<Headers, ProtocolError> {
    let mut b = Bytes::copy_from_slice(block);
    let count = read_u32(&mut b)?;
    let mut headers = Vec::new();
    let text = |b: &mut Bytes| -> Result<String, ProtocolError> {
        let len = read_u32(b)? as usize;
        if b.remaining() < len {
            return Err(protocol_error("header block too short"));
        }
        String::from_utf8(b.split_to(len).to_vec()).map_err(|_| protocol_error("header not UTF-8"))
    };
    for _ in 0..count {
        let name = text(&mut b)?.to_ascii_lowercase();
        let value = text(&mut b)?;
        headers.extend(value.split('\0').map(|v| (name.clone(), v.to_string())));
    }
    Ok(headers)
}

/// The first value of header `name` (lowercase).
pub(crate) fn header<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Writes frames for the peer, compressing header blocks.
pub(crate) struct Encoder {
    deflate: Compress,
}

impl Encoder {
    pub(crate) fn new() -> Result<Encoder, ProtocolError> {
        let mut deflate = Compress::new(Compression::default(), true);
        deflate
            .set_dictionary(&dictionary())
            .map_err(|e| protocol_error(format!("header dictionary: {e}")))?;
        Ok(Encoder { deflate })
    }

    /// Appends `frame` to `out`.
    pub(crate) fn encode(&mut self, frame: &Frame, out: &mut Vec<u8>) -> Result<(), ProtocolError> {
        match frame {
            Frame::Data {
                stream_id,
                fin,
                data,
            } => {
                out.put_u32(stream_id & 0x7fff_ffff);
                put_flags_len(out, *fin, data.len())?;
                out.extend_from_slice(data);
            }
            Frame::SynStream {
                stream_id,
                fin,
                headers,
            } => {
                let block = self.header_block(headers)?;
                control(out, SYN_STREAM, *fin, 10 + block.len())?;
                out.put_u32(*stream_id);
                out.put_u32(0);
                out.put_u16(0);
                out.extend_from_slice(&block);
            }
            Frame::SynReply {
                stream_id,
                fin,
                headers,
            }
            | Frame::Headers {
                stream_id,
                fin,
                headers,
            } => {
                let kind = if matches!(frame, Frame::SynReply { .. }) {
                    SYN_REPLY
                } else {
                    HEADERS
                };
                let block = self.header_block(headers)?;
                control(out, kind, *fin, 4 + block.len())?;
                out.put_u32(*stream_id);
                out.extend_from_slice(&block);
            }
            Frame::RstStream { stream_id, status } => {
                control(out, RST_STREAM, false, 8)?;
                out.put_u32(*stream_id);
                out.put_u32(*status);
            }
            Frame::Settings => {
                control(out, SETTINGS, false, 4)?;
                out.put_u32(0);
            }
            Frame::Ping { id } => {
                control(out, PING, false, 4)?;
                out.put_u32(*id);
            }
            Frame::GoAway {
                last_good_stream_id,
                status,
            } => {
                control(out, GOAWAY, false, 8)?;
                out.put_u32(*last_good_stream_id);
                out.put_u32(*status);
            }
            Frame::WindowUpdate { stream_id, delta } => {
                control(out, WINDOW_UPDATE, false, 8)?;
                out.put_u32(*stream_id);
                out.put_u32(*delta);
            }
        }
        Ok(())
    }

    /// A header block, compressed and sync-flushed.
    fn header_block(&mut self, headers: &Headers) -> Result<Vec<u8>, ProtocolError> {
        // Repeated names share one entry, their values NUL-separated.
        let mut names: Vec<(&str, Vec<&str>)> = Vec::new();
        for (n, v) in headers {
            match names.iter_mut().find(|(name, _)| name == n) {
                Some((_, values)) => values.push(v),
                None => names.push((n, vec![v])),
            }
        }
        let mut raw = Vec::new();
        raw.put_u32(names.len() as u32);
        for (n, values) in names {
            let value = values.join("\0");
            raw.put_u32(n.len() as u32);
            raw.extend_from_slice(n.as_bytes());
            raw.put_u32(value.len() as u32);
            raw.extend_from_slice(value.as_bytes());
        }
        let mut out = Vec::with_capacity(raw.len() + 64);
        let mut pos = 0;
        loop {
            let before = self.deflate.total_in();
            self.deflate
                .compress_vec(&raw[pos..], &mut out, FlushCompress::Sync)
                .map_err(|e| protocol_error(format!("compressing headers: {e}")))?;
            pos += (self.deflate.total_in() - before) as usize;
            // Done when all input is in and the flush fitted with room to spare.
            if pos == raw.len() && out.len() < out.capacity() {
                return Ok(out);
            }
            out.reserve(out.capacity().max(64));
        }
    }
}

/// A control frame's header: version, type, flags and length.
fn control(out: &mut Vec<u8>, kind: u16, fin: bool, len: usize) -> Result<(), ProtocolError> {
    out.put_u16(0x8000 | VERSION);
    out.put_u16(kind);
    put_flags_len(out, fin, len)
}

fn put_flags_len(out: &mut Vec<u8>, fin: bool, len: usize) -> Result<(), ProtocolError> {
    if len > 0x00ff_ffff {
        return Err(protocol_error(format!("frame of {len} bytes")));
    }
    let flags = if fin { FLAG_FIN } else { 0 };
    out.put_u32((u32::from(flags) << 24) | len as u32);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
