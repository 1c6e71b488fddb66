//! How things are drawn: colours or none, Unicode or ASCII, and what a view needs besides State.

use crate::i18n::Texts;
use ratatui::style::{Color, Modifier, Style};

/// How things are drawn: colours or none, Unicode or ASCII, and whether the terminal draws
/// East Asian "ambiguous" characters two columns wide (then none is drawn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
    pub ascii: bool,
    pub wide_ambiguous: bool,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            color: true,
            ascii: false,
            wide_ambiguous: false,
        }
    }
}

impl Theme {
    /// A foreground colour, or nothing without colour.
    pub(crate) fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    pub(crate) fn bold(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    /// Something that went wrong: red and bold (bold says it without colour).
    pub(crate) fn alarm(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }

    /// The selected row: bold and reversed (the `>` marker says it without either).
    pub(crate) fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
    }
}

/// What the renderer needs besides State.
pub struct Ctx<'a> {
    pub texts: &'a Texts,
    pub theme: Theme,
}
