//! An HTTP/1.1 request answered before its body was read (a refusal on the headers: no token, a
//! malformed deadline, the in-flight limit, a content type not served). hyper would then close
//! the connection without a word, with the body still arriving: the caller, still writing it,
//! meets a closed socket (connect-node reported `write EPIPE` for the refusal, or for its next
//! call on the same connection). As Go's net/http does under connect-go, the rest of the body is
//! read and thrown away before the answer, up to [`DRAIN_BYTES`] (the largest request message
//! served, [`super::MAX_REQUEST_BYTES`], and its framing) within [`DRAIN_TIME`], so the
//! connection goes on. A body larger or slower than that (or one the caller waits to send,
//! `Expect: 100-continue`) is not read; the answer then says `Connection: close`, and the
//! connection closes after it the way Go's `closeWriteAndWait` closes one: its sending half
//! first (the answer, then FIN), then what the caller still sends is read and thrown away for
//! up to [`LINGER_TIME`] ([`Lingering`]), so that the kernel does not reset the connection
//! under the answer before the caller has read it (a close with unread bytes is a reset).
//! HTTP/2 needs none of this: an unread stream is reset on its own, and the connection goes on.

use bytes::Bytes;
use http_body_util::BodyExt as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tonic::body::Body;

/// The most of an unanswered body read and thrown away: the largest request message served
/// and its envelope (Go's net/http reads 256 KiB; any call a client can make of serve fits).
pub(crate) const DRAIN_BYTES: usize = super::MAX_REQUEST_BYTES + 16;

/// How long the rest of such a body may take to arrive.
pub(crate) const DRAIN_TIME: Duration = Duration::from_secs(2);

/// How long a connection closed under a body it did not read keeps reading (and dropping) what
/// its caller still sends, after its answer and FIN (Go's net/http waits 500 ms; reading
/// instead of waiting, the caller meets no reset however long it writes within this).
pub(crate) const LINGER_TIME: Duration = Duration::from_secs(2);

/// The most read while lingering.
pub(crate) const LINGER_BYTES: usize = 16 * 1024 * 1024;

/// Where a request's body is left when the service drops it before its end.
pub(crate) struct Left<B>(Arc<Mutex<Option<B>>>);

impl<B> Clone for Left<B> {
    fn clone(&self) -> Self {
        Left(self.0.clone())
    }
}

impl<B> Left<B> {
    pub(crate) fn new() -> Left<B> {
        Left(Arc::default())
    }

    fn take(&self) -> Option<B> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A request's body that, dropped before its end, leaves what is unread in its [`Left`].
pub(crate) struct Watched<B> {
    inner: Option<B>,
    left: Left<B>,
}

impl<B> Watched<B> {
    pub(crate) fn new(inner: B, left: Left<B>) -> Watched<B> {
        Watched {
            inner: Some(inner),
            left,
        }
    }
}

impl<B> Drop for Watched<B> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            *self.left.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(inner);
        }
    }
}

impl<B> http_body::Body for Watched<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, B::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            // Read to its end: nothing is left when it is dropped.
            self.inner = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| http_body::SizeHint::with_exact(0), |b| b.size_hint())
    }
}

/// Whether `body` ends within [`DRAIN_BYTES`]; what it holds is thrown away.
async fn drained<B>(mut body: B) -> bool
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    let mut read = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return false };
        if let Some(data) = frame.data_ref() {
            read = read.saturating_add(data.len());
            if read > DRAIN_BYTES {
                return false;
            }
        }
    }
    true
}

/// The answer to an HTTP/1.x request, once its body's rest (if the service left one) is read
/// within the bounds above; past them, the answer says `Connection: close` and `closing` is
/// marked, for the connection to linger ([`Lingering`]). `worth` is [`worth_reading`] of the
/// request.
pub(crate) async fn answer<B>(
    mut resp: http::Response<Body>,
    left: &Left<B>,
    worth: bool,
    closing: &AtomicBool,
) -> http::Response<Body>
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    let Some(body) = left.take() else {
        return resp;
    };
    if body.is_end_stream() {
        return resp;
    }
    let read = worth
        && tokio::time::timeout(DRAIN_TIME, drained(body))
            .await
            .unwrap_or(false);
    if !read {
        closing.store(true, Ordering::Relaxed);
        resp.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    resp
}

/// A connection's transport that, dropped once an answer closed it under a body not read
/// (its flag set), is not closed at once: a task of its own shuts its sending half and reads
/// what still comes, for up to [`LINGER_TIME`] and [`LINGER_BYTES`], then closes it.
pub(crate) struct Lingering<IO>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    io: Option<IO>,
    closing: Arc<AtomicBool>,
}

impl<IO> Lingering<IO>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(io: IO, closing: Arc<AtomicBool>) -> Lingering<IO> {
        Lingering {
            io: Some(io),
            closing,
        }
    }

    fn io(&mut self) -> std::io::Result<&mut IO> {
        self.io
            .as_mut()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotConnected))
    }
}

