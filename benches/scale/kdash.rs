//! Idle CPU of the dashboard alone beside kdash's, in one run: both in a 120×36 pty at the
//! same time, over the same window. ichor-tui reaches `serve --demo` (the demo's 7 operations)
//! over gRPC; kdash's kubeconfig names a closed loopback port, so its API is unreachable (it
//! keeps drawing and retrying). kdash is not built here: `ICHOR_KDASH` names its binary
//! (`cargo install kdash --locked --root DIR`, for the benchmark only).

use super::common::procs::{self, Cpu};
use super::idle::{dashboard, settle};
use super::pty;
use std::path::Path;
use std::time::Duration;

/// What one side-by-side window measured: CPU seconds and terminal bytes of each.
pub struct SideBySide {
    pub ichor_cpu_s: f64,
    pub kdash_cpu_s: f64,
    pub ichor_bytes: usize,
    pub kdash_bytes: usize,
}

/// A loopback port nothing listens on (bound, then closed).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a port");
    l.local_addr().expect("its address").port()
}

pub fn side_by_side(bin: &Path, kdash: &Path, home: &Path, window: Duration) -> SideBySide {
    let (_serve, url) = procs::serve_demo(bin, home, 0);
    let kubeconfig = home.join("kubeconfig-closed");
    procs::write_kubeconfig(
        &kubeconfig,
        &format!("127.0.0.1:{}", closed_port()),
        "unused-token",
    );
    let mut ichor = dashboard(bin, home, &["--server", &url, "--protocol", "grpc"]).start();
    let mut k = pty::Spawn {
        binary: kdash,
        args: Vec::new(),
        env: vec![("KUBECONFIG".into(), kubeconfig.display().to_string())],
        cols: 120,
        rows: 36,
        home,
    }
    .start();
    ichor.wait_text("Operations (7)");
    settle(&ichor, Duration::from_secs(60));
    let (i0, k0) = (Cpu::read(ichor.pid()), Cpu::read(k.pid()));
    let (ib0, kb0) = (ichor.raw_len(), k.raw_len());
    std::thread::sleep(window);
    let (i1, k1) = (Cpu::read(ichor.pid()), Cpu::read(k.pid()));
    let (ib1, kb1) = (ichor.raw_len(), k.raw_len());
    ichor.send("q");
    assert_eq!(ichor.wait_exit(), 0);
    k.send("q");
    drop(k);
    SideBySide {
        ichor_cpu_s: i0.since(&i1),
        kdash_cpu_s: k0.since(&k1),
        ichor_bytes: ib1 - ib0,
        kdash_bytes: kb1 - kb0,
    }
}
