//! ichor-tui: a terminal dashboard for TalosOperations.

pub mod app;
pub mod cli;
pub mod config;
pub mod i18n;
pub mod kubeconfig;
pub mod runtime;
pub mod terminal;
pub mod views;
