//! Keys are data: one table per screen maps keys to commands. The footer hints and the `?` help
//! are generated from the same tables, so they cannot drift.

use super::action::{Key, KeyCode};
use super::rebind::KeyOverrides;
use super::state::Screen;

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyCommand {
    Up,
    Down,
    Top,
    Bottom,
    PageUp,
    PageDown,
    Open,
    Back,
    Filter,
    Pause,
    Resume,
    Delete,
    Refresh,
    Help,
    Quit,
    Suspend,
    ShowOperations,
    ShowClusters,
    /// The operation's events, all of them, scrollable.
    Events,
    SwitchScreen,
    New,
    // The new-operation dialog.
    NextField,
    PrevField,
    Submit,
    Cancel,
    BackToForm,
    /// `:`: the command line.
    CommandLine,
    /// `y`: the operation's resource as YAML.
    Manifest,
    /// Ctrl-U in a text field: clears it (the field edits itself; listed in `?`).
    ClearText,
    /// Ctrl-W in a text field: removes the word before the cursor.
    DeleteWord,
    /// `a` in the events view: loads the older events too (all, bounded).
    LoadAllEvents,
    /// `w` on an operation's page: its report written to a file.
    Report,
}

/// One row of a key table.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    pub(crate) keys: &'static [Key],
    pub command: KeyCommand,
    /// How the keys are written in the footer and help (keys are not translated).
    pub label: &'static str,
    /// The Fluent id of what the command does.
    pub hint: &'static str,
    /// Shown in the footer (everything is in `?`).
    pub footer: bool,
}

const fn b(
    keys: &'static [Key],
    command: KeyCommand,
    label: &'static str,
    hint: &'static str,
    footer: bool,
) -> Binding {
    Binding {
        keys,
        command,
        label,
        hint,
        footer,
    }
}

const UP: &[Key] = &[Key::plain(KeyCode::Up), Key::ch('k')];
const DOWN: &[Key] = &[Key::plain(KeyCode::Down), Key::ch('j')];
const TOP: &[Key] = &[Key::ch('g'), Key::plain(KeyCode::Home)];
const BOTTOM: &[Key] = &[Key::ch('G'), Key::plain(KeyCode::End)];
const PGUP: &[Key] = &[Key::plain(KeyCode::PageUp)];
const PGDN: &[Key] = &[Key::plain(KeyCode::PageDown)];
/// `d`, and k9s's Ctrl-D (a row of its own in `?`, out of the footer): the same question,
/// never a write without it.
const DELETE: &[Key] = &[Key::ch('d')];
const CTRL_DELETE: &[Key] = &[Key::ctrl('d')];

/// Moving in a list: the selection.
pub(crate) const LIST_MOVES: &[Binding] = &[
    b(UP, KeyCommand::Up, "↑/k", "key-up", false),
    b(DOWN, KeyCommand::Down, "↓/j", "key-down", false),
    b(TOP, KeyCommand::Top, "g", "key-top", false),
    b(BOTTOM, KeyCommand::Bottom, "G", "key-bottom", false),
    b(PGUP, KeyCommand::PageUp, "PgUp", "key-page-up", false),
    b(PGDN, KeyCommand::PageDown, "PgDn", "key-page-down", false),
];

/// Moving on a page: the scroll.
pub(crate) const PAGE_MOVES: &[Binding] = &[
    b(UP, KeyCommand::Up, "↑/k", "key-scroll-up", false),
    b(DOWN, KeyCommand::Down, "↓/j", "key-scroll-down", false),
    b(TOP, KeyCommand::Top, "g", "key-top", false),
    b(BOTTOM, KeyCommand::Bottom, "G", "key-bottom", false),
    b(PGUP, KeyCommand::PageUp, "PgUp", "key-page-up", false),
    b(PGDN, KeyCommand::PageDown, "PgDn", "key-page-down", false),
];

/// The Operations list.
pub(crate) const OPERATIONS: &[Binding] = &[
    b(
        &[Key::plain(KeyCode::Enter)],
        KeyCommand::Open,
        "Enter",
        "key-open",
        true,
    ),
    b(&[Key::ch('/')], KeyCommand::Filter, "/", "key-filter", true),
    b(
        &[Key::plain(KeyCode::Esc)],
        KeyCommand::Back,
        "Esc",
        "key-clear-filter",
        false,
    ),
    b(&[Key::ch('p')], KeyCommand::Pause, "p", "key-pause", true),
    b(&[Key::ch('r')], KeyCommand::Resume, "r", "key-resume", true),
    b(DELETE, KeyCommand::Delete, "d", "key-delete", true),
    b(
        CTRL_DELETE,
        KeyCommand::Delete,
        "Ctrl-D",
        "key-delete",
        false,
    ),
    b(
        &[Key::ch('y')],
        KeyCommand::Manifest,
        "y",
        "key-yaml",
        false,
    ),
];

