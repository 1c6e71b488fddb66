//! Plain state: what the dashboard knows and shows. Views read it; only `update` changes it.

use crate::model::{
    ApiError, Cluster, Confirmed, Created, Operation, OperationKind, Permissions, Plan,
};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use std::collections::BTreeMap;

/// The screens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Screen {
    Operations,
    Operation,
    Clusters,
    Cluster,
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

/// How many rows the screens show, as the views lay them out: the runtime tells the app (the
/// layout is the views' to know), and the app scrolls and pages by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Viewport {
    /// Rows of a list (operations, clusters).
    pub list_rows: usize,
    /// Rows of a page's table (an operation's machines).
    pub page_rows: usize,
}

impl Default for Viewport {
    /// An 80×24 terminal's, until the runtime says otherwise.
    fn default() -> Self {
        Viewport {
            list_rows: 18,
            page_rows: 18,
        }
    }
}

/// The first machine row to show on an operation's page when the person has not scrolled:
/// follow the machine that matters (the failed one, else the running one).
pub fn follow_scroll(op: &Operation, rows: usize) -> usize {
    use crate::model::MachinePhase;
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

/// The Operations screen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperationsState {
    /// Sorted newest first: the pages held (summaries: no machine lists).
    pub all: Loaded<Vec<Operation>>,
    /// Indices into `all` that pass the filter (computed in `update`, not per frame).
    pub visible: Vec<usize>,
    pub list: ListView,
    pub filter: String,
    /// Where the rows held stand against the server's list.
    pub paging: Paging,
}

/// A first page as the server named it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeldPage {
    pub page_size: u32,
    pub text: String,
    pub version: String,
}

/// The Operations list as the server pages it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paging {
    /// What the last poll asked for: its page size and filter.
    pub asked: (u32, String),
    /// The rows held are the first page of this size and filter, and the server named them
    /// with this version: a poll that finds them unchanged gets back nothing else. `None`
    /// once further pages were appended.
    pub held: Option<HeldPage>,
    /// Where the next page starts; `None` when every row is held.
    pub next_page_token: Option<String>,
    /// How many operations match on the server, over every page.
    pub total: usize,
    /// How many there are without a filter, as the last answer without one said.
    pub unfiltered_total: usize,
    /// The next page was asked for and has not come.
    pub loading_more: bool,
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
    /// What the executor recorded (Kubernetes Events), newest first, refreshed with the page.
    pub events: Loaded<Vec<crate::model::OperationEvent>>,
}

/// The Clusters screen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClustersState {
    pub all: Loaded<Vec<Cluster>>,
    pub list: ListView,
}

impl ClustersState {
    pub fn selected(&self) -> Option<&Cluster> {
        self.all.data.as_ref()?.get(self.list.selected)
    }
}

/// A cluster's page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterPage {
    pub namespace: String,
    pub name: String,
    pub cluster: Loaded<Cluster>,
    pub scroll: usize,
}

/// An open dialog.
#[derive(Clone, Debug, PartialEq)]
pub enum Dialog {
    Help,
    Confirm(Confirm),
    NewOperation(Box<NewOperation>),
    /// The page's events, all of them, from this row down.
    Events {
        scroll: usize,
    },
}

/// The focused part of the new-operation form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FormField {
    #[default]
    Kind,
    Target,
    MaxUnavailable,
}

/// Where the new-operation dialog is.
#[derive(Clone, Debug, PartialEq)]
pub enum NewOpStep {
    /// Choosing the kind and what it takes.
    Form,
    /// The plan is asked for or on screen; nothing has been written.
    Review,
    /// Start was pressed; CreateOperation is under way (since then). Esc stops waiting.
    Starting { since: Timestamp },
}

