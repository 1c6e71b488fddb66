//! State, Action, update, Effect and the key tables: pure, no I/O (the event loop that runs
//! them is ichor-runtime).

pub mod action;
pub mod commands;
pub mod keymap;
pub mod new_operation;
pub mod rebind;
pub mod state;
pub(crate) mod text_field;
pub mod update;
