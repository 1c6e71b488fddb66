//! One line of typed text, edited as shells edit it: printable keys type, Backspace removes a
//! character, Ctrl-U clears the line, Ctrl-W removes the word before the cursor. Every text
//! field of the dashboard (the filter, the command line, a version, max unavailable, the typed
//! cluster name) edits through this, so they all take the same keys.

use super::action::{Key, KeyCode};

/// What a key did to a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edit {
    /// The text changed.
    Changed,
    /// An editing key that changed nothing (Backspace on an empty field, a character the field
    /// does not take or has no room for).
    Unchanged,
    /// Not an editing key: the caller decides what it means.
    NotText,
}

/// Applies `key` to `text`: a character that `takes` accepts is added while the text holds
/// fewer than `max` characters.
pub(crate) fn edit(text: &mut String, key: Key, takes: impl Fn(char) -> bool, max: usize) -> Edit {
    let changed = |did: bool| if did { Edit::Changed } else { Edit::Unchanged };
    match key.code {
        KeyCode::Backspace => changed(text.pop().is_some()),
        KeyCode::Char('u') if key.ctrl => {
            let had = !text.is_empty();
            text.clear();
            changed(had)
        }
        KeyCode::Char('w') if key.ctrl => changed(delete_word(text)),
        KeyCode::Char(c) if !key.ctrl && !c.is_control() => {
            let room = text.chars().count() < max;
            if room && takes(c) {
                text.push(c);
                Edit::Changed
            } else {
                Edit::Unchanged
            }
        }
        // Other control keys are not text: Ctrl-C keeps its global meaning.
        _ => Edit::NotText,
    }
}

/// Removes the word before the end and the spaces after it (a shell's Ctrl-W); whether
/// anything was removed.
fn delete_word(text: &mut String) -> bool {
    let before = text.len();
    let kept = text.trim_end_matches(' ').len();
    let word_start = text[..kept].rfind(' ').map_or(0, |i| i + 1);
    text.truncate(word_start);
    text.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start: &str, keys: &[Key]) -> String {
        let mut s = start.to_string();
        for k in keys {
            edit(&mut s, *k, |c| c != 'X', 10);
        }
        s
    }

    #[test]
    fn shell_keys_edit_the_line() {
        assert_eq!(run("prod eu", &[Key::ctrl('w')]), "prod ");
        assert_eq!(run("prod eu  ", &[Key::ctrl('w')]), "prod ");
        assert_eq!(run("prod ", &[Key::ctrl('w')]), "");
        assert_eq!(run("v1.9.3", &[Key::ctrl('w')]), "");
        assert_eq!(run("prod eu", &[Key::ctrl('u')]), "");
        assert_eq!(run("ab", &[Key::plain(KeyCode::Backspace)]), "a");
        assert_eq!(run("", &[Key::ch('a'), Key::ch('X'), Key::ch('b')]), "ab");
        assert_eq!(run("0123456789", &[Key::ch('a')]), "0123456789", "full");
    }

    #[test]
    fn what_is_not_text_is_said() {
        let mut s = "x".to_string();
        assert_eq!(edit(&mut s, Key::ctrl('c'), |_| true, 5), Edit::NotText);
        assert_eq!(
            edit(&mut s, Key::plain(KeyCode::Enter), |_| true, 5),
            Edit::NotText
        );
        assert_eq!(edit(&mut s, Key::ctrl('u'), |_| true, 5), Edit::Changed);
        assert_eq!(edit(&mut s, Key::ctrl('u'), |_| true, 5), Edit::Unchanged);
        assert_eq!(
            edit(&mut s, Key::plain(KeyCode::Backspace), |_| true, 5),
            Edit::Unchanged
        );
    }
}