/// The dialog that starts an operation: a form, then Review (the plan, nothing written), then a
/// separate Start.
#[derive(Clone, Debug, PartialEq)]
pub struct NewOperation {
    pub namespace: String,
    pub cluster: Cluster,
    pub step: NewOpStep,
    pub kind: OperationKind,
    pub field: FormField,
    /// The version typed, or the kube-proxy mode chosen.
    pub target: String,
    pub max_unavailable: String,
    pub plan: Loaded<Plan>,
    /// The cluster name typed to confirm a shutdown or CA rotation.
    pub typed_name: String,
    /// The first plan step shown.
    pub scroll: usize,
    /// The last start's failure (a refusal, or a half-success), shown on the Review.
    pub start_error: Option<ApiError>,
    pub seq: u64,
}

impl NewOperation {
    /// Shutdown and CA rotation need the cluster name typed before Start.
    pub fn needs_typed_name(&self) -> bool {
        matches!(
            self.kind,
            OperationKind::Shutdown | OperationKind::CaRotation
        )
    }

    /// Whether Start is offered: the plan is on screen, nothing blocks it and the caller may
    /// start it. Only then does the typed-name field exist.
    pub fn start_offered(&self) -> bool {
        self.step == NewOpStep::Review
            && !self.plan.loading
            && self
                .plan
                .data
                .as_ref()
                .is_some_and(|p| p.blocked.is_none() && p.denied.is_none())
    }

    /// Whether Enter starts it now: Start is offered and the name (where needed) is typed
    /// exactly.
    pub fn can_start(&self) -> bool {
        self.start_offered() && (!self.needs_typed_name() || self.typed_name == self.cluster.name)
    }
}

/// A y/N question before a write. The default answer is No.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confirm {
    pub action: WriteAction,
    pub namespace: String,
    pub name: String,
    /// The operation was running when asked (a delete then stops it after the current machine).
    pub running: bool,
    /// What the question was asked about: the write is refused if the operation differs.
    pub confirmed: Confirmed,
}

/// A write that was sent and whose answer has not come yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingWrite {
    pub action: WriteAction,
    pub namespace: String,
    pub name: String,
    pub since: Timestamp,
    /// The write's request number: an answer with another one is not this write's.
    pub seq: u64,
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
    /// A write succeeded.
    Done(WriteAction, String),
    /// A call failed; said in the user's language from the reason code.
    Failed(ApiError),
    /// Resume is not offered: a failed machine paused the operation.
    ResumeNotOffered(String),
    /// An operation was started, with any warning that must not be missed.
    Started(Box<Created>),
    /// The command is not available here, and why.
    Unavailable(Why),
    /// The person stopped waiting for a write; it may still have happened.
    Abandoned(WriteAction, String),
}

/// Why a command is not offered: decided by the dashboard, said in the user's language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Why {
    ReadOnly,
    NothingSelected,
    Finished,
    AlreadyPaused,
    ResumeAfterFailure,
    NotPaused,
    NoCluster,
    /// Kubernetes RBAC does not let the caller make this write.
    NotPermitted,
    /// Another write is waiting for its answer.
    WritePending,
    /// The object cannot be read: what a write would change is unknown.
    Unreadable,
}

impl Why {
    /// The Fluent id of the sentence.
    pub fn message_id(self) -> &'static str {
        match self {
            Why::ReadOnly => "why-read-only",
            Why::NothingSelected => "why-nothing-selected",
            Why::Finished => "why-finished",
            Why::AlreadyPaused => "why-already-paused",
            Why::ResumeAfterFailure => "why-resume-after-failure",
            Why::NotPaused => "why-not-paused",
            Why::NoCluster => "why-no-cluster",
            Why::NotPermitted => "why-not-permitted",
            Why::WritePending => "why-write-pending",
            Why::Unreadable => "why-unreadable",
        }
    }
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

