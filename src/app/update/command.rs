//! The command line (`:`), as k9s has it: `:ops`, `:clusters`, `:help`, `:q`. Enter runs what
//! was typed, Esc leaves it, Tab completes (again: the next command that fits), and it is
//! edited like every text field.

use super::nav::show;
use super::quit;
use crate::action::{Effect, Key, KeyCode};
use crate::commands::{self, Verb};
use crate::state::{CommandLine, Dialog, Input, Notice, Screen, State};
use crate::text_field::{self, Edit};

/// The longest command line kept (the commands are short words).
const MAX_CHARS: usize = 32;

/// `:` opens an empty command line.
pub(super) fn open(state: &mut State) {
    state.input = Input::Command;
    state.command = CommandLine::default();
}

fn close(state: &mut State) -> String {
    state.input = Input::None;
    std::mem::take(&mut state.command).text
}

/// A key while the command line is open.
pub(super) fn on_key(state: &mut State, key: Key) -> Vec<Effect> {
    match key.code {
        KeyCode::Esc => {
            close(state);
            Vec::new()
        }
        KeyCode::Enter => {
            let text = close(state);
            run(state, &text)
        }
        KeyCode::Tab => {
            complete(&mut state.command, 1);
            Vec::new()
        }
        KeyCode::BackTab => {
            complete(&mut state.command, -1);
            Vec::new()
        }
        _ => {
            if text_field::edit(&mut state.command.text, key, |_| true, MAX_CHARS) == Edit::Changed
            {
                state.command.completing = None;
            }
            Vec::new()
        }
    }
}

/// Tab: the next (or, `step` -1, the previous) command that starts with what was typed before
/// Tab was first pressed.
fn complete(line: &mut CommandLine, step: isize) {
    let (typed, next) = match line.completing.take() {
        Some((typed, i)) => (typed, i as isize + step),
        None => (line.text.clone(), if step > 0 { 0 } else { -1 }),
    };
    let options = commands::completions(&typed);
    if options.is_empty() {
        return;
    }
    let i = next.rem_euclid(options.len() as isize) as usize;
    line.text = options[i].to_string();
    line.completing = Some((typed, i));
}

/// Runs a command line.
fn run(state: &mut State, text: &str) -> Vec<Effect> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    match commands::parse(text) {
        Some(Verb::Operations) => show(state, Screen::Operations),
        Some(Verb::Clusters) => show(state, Screen::Clusters),
        Some(Verb::Help) => {
            state.dialog = Some(Dialog::keys());
            Vec::new()
        }
        Some(Verb::Quit) => quit(state),
        None => {
            state.notice = Some(Notice::UnknownCommand(text.trim().to_string()));
            Vec::new()
        }
    }
}
