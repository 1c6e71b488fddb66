//! Live updates: whether the dashboard's data is pushed (WatchOperations) or polled, and what it
//! subscribed to.

use ichor_model::WatchRequest;
use jiff::Timestamp;

/// The dashboard's one subscription.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Live {
    /// The subscription's number: updates of an earlier one are dropped.
    pub sub: u64,
    /// What it asked for.
    pub request: Option<WatchRequest>,
    pub mode: LiveMode,
}

/// How the data arrives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LiveMode {
    /// To be asked, or asked with no answer yet: polls go on. The runtime starts here when its
    /// client can push.
    Waiting,
    /// Pushed: no polls for the lists and the operation's page.
    On,
    /// The stream broke or could not be opened: polls, and the status bar says "live updates
    /// off" until the runtime's next subscription delivers.
    Off { since: Timestamp },
    /// The backend does not push (an older server, a test's client): polls, as before.
    #[default]
    Unsupported,
}

/// What an operation came to that a person waiting in another tab wants to hear of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Completed,
    /// Failed, or paused by a failed machine.
    Failed,
    /// A CA rotation waits for the operator to fetch the new credentials.
    AwaitsCredentials,
    /// A machine of it runs far longer than its peers did (see `ichor_model::SlowRule`).
    Slow,
}

/// The outcome last seen of each operation shown (by uid: one replaced under its name is
/// another), so each change is said once and the first state seen never.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Notifications {
    /// Say them (`--no-notify` turns it off; off in tests that do not ask for it).
    pub on: bool,
    pub seen: std::collections::HashMap<String, Option<Outcome>>,
    /// Whether each operation shown (by uid) was slow when last looked at.
    pub slow: std::collections::HashMap<String, bool>,
}
