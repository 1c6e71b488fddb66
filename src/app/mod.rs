//! State, Action, update, Effect and the key tables: pure, no I/O (the event loop that runs
//! them is ichor-runtime).

pub mod action;
pub mod commands;
pub mod keymap;
pub mod new_operation;
pub mod state;
pub mod text_field;
pub mod update;

pub use action::{Action, Effect, Key, KeyCode};
pub use state::State;
pub use update::update;
