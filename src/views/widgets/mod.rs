//! The pieces several screens draw with: the list table, lines of text, overlays and the
//! progress bar.

pub(crate) mod columns;
pub(crate) mod lines;
pub(crate) mod overlay;
pub(crate) mod progress;
pub(crate) mod table;

// The paths the runtime, the CLI, the tests and the benchmarks name: the theme and the context
// live in `views::style`, the words for an error in `views::words`.
pub use super::style::{Ctx, Theme};
