//! Texts read in a dialog: the keys (`?`), an operation's resource as YAML (`y`), a page's
//! text whole (Enter). They scroll, within what the views say they hold, and close; nothing in
//! them writes.

use crate::action::{Effect, Key, KeyCode};
use crate::keymap::{self, KeyCommand};
use crate::state::{Dialog, Loaded, Notice, Reading, ReadingOf, Screen, SearchRoom, State, Why};
use crate::text_field::{self, Edit};

/// The longest text searched for.
const MAX_SEARCH_CHARS: usize = 64;

/// `/`, `n` and `N` in a YAML or whole-text view, and the keys while the search is typed
/// (printable keys type, Enter finds, Esc leaves it; Esc after that clears it before it
/// closes the view). The line to scroll to when the key moved, `Some(scroll)` when it acted
/// without moving, `None` when it is not the search's.
fn search_key(r: &mut Reading, search: SearchRoom, key: Key) -> Option<usize> {
    if r.what == ReadingOf::Keys {
        return None;
    }
    let s = &mut r.search;
    let go = |s: &mut crate::state::Search, to: Option<usize>, scroll: usize| match to {
        Some(line) => {
            s.at = Some(line);
            line
        }
        None => scroll,
    };
    if s.typing {
        match key.code {
            KeyCode::Enter => {
                s.typing = false;
                s.at = None;
                return Some(go(s, search.next, r.scroll));
            }
            KeyCode::Esc => *s = Default::default(),
            _ => {
                if text_field::edit(&mut s.text, key, |_| true, MAX_SEARCH_CHARS) == Edit::Changed {
                    s.at = None;
                }
            }
        }
        return Some(r.scroll);
    }
    match key.code {
        KeyCode::Char('/') if !key.ctrl => {
            *s = crate::state::Search {
                typing: true,
                ..Default::default()
            };
            Some(r.scroll)
        }
        KeyCode::Char('n') if !key.ctrl && !s.text.is_empty() => Some(go(s, search.next, r.scroll)),
        KeyCode::Char('N') if !key.ctrl && !s.text.is_empty() => Some(go(s, search.prev, r.scroll)),
        KeyCode::Esc if !s.text.is_empty() => {
            *s = Default::default();
            Some(r.scroll)
        }
        _ => None,
    }
}
use ichor_model::ApiError;

/// A key while a text is read.
pub(super) fn on_key(state: &mut State, key: Key) -> Vec<Effect> {
    let room = state.viewport.dialog;
    let found = state.viewport.search;
    let Some(Dialog::Read(r)) = state.dialog.as_mut() else {
        return Vec::new();
    };
    // The key that opened it closes it too.
    let toggle = !r.search.typing
        && matches!(
            (&r.what, key.code),
            (ReadingOf::Keys, KeyCode::Char('?'))
                | (ReadingOf::Manifest { .. }, KeyCode::Char('y'))
        );
    if let Some(to) = search_key(r, found, key) {
        r.scroll = to.min(room.last_start());
        return Vec::new();
    }
    let page = room.rows.max(1);
    let to = match keymap::lookup_in(keymap::READING, key) {
        Some(KeyCommand::Cancel) => return close(state),
        _ if toggle && !key.ctrl => return close(state),
        // The keys of what is read.
        None if key == Key::ch('?') => {
            let over = state.dialog.take();
            state.dialog = over.map(Dialog::keys_over);
            return Vec::new();
        }
        Some(KeyCommand::Up) => r.scroll.saturating_sub(1),
        Some(KeyCommand::Down) => r.scroll + 1,
        Some(KeyCommand::PageUp) => r.scroll.saturating_sub(page),
        Some(KeyCommand::PageDown) => r.scroll + page,
        Some(KeyCommand::Top) => 0,
        Some(KeyCommand::Bottom) => usize::MAX,
        _ => r.scroll,
    };
    r.scroll = to.min(room.last_start());
    Vec::new()
}

/// Closes the text read: the dialog the keys were read over is open again.
fn close(state: &mut State) -> Vec<Effect> {
    state.dialog = match state.dialog.take() {
        Some(Dialog::Read(r)) => r.over.map(|d| *d),
        _ => None,
    };
    Vec::new()
}

/// Opens a page's text whole (Enter on an operation's or a cluster's page).
pub(super) fn whole_text(state: &mut State) {
    let what = match state.screen {
        Screen::Operation if state.detail.as_ref().is_some_and(|d| d.op.data.is_some()) => {
            ReadingOf::Operation
        }
        Screen::Cluster
            if state
                .cluster
                .as_ref()
                .is_some_and(|p| p.cluster.data.is_some()) =>
        {
            ReadingOf::Cluster
        }
        _ => return,
    };
    state.dialog = Some(Dialog::Read(Reading::of(what)));
}

/// `y`: the resource of the operation the keys act on, as YAML, read from the service.
pub(super) fn manifest(state: &mut State) -> Vec<Effect> {
    let Some(op) = state.target() else {
        state.notice = Some(Notice::Unavailable(Why::NothingSelected));
        return Vec::new();
    };
    let (namespace, name) = (op.namespace.clone(), op.name.clone());
    state.dialog = Some(Dialog::Read(Reading::of(ReadingOf::Manifest {
        namespace: namespace.clone(),
        name: name.clone(),
        yaml: Loaded {
            data: None,
            error: None,
            loading: true,
        },
    })));
    vec![Effect::GetManifest { namespace, name }]
}

/// The resource arrived: shown if its dialog is still open and waiting for it.
pub(super) fn on_manifest(
    state: &mut State,
    namespace: &str,
    name: &str,
    result: Result<String, ApiError>,
) -> Vec<Effect> {
    if let Some(Dialog::Read(Reading {
        what:
            ReadingOf::Manifest {
                namespace: ns,
                name: n,
                yaml,
            },
        ..
    })) = state.working_dialog()
        && ns == namespace
        && n == name
        && yaml.loading
    {
        *yaml = Loaded {
            loading: false,
            error: result.as_ref().err().cloned(),
            data: result.ok(),
        };
    }
    Vec::new()
}
