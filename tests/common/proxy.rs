//! A TCP proxy in front of an API on a fixed local port, stopped (refusing and cutting every
//! connection) and started again: to a client, the API killed and back on the same address
//! while the cluster keeps its state.
#![allow(dead_code)]

use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A TCP proxy to `upstream` on a fixed local port that can be stopped (refusing and cutting
/// every connection) and started again.
pub struct Proxy {
    pub port: u16,
    upstream: u16,
    up: Arc<AtomicBool>,
    conns: Arc<Mutex<Vec<TcpStream>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    pub fn new(upstream: u16) -> Proxy {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut p = Proxy {
            port,
            upstream,
            up: Arc::new(AtomicBool::new(false)),
            conns: Arc::default(),
            thread: None,
        };
        p.start();
        p
    }

    pub fn start(&mut self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).unwrap();
        listener.set_nonblocking(true).unwrap();
        self.up.store(true, Ordering::SeqCst);
        let (up, conns, upstream) = (self.up.clone(), self.conns.clone(), self.upstream);
        self.thread = Some(std::thread::spawn(move || {
            while up.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                            continue;
                        };
                        let mut list = conns.lock().unwrap();
                        list.push(client.try_clone().unwrap());
                        list.push(server.try_clone().unwrap());
                        for (mut from, mut to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server, client),
                        ] {
                            std::thread::spawn(move || {
                                let _ = std::io::copy(&mut from, &mut to);
                                let _ = to.shutdown(Shutdown::Both);
                            });
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }));
    }

    /// Stops listening and cuts every connection: to the dashboard, the API is gone.
    pub fn stop(&mut self) {
        self.up.store(false, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        for c in self.conns.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Proxy {
    /// A copy of the kubeconfig `direct` (written by `demo-cluster` for `upstream`) that reaches
    /// the API through this proxy, written to `to`.
    pub fn kubeconfig(&self, direct: &std::path::Path, to: &std::path::Path) {
        let text = std::fs::read_to_string(direct).unwrap().replace(
            &format!("127.0.0.1:{}", self.upstream),
            &format!("127.0.0.1:{}", self.port),
        );
        std::fs::write(to, text).unwrap();
    }
}
