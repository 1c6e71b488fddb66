//! A loopback relay that counts the bytes each way: what travels on the wire between a client
//! and a server (headers, framing and all), whichever protocol it is.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A relay to one target: clients connect to `addr`.
pub struct Relay {
    pub addr: String,
    up: Arc<AtomicU64>,
    down: Arc<AtomicU64>,
}

impl Relay {
    /// Starts relaying to `target` (on the current tokio runtime).
    pub async fn start(target: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the relay");
        let addr = listener
            .local_addr()
            .expect("the relay's address")
            .to_string();
        let (up, down) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let (u, d) = (up.clone(), down.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&target).await else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                tokio::spawn(pump(cr, sw, u.clone()));
                tokio::spawn(pump(sr, cw, d.clone()));
            }
        });
        Relay { addr, up, down }
    }

    pub fn reset(&self) {
        self.up.store(0, Ordering::SeqCst);
        self.down.store(0, Ordering::SeqCst);
    }

    /// Bytes (client to server, server to client) since the start or the last reset.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.up.load(Ordering::SeqCst),
            self.down.load(Ordering::SeqCst),
        )
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    count: Arc<AtomicU64>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                count.fetch_add(n as u64, Ordering::SeqCst);
                if to.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown().await;
}
