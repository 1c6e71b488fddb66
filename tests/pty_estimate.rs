//! What the page says about time, in a terminal, on the demo with a slow machine
//! (`ICHOR_DEMO_SLOW`): the estimate names the machine it waits on, a pause is counted from
//! the moment it was asked (not from the run's start, minutes earlier), and a paused run has
//! no estimate.

use crate::common::pty::{Spawn, keys};
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// The demo's running upgrade, started minutes ago: staging-w01 under way, staging-w02 next.
const OP: &str = "staging-talos-x7k2p";

/// The text after `label` on the line that has it, up to the line's end.
fn after<'s>(screen: &'s str, label: &str) -> Option<&'s str> {
    let line = screen.lines().find(|l| l.contains(label))?;
    line.split_once(label).map(|(_, rest)| rest.trim_end())
}

#[test]
fn the_estimate_names_the_slow_machine_and_a_pause_counts_from_the_pause() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config.toml");
    // A short slow rule, so staging-w02 (thirty times as long) turns slow a second into its step.
    std::fs::write(&config, "[timing]\nslow-factor = 2\nslow-margin = \"1s\"\n").unwrap();
    let config = config.display().to_string();
    let mut p = Spawn::demo(Path::new(BIN), home.path())
        .env("ICHOR_DEMO_SLOW", "staging-w02")
        .args(&["--config", &config])
        .size(120, 36)
        .start();
    p.wait_text("Operations (7)");
    p.send("/");
    p.send(OP);
    p.wait_text("1 shown");
    p.send(keys::ENTER);
    p.send(keys::ENTER);
    let slow = p.wait_for("the slow mark and the estimate after it", |s| {
        s.contains("⚠ staging-w02 is slow") && s.contains("after staging-w02, slow for")
    });
    let estimate = after(&slow, "Estimate").unwrap_or_default();
    assert!(
        estimate.contains("after staging-w02, slow for") && estimate.contains("; then "),
        "{slow}"
    );

    // Paused while staging-w02 is in its step: "Pausing" from the pause, seconds, not the
    // minutes since the run began.
    p.send("p");
    p.wait_text(&format!("Pause {OP}?"));
    p.send("y");
    let pausing = p.wait_text("‖ Pausing for ");
    let span = after(&pausing, "‖ Pausing for ").unwrap_or_default();
    let first = span.split_whitespace().next().unwrap_or_default();
    assert!(
        first.ends_with('s') && first[..first.len() - 1].parse::<u32>().is_ok(),
        "counted from the pause: {first:?} in\n{pausing}"
    );
    // Nothing is estimated from the pause on: no machine starts; once the step under way ends
    // the run is paused.
    assert!(pausing.contains("no estimate while paused"), "{pausing}");
    let paused = p.wait_text("‖ Paused ");
    assert!(paused.contains("no estimate while paused"), "{paused}");
    p.send("q");
    assert_eq!(p.wait_exit(), 0);
}
