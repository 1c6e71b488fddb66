//! Every screen: snapshots in en and ja at 80×24, 160×48 and 40×12, the wide-ambiguous terminal, the typography and the locales, and the pure update.
//!
//! One test binary for these modules (each was a binary of its own): they link kube, tonic
//! and the demo crate once.

#[macro_use]
mod common;

#[path = "contexts.rs"]
mod contexts;
#[path = "events_all.rs"]
mod events_all;
#[path = "events_screen.rs"]
mod events_screen;
#[path = "guards.rs"]
mod guards;
#[path = "habits.rs"]
mod habits;
#[path = "help_screens.rs"]
mod help_screens;
#[path = "how_long.rs"]
mod how_long;
#[path = "list_screen.rs"]
mod list_screen;
#[path = "locales.rs"]
mod locales;
#[path = "operator_reads.rs"]
mod operator_reads;
#[path = "operator_reviews.rs"]
mod operator_reviews;
#[path = "production_screens.rs"]
mod production_screens;
#[path = "reading_search.rs"]
mod reading_search;
#[path = "route_screens.rs"]
mod route_screens;
#[path = "screens.rs"]
mod screens;
#[path = "stale_screens.rs"]
mod stale_screens;
#[path = "start_dialog.rs"]
mod start_dialog;
#[path = "text_fields.rs"]
mod text_fields;
#[path = "titles.rs"]
mod titles;
#[path = "typography.rs"]
mod typography;
#[path = "update.rs"]
mod update;
#[path = "where_it_goes.rs"]
mod where_it_goes;
#[path = "wide.rs"]
mod wide;
