//! kdash beside the dashboard, in the same window: kdash in a 120×36 pty with its kubeconfig
//! naming a closed loopback port, so its API is unreachable (it keeps drawing and retrying),
//! measured with the idle subjects (among them the dashboard over gRPC to `serve --demo` with
//! the demo's 7 operations). kdash is not built here: `ICHOR_KDASH` names its binary
//! (`cargo install kdash --locked --root DIR`, for the benchmark only).

use super::common::procs;
use super::idle::{Subject, own_home};
use super::pty;
use std::path::Path;

/// A loopback port nothing listens on (bound, then closed).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a port");
    l.local_addr().expect("its address").port()
}

/// The label of kdash's report line.
pub const LABEL: &str = "idle, kdash 120x36, its API unreachable";

/// kdash in its pty.
pub fn subject(kdash: &Path, home: &Path) -> Subject {
    let home = own_home(home, "kdash");
    let kubeconfig = home.join("kubeconfig-closed");
    procs::write_kubeconfig(
        &kubeconfig,
        &format!("127.0.0.1:{}", closed_port()),
        "unused-token",
    );
    let spawn = pty::Spawn {
        binary: kdash,
        args: Vec::new(),
        env: vec![("KUBECONFIG".into(), kubeconfig.display().to_string())],
        cols: 120,
        rows: 36,
        home: &home,
        answers: pty::Answers::Narrow,
    };
    Subject::other(LABEL, spawn)
}
