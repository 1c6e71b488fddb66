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