/// One operation's page.
pub(crate) const OPERATION: &[Binding] = &[
    b(
        &[Key::plain(KeyCode::Esc)],
        KeyCommand::Back,
        "Esc",
        "key-back",
        true,
    ),
    b(
        &[Key::plain(KeyCode::Enter)],
        KeyCommand::Open,
        "Enter",
        "key-whole-text",
        true,
    ),
    b(&[Key::ch('p')], KeyCommand::Pause, "p", "key-pause", true),
    b(&[Key::ch('r')], KeyCommand::Resume, "r", "key-resume", true),
    b(DELETE, KeyCommand::Delete, "d", "key-delete", true),
    b(
        CTRL_DELETE,
        KeyCommand::Delete,
        "Ctrl-D",
        "key-delete",
        false,
    ),
    b(&[Key::ch('w')], KeyCommand::Report, "w", "key-report", true),
    b(&[Key::ch('y')], KeyCommand::Manifest, "y", "key-yaml", true),
    b(
        &[Key::ch('e')],
        KeyCommand::Events,
        "e",
        "key-events",
        false,
    ),
];

/// The Clusters list.
pub(crate) const CLUSTERS: &[Binding] = &[
    b(
        &[Key::plain(KeyCode::Enter)],
        KeyCommand::Open,
        "Enter",
        "key-open",
        true,
    ),
    b(&[Key::ch('/')], KeyCommand::Filter, "/", "key-filter", true),
    b(
        &[Key::plain(KeyCode::Esc)],
        KeyCommand::Back,
        "Esc",
        "key-clear-filter",
        false,
    ),
    b(&[Key::ch('n')], KeyCommand::New, "n", "key-new", true),
];

/// A cluster's page.
pub(crate) const CLUSTER: &[Binding] = &[
    b(
        &[Key::plain(KeyCode::Esc)],
        KeyCommand::Back,
        "Esc",
        "key-back",
        true,
    ),
    b(
        &[Key::plain(KeyCode::Enter)],
        KeyCommand::Open,
        "Enter",
        "key-whole-text",
        true,
    ),
    b(&[Key::ch('n')], KeyCommand::New, "n", "key-new", true),
];

/// A text read in a dialog (the keys, a resource, a page whole): it scrolls, and closes.
pub const READING: &[Binding] = &[
    b(UP, KeyCommand::Up, "↑/k", "key-scroll-up", false),
    b(DOWN, KeyCommand::Down, "↓/j", "key-scroll-down", false),
    b(TOP, KeyCommand::Top, "g", "key-top", false),
    b(BOTTOM, KeyCommand::Bottom, "G", "key-bottom", false),
    b(PGUP, KeyCommand::PageUp, "PgUp", "key-page-up", false),
    b(PGDN, KeyCommand::PageDown, "PgDn", "key-page-down", false),
    b(
        &[
            Key::plain(KeyCode::Esc),
            Key::ch('q'),
            Key::plain(KeyCode::Enter),
        ],
        KeyCommand::Cancel,
        "Esc",
        "key-close",
        true,
    ),
];

/// The new-operation form (text fields take printable keys first).
pub const FORM: &[Binding] = &[
    b(
        &[Key::plain(KeyCode::Up), Key::plain(KeyCode::Down)],
        KeyCommand::Down,
        "↑↓",
        "key-choose",
        true,
    ),
    b(
        &[Key::plain(KeyCode::Tab)],
        KeyCommand::NextField,
        "Tab",
        "key-next-field",
        true,
    ),
    b(
        &[Key::plain(KeyCode::BackTab)],
        KeyCommand::PrevField,
        "Shift-Tab",
        "key-prev-field",
        false,
    ),
    b(
        &[Key::plain(KeyCode::Enter)],
        KeyCommand::Submit,
        "Enter",
        "key-review",
        true,
    ),
    b(
        &[Key::plain(KeyCode::Esc)],
        KeyCommand::Cancel,
        "Esc",
        "key-cancel",
        true,
    ),
];

