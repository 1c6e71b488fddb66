//! What the executor said it was doing: the Kubernetes Events of an operation and of its
//! machines, as the operation page shows them.

use jiff::Timestamp;

/// The most events one answer holds (the newest).
pub const MAX_EVENTS: usize = 100;
/// The most events an answer holds when all are asked for (`e` then `a` in the events view):
/// a bound, so that a history of any length stays one bounded message.
pub const MAX_EVENTS_ALL: usize = 1000;
/// The longest message kept of an event (cut with `…`).
pub const MAX_EVENT_MESSAGE: usize = 400;

/// One event, as Kubernetes recorded it (its text is the cluster's: untrusted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OperationEvent {
    /// `Warning` (true) or `Normal`.
    pub warning: bool,
    pub reason: String,
    pub message: String,
    /// What it is about: `TalosOperation` or `Machine`, and its name.
    pub object_kind: String,
    pub object_name: String,
    /// How many times it happened (1 when not aggregated).
    pub count: u32,
    pub first_at: Option<Timestamp>,
    pub last_at: Option<Timestamp>,
}

impl OperationEvent {
    /// When it last happened (or first, or never said).
    pub fn at(&self) -> Option<Timestamp> {
        self.last_at.or(self.first_at)
    }
}

/// How many of an operation's events a ListOperationEvents call asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EventsWanted {
    /// The newest [`MAX_EVENTS`] (what every client asked for before `all`).
    #[default]
    Newest,
    /// All of them, up to [`MAX_EVENTS_ALL`].
    All,
}

impl EventsWanted {
    /// The most events the answer holds.
    pub fn limit(self) -> usize {
        match self {
            EventsWanted::Newest => MAX_EVENTS,
            EventsWanted::All => MAX_EVENTS_ALL,
        }
    }
}

/// One answer of ListOperationEvents: the events, newest first, and how many the server found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OperationEvents {
    pub events: Vec<OperationEvent>,
    /// How many events the operation has, the ones left out included; `None`: the server
    /// did not say (one from before the count).
    pub total: Option<usize>,
}

impl OperationEvents {
    /// The events found and not sent: `None` when the server did not say how many it found.
    pub fn left_out(&self) -> Option<usize> {
        self.total.map(|t| t.saturating_sub(self.events.len()))
    }

    /// Whether older events may not be loaded: some were left out, or the server did not say
    /// and sent as many as it sends at most.
    pub fn older_not_loaded(&self) -> bool {
        match self.left_out() {
            Some(n) => n > 0,
            None => self.events.len() >= MAX_EVENTS,
        }
    }
}

impl From<Vec<OperationEvent>> for OperationEvents {
    /// Events whose total is not known.
    fn from(events: Vec<OperationEvent>) -> OperationEvents {
        OperationEvents {
            events,
            total: None,
        }
    }
}
