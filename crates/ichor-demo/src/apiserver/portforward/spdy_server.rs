//! Port-forwarding over SPDY/3.1, the kubelet's way (kubectl port-forward): for each local
//! connection the client opens two streams with the same `requestid` and `port`, `streamtype:
//! error` first, then `streamtype: data`. Once both are there the pod's port is connected; the
//! data stream carries the bytes both ways, half-closed with FIN; the error stream carries at
//! most one message from the server, then FIN. When the forwarding ends the server finishes
//! both streams (kubectl waits for the error stream's end).

use super::spdy::{
    Decoder, Encoder, Frame, GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, Headers, PROTOCOL_ERROR,
    REFUSED_STREAM, header,
};
use super::{PodForward, finish, pump};
use bytes::{Bytes, BytesMut};
use std::collections::HashMap;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

/// The two streams of one forwarded connection, and its forwarding once both are there.
struct Pair {
    port: u16,
    error_stream: Option<u32>,
    data_stream: Option<u32>,
    /// The client's bytes for the target; dropped at the client's FIN.
    to_target: Option<mpsc::Sender<Bytes>>,
    task: Option<AbortHandle>,
}

/// What a stream is to the session: the request it belongs to, and whether it is the data
/// stream.
#[derive(Clone)]
struct StreamRef {
    request: String,
    data: bool,
}

/// How a forwarding ended: whether the data stream's FIN was sent, and the error message.
type Outcome = (String, bool, Result<(), String>);

struct Session {
    pod: PodForward,
    out: mpsc::Sender<Frame>,
    pairs: HashMap<String, Pair>,
    streams: HashMap<u32, StreamRef>,
    tasks: JoinSet<Outcome>,
    /// The last stream id the client opened (GOAWAY names it).
    last_stream: u32,
    gone_away: bool,
}

/// Serves one SPDY connection until the client closes it or the pod goes away.
pub(super) async fn serve<IO>(io: IO, pod: PodForward)
where
    IO: AsyncRead + AsyncWrite + Send + 'static,
{
    let (mut rd, wr) = tokio::io::split(io);
    let (out, out_rx) = mpsc::channel::<Frame>(64);
    let writer = tokio::spawn(write_frames(wr, out_rx));
    let mut gone = pod.clone();
    let mut s = Session {
        pod,
        out,
        pairs: HashMap::new(),
        streams: HashMap::new(),
        tasks: JoinSet::new(),
        last_stream: 0,
        gone_away: false,
    };
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::with_capacity(16 * 1024);
    'session: loop {
        tokio::select! {
            n = rd.read_buf(&mut buf) => {
                if !matches!(n, Ok(n) if n > 0) {
                    break;
                }
                loop {
                    match decoder.next(&mut buf) {
                        Ok(Some(frame)) => s.on_frame(frame).await,
                        Ok(None) => break,
                        Err(e) => {
                            tracing::debug!(error = %e, "port-forward: bad SPDY frame");
                            s.send(Frame::GoAway {
                                last_good_stream_id: s.last_stream,
                                status: GOAWAY_PROTOCOL_ERROR,
                            })
                            .await;
                            break 'session;
                        }
                    }
                }
            }
            Some(done) = s.tasks.join_next(), if !s.tasks.is_empty() => {
                if let Ok(outcome) = done {
                    s.on_forward_done(outcome).await;
                }
            }
            () = gone.gone() => {
                s.on_pod_gone().await;
                break;
            }
        }
    }
    // Every target connection closes with its task; the writer then flushes and closes.
    s.tasks.shutdown().await;
    drop(s);
    drop(rd);
    finish(writer, Duration::from_secs(5)).await;
}

