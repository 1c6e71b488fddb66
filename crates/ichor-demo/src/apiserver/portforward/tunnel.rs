//! SPDY tunneled in a WebSocket (`SPDY/3.1+portforward.k8s.io`, kubectl 1.31+): the bytes of
//! the SPDY connection travel in binary messages, in order, cut anywhere. This bridge turns
//! the WebSocket into a byte stream for the SPDY server on the other end of a duplex pipe.

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

/// How long one side may take to finish after the other has.
pub(super) const LINGER: Duration = Duration::from_secs(5);

/// Copies between `ws` and `pipe` until both directions end (or one ended and the other
/// lingered too long): binary messages in, bytes out as binary messages, a normal Close when
/// the pipe ends.
pub(super) async fn bridge<S>(ws: WebSocketStream<S>, pipe: DuplexStream)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let (mut sink, mut stream) = ws.split();
    let (mut rd, mut wr) = tokio::io::split(pipe);
    let inbound = async {
        while let Some(msg) = stream.next().await {
            match msg {
                Ok(Message::Binary(b)) => {
                    if wr.write_all(&b).await.is_err() {
                        break;
                    }
                }
                Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {}
                // A text message has no place in the tunnel; Close ends it.
                Ok(Message::Text(_) | Message::Close(_)) | Err(_) => break,
            }
        }
        let _ = wr.shutdown().await;
    };
    let outbound = async {
        let mut buf = vec![0u8; super::CHUNK];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let msg = Message::Binary(Bytes::copy_from_slice(&buf[..n]));
                    if sink.send(msg).await.is_err() {
                        return;
                    }
                }
            }
        }
        super::close_normally(&mut sink).await;
    };
    tokio::pin!(inbound, outbound);
    tokio::select! {
        () = &mut inbound => { let _ = tokio::time::timeout(LINGER, &mut outbound).await; }
        () = &mut outbound => { let _ = tokio::time::timeout(LINGER, &mut inbound).await; }
    }
}
