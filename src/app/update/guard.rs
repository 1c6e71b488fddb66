//! A production context's guard on the page's writes, and the page's report key.
//!
//! In a context the config marks production, the y/N question before a pause, resume or
//! delete becomes the cluster's name typed, then Enter: the name typed exactly answers yes;
//! Esc (or Enter before the name is whole) answers no. Every start asks the same in its Review.

use super::keys::on_confirm_key;
use crate::action::{Effect, Key, KeyCode};
use crate::state::{Confirm, Dialog, Notice, Screen, State};
use crate::text_field::{self, Edit};

/// The longest name typed (a DNS subdomain's length).
const MAX_NAME: usize = 253;

/// A key while the production question waits for the cluster's name.
pub(super) fn on_typed_confirm_key(state: &mut State, mut c: Confirm, key: Key) -> Vec<Effect> {
    let typed = c.typed.take().unwrap_or_default();
    match key.code {
        KeyCode::Esc => {
            state.dialog = None;
            Vec::new()
        }
        KeyCode::Enter if typed == c.cluster => {
            // The name typed exactly is the yes: the write goes as a y would send it.
            on_confirm_key(state, c, Key::ch('y'))
        }
        KeyCode::Enter => {
            state.dialog = None;
            state.notice = Some(Notice::NameNotTyped(c.cluster));
            Vec::new()
        }
        _ => {
            let mut typed = typed;
            if text_field::edit(&mut typed, key, |ch| !ch.is_control(), MAX_NAME) == Edit::NotText {
                state.quiet = true;
            }
            c.typed = Some(typed);
            state.dialog = Some(Dialog::Confirm(c));
            Vec::new()
        }
    }
}

/// `w` on an operation's page: its report, read whole and written to a file by the loop.
pub(super) fn report(state: &mut State) -> Vec<Effect> {
    match (state.screen, state.detail.as_ref()) {
        (Screen::Operation, Some(d)) => vec![Effect::SaveReport {
            namespace: d.namespace.clone(),
            name: d.name.clone(),
        }],
        _ => Vec::new(),
    }
}

/// The report was written (where), or not (why).
pub(super) fn on_report_saved(
    state: &mut State,
    name: String,
    result: Result<String, String>,
) -> Vec<Effect> {
    state.notice = Some(match result {
        Ok(path) => Notice::ReportSaved(name, path),
        Err(why) => Notice::ReportFailed(name, why),
    });
    Vec::new()
}