/// The Review: the plan on screen; Start is a separate Enter.
pub const REVIEW: &[Binding] = &[
    b(
        &[Key::plain(KeyCode::Up), Key::plain(KeyCode::PageUp)],
        KeyCommand::Up,
        "↑/PgUp",
        "key-scroll-up",
        false,
    ),
    b(
        &[Key::plain(KeyCode::Down), Key::plain(KeyCode::PageDown)],
        KeyCommand::Down,
        "↓/PgDn",
        "key-scroll-down",
        false,
    ),
    b(
        &[Key::plain(KeyCode::Enter)],
        KeyCommand::Submit,
        "Enter",
        "key-start",
        true,
    ),
    b(
        &[Key::plain(KeyCode::BackTab)],
        KeyCommand::BackToForm,
        "Shift-Tab",
        "key-edit",
        true,
    ),
    b(
        &[Key::ch('R'), Key::ctrl('r')],
        KeyCommand::Refresh,
        "R",
        "key-replan",
        true,
    ),
    b(
        &[Key::plain(KeyCode::Esc)],
        KeyCommand::Cancel,
        "Esc",
        "key-cancel",
        true,
    ),
];

/// The Review while its typed-name field takes every printable key: Ctrl-R reviews again.
pub const REVIEW_TYPING: &[Binding] = &[
    REVIEW[0],
    REVIEW[1],
    REVIEW[2],
    REVIEW[3],
    b(
        &[Key::ctrl('r')],
        KeyCommand::Refresh,
        "Ctrl-R",
        "key-replan",
        true,
    ),
    REVIEW[5],
];

/// The Review's keys: `typing`, while the typed-name field takes text.
pub fn review(typing: bool) -> &'static [Binding] {
    if typing { REVIEW_TYPING } else { REVIEW }
}

/// `?`: the keys of what is on screen (and, in them, closes them).
pub const HELP: &[Binding] = &[b(&[Key::ch('?')], KeyCommand::Help, "?", "key-help", false)];

/// Ctrl-C quits from anywhere, a dialog and a text field included.
pub const QUIT_ANYWHERE: &[Binding] = &[b(
    &[Key::ctrl('c')],
    KeyCommand::Quit,
    "Ctrl-C",
    "key-quit",
    false,
)];

/// Editing a text field (the filter, the command line, the form's fields, the typed name):
/// printable keys type, Backspace removes a character, and these.
pub const TEXT: &[Binding] = &[
    b(
        &[Key::ctrl('u')],
        KeyCommand::ClearText,
        "Ctrl-U",
        "key-clear-text",
        false,
    ),
    b(
        &[Key::ctrl('w')],
        KeyCommand::DeleteWord,
        "Ctrl-W",
        "key-delete-word",
        false,
    ),
];

/// The page's events (`e`): they scroll, and close.
pub const EVENTS: &[Binding] = &[
    b(UP, KeyCommand::Up, "↑/k", "key-scroll-up", false),
    b(DOWN, KeyCommand::Down, "↓/j", "key-scroll-down", false),
    b(TOP, KeyCommand::Top, "g/Home", "key-top", false),
    b(BOTTOM, KeyCommand::Bottom, "G/End", "key-bottom", false),
    b(PGUP, KeyCommand::PageUp, "PgUp", "key-page-up", false),
    b(PGDN, KeyCommand::PageDown, "PgDn", "key-page-down", false),
    b(
        &[Key::ch('a')],
        KeyCommand::LoadAllEvents,
        "a",
        "key-load-all-events",
        false,
    ),
    b(
        &[
            Key::plain(KeyCode::Esc),
            Key::ch('q'),
            Key::ch('e'),
            Key::plain(KeyCode::Enter),
        ],
        KeyCommand::Cancel,
        "Esc",
        "key-close",
        true,
    ),
];

/// Everywhere.
pub(crate) const GLOBAL: &[Binding] = &[
    b(
        &[Key::plain(KeyCode::Tab)],
        KeyCommand::SwitchScreen,
        "Tab",
        "key-switch",
        false,
    ),
    b(
        &[Key::ch('1')],
        KeyCommand::ShowOperations,
        "1",
        "key-operations",
        false,
    ),
    b(
        &[Key::ch('2')],
        KeyCommand::ShowClusters,
        "2",
        "key-clusters",
        false,
    ),
    b(
        &[Key::ch('R')],
        KeyCommand::Refresh,
        "R",
        "key-refresh",
        true,
    ),
    b(&[Key::ch('?')], KeyCommand::Help, "?", "key-help", true),
    b(
        &[Key::ch(':')],
        KeyCommand::CommandLine,
        ":",
        "key-command",
        false,
    ),
    b(&[Key::ch('q')], KeyCommand::Quit, "q", "key-quit", true),
    QUIT_ANYWHERE[0],
    b(
        &[Key::ctrl('z')],
        KeyCommand::Suspend,
        "Ctrl-Z",
        "key-suspend",
        false,
    ),
];

