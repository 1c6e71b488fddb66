//! Writing SPDY/3 frames.

use super::{
    FLAG_FIN, Frame, GOAWAY, HEADERS, Headers, PING, ProtocolError, RST_STREAM, SETTINGS,
    SYN_REPLY, SYN_STREAM, VERSION, WINDOW_UPDATE, dictionary::dictionary, protocol_error,
};
use bytes::BufMut;
use flate2::{Compress, Compression, FlushCompress};

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
