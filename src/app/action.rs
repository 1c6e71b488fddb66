//! The one message type (`Action`) and the effects `update` asks the workers to run.

use super::state::WriteAction;
use ichor_model::RetryEvent;
use ichor_model::{
    ApiError, Cluster, Confirmed, Created, Operation, OperationRequest, Permissions, Plan,
};

/// A key, as the dashboard understands it (independent of the terminal library).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyCode {
    Char(char),
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
}

/// A key press.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

impl Key {
    pub const fn plain(code: KeyCode) -> Key {
        Key { code, ctrl: false }
    }

    pub const fn ch(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: false,
        }
    }

    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: true,
        }
    }
}

/// What a cluster is read for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClusterFor {
    /// An operation's page: its machines' roles (read once when the page opens).
    OperationPage,
    /// The cluster's own page (polled).
    ClusterPage,
}

/// Everything that happens: input, results, timers.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Key(Key),
    Resize(u16, u16),
    /// The rows the views show changed (after a resize or a change of screen).
    Viewport(super::state::Viewport),
    /// A timer fired (a poll or a clock whose display changes).
    Tick,
    /// The terminal came back after a suspend: everything must be redrawn.
    Redraw,
    /// SIGTERM, SIGHUP or SIGINT: leave now, restoring the terminal.
    Terminate,
    /// The whole Operations list, on one page.
    Operations {
        seq: u64,
        result: Result<Vec<Operation>, ApiError>,
    },
    /// An operation page's events arrived (or could not be read).
    Events {
        seq: u64,
        namespace: String,
        name: String,
        result: Result<ichor_model::OperationEvents, ApiError>,
    },
    /// A page of the Operations list (`more`: the next page, to append).
    OperationsPage {
        seq: u64,
        more: bool,
        result: Result<ichor_model::OperationPage, ApiError>,
    },
    Operation {
        seq: u64,
        namespace: String,
        name: String,
        result: Result<Operation, ApiError>,
    },
    Cluster {
        seq: u64,
        purpose: ClusterFor,
        namespace: String,
        name: String,
        result: Result<Cluster, ApiError>,
    },
    Written {
        seq: u64,
        action: WriteAction,
        namespace: String,
        name: String,
        result: Result<(), ApiError>,
    },
    Permissions {
        namespace: String,
        result: Result<Permissions, ApiError>,
    },
    Clusters {
        seq: u64,
        result: Result<Vec<Cluster>, ApiError>,
    },
    Planned {
        seq: u64,
        result: Result<Plan, ApiError>,
    },
    Started {
        seq: u64,
        result: Result<Created, ApiError>,
    },
    /// A look for the operation of a start whose outcome is being settled.
    StartFound {
        request_id: String,
        result: Result<Option<Operation>, ApiError>,
    },
    /// A worker task failed inside (a bug): what it was doing, and what it said.
    TaskFailed {
        what: String,
        message: String,
    },
    /// An operation's resource as YAML (`y`).
    Manifest {
        namespace: String,
        name: String,
        result: Result<String, ApiError>,
    },
    Retry(RetryEvent),
    /// The server named its version (or answered without one).
    ServerVersion(ichor_model::ServerVersion),
    /// Who the server says the calls act as (a remote backend learns it from the answers).
    User(String),
    /// `:ctx` reached the service through another context: everything shown is of the new one.
    ContextReached(Box<Reached>),
    /// `:ctx` could not reach the service through the context: the connection in use stays.
    ContextFailed {
        context: String,
        message: String,
    },
    /// An update of subscription `sub` (WatchOperations): the page, the followed operation, or
    /// a heartbeat.
    Pushed {
        sub: u64,
        update: Box<ichor_model::WatchUpdate>,
    },
    /// What became of subscription `sub`.
    Live {
        sub: u64,
        event: LiveEvent,
    },
    /// The clusters whose machines' roles the list's rows are read with.
    Roles(Result<Vec<Cluster>, ApiError>),
    /// The last completed runs of a kind on a cluster, for the pace of a role none of whose
    /// machines has finished in the run shown.
    PriorRuns {
        key: PriorKey,
        result: Result<Vec<Operation>, ApiError>,
    },
    /// The report of an operation was written to a file (its path), or why not.
    ReportSaved {
        name: String,
        result: Result<String, String>,
    },
}

