//! Where serve listens, on every network: IPv4, IPv6 or both. `--listen` and `--metrics-listen`
//! take an address (`127.0.0.1:8080`, `[::1]:8080`), `localhost:PORT` (both loopbacks: 127.0.0.1
//! and ::1, where the host has IPv6) or `[::]:PORT` (`:PORT` for short: every address, IPv6
//! and IPv4 on one socket, IPV6_V6ONLY off whatever `net.ipv6.bindv6only` says; 0.0.0.0 where
//! the host has no IPv6). The default `--listen` is `localhost:50051`; the Deployment listens on
//! `localhost:8080` and `[::]:9090`, so the probes reach the pod's address on an IPv4, IPv6 or
//! dual-stack cluster. A host "has no IPv6" when the kernel refuses an IPv6 socket
//! (`ipv6.disable=1`) or the address (`::1` not on the loopback): that is said once in the log,
//! and serve goes on with IPv4.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::task::{Context, Poll};
use tokio::net::{TcpListener, TcpStream};

/// What `--listen` or `--metrics-listen` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListenAddr {
    /// One address. `[::]` takes IPv4 too, or becomes 0.0.0.0 where the host has no IPv6.
    Addr(SocketAddr),
    /// `localhost:PORT`: 127.0.0.1 and ::1 (::1 only where the host has IPv6).
    Loopback(u16),
}

impl ListenAddr {
    /// Every address, IPv6 and IPv4, on `port`.
    pub fn any(port: u16) -> ListenAddr {
        ListenAddr::Addr(SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port))
    }

    /// Whether only this host can reach it (a loopback address, or `localhost`).
    pub fn is_loopback(&self) -> bool {
        match self {
            ListenAddr::Addr(a) => a.ip().is_loopback(),
            ListenAddr::Loopback(_) => true,
        }
    }
}

impl std::str::FromStr for ListenAddr {
    type Err = String;

    fn from_str(s: &str) -> Result<ListenAddr, String> {
        let port = |p: &str| {
            p.parse::<u16>()
                .map_err(|_| "the port must be a number from 0 to 65535".to_string())
        };
        if let Some(p) = s.strip_prefix("localhost:") {
            return Ok(ListenAddr::Loopback(port(p)?));
        }
        if let Some(p) = s.strip_prefix(':') {
            return Ok(ListenAddr::any(port(p)?));
        }
        s.parse().map(ListenAddr::Addr).map_err(|_| {
            "an address and port: 127.0.0.1:8080, [::1]:8080, localhost:8080 (both loopbacks) or [::]:8080 (every address, IPv6 and IPv4)"
                .to_string()
        })
    }
}

impl std::fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListenAddr::Addr(a) => write!(f, "{a}"),
            ListenAddr::Loopback(p) => write!(f, "localhost:{p}"),
        }
    }
}

/// Whether an error says the host has no IPv6: no IPv6 socket, or not that address here.
fn no_ipv6(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EAFNOSUPPORT | libc::EADDRNOTAVAIL | libc::EPROTONOSUPPORT)
    )
}

/// A listening socket on `addr` whose kernel queue holds `backlog` connections, `SO_REUSEADDR`
/// as tokio's `bind` sets it; an IPv6 wildcard takes IPv4 too (IPV6_V6ONLY off).
pub(crate) fn bind_socket(addr: SocketAddr, backlog: usize) -> io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if addr.is_ipv6() {
        socket.set_only_v6(!addr.ip().is_unspecified())?;
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
    TcpListener::from_std(socket.into())
}

/// The listeners `at` names, each bound by `bind`: one address (`[::]` falling back to 0.0.0.0
/// where the host has no IPv6), or both loopbacks on one port (::1 left out without IPv6; with
/// port 0, the port 127.0.0.1 was given).
pub(crate) fn bind_with(
    at: ListenAddr,
    bind: &mut dyn FnMut(SocketAddr) -> io::Result<TcpListener>,
) -> io::Result<Listeners> {
    match at {
        ListenAddr::Addr(a) if a.ip() == IpAddr::V6(Ipv6Addr::UNSPECIFIED) => match bind(a) {
            Ok(l) => Ok(Listeners(vec![l])),
            Err(e) if no_ipv6(&e) => {
                let v4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), a.port());
                tracing::info!(asked = %a, listening = %v4, error = %e, "no IPv6 on this host: listening on IPv4 alone");
                Ok(Listeners(vec![bind(v4)?]))
            }
            Err(e) => Err(e),
        },
        ListenAddr::Addr(a) => Ok(Listeners(vec![bind(a)?])),
        ListenAddr::Loopback(port) => {
            let v4 = bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))?;
            let port = v4.local_addr()?.port();
            let v6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port);
            match bind(v6) {
                Ok(l) => Ok(Listeners(vec![v4, l])),
                Err(e) if no_ipv6(&e) => {
                    tracing::info!(asked = %at, error = %e, "no IPv6 on this host: listening on 127.0.0.1 alone");
                    Ok(Listeners(vec![v4]))
                }
                Err(e) => Err(e),
            }
        }
    }
}

