//! The k9s habits in a pseudo-terminal: the real binary on the demo cluster, `:ns` typed as a
//! person would, read from the screen.

use crate::common::pty;

use pty::{Spawn, keys};
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

#[test]
fn ns_switches_the_namespace_and_says_what_it_can() {
    let home = tempfile::tempdir().unwrap();
    let mut pty = Spawn::demo(Path::new(BIN), home.path()).start();
    pty.wait_text("Operations (7)");
    pty.send(":ns platform");
    pty.send(keys::ENTER);
    let screen = pty.wait_text("No operations in namespace platform.");
    assert!(screen.contains("namespace platform"), "{screen}");
    // Alone, it says which namespace is listed and what can be typed; a bad name, why not.
    pty.send(":ns");
    pty.send(keys::ENTER);
    pty.wait_text("Listing namespace platform.");
    pty.send(":ns Not_One");
    pty.send(keys::ENTER);
    let screen = pty.wait_text("is not a namespace name");
    assert!(screen.contains("namespace platform"), "unchanged: {screen}");
    pty.send(":ns default");
    pty.send(keys::ENTER);
    pty.wait_text("Operations (7)");
    pty.send("q");
    assert_eq!(pty.wait_exit(), 0);
}
