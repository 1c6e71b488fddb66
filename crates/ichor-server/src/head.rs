//! A connection's first request head, read before hyper is given the connection. hyper gives
//! every HTTP/1.1 connection an 8 KiB read buffer and an 8 KiB write buffer as soon as it starts
//! (what a connection that sends nothing costs serve: `cargo bench --bench hostile`,
//! docs/performance.md), and hyper has no knob for that first size. Until the
//! first request's head is complete, or HTTP/2's preface has come, what a connection sends is
//! held here in a buffer that grows with it from [`FIRST_BUFFER_BYTES`]; hyper then reads those
//! bytes first ([`Prefixed`]) and everything after them from the connection itself.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, ReadBuf};

/// What HTTP/2 with prior knowledge sends first (RFC 9113, section 3.4).
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The buffer a connection starts with: a typical request head fits.
const FIRST_BUFFER_BYTES: usize = 512;

/// Whether `buf` holds HTTP/2's preface or a complete HTTP/1.1 request head (the empty lines
/// HTTP/1.1 allows before a request line skipped).
fn complete(buf: &[u8]) -> bool {
    if HTTP2_PREFACE.starts_with(buf) || buf.starts_with(HTTP2_PREFACE) {
        return buf.len() >= HTTP2_PREFACE.len();
    }
    let Some(start) = buf.iter().position(|b| !matches!(b, b'\r' | b'\n')) else {
        return false;
    };
    let rest = &buf[start..];
    rest.windows(2).any(|w| w == b"\n\n") || rest.windows(3).any(|w| w == b"\n\r\n")
}

/// Reads until the first request's head is complete or `max` bytes have come (hyper answers a
/// head too large itself): those bytes, or `None` when the caller closed first. The caller
/// bounds the time.
pub(crate) async fn read<IO: AsyncRead + Unpin>(
    io: &mut IO,
    max: usize,
) -> io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::with_capacity(FIRST_BUFFER_BYTES);
    while !complete(&buf) && buf.len() < max {
        if buf.len() == buf.capacity() {
            // Doubles, up to `max`.
            buf.reserve_exact(buf.len().min(max - buf.len()).max(1));
        }
        if io.read_buf(&mut buf).await? == 0 {
            return Ok(None);
        }
    }
    Ok(Some(buf))
}

/// A connection whose first bytes were already read: `head` is read again first.
pub(crate) struct Prefixed<IO> {
    head: Vec<u8>,
    at: usize,
    io: IO,
}

impl<IO> Prefixed<IO> {
    pub(crate) fn new(head: Vec<u8>, io: IO) -> Prefixed<IO> {
        Prefixed { head, at: 0, io }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Prefixed<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at < this.head.len() {
            let n = buf.remaining().min(this.head.len() - this.at);
            buf.put_slice(&this.head[this.at..this.at + n]);
            this.at += n;
            if this.at == this.head.len() {
                // Given back once hyper has it.
                this.head = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Prefixed<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt as _;

    #[test]
    fn a_head_is_complete_at_its_empty_line() {
        assert!(complete(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
        assert!(complete(b"GET / HTTP/1.1\nHost: a\n\n"));
        assert!(complete(b"\r\nGET / HTTP/1.1\r\n\r\n"));
        assert!(!complete(b"GET / HTTP/1.1\r\nHost: a\r\n"));
        assert!(!complete(b"\r\n\r\n\r\n"));
        assert!(!complete(b""));
        assert!(!complete(b"PRI * HTTP/2.0\r\n\r\n"));
        assert!(complete(HTTP2_PREFACE));
    }

    #[tokio::test]
    async fn the_head_is_read_again_before_the_rest() {
        let (mut client, mut server) = tokio::io::duplex(64);
        let sent = b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody";
        let writer = tokio::spawn(async move {
            for b in sent {
                client.write_all(&[*b]).await.ok();
            }
            client
        });
        let head = read(&mut server, 1024)
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        // The head, and perhaps some of the body that came with it.
        assert!(sent.starts_with(&head) && complete(&head), "{head:?}");
        let _client = writer.await;
        let mut all = Vec::new();
        let mut joined = Prefixed::new(head, server);
        let mut chunk = [0u8; 4];
        while all.len() < sent.len() {
            let n = joined.read(&mut chunk).await.unwrap_or(0);
            assert!(n > 0);
            all.extend_from_slice(&chunk[..n]);
        }
        assert_eq!(all, sent);
    }

    #[tokio::test]
    async fn a_head_stops_at_its_bound_and_a_closed_caller_is_none() {
        let (mut client, mut server) = tokio::io::duplex(4096);
        client.write_all(&[b'a'; 3000]).await.ok();
        let head = read(&mut server, 1000)
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        assert!(head.len() >= 1000 && head.len() < 3000, "{}", head.len());
        drop(client);
        let (client, mut server) = tokio::io::duplex(64);
        drop(client);
        assert!(matches!(read(&mut server, 1000).await, Ok(None)));
    }
}
