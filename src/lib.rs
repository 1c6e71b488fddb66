//! ichor-tui: a terminal dashboard for TalosOperations.

pub mod cli;
pub mod config;
pub mod kubeconfig;
