//! `--backend auto` (the default) against an API server that accepts connections and never
//! answers, through the built binary: a command says on standard error what it asks and
//! where, gives up each question about ichor-ui within seconds, says why it reads the cluster
//! directly, and then says each wait of its read, instead of printing nothing for minutes.

use crate::common::lines::{Fd, Lines, after_clock};
use std::net::TcpListener;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// Accepts every connection on a loopback port and keeps it open, never answering a byte.
fn silent_api_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    addr
}

#[test]
fn a_list_through_an_api_server_that_never_answers_says_what_it_asks_and_gives_up() {
    let addr = silent_api_server();
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: silent\n  cluster:\n    server: http://{addr}\n\
contexts:\n- name: silent\n  context:\n    cluster: silent\n    user: u\n    namespace: default\n\
current-context: silent\nusers:\n- name: u\n  user:\n    token: t\n"
        ),
    )
    .unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["operation", "list", "--kubeconfig"])
        .arg(&kubeconfig)
        .arg("--log-file")
        .arg(home.path().join("log"))
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("LANG", "en_US.UTF-8")
        .env_remove("ICHOR_SERVER")
        .env_remove("ICHOR_LANG");
    let mut run = Lines::spawn(&mut cmd);
    let mut next = |what: &str| run.next(Fd::Err, what);
    let asking = next("what is asked");
    assert_eq!(
        asking,
        format!(
            "Looking for ichor-ui (ichor-system/ichor-ui) through http://{addr}: each question may take 5 s."
        )
    );
    let fallback = next("why the cluster is read directly");
    assert_eq!(
        fallback,
        "ichor-ui is not serving here: the cluster is read directly."
    );
    let waiting = next("the read's wait");
    // The retry line starts with its time, as the CLI's other lines do ("14:03:09 …").
    assert!(
        after_clock(&waiting, " ").starts_with("Kubernetes API not answering, retrying in"),
        "{waiting}"
    );
}