impl<IO> Drop for Lingering<IO>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    fn drop(&mut self) {
        let Some(io) = self.io.take() else { return };
        if !self.closing.load(Ordering::Relaxed) {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(linger(io));
        }
    }
}

/// Shuts `io`'s sending half and reads what its peer still sends, within the bounds above.
async fn linger<IO: AsyncRead + AsyncWrite + Unpin>(mut io: IO) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let read_out = async {
        let _ = io.shutdown().await;
        let mut buf = vec![0u8; 16 * 1024];
        let mut read = 0usize;
        while read < LINGER_BYTES {
            match io.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read = read.saturating_add(n),
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, read_out).await;
}

impl<IO> AsyncRead for Lingering<IO>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(self.io()?).poll_read(cx, buf)
    }
}

impl<IO> AsyncWrite for Lingering<IO>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(self.io()?).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(self.io()?).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(self.io()?).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(self.io()?).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.as_ref().is_some_and(|io| io.is_write_vectored())
    }
}

/// Whether a body left unread is worth reading after its answer: not one the caller waits to
/// send (`Expect: 100-continue`), nor one it declared larger than [`DRAIN_BYTES`] (answered at
/// once, and the connection closed).
pub(crate) fn worth_reading<B>(req: &http::Request<B>) -> bool {
    let headers = req.headers();
    let waits = headers
        .get(http::header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    !waits && declared.is_none_or(|n| n <= DRAIN_BYTES as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{Full, StreamBody};

    fn dropped_unread<B>(body: B) -> Left<B> {
        let left = Left::new();
        drop(Watched::new(body, left.clone()));
        left
    }

    fn closes(resp: &http::Response<Body>) -> bool {
        resp.headers()
            .get(http::header::CONNECTION)
            .is_some_and(|v| v == "close")
    }

    #[tokio::test]
    async fn a_small_unread_body_is_read_and_the_connection_goes_on() {
        let left = dropped_unread(Full::new(Bytes::from_static(b"a small request")));
        let closing = AtomicBool::new(false);
        let resp = answer(http::Response::new(Body::empty()), &left, true, &closing).await;
        assert!(!closes(&resp));
        assert!(!closing.load(Ordering::Relaxed));
    }

    #[tokio::test]
    async fn a_body_read_to_its_end_leaves_nothing() {
        let left = Left::new();
        let mut body = Watched::new(Full::new(Bytes::from_static(b"x")), left.clone());
        while body.frame().await.is_some() {}
        drop(body);
        assert!(left.take().is_none());
    }

    #[tokio::test]
    async fn a_large_or_withheld_body_closes_the_connection() {
        let big = Full::new(Bytes::from(vec![0u8; DRAIN_BYTES + 1]));
        let closing = AtomicBool::new(false);
        let resp = answer(
            http::Response::new(Body::empty()),
            &dropped_unread(big),
            true,
            &closing,
        )
        .await;
        assert!(closes(&resp) && closing.load(Ordering::Relaxed));
        let small = Full::new(Bytes::from_static(b"x"));
        let resp = answer(
            http::Response::new(Body::empty()),
            &dropped_unread(small),
            false,
            &AtomicBool::new(false),
        )
        .await;
        assert!(closes(&resp), "a body not worth reading is not read");
        let request = |h: &str, v: &str| http::Request::post("/").header(h, v).body(()).unwrap();
        assert!(!worth_reading(&request("expect", "100-continue")));
        let over = (DRAIN_BYTES + 1).to_string();
        assert!(!worth_reading(&request("content-length", &over)));
        assert!(worth_reading(&request("content-length", "204800")));
        assert!(worth_reading(&request("transfer-encoding", "chunked")));
    }

    /// A transport dropped after a closing answer: its sending half is shut (the peer reads
    /// the end) and what the peer still sends is read, not left to reset the connection.
    #[tokio::test]
    async fn a_closed_connection_lingers_reading_what_still_comes() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (server, mut client) = tokio::io::duplex(1024);
        let closing = Arc::new(AtomicBool::new(true));
        drop(Lingering::new(server, closing));
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.unwrap();
        assert!(got.is_empty(), "the server's side ended");
        // The lingering side still reads: 64 KiB through a 1 KiB pipe goes through.
        client.write_all(&vec![0u8; 64 * 1024]).await.unwrap();
        client.shutdown().await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_does_not_come_closes_the_connection_after_the_drain_time() {
        let never = StreamBody::new(futures::stream::pending::<
            Result<http_body::Frame<Bytes>, std::convert::Infallible>,
        >());
        let started = tokio::time::Instant::now();
        let resp = answer(
            http::Response::new(Body::empty()),
            &dropped_unread(never),
            true,
            &AtomicBool::new(false),
        )
        .await;
        assert!(closes(&resp));
        assert_eq!(started.elapsed(), DRAIN_TIME);
    }
}
