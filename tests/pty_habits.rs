//! The k9s habits in a pseudo-terminal: the real binary on the demo cluster, `:ns` and `:ctx`
//! typed as a person would, read from the screen.

use crate::common::process::Process;
use crate::common::pty;

use pty::Spawn;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

#[test]
fn ns_switches_the_namespace_and_says_what_it_can() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = Spawn::demo(Path::new(BIN), home.path()).start();
    pty.wait_text("Operations (7)");
    pty.command(":ns platform");
    let screen = pty.wait_text("No operations in namespace platform.");
    assert!(screen.contains("namespace platform"), "{screen}");
    // Alone, it says which namespace is listed and what can be typed; a bad name, why not.
    pty.command(":ns");
    pty.wait_text("Listing namespace platform.");
    pty.command(":ns Not_One");
    let screen = pty.wait_text("is not a namespace name");
    assert!(screen.contains("namespace platform"), "unchanged: {screen}");
    pty.command(":ns default");
    pty.wait_text("Operations (7)");
    pty.send("q");
    assert_eq!(pty.wait_exit(), 0);
}

/// `:ctx NAME` on a kubeconfig with one context per demo user: the dashboard reaches the
/// cluster again as that person, and what that person may do is asked again.
#[test]
fn ctx_switches_the_kubeconfig_context_and_asks_who_and_what_again() {
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = home.path().join("kubeconfig");
    let (_demo, _) = Process::demo_cluster(&kubeconfig, &home.path().join("demo.log"));
    let mut pty = Spawn::kubeconfig(Path::new(BIN), home.path(), &kubeconfig).start();
    let screen = pty.wait_text("Operations (7)");
    assert!(screen.contains("user admin"), "{screen}");
    pty.command(":ctx");
    pty.wait_text("Using kubeconfig context ichor-demo.");
    pty.command(":ctx nobody");
    pty.wait_text("The kubeconfig has no context \"nobody\".");
    pty.command(":ctx viewer");
    let screen = pty.wait_text("Context viewer: the route, the user and the permissions");
    pty.wait_for("the viewer's list", |s| {
        s.contains("user viewer") && s.contains("Operations (7)")
    });
    assert!(
        screen.contains("│ viewer · API 127.0.0.1:"),
        "the status bar names the context and its API server: {screen}"
    );
    // The viewer may not start: the refusal says so, and nothing opens.
    pty.send("2");
    pty.wait_text("Clusters (3)");
    pty.send("n");
    pty.wait_text("Kubernetes RBAC does not let you start operations in namespace default");
    // And back.
    pty.command(":ctx ichor-demo");
    pty.wait_for("the admin again", |s| {
        s.contains("Context ichor-demo:") && s.contains("user admin")
    });
    pty.send("q");
    assert_eq!(pty.wait_exit(), 0);
}