/// The runs a role's pace is borrowed from before one of its machines finished: a kind on a
/// cluster.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PriorKey {
    pub namespace: String,
    pub cluster: String,
    pub kind: ichor_model::OperationKind,
}

impl PriorKey {
    /// The kind and cluster of `op`, when its kind is known.
    pub fn of(op: &Operation) -> Option<PriorKey> {
        Some(PriorKey {
            namespace: op.namespace.clone(),
            cluster: op.cluster.clone(),
            kind: op.kind?,
        })
    }
}

/// The most completed runs a pace is borrowed from.
pub const PRIOR_RUNS: usize = 3;

/// What became of a subscription.
#[derive(Clone, Debug, PartialEq)]
pub enum LiveEvent {
    /// Its first update arrived: the data is pushed.
    On,
    /// It broke or could not be opened; the runtime subscribes again by itself.
    Off(ApiError),
    /// The backend does not push (an older server).
    Unsupported,
}

/// What a read is for ([`Effect::slot`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    Operations { more: bool },
    Operation,
    Manifest,
    Events,
    Cluster(ClusterFor),
    Clusters,
    Roles,
    PriorRuns,
    Plan,
    Permissions(String),
}

/// Work for the workers. `update` returns these; it never performs I/O itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// A page of the Operations list: the first pages again (a poll), or the next one
    /// (`more`, as the person scrolls towards the end of what is held).
    ListOperations {
        seq: u64,
        query: ichor_model::ListQuery,
        more: bool,
    },
    GetOperation {
        seq: u64,
        namespace: String,
        name: String,
    },
    /// An operation's resource as YAML: a read.
    GetManifest {
        namespace: String,
        name: String,
    },
    /// The events of an operation's page: the newest, or all of them (bounded).
    ListEvents {
        seq: u64,
        namespace: String,
        name: String,
        wanted: ichor_model::EventsWanted,
    },
    /// GetCluster, for an operation's page or for the cluster's own page.
    GetCluster {
        seq: u64,
        purpose: ClusterFor,
        namespace: String,
        name: String,
    },
    /// A pause, resume or delete, bound to what the person confirmed. Sent once.
    Write {
        seq: u64,
        action: WriteAction,
        namespace: String,
        name: String,
        confirmed: Confirmed,
    },
    /// Ask what the caller may do in a namespace.
    Permissions {
        namespace: String,
    },
    ListClusters {
        seq: u64,
        namespace: Option<String>,
    },
    /// The clusters of the namespace (`None`: every namespace), for their machines' roles.
    ListRoles {
        namespace: Option<String>,
    },
    /// The last completed runs of a kind on a cluster (at most [`PRIOR_RUNS`]), read whole.
    PriorRuns(PriorKey),
    /// The report of an operation (read whole: the operation, its cluster, all its events),
    /// written to a file in the working directory (the loop does it).
    SaveReport {
        namespace: String,
        name: String,
    },
    /// PlanOperation: writes nothing.
    Plan {
        seq: u64,
        request: OperationRequest,
    },
    /// CreateOperation: the Start, carrying the fingerprint of the reviewed plan. Sent once.
    Create {
        seq: u64,
        request: OperationRequest,
    },
    /// Looks for the operation a start whose answer was lost created, by its request id.
    FindStart {
        namespace: String,
        request_id: String,
    },
    /// Subscribe to what the dashboard holds (one stream per dashboard: this one replaces any
    /// earlier one). The runtime keeps it open, and opens it again when it breaks.
    Watch {
        sub: u64,
        request: ichor_model::WatchRequest,
    },
    /// Say an operation's outcome: the bell, and a desktop notification where the terminal
    /// takes one. Once per change.
    Notify {
        outcome: super::state::Outcome,
        name: String,
        cluster: String,
    },
    /// Suspend the process (Ctrl-Z): restore the terminal, stop, redraw on resume.
    Suspend,
    Quit,
    /// `:ctx NAME`: reach the service again through another kubeconfig context (the loop
    /// does it; its outcome comes back as [`Action::ContextReached`] or
    /// [`Action::ContextFailed`]).
    SwitchContext(String),
}

