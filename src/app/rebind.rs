//! Keys rebound in the config (`[keys]`, by action name). The key tables in `keymap` stay the
//! defaults; a command the config names takes the keys it gives instead, on every screen the
//! command is on (its other rows, such as Ctrl-D beside `d`, go). The footers and `?` say the
//! keys in force, generated from the same tables. Checked at start: an unknown action, a key
//! that cannot be read, and a key that would mean two things on one screen are refused, each
//! naming the action (the config names its line).

use crate::action::{Key, KeyCode};
use crate::keymap::{self, Binding, KeyCommand};
use crate::state::Screen;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The actions a config may rebind, by the names it uses: the screens' commands (a dialog's
/// keys, a text field's and Ctrl-C are not rebound).
pub const ACTIONS: &[(&str, KeyCommand)] = &[
    ("up", KeyCommand::Up),
    ("down", KeyCommand::Down),
    ("top", KeyCommand::Top),
    ("bottom", KeyCommand::Bottom),
    ("page-up", KeyCommand::PageUp),
    ("page-down", KeyCommand::PageDown),
    ("open", KeyCommand::Open),
    ("back", KeyCommand::Back),
    ("filter", KeyCommand::Filter),
    ("pause", KeyCommand::Pause),
    ("resume", KeyCommand::Resume),
    ("delete", KeyCommand::Delete),
    ("refresh", KeyCommand::Refresh),
    ("help", KeyCommand::Help),
    ("quit", KeyCommand::Quit),
    ("suspend", KeyCommand::Suspend),
    ("operations", KeyCommand::ShowOperations),
    ("clusters", KeyCommand::ShowClusters),
    ("switch-screen", KeyCommand::SwitchScreen),
    ("new", KeyCommand::New),
    ("command-line", KeyCommand::CommandLine),
    ("yaml", KeyCommand::Manifest),
    ("events", KeyCommand::Events),
    ("report", KeyCommand::Report),
];

/// The keys with names, as a config writes them (besides a single character and `ctrl-X`).
const NAMED: &[(&str, KeyCode)] = &[
    ("enter", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("backspace", KeyCode::Backspace),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("pageup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
];

/// Why a `[keys]` entry is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RebindError {
    /// No such action (as written, bounded).
    UnknownAction(String),
    /// A key that cannot be read (as written, bounded), or none.
    BadKey(String),
    /// Ctrl-C quits everywhere; it cannot be given to another action.
    Reserved,
    /// The key would mean two things on one screen: the key, the screen, the other action.
    Clash {
        key: String,
        screen: Screen,
        other: &'static str,
    },
}

/// The commands the config rebinds, and their keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyOverrides(BTreeMap<KeyCommand, Vec<Key>>);

/// At most this many characters of a name or key are said back in an error.
const ECHO: usize = 40;

fn echo(s: &str) -> String {
    ichor_model::inert::truncate(&ichor_model::inert::sanitize(s), ECHO)
}

/// A key as a config writes it: one character (`p`, `P`, `?`), `ctrl-X`, or a name
/// (`enter`, `esc`, `tab`, `f`…); case matters for a single character only.
pub fn parse_key(s: &str) -> Option<Key> {
    let s = s.trim();
    let mut chars = s.chars();
    if let (Some(c), None) = (chars.next(), chars.clone().next()) {
        return (!c.is_control() && !c.is_whitespace()).then_some(Key::ch(c));
    }
    let lower = s.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("ctrl-").or(lower.strip_prefix("ctrl+")) {
        let mut cs = rest.chars();
        return match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphanumeric() => Some(Key::ctrl(c)),
            _ => None,
        };
    }
    if lower == "space" {
        return Some(Key::ch(' '));
    }
    NAMED
        .iter()
        .find(|(n, _)| *n == lower)
        .map(|(_, code)| Key::plain(*code))
}

