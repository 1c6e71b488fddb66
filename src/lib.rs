//! ichor-tui: a terminal dashboard for TalosOperations.

pub mod app;
pub mod cli;
#[path = "client/lib.rs"]
pub mod client;
pub mod config;
pub mod i18n;
pub mod kubeconfig;
pub mod runtime;
pub mod terminal;
pub mod views;