impl Effect {
    /// What the effect does, in English words for logs and for a worker that failed.
    pub fn what(&self) -> &'static str {
        match self {
            Effect::ListOperations { .. } => "listing operations",
            Effect::GetOperation { .. } => "reading the operation",
            Effect::GetManifest { .. } => "reading the operation's resource",
            Effect::ListEvents { .. } => "reading the events",
            Effect::ListClusters { .. } => "listing clusters",
            Effect::ListRoles { .. } => "reading the machines' roles",
            Effect::PriorRuns(_) => "reading the last runs of the same kind",
            Effect::SaveReport { .. } => "writing the operation's report",
            Effect::GetCluster { .. } => "reading the cluster",
            Effect::Plan { .. } => "planning the operation",
            Effect::Create { .. } => "starting the operation",
            Effect::Write { .. } => "writing to the operation",
            Effect::Permissions { .. } => "asking what you may do",
            Effect::FindStart { .. } => "looking for a start's operation",
            Effect::Watch { .. } => "following the operations",
            Effect::Notify { .. } => "notifying",
            Effect::Suspend => "suspending",
            Effect::SwitchContext(_) => "switching the kubeconfig context",
            Effect::Quit => "quitting",
        }
    }

    /// The thing a read is for: a later read of the same thing replaces this one (and stops its
    /// retries). `None` for writes, the start's look-up and what the loop itself does.
    pub fn slot(&self) -> Option<Slot> {
        Some(match self {
            Effect::ListOperations { more, .. } => Slot::Operations { more: *more },
            Effect::GetOperation { .. } => Slot::Operation,
            Effect::GetManifest { .. } => Slot::Manifest,
            Effect::ListEvents { .. } => Slot::Events,
            Effect::GetCluster { purpose, .. } => Slot::Cluster(*purpose),
            Effect::ListClusters { .. } => Slot::Clusters,
            Effect::ListRoles { .. } => Slot::Roles,
            Effect::PriorRuns(_) => Slot::PriorRuns,
            Effect::Plan { .. } => Slot::Plan,
            Effect::Permissions { namespace } => Slot::Permissions(namespace.clone()),
            Effect::Write { .. }
            | Effect::SaveReport { .. }
            | Effect::Create { .. }
            | Effect::FindStart { .. }
            | Effect::Watch { .. }
            | Effect::Notify { .. }
            | Effect::Suspend
            | Effect::SwitchContext(_)
            | Effect::Quit => return None,
        })
    }

    /// Whether the effect changes the cluster.
    pub fn is_write(&self) -> bool {
        matches!(self, Effect::Write { .. } | Effect::Create { .. })
    }
}

/// How the service was reached through another kubeconfig context (`:ctx`).
#[derive(Clone, Debug, PartialEq)]
pub struct Reached {
    pub context: String,
    pub route: super::state::Route,
    pub namespace: String,
    pub all_namespaces: bool,
    pub user: Option<String>,
    /// The new backend pushes (WatchOperations).
    pub pushes: bool,
    /// The config marks the new context production (or its API server).
    pub production: bool,
    /// Writes are off there: `--read-only`, or the config marks the context read only.
    pub read_only: bool,
    /// The API server the new context reaches.
    pub api_server: Option<ichor_model::ApiServer>,
}
