//! An operation's outcome said to a person in another tab: the terminal's bell, and a desktop
//! notification where the terminal takes one: OSC 9 (iTerm2, WezTerm, Windows Terminal, ghostty,
//! kitty) or OSC 777 (foot, urxvt, VTE terminals). `ICHOR_TUI_NOTIFY` chooses: `bell`, `osc9`,
//! `osc777` or `off`; otherwise the terminal is recognised from its environment.

use std::io::Write as _;

/// How the outcome is said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notifier {
    Off,
    Bell,
    /// The bell and `ESC ] 9 ; text BEL`.
    Osc9,
    /// The bell and `ESC ] 777 ; notify ; title ; body BEL`.
    Osc777,
}

/// The longest text a notification carries.
const MAX_TEXT: usize = 200;

impl Notifier {
    /// From `ICHOR_TUI_NOTIFY`, else from the terminal's environment (`TERM_PROGRAM`,
    /// `WT_SESSION`, `TERM`, `VTE_VERSION`, `KITTY_WINDOW_ID`).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Notifier {
        match env("ICHOR_TUI_NOTIFY").as_deref().map(str::trim) {
            Some("off") => return Notifier::Off,
            Some("bell") => return Notifier::Bell,
            Some("osc9") => return Notifier::Osc9,
            Some("osc777") => return Notifier::Osc777,
            _ => {}
        }
        let program = env("TERM_PROGRAM").unwrap_or_default();
        let term = env("TERM").unwrap_or_default();
        if matches!(program.as_str(), "iTerm.app" | "WezTerm" | "ghostty")
            || env("WT_SESSION").is_some()
            || env("KITTY_WINDOW_ID").is_some()
        {
            Notifier::Osc9
        } else if term.starts_with("foot")
            || term.starts_with("rxvt")
            || env("VTE_VERSION").is_some()
        {
            Notifier::Osc777
        } else {
            Notifier::Bell
        }
    }

    /// The bytes that say `title: body`; nothing when off. The text is made inert (no control
    /// character, no `;` that would end an OSC 777 field) and bounded.
    pub fn bytes(self, title: &str, body: &str) -> Vec<u8> {
        let clean = |s: &str| {
            ichor_model::inert::truncate(&ichor_model::inert::sanitize(s), MAX_TEXT)
                .replace(';', ",")
        };
        let (title, body) = (clean(title), clean(body));
        match self {
            Notifier::Off => Vec::new(),
            Notifier::Bell => b"\x07".to_vec(),
            Notifier::Osc9 => format!("\x07\x1b]9;{title}: {body}\x07").into_bytes(),
            Notifier::Osc777 => format!("\x07\x1b]777;notify;{title};{body}\x07").into_bytes(),
        }
    }

    /// Writes the notification to standard output.
    pub fn say(self, title: &str, body: &str) -> std::io::Result<()> {
        let bytes = self.bytes(title, body);
        if bytes.is_empty() {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes)?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_is_recognised_and_the_choice_wins() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            Notifier::from_env(env(&[("TERM_PROGRAM", "WezTerm")])),
            Notifier::Osc9
        );
        assert_eq!(
            Notifier::from_env(env(&[("TERM", "foot")])),
            Notifier::Osc777
        );
        assert_eq!(
            Notifier::from_env(env(&[("TERM", "xterm-256color")])),
            Notifier::Bell
        );
        assert_eq!(
            Notifier::from_env(env(&[
                ("TERM_PROGRAM", "WezTerm"),
                ("ICHOR_TUI_NOTIFY", "off")
            ])),
            Notifier::Off
        );
    }

    #[test]
    fn nothing_in_a_name_escapes_the_notification() {
        let b = Notifier::Osc777.bytes("ichor", "prod\x1b]52;c;evil\x07; rm");
        let s = String::from_utf8(b).unwrap();
        assert_eq!(s.matches('\x1b').count(), 1, "{s:?}");
        assert_eq!(s.matches(';').count(), 3, "{s:?}");
        assert!(Notifier::Off.bytes("a", "b").is_empty());
    }
}
