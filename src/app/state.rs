//! Plain state: what the dashboard knows and shows. Views read it; only `update` changes it.

use crate::model::{ApiError, Cluster, Operation};
use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The screens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Screen {
    Operations,
    Operation,
}

/// A write the user can ask for, after a y/N question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteAction {
    Pause,
    Resume,
    Delete,
}

/// Data from the service, with the last error.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded<T> {
    pub data: Option<T>,
    pub error: Option<ApiError>,
    /// A request is under way.
    pub loading: bool,
}

impl<T> Default for Loaded<T> {
    fn default() -> Self {
        Loaded {
            data: None,
            error: None,
            loading: false,
        }
    }
}

/// A scrolled list: the selected row and the first row shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListView {
    pub selected: usize,
    pub offset: usize,
}

/// The Operations screen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperationsState {
    /// Sorted newest first.
    pub all: Loaded<Vec<Operation>>,
    /// Indices into `all` that pass the filter (computed in `update`, not per frame).
    pub visible: Vec<usize>,
    pub list: ListView,
    pub filter: String,
}

impl OperationsState {
    /// The selected operation, if any.
    pub fn selected(&self) -> Option<&Operation> {
        let idx = *self.visible.get(self.list.selected)?;
        self.all.data.as_ref()?.get(idx)
    }
}

/// The Operation screen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DetailState {
    pub namespace: String,
    pub name: String,
    pub op: Loaded<Operation>,
    /// The cluster, for each machine's role (read once when the page opens).
    pub cluster: Option<Cluster>,
    /// The first machine row shown, once the user has scrolled; `None`: follow the machine that
    /// matters (the failed one, else the running one).
    pub scroll: Option<usize>,
}

/// An open dialog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dialog {
    Help,
    Confirm(Confirm),
}

/// A y/N question before a write. The default answer is No.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confirm {
    pub action: WriteAction,
    pub namespace: String,
    pub name: String,
    /// The operation was running when asked (a delete then stops it after the current machine).
    pub running: bool,
}

/// The focused text field, if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Input {
    #[default]
    None,
    Filter,
}

/// A line for the user: the outcome of a write, a refusal, a note.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// A write was sent.
    Sent(WriteAction, String),
    /// A write succeeded.
    Done(WriteAction, String),
    /// A call failed; said in the user's language from the reason code.
    Failed(ApiError),
    /// Resume is not offered: a failed machine paused the operation.
    ResumeNotOffered(String),
    /// The command is not available here (message id).
    Unavailable(&'static str),
}

/// The connection as the retrying client reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Conn {
    #[default]
    Ok,
    Retrying {
        next_at: Timestamp,
        since: Timestamp,
        attempt: u32,
    },
    GaveUp {
        since: Timestamp,
    },
}

/// How the status bar names the backend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// `demo`, `in-process (context)`, or the server URL.
    pub backend: String,
    /// The namespace listed; ignored when `all_namespaces`.
    pub namespace: String,
    pub all_namespaces: bool,
    pub user: Option<String>,
    pub read_only: bool,
}

/// Everything the dashboard shows.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// "Now", set by the runtime before each update: views never read the clock.
    pub now: Timestamp,
    pub tz: TimeZone,
    pub screen: Screen,
    pub session: Session,
    pub ops: OperationsState,
    pub detail: Option<DetailState>,
    pub dialog: Option<Dialog>,
    pub input: Input,
    pub notice: Option<Notice>,
    pub conn: Conn,
    /// When data last arrived.
    pub last_ok: Option<Timestamp>,
    /// When the visible screen polls next; `None`: no poll.
    pub next_poll: Option<Timestamp>,
    /// Request counter: results of superseded requests are dropped.
    pub seq: u64,
    pub size: (u16, u16),
    pub quit: bool,
}

impl State {
    pub fn new(session: Session, now: Timestamp, tz: TimeZone) -> State {
        State {
            now,
            tz,
            screen: Screen::Operations,
            session,
            ops: OperationsState::default(),
            detail: None,
            dialog: None,
            input: Input::None,
            notice: None,
            conn: Conn::Ok,
            last_ok: None,
            next_poll: None,
            seq: 0,
            size: (80, 24),
            quit: false,
        }
    }

    /// The operation the write keys act on: the page's, or the selected row's.
    pub fn target(&self) -> Option<&Operation> {
        match self.screen {
            Screen::Operation => self.detail.as_ref().and_then(|d| d.op.data.as_ref()),
            Screen::Operations => self.ops.selected(),
        }
    }

    /// Whether the data on screen may be out of date (the API is not answering).
    pub fn stale(&self) -> bool {
        self.conn != Conn::Ok
    }
}
