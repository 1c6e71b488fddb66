//! ichor-tui: a terminal dashboard for TalosOperations.

pub mod cli;
pub mod client;
pub mod cluster;
pub mod model;
pub mod server;
pub mod service;
