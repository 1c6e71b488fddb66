//! State, Action, update, Effect, the key tables and the event loop.

pub mod action;
pub mod keymap;
pub mod new_operation;
pub mod runtime;
pub mod state;
pub mod update;

pub use action::{Action, Effect, Key, KeyCode};
pub use state::State;
pub use update::update;
