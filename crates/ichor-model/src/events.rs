//! What the executor said it was doing: the Kubernetes Events of an operation and of its
//! machines, as the operation page shows them.

use jiff::Timestamp;

/// The most events one answer holds (the newest).
pub const MAX_EVENTS: usize = 100;
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
