//! ichor-tui: a terminal dashboard for TalosOperations.

pub mod app;
pub mod cli;
pub mod client;
pub mod config;
pub mod errors;
pub mod i18n;
pub mod kubeconfig;
pub mod model;
pub mod runtime;
pub mod server;
pub mod service;
pub mod terminal;
pub mod text;
pub mod views;
pub mod wire;