/// One of k9s's sort keys: the key, the column it orders by, and how `?` says it.
#[derive(Clone, Copy, Debug)]
pub struct SortKey {
    pub key: char,
    pub by: ichor_model::SortBy,
    pub label: &'static str,
    pub hint: &'static str,
}

const fn sort(
    key: char,
    by: ichor_model::SortBy,
    label: &'static str,
    hint: &'static str,
) -> SortKey {
    SortKey {
        key,
        by,
        label,
        hint,
    }
}

/// k9s's sort keys on the Operations list: Shift and the column's first letter; again, the
/// other way. (Kept out of the screen's table, whose keys are looked up after them; `?` lists
/// them on the Operations list.)
pub const SORT_KEYS: &[SortKey] = &[
    sort('N', ichor_model::SortBy::Name, "Shift-N", "key-sort-name"),
    sort('A', ichor_model::SortBy::Age, "Shift-A", "key-sort-age"),
    sort('S', ichor_model::SortBy::State, "Shift-S", "key-sort-state"),
];

/// The command line is a text field too: Tab completes the command typed. (Listed in `?`;
/// the command line reads its keys itself, so this row is never looked up.)
pub const COMMAND_LINE: &[Binding] = &[b(
    &[Key::plain(KeyCode::Tab)],
    KeyCommand::NextField,
    "Tab",
    "key-complete",
    false,
)];

/// `/`, `n` and `N` in a YAML view and a page read whole, as `?` lists them (the search reads
/// its keys itself, before `READING`; these rows are never looked up).
pub const SEARCH: &[Binding] = &[
    b(&[Key::ch('/')], KeyCommand::Filter, "/", "key-search", true),
    b(
        &[Key::ch('n')],
        KeyCommand::Down,
        "n",
        "key-search-next",
        false,
    ),
    b(
        &[Key::ch('N')],
        KeyCommand::Up,
        "N",
        "key-search-prev",
        false,
    ),
];

/// The table of a screen.
pub(crate) fn screen_bindings(screen: Screen) -> &'static [Binding] {
    match screen {
        Screen::Operations => OPERATIONS,
        Screen::Operation => OPERATION,
        Screen::Clusters => CLUSTERS,
        Screen::Cluster => CLUSTER,
    }
}

/// The movement keys of a screen.
fn moves(screen: Screen) -> &'static [Binding] {
    match screen {
        Screen::Operations | Screen::Clusters => LIST_MOVES,
        Screen::Operation | Screen::Cluster => PAGE_MOVES,
    }
}

/// The command a key means on `screen`, with the keys the config rebinds.
pub(crate) fn lookup(keys: &KeyOverrides, screen: Screen, key: Key) -> Option<KeyCommand> {
    bindings(keys, screen)
        .find(|bd| keys.keys_of(bd).contains(&key))
        .map(|bd| bd.command)
}

/// Every binding of a screen in force (see [`all`]): a command the config rebinds keeps one
/// row, with the config's keys ([`KeyOverrides::keys_of`], [`KeyOverrides::label`]).
pub fn bindings(keys: &KeyOverrides, screen: Screen) -> impl Iterator<Item = &'static Binding> {
    let mut rebound = Vec::new();
    all(screen).filter(move |b| {
        if !keys.rebinds(b.command) || rebound.contains(&b.command) {
            return !keys.rebinds(b.command);
        }
        rebound.push(b.command);
        true
    })
}

/// The command a key means in a dialog table.
pub(crate) fn lookup_in(table: &[Binding], key: Key) -> Option<KeyCommand> {
    table
        .iter()
        .find(|bd| bd.keys.contains(&key))
        .map(|bd| bd.command)
}

/// Every binding of a screen, screen first (for the help and the footer).
pub fn all(screen: Screen) -> impl Iterator<Item = &'static Binding> {
    moves(screen)
        .iter()
        .chain(screen_bindings(screen))
        .chain(GLOBAL)
}

#[cfg(test)]
mod tests;
