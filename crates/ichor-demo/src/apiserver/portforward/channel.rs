//! The WebSocket channel protocol of port-forwarding (`v4.channel.k8s.io`, as kube-rs's
//! `Api::<Pod>::portforward` speaks it; also its base64 form): for the i-th port of
//! `?ports=`, channel 2i carries data and channel 2i+1 errors. Each channel's first message is
//! the port, little-endian; every message is prefixed with its channel (a byte, or an ASCII
//! digit in base64 form). The client's bytes for a port go to a connection to its target,
//! opened at once; the target's come back on the data channel; an error is one message on the
//! error channel. v4 has no half-close: the connection ends when every port's forwarding has
//! ended (then the server sends Close), or when the client closes it.

use super::{PodForward, pump};
use base64::Engine as _;
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

/// Channel messages as the agreed form encodes them.
#[derive(Clone, Copy)]
struct Encoding {
    base64: bool,
}

impl Encoding {
    fn message(self, channel: u8, data: &[u8]) -> Message {
        if self.base64 {
            let mut text = String::with_capacity(1 + data.len() * 4 / 3 + 4);
            text.push(char::from(b'0' + channel));
            base64::engine::general_purpose::STANDARD.encode_string(data, &mut text);
            Message::Text(text.into())
        } else {
            let mut bin = Vec::with_capacity(1 + data.len());
            bin.push(channel);
            bin.extend_from_slice(data);
            Message::Binary(bin.into())
        }
    }

    /// The channel and data of a client message; `None` for one that carries none.
    fn decode(self, msg: Message) -> Option<(u8, Bytes)> {
        match (self.base64, msg) {
            (false, Message::Binary(mut b)) if !b.is_empty() => {
                let ch = b[0];
                Some((ch, b.split_off(1)))
            }
            (true, Message::Text(t)) if !t.is_empty() => {
                let s = t.as_str();
                let ch = s.as_bytes()[0].checked_sub(b'0')?;
                let data = base64::engine::general_purpose::STANDARD
                    .decode(&s[1..])
                    .ok()?;
                Some((ch, Bytes::from(data)))
            }
            _ => None,
        }
    }
}

/// Forwards `ports` over `ws` until the client closes or every port is done.
pub(super) async fn serve<S>(
    ws: WebSocketStream<S>,
    mut pod: PodForward,
    ports: Vec<u16>,
    base64: bool,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let enc = Encoding { base64 };
    let (mut sink, mut stream) = ws.split();
    let (out, mut out_rx) = mpsc::channel::<Message>(64);
    let writer = tokio::spawn(async move {
        while let Some(msg) = out_rx.recv().await {
            if sink.send(msg).await.is_err() {
                return;
            }
        }
        super::close_normally(&mut sink).await;
    });
    let mut to_target = Vec::with_capacity(ports.len());
    let mut tasks = JoinSet::new();
    for (i, &port) in ports.iter().enumerate() {
        let (data_ch, err_ch) = (2 * i as u8, 2 * i as u8 + 1);
        for ch in [data_ch, err_ch] {
            let _ = out.send(enc.message(ch, &port.to_le_bytes())).await;
        }
        let (tx, rx) = mpsc::channel::<Bytes>(16);
        to_target.push(Some(tx));
        let (pod, out) = (pod.clone(), out.clone());
        tasks.spawn(async move {
            let stream = match pod.connect(port).await {
                Ok(s) => s,
                Err(msg) => return (i, Err(msg)),
            };
            let frame = move |b: Bytes| enc.message(data_ch, &b);
            let (_, res) = pump(stream, rx, out, frame, None).await;
            (i, res.map_err(|e| pod.error_text(port, e)))
        });
    }
    let mut running = ports.len();
    while running > 0 {
        tokio::select! {
            msg = stream.next() => match msg {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(msg)) => {
                    let Some((ch, data)) = enc.decode(msg) else { continue };
                    let i = usize::from(ch / 2);
                    if ch % 2 == 0 && !data.is_empty()
                        && let Some(Some(tx)) = to_target.get(i)
                        && tx.send(data).await.is_err()
                    {
                        to_target[i] = None;
                    }
                }
            },
            Some(done) = tasks.join_next() => {
                running -= 1;
                if let Ok((i, Err(msg))) = done {
                    let _ = out.send(enc.message(2 * i as u8 + 1, msg.as_bytes())).await;
                }
            }
            () = pod.gone() => {
                for (i, port) in ports.iter().enumerate() {
                    let _ = out.send(enc.message(2 * i as u8 + 1, pod.gone_text(*port).as_bytes())).await;
                }
                break;
            }
        }
    }
    // Every target connection closes with its task; then the writer sends Close.
    tasks.shutdown().await;
    drop(out);
    super::finish(writer, Duration::from_secs(5)).await;
}