/// How a key is written in the footer and `?`.
pub fn key_label(k: Key) -> String {
    let named = NAMED.iter().find(|(_, c)| *c == k.code).map(|(n, _)| *n);
    match (k.code, k.ctrl, named) {
        (KeyCode::Char(' '), _, _) => "Space".into(),
        (KeyCode::Char(c), true, _) => format!("Ctrl-{}", c.to_ascii_uppercase()),
        (KeyCode::Char(c), false, _) => c.to_string(),
        (KeyCode::Up, ..) => "↑".into(),
        (KeyCode::Down, ..) => "↓".into(),
        (KeyCode::PageUp, ..) => "PgUp".into(),
        (KeyCode::PageDown, ..) => "PgDn".into(),
        (KeyCode::BackTab, ..) => "Shift-Tab".into(),
        (_, _, Some(n)) => {
            let mut c = n.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// The config's name of `cmd`.
pub fn action_name(cmd: KeyCommand) -> &'static str {
    ACTIONS
        .iter()
        .find(|(_, c)| *c == cmd)
        .map_or("?", |(n, _)| n)
}

impl KeyOverrides {
    /// The overrides of `entries` (action, keys), in the order written; the first refused
    /// entry, by its index, and why.
    pub fn new(entries: &[(String, Vec<String>)]) -> Result<KeyOverrides, (usize, RebindError)> {
        let mut map = BTreeMap::new();
        for (i, (action, keys)) in entries.iter().enumerate() {
            let Some((_, cmd)) = ACTIONS.iter().find(|(n, _)| n == action) else {
                return Err((i, RebindError::UnknownAction(echo(action))));
            };
            let mut parsed = Vec::new();
            for k in keys {
                let key = parse_key(k).ok_or_else(|| (i, RebindError::BadKey(echo(k))))?;
                if key == Key::ctrl('c') {
                    return Err((i, RebindError::Reserved));
                }
                parsed.push(key);
            }
            if parsed.is_empty() {
                return Err((i, RebindError::BadKey(String::new())));
            }
            map.insert(*cmd, parsed);
        }
        let overrides = KeyOverrides(map);
        match overrides.clash() {
            Some((mine, other, key, screen)) => {
                // The entry to name: the one that gave the key.
                let i = entries
                    .iter()
                    .position(|(a, _)| a == action_name(mine))
                    .unwrap_or(0);
                Err((
                    i,
                    RebindError::Clash {
                        key: key_label(key),
                        screen,
                        other,
                    },
                ))
            }
            None => Ok(overrides),
        }
    }

    /// Whether the config rebinds `cmd`.
    pub fn rebinds(&self, cmd: KeyCommand) -> bool {
        self.0.contains_key(&cmd)
    }

    /// The keys of `b` in force.
    pub fn keys_of<'a>(&'a self, b: &'a Binding) -> &'a [Key] {
        self.0.get(&b.command).map_or(b.keys, Vec::as_slice)
    }

    /// How `b`'s keys are written in the footer and `?`.
    pub fn label(&self, b: &Binding) -> Cow<'static, str> {
        match self.0.get(&b.command) {
            Some(keys) => Cow::Owned(
                keys.iter()
                    .map(|k| key_label(*k))
                    .collect::<Vec<_>>()
                    .join("/"),
            ),
            None => Cow::Borrowed(b.label),
        }
    }

    /// A key that means two things on one screen: (the rebound command, the other action's
    /// name, the key, the screen). The Operations list's sort keys (Shift-N, -A, -S) count.
    fn clash(&self) -> Option<(KeyCommand, &'static str, Key, Screen)> {
        for screen in [
            Screen::Operations,
            Screen::Operation,
            Screen::Clusters,
            Screen::Cluster,
        ] {
            // Each key with the command it means (`None`: a sort key).
            let mut seen: Vec<(Key, Option<KeyCommand>)> = Vec::new();
            if screen == Screen::Operations {
                seen.extend(keymap::SORT_KEYS.iter().map(|s| (Key::ch(s.key), None)));
            }
            for b in keymap::bindings(self, screen) {
                for k in self.keys_of(b) {
                    match seen.iter().find(|(x, _)| x == k) {
                        Some((_, other)) if *other != Some(b.command) => {
                            let name = |c: Option<KeyCommand>| c.map_or("sort", action_name);
                            return Some(match (self.rebinds(b.command), other) {
                                (true, _) | (false, None) => (b.command, name(*other), *k, screen),
                                (false, Some(o)) => (*o, action_name(b.command), *k, screen),
                            });
                        }
                        _ => seen.push((*k, Some(b.command))),
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests;