/// Binds what `at` names, each socket's queue holding `backlog` connections (see
/// [`super::listen::bind`]); within a tokio runtime.
pub fn bind_all(at: ListenAddr, backlog: usize) -> io::Result<Listeners> {
    bind_with(at, &mut |a| bind_socket(a, backlog))
}

/// One or more listening sockets, accepted from as one.
pub struct Listeners(Vec<TcpListener>);

impl From<TcpListener> for Listeners {
    fn from(l: TcpListener) -> Listeners {
        Listeners(vec![l])
    }
}

impl Listeners {
    /// The addresses listened on, in order.
    pub fn local_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        self.0.iter().map(TcpListener::local_addr).collect()
    }

    /// The next connection on any of them.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        std::future::poll_fn(|cx| self.poll_accept(cx)).await
    }

    fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        for l in &self.0 {
            if let Poll::Ready(r) = l.poll_accept(cx) {
                return Poll::Ready(r);
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_takes_addresses_localhost_and_a_bare_port() {
        let parse = |s: &str| s.parse::<ListenAddr>();
        assert_eq!(parse("localhost:8080"), Ok(ListenAddr::Loopback(8080)));
        assert_eq!(parse(":9090"), Ok(ListenAddr::any(9090)));
        assert_eq!(parse("[::]:9090"), Ok(ListenAddr::any(9090)));
        assert_eq!(
            parse("127.0.0.1:0"),
            Ok(ListenAddr::Addr("127.0.0.1:0".parse().unwrap()))
        );
        assert!(parse("localhost:x").is_err());
        assert!(parse("example.com:80").is_err());
        assert!(ListenAddr::Loopback(1).is_loopback());
        assert!(!ListenAddr::any(1).is_loopback());
        assert_eq!(ListenAddr::Loopback(8080).to_string(), "localhost:8080");
    }

    /// Binds IPv4 addresses on loopback (port 0) and refuses IPv6 as a host without it does.
    fn without_ipv6(a: SocketAddr) -> io::Result<TcpListener> {
        match a {
            SocketAddr::V6(_) => Err(io::Error::from_raw_os_error(libc::EAFNOSUPPORT)),
            SocketAddr::V4(v4) => {
                let loopback = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);
                assert!(v4.ip().is_unspecified() || v4.ip().is_loopback(), "{a}");
                bind_socket(loopback, 16)
            }
        }
    }

    #[tokio::test]
    async fn without_ipv6_every_address_is_ipv4s_and_localhost_is_127_0_0_1() {
        let mut asked = Vec::new();
        let mut bind = |a: SocketAddr| {
            asked.push(a);
            without_ipv6(a)
        };
        let l = bind_with(ListenAddr::any(0), &mut bind).unwrap();
        assert_eq!(l.0.len(), 1);
        let l = bind_with(ListenAddr::Loopback(0), &mut bind).unwrap();
        assert_eq!(l.0.len(), 1);
        assert_eq!(
            asked[..3],
            [
                "[::]:0".parse().unwrap(),
                "0.0.0.0:0".parse().unwrap(),
                "127.0.0.1:0".parse().unwrap()
            ]
        );
        // Any other failure is the caller's to say.
        let mut in_use = |_: SocketAddr| -> io::Result<TcpListener> {
            Err(io::Error::from(io::ErrorKind::AddrInUse))
        };
        assert!(bind_with(ListenAddr::any(1), &mut in_use).is_err());
    }

    #[tokio::test]
    async fn an_ipv6_wildcard_takes_ipv4_too() {
        let Ok(listeners) = bind_all(ListenAddr::any(0), 16) else {
            return;
        };
        let port = listeners.local_addrs().unwrap()[0].port();
        for to in ["127.0.0.1", "::1"] {
            let ip: IpAddr = to.parse().unwrap();
            let Ok(_client) = TcpStream::connect((ip, port)).await else {
                assert!(ip.is_ipv6(), "{to}");
                continue;
            };
            let (_, from) = listeners.accept().await.unwrap();
            assert!(from.ip().to_canonical() == ip, "{from} from {to}");
        }
    }
}