/// How the dashboard reaches OperationService, and why: the status bar says it in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `--server` (or `ICHOR_SERVER`): the URL, without credentials.
    Server { url: String },
    /// Through a port-forward to ichor-ui in the cluster (`namespace/service`).
    Tunnel { service: String },
    /// The service in this process, with the kubeconfig context (`demo` for the demo), and why
    /// not ichor-ui (`None`: chosen, or never looked for).
    InProcess {
        context: String,
        why: Option<crate::model::Fallback>,
    },
}

impl Default for Route {
    fn default() -> Self {
        Route::InProcess {
            context: String::new(),
            why: None,
        }
    }
}

/// How the status bar names the backend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// How OperationService is reached.
    pub route: Route,
    /// The demo cluster runs in this process.
    pub demo: bool,
    /// The namespace listed; ignored when `all_namespaces`.
    pub namespace: String,
    pub all_namespaces: bool,
    pub user: Option<String>,
    pub read_only: bool,
    /// What a remote server said of its version (the status bar shows it beside the backend).
    pub server_version: crate::model::ServerVersion,
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
    pub clusters: ClustersState,
    pub cluster: Option<ClusterPage>,
    pub dialog: Option<Dialog>,
    pub input: Input,
    pub notice: Option<Notice>,
    /// The write whose answer is awaited (one at a time).
    pub pending: Option<PendingWrite>,
    /// What the caller may do, by namespace: absent, not asked yet; `None`, not known (the
    /// write keys are then offered and the API server decides).
    pub permissions: BTreeMap<String, Option<Permissions>>,
    pub conn: Conn,
    /// When data last arrived.
    pub last_ok: Option<Timestamp>,
    /// When the visible screen polls next; `None`: no poll.
    pub next_poll: Option<Timestamp>,
    /// Request counter: results of superseded requests are dropped.
    pub seq: u64,
    pub size: (u16, u16),
    /// The rows the views show at this size.
    pub viewport: Viewport,
    pub quit: bool,
    /// Counts the updates that may have changed what is drawn: the runtime lays out a frame
    /// only when it moved (or the clock, or the size, did). Time passing is not counted.
    pub revision: u64,
    /// Set by a handler that changed nothing drawn (a poll answered "unchanged").
    pub quiet: bool,
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
            clusters: ClustersState::default(),
            cluster: None,
            dialog: None,
            input: Input::None,
            notice: None,
            pending: None,
            permissions: BTreeMap::new(),
            conn: Conn::Ok,
            last_ok: None,
            next_poll: None,
            seq: 0,
            size: (80, 24),
            viewport: Viewport::default(),
            quit: false,
            revision: 0,
            quiet: false,
        }
    }

    /// The operation the write keys act on: the page's, or the selected row's.
    pub fn target(&self) -> Option<&Operation> {
        match self.screen {
            Screen::Operation => self.detail.as_ref().and_then(|d| d.op.data.as_ref()),
            Screen::Operations => self.ops.selected(),
            Screen::Clusters | Screen::Cluster => None,
        }
    }

    /// The cluster `n` starts an operation on: the page's, or the selected row's.
    pub fn target_cluster(&self) -> Option<&Cluster> {
        match self.screen {
            Screen::Cluster => self.cluster.as_ref().and_then(|c| c.cluster.data.as_ref()),
            Screen::Clusters => self.clusters.selected(),
            _ => None,
        }
    }

    /// Whether the data on screen may be out of date: the API is not answering, or the visible
    /// screen's last load failed (its data, if any, is from an earlier load).
    pub fn stale(&self) -> bool {
        self.conn != Conn::Ok || self.load_failed()
    }

    /// Whether the visible screen's last load failed.
    pub fn load_failed(&self) -> bool {
        match self.screen {
            Screen::Operations => self.ops.all.error.is_some(),
            Screen::Operation => self.detail.as_ref().is_some_and(|d| d.op.error.is_some()),
            Screen::Clusters => self.clusters.all.error.is_some(),
            Screen::Cluster => self
                .cluster
                .as_ref()
                .is_some_and(|p| p.cluster.error.is_some()),
        }
    }
}
