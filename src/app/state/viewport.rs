//! What the screen has room for: the smallest terminal laid out, the rows a screen shows, what
//! the views drew last, and how far a text or a machine list scrolls.

use super::DialogShown;
use ichor_model::Operation;

/// The smallest terminal the screens are laid out for. Below it the views draw only that the
/// terminal is too small, and no key but quit acts (see [`State::on_screen`](super::State::on_screen)).
pub const MIN_SIZE: (u16, u16) = (40, 12);

/// Whether a terminal of `size` is large enough for the screens (a dialog may need more: the
/// views say so in [`Viewport::drawn`]).
pub fn fits(size: (u16, u16)) -> bool {
    size.0 >= MIN_SIZE.0 && size.1 >= MIN_SIZE.1
}

/// How many rows the screens show, as the views lay them out: the runtime tells the app (the
/// layout is the views' to know), and the app scrolls and pages by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Viewport {
    /// Rows of a list (operations, clusters).
    pub list_rows: usize,
    /// Rows of a page's table (an operation's machines).
    pub page_rows: usize,
    /// The open dialog's text that scrolls (the Review, the keys, a whole text).
    pub dialog: ScrollRoom,
    /// Where a text read finds what is searched for in it (`/`).
    pub search: SearchRoom,
    /// What the views laid out, and whether they could draw it whole; `None` until a view has
    /// laid anything out (the app driven without views, as tests of `update` alone drive it).
    pub drawn: Option<Drawn>,
}

impl Default for Viewport {
    /// An 80×24 terminal's, until the runtime says otherwise.
    fn default() -> Self {
        Viewport {
            list_rows: 18,
            page_rows: 18,
            dialog: ScrollRoom::default(),
            search: SearchRoom::default(),
            drawn: None,
        }
    }
}

/// What the views laid out last: for which terminal size and dialog, and whether it was drawn
/// whole (the screen and the open dialog fit) or only as "terminal too small".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drawn {
    pub shown: Shown,
    pub whole: bool,
}

/// What a frame is laid out for, as far as keys go: the terminal's size and the open dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown {
    pub size: (u16, u16),
    pub dialog: Option<DialogShown>,
}

/// A text that scrolls: how many lines it runs to at this size, and how many show at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScrollRoom {
    pub lines: usize,
    pub rows: usize,
}

/// The lines of a text read that hold what is searched for, as the views laid it out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchRoom {
    /// How many lines hold it.
    pub matches: usize,
    /// The first after the current match (or from the first line shown), from the top again
    /// past the end.
    pub next: Option<usize>,
    /// The last before the current match (or before the first line shown), from the end
    /// again past the top.
    pub prev: Option<usize>,
}

impl ScrollRoom {
    /// The first line shown when scrolled to the end.
    pub fn last_start(&self) -> usize {
        self.lines.saturating_sub(self.rows)
    }
}

/// The first machine row to show on an operation's page when the person has not scrolled:
/// follow the machine that matters (the failed one, else the running one).
pub fn follow_scroll(op: &Operation, rows: usize) -> usize {
    use ichor_model::MachinePhase;
    let focus = op
        .machines
        .iter()
        .position(|m| m.phase == MachinePhase::Failed)
        .or_else(|| {
            op.machines
                .iter()
                .position(|m| m.phase == MachinePhase::Running)
        });
    match focus {
        Some(f) if f >= rows.saturating_sub(1) => f.saturating_sub(rows / 3),
        _ => 0,
    }
}