/// Encodes and writes frames until every sender is gone, then shuts the connection down.
async fn write_frames<W: AsyncWrite>(wr: W, mut frames: mpsc::Receiver<Frame>) {
    tokio::pin!(wr);
    let mut enc = match Encoder::new() {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(error = %e, "port-forward: no SPDY encoder");
            return;
        }
    };
    let mut bytes = Vec::with_capacity(64 * 1024);
    while let Some(frame) = frames.recv().await {
        bytes.clear();
        let mut next = Some(frame);
        // What is queued goes out in one write.
        while let Some(f) = next {
            if let Err(e) = enc.encode(&f, &mut bytes) {
                tracing::debug!(error = %e, "port-forward: frame not encoded");
            }
            next = if bytes.len() < 64 * 1024 {
                frames.try_recv().ok()
            } else {
                None
            };
        }
        if wr.write_all(&bytes).await.is_err() || wr.flush().await.is_err() {
            return;
        }
    }
    let _ = wr.shutdown().await;
}

impl Session {
    async fn send(&self, frame: Frame) {
        // A send fails only once the writer is gone, and then the session ends with it.
        let _ = self.out.send(frame).await;
    }

    async fn on_frame(&mut self, frame: Frame) {
        match frame {
            Frame::SynStream {
                stream_id,
                fin: _,
                headers,
            } => self.on_new_stream(stream_id, &headers).await,
            Frame::Data {
                stream_id,
                fin,
                data,
            } => self.on_data(stream_id, fin, data).await,
            Frame::RstStream { stream_id, .. } => self.on_reset(stream_id).await,
            // Only the client's own pings (odd ids) are answered.
            Frame::Ping { id } if id % 2 == 1 => self.send(Frame::Ping { id }).await,
            // No new streams after GOAWAY; open ones go on until they end.
            Frame::GoAway { .. } => self.gone_away = true,
            Frame::Ping { .. }
            | Frame::SynReply { .. }
            | Frame::Headers { .. }
            | Frame::Settings
            | Frame::WindowUpdate { .. } => {}
        }
    }

    /// A new stream: checked, accepted, and paired with its sibling.
    async fn on_new_stream(&mut self, id: u32, headers: &Headers) {
        if self.gone_away || id <= self.last_stream || id.is_multiple_of(2) {
            self.send(Frame::RstStream {
                stream_id: id,
                status: PROTOCOL_ERROR,
            })
            .await;
            return;
        }
        self.last_stream = id;
        let port = header(headers, "port").and_then(|p| p.parse::<u16>().ok());
        let data = match header(headers, "streamtype") {
            Some("data") => Some(true),
            Some("error") => Some(false),
            _ => None,
        };
        let (Some(port @ 1..), Some(data)) = (port, data) else {
            self.send(Frame::RstStream {
                stream_id: id,
                status: REFUSED_STREAM,
            })
            .await;
            return;
        };
        // Old clients send no request id: the kubelet pairs consecutive ids then.
        let request = match header(headers, "requestid") {
            Some(r) => r.to_string(),
            None if data => id.saturating_sub(2).to_string(),
            None => id.to_string(),
        };
        let pair = self.pairs.entry(request.clone()).or_insert(Pair {
            port,
            error_stream: None,
            data_stream: None,
            to_target: None,
            task: None,
        });
        let slot = if data {
            &mut pair.data_stream
        } else {
            &mut pair.error_stream
        };
        if slot.is_some() || pair.port != port {
            self.send(Frame::RstStream {
                stream_id: id,
                status: PROTOCOL_ERROR,
            })
            .await;
            return;
        }
        *slot = Some(id);
        self.streams.insert(
            id,
            StreamRef {
                request: request.clone(),
                data,
            },
        );
        self.send(Frame::SynReply {
            stream_id: id,
            fin: false,
            headers: Vec::new(),
        })
        .await;
        self.start_if_paired(&request);
    }

