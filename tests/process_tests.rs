//! The binary as a person runs it: flags, and the dashboard in a pty (the API killed and back).
//!
//! One test binary for these modules (each was a binary of its own): they link kube, tonic
//! and the demo crate once.

#[macro_use]
mod common;

#[path = "backend_auto.rs"]
mod backend_auto;
#[path = "build_script.rs"]
mod build_script;
#[path = "cli.rs"]
mod cli;
#[path = "cli_guards.rs"]
mod cli_guards;
#[path = "cli_habits.rs"]
mod cli_habits;
#[path = "cli_report.rs"]
mod cli_report;
#[path = "cli_verbs.rs"]
mod cli_verbs;
#[path = "cli_watch.rs"]
mod cli_watch;
#[path = "completion.rs"]
mod completion;
#[path = "completion_hostile.rs"]
mod completion_hostile;
#[path = "history_process.rs"]
mod history_process;
#[path = "production_process.rs"]
mod production_process;
#[path = "pty.rs"]
mod pty;
#[path = "pty_estimate.rs"]
mod pty_estimate;
#[path = "pty_habits.rs"]
mod pty_habits;
#[path = "pty_outage.rs"]
mod pty_outage;
#[path = "pty_push.rs"]
mod pty_push;
#[path = "pty_restart.rs"]
mod pty_restart;
