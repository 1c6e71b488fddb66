//! Reading SPDY/3 frames.

use super::{
    FLAG_FIN, Frame, GOAWAY, HEADERS, Headers, MAX_CONTROL_FRAME, MAX_HEADER_BLOCK, PING,
    ProtocolError, RST_STREAM, SETTINGS, SYN_REPLY, SYN_STREAM, VERSION, WINDOW_UPDATE,
    dictionary::dictionary, protocol_error,
};
use bytes::{Buf, Bytes, BytesMut};
use flate2::{Decompress, FlushDecompress};

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
        let payload = buf.split_to(len).freeze();
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
        self.control_frame(kind, fin, payload).map(Some)
    }

    /// A control frame of type `kind` from its payload.
    fn control_frame(
        &mut self,
        kind: u16,
        fin: bool,
        mut payload: Bytes,
    ) -> Result<Frame, ProtocolError> {
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
        Ok(frame)
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