    /// Connects the pod's port once a request has both its streams.
    fn start_if_paired(&mut self, request: &str) {
        let Some(pair) = self.pairs.get_mut(request) else {
            return;
        };
        let (Some(data_id), Some(_), None) = (pair.data_stream, pair.error_stream, &pair.task)
        else {
            return;
        };
        let (tx, rx) = mpsc::channel::<Bytes>(16);
        pair.to_target = Some(tx);
        let (pod, out, port, request) = (
            self.pod.clone(),
            self.out.clone(),
            pair.port,
            request.to_string(),
        );
        let handle = self.tasks.spawn(async move {
            let stream = match pod.connect(port).await {
                Ok(s) => s,
                Err(msg) => return (request, false, Err(msg)),
            };
            let frame = move |data: Bytes| Frame::Data {
                stream_id: data_id,
                fin: false,
                data,
            };
            let eof = Frame::Data {
                stream_id: data_id,
                fin: true,
                data: Bytes::new(),
            };
            let (fin_sent, res) = pump(stream, rx, out, frame, Some(eof)).await;
            (request, fin_sent, res.map_err(|e| pod.error_text(port, e)))
        });
        pair.task = Some(handle);
    }

    async fn on_data(&mut self, id: u32, fin: bool, data: Bytes) {
        let Some(StreamRef {
            request,
            data: true,
        }) = self.streams.get(&id).cloned()
        else {
            // The error stream takes nothing from the client; unknown streams are ignored.
            return;
        };
        let Some(pair) = self.pairs.get_mut(&request) else {
            return;
        };
        if !data.is_empty()
            && let Some(tx) = &pair.to_target
            && tx.send(data).await.is_err()
        {
            pair.to_target = None;
        }
        if fin {
            pair.to_target = None;
        }
    }

    /// The client reset a stream (kubectl resets the data stream once it has read the
    /// target's EOF, or gives up on it): the forwarding stops, and the error stream is finished
    /// so that the client's wait for it ends.
    async fn on_reset(&mut self, id: u32) {
        let Some(StreamRef { request, data }) = self.streams.remove(&id) else {
            return;
        };
        let Some(pair) = self.pairs.get_mut(&request) else {
            return;
        };
        if data {
            pair.data_stream = None;
        } else {
            pair.error_stream = None;
        }
        if data && let Some(task) = pair.task.take() {
            task.abort();
            let pair_error = pair.error_stream;
            self.pairs.remove(&request);
            if let Some(err_id) = pair_error {
                self.streams.remove(&err_id);
                self.finish_stream(err_id).await;
            }
        } else if pair.data_stream.is_none() && pair.error_stream.is_none() {
            self.pairs.remove(&request);
        }
    }

    /// A forwarding ended: its error (if any) on the error stream, then both streams finish.
    async fn on_forward_done(&mut self, (request, fin_sent, res): Outcome) {
        let Some(pair) = self.pairs.remove(&request) else {
            return;
        };
        for id in [pair.data_stream, pair.error_stream].into_iter().flatten() {
            self.streams.remove(&id);
        }
        if let (Err(msg), Some(err_id)) = (&res, pair.error_stream) {
            self.send(Frame::Data {
                stream_id: err_id,
                fin: false,
                data: Bytes::from(msg.clone()),
            })
            .await;
        }
        if let Some(data_id) = pair.data_stream.filter(|_| !fin_sent) {
            self.finish_stream(data_id).await;
        }
        if let Some(err_id) = pair.error_stream {
            self.finish_stream(err_id).await;
        }
    }

    /// The pod is gone: every open forwarding says so and ends, then the connection.
    async fn on_pod_gone(&mut self) {
        self.tasks.abort_all();
        let pairs: Vec<Pair> = self.pairs.drain().map(|(_, p)| p).collect();
        for pair in pairs {
            if let Some(err_id) = pair.error_stream {
                let msg = self.pod.gone_text(pair.port);
                self.send(Frame::Data {
                    stream_id: err_id,
                    fin: true,
                    data: Bytes::from(msg),
                })
                .await;
            }
            if let Some(data_id) = pair.data_stream {
                self.finish_stream(data_id).await;
            }
        }
        self.send(Frame::GoAway {
            last_good_stream_id: self.last_stream,
            status: GOAWAY_OK,
        })
        .await;
    }

    async fn finish_stream(&self, id: u32) {
        self.send(Frame::Data {
            stream_id: id,
            fin: true,
            data: Bytes::new(),
        })
        .await;
    }
}
