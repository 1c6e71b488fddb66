//! Plain state: what the dashboard knows and shows. Views read it; only `update` changes it.

use ichor_model::{ApiError, Cluster, Operation, Permissions};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use std::collections::BTreeMap;

mod conn;
mod dialog;
mod live;
mod notice;
mod pace;
mod viewport;

pub use conn::Conn;
pub use dialog::*;
pub use live::{Live, LiveMode, Notifications, Outcome};
pub use notice::*;
pub use pace::Pace;
pub use viewport::*;

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
    pub(crate) loading: bool,
}

impl<T> Loaded<T> {
    /// Whether a request is under way.
    pub fn is_loading(&self) -> bool {
        self.loading
    }
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
    /// Sorted newest first: the pages held (summaries: no machine lists).
    pub all: Loaded<Vec<Operation>>,
    /// Indices into `all` that pass the filter (computed in `update`, not per frame).
    pub visible: Vec<usize>,
    pub list: ListView,
    pub filter: String,
    /// Where the rows held stand against the server's list.
    pub paging: Paging,
    /// Only this cluster's operations (`:ops CLUSTER`): the server filters every page.
    pub cluster: Option<String>,
    /// The list's order (Shift-N, Shift-A, Shift-S): the server orders every page.
    pub order: ichor_model::Order,
}

/// A first page as the server named it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HeldPage {
    pub(crate) page_size: u32,
    pub(crate) text: String,
    pub(crate) version: String,
}

/// The Operations list as the server pages it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paging {
    /// What the last poll asked for: its page size and filter.
    pub asked: (u32, String),
    /// The rows held are the first page of this size and filter, and the server named them
    /// with this version: a poll that finds them unchanged gets back nothing else. `None`
    /// once further pages were appended.
    pub(crate) held: Option<HeldPage>,
    /// Where the next page starts; `None` when every row is held.
    pub(crate) next_page_token: Option<String>,
    /// How many operations match on the server, over every page.
    pub total: usize,
    /// How many there are without a filter, as the last answer without one said.
    pub unfiltered_total: usize,
    /// The next page was asked for and has not come.
    pub(crate) loading_more: bool,
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
    pub events: Loaded<Vec<ichor_model::OperationEvent>>,
    /// How many events the server found, those not loaded included (`None`: not said).
    pub events_total: Option<usize>,
    /// The newest events, or all of them once asked for (`a` in the events view): each
    /// refresh of the page then reads them all again.
    pub events_wanted: ichor_model::EventsWanted,
    /// When the operation was last read (or pushed) as it exists.
    pub seen_at: Option<Timestamp>,
}

impl DetailState {
    /// Whether this is the page of `namespace`/`name`.
    pub(crate) fn is(&self, namespace: &str, name: &str) -> bool {
        self.namespace == namespace && self.name == name
    }

    /// When the operation was last seen, once a read says it no longer exists (NotFound);
    /// `None` while it exists as far as the page knows.
    pub fn gone(&self) -> Option<Option<Timestamp>> {
        let not_found = self
            .op
            .error
            .as_ref()
            .is_some_and(|e| e.code == ichor_model::Code::NotFound);
        not_found.then_some(self.seen_at)
    }

    /// The events held, as an answer: with the total the server said.
    pub fn events_held(&self) -> ichor_model::OperationEvents {
        ichor_model::OperationEvents {
            events: self.events.data.clone().unwrap_or_default(),
            total: self.events_total,
        }
    }
}

/// The Clusters screen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClustersState {
    pub all: Loaded<Vec<Cluster>>,
    /// Indices into `all` that pass the filter (computed in `update`, not per frame).
    pub visible: Vec<usize>,
    pub list: ListView,
    pub filter: String,
}

impl ClustersState {
    pub fn selected(&self) -> Option<&Cluster> {
        let idx = *self.visible.get(self.list.selected)?;
        self.all.data.as_ref()?.get(idx)
    }
}

/// A cluster's page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterPage {
    pub(crate) namespace: String,
    pub name: String,
    pub cluster: Loaded<Cluster>,
    pub scroll: usize,
}

impl ClusterPage {
    /// The page of `cluster`, as read.
    pub fn of(cluster: Cluster) -> ClusterPage {
        ClusterPage {
            namespace: cluster.namespace.clone(),
            name: cluster.name.clone(),
            cluster: Loaded {
                data: Some(cluster),
                error: None,
                loading: false,
            },
            scroll: 0,
        }
    }
}

/// The focused text field, if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Input {
    #[default]
    None,
    /// The list's filter (`/`).
    Filter,
    /// The command line (`:`).
    Command,
}

/// The command line (`:ops`, `:clusters`, `:q`) as it is being typed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandLine {
    pub text: String,
    /// Tab is cycling through the commands that start with what was typed: that text, and
    /// which of them is shown.
    pub completing: Option<(String, usize)>,
}

/// The dashboard's own credentials were refused, and the CA rotation that replaced them, if
/// one is known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CredentialsRefused<'a> {
    pub rotation: Option<&'a Operation>,
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
        why: Option<ichor_model::Fallback>,
        /// An ichor-ui was asked for by name (`--ichor-ui`, `--ichor-ui-port` or the config
        /// file) and not reached: an alarm. Without it, not finding the default one is the
        /// usual fallback, said as such.
        asked: bool,
    },
}

impl Default for Route {
    fn default() -> Self {
        Route::InProcess {
            context: String::new(),
            why: None,
            asked: false,
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
    pub server_version: ichor_model::ServerVersion,
    /// The kubeconfig context the service is reached through (`None`: no kubeconfig: a
    /// server, the demo).
    pub context: Option<String>,
    /// The kubeconfig's contexts, which `:ctx` switches between (empty: no kubeconfig).
    pub contexts: Vec<String>,
    /// The context is marked production in the config (by its name, or by its API server's or
    /// another context's to the same server): the status bar, the frame and every dialog say
    /// so, and every write asks for the cluster's name typed.
    pub production: bool,
    /// The Kubernetes API server the context reaches (the status bar names it beside the
    /// context); `None` for the demo's embedded one, and without a kubeconfig.
    pub api_server: Option<ichor_model::ApiServer>,
}

impl Session {
    /// The name the context goes by: the kubeconfig's context, else the in-process route's
    /// (`demo` for the demo); `None` for a server.
    pub fn context_name(&self) -> Option<&str> {
        if self.demo && self.context.is_none() {
            return Some("demo");
        }
        match (&self.context, &self.route) {
            (Some(c), _) => Some(c),
            (None, Route::InProcess { context, .. }) if !context.is_empty() => Some(context),
            _ => None,
        }
    }
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
    pub command: CommandLine,
    pub notice: Option<Notice>,
    /// The write whose answer is awaited (one at a time).
    pub pending: Option<PendingWrite>,
    /// A start whose outcome is being settled: looked for until it is known.
    pub settling: Option<SettlingStart>,
    /// `:ctx`: the context being reached.
    pub switching: Option<String>,
    /// What the caller may do, by namespace: absent, not asked yet; `None`, not known (the
    /// write keys are then offered and the API server decides).
    pub(crate) permissions: BTreeMap<String, Option<Permissions>>,
    pub conn: Conn,
    /// Whether the data is pushed, and what the dashboard subscribed to.
    pub live: Live,
    /// The outcomes said with the bell, and whether to say them.
    pub notifications: Notifications,
    /// The slow rule and the machines' roles the times are read with.
    pub pace: Pace,
    /// The keys the config rebinds (`[keys]`).
    pub keys: crate::rebind::KeyOverrides,
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
    pub(crate) quiet: bool,
    /// `R` asked the visible screen's data again with this request number: its answer (or a
    /// later one) says "refreshed".
    pub(crate) refresh: Option<u64>,
}

impl State {
    /// The open dialog that waits for answers: the one under the keys (`?`) when they are
    /// read over it.
    pub(crate) fn working_dialog(&mut self) -> Option<&mut Dialog> {
        match self.dialog.as_mut() {
            Some(Dialog::Read(Reading { over: Some(d), .. })) => Some(d.as_mut()),
            other => other,
        }
    }

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
            command: CommandLine::default(),
            notice: None,
            pending: None,
            settling: None,
            switching: None,
            permissions: BTreeMap::new(),
            conn: Conn::Ok,
            live: Live::default(),
            notifications: Notifications::default(),
            pace: Pace::default(),
            keys: Default::default(),
            last_ok: None,
            next_poll: None,
            seq: 0,
            size: (80, 24),
            viewport: Viewport::default(),
            quit: false,
            revision: 0,
            quiet: false,
            refresh: None,
        }
    }

    /// What a frame drawn now is laid out for.
    pub(crate) fn shown(&self) -> Shown {
        Shown {
            size: self.size,
            dialog: self.dialog.as_ref().map(Dialog::shown),
        }
    }

    /// Whether what keys act on is on screen: the terminal is large enough for the screens,
    /// and the views have drawn what is open now, at this size, whole. A dialog opened or
    /// changed since the last frame, or a terminal resized since, is not on screen yet: no
    /// question is answered before it was seen. (Without views, the size alone decides.)
    pub fn on_screen(&self) -> bool {
        if !fits(self.size) {
            return false;
        }
        match self.viewport.drawn {
            None => true,
            Some(d) => d.whole && d.shown == self.shown(),
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
    pub(crate) fn target_cluster(&self) -> Option<&Cluster> {
        match self.screen {
            Screen::Cluster => self.cluster.as_ref().and_then(|c| c.cluster.data.as_ref()),
            Screen::Clusters => self.clusters.selected(),
            _ => None,
        }
    }

    /// Whether the visible screen's data is pushed (no polls).
    pub fn pushed(&self) -> bool {
        self.live.mode == LiveMode::On
            && matches!(self.screen, Screen::Operations | Screen::Operation)
    }

    /// Whether the visible screen would be pushed but its stream is broken (it polls).
    pub fn live_off(&self) -> bool {
        matches!(self.live.mode, LiveMode::Off { .. })
            && matches!(self.screen, Screen::Operations | Screen::Operation)
    }

    /// The list's operations whose rows are on screen (as many as the views show at this size).
    pub fn list_rows_shown(&self) -> impl Iterator<Item = &Operation> + '_ {
        let all = self.ops.all.data.as_deref().unwrap_or_default();
        self.ops
            .visible
            .iter()
            .skip(self.ops.list.offset)
            .take(self.viewport.list_rows.max(1))
            .filter_map(move |&i| all.get(i))
    }

    /// Whether the data on screen may be out of date: the side it is read from does not answer,
    /// the visible screen's last load failed, or its live updates broke and nothing has been
    /// read since.
    pub fn stale(&self) -> bool {
        let failed = self.load_failed() && self.gone_page().is_none();
        self.conn != Conn::Ok || failed || self.unread_since_live_broke()
    }

    /// On the page of an operation a read said no longer exists: when it was last seen
    /// (`Some(None)`: never). That read is current knowledge, not a failure.
    pub fn gone_page(&self) -> Option<Option<Timestamp>> {
        match self.screen {
            Screen::Operation => self.detail.as_ref().and_then(DetailState::gone),
            _ => None,
        }
    }

    /// The live updates of the visible screen broke, and no data has arrived since.
    fn unread_since_live_broke(&self) -> bool {
        match self.live.mode {
            LiveMode::Off { since } if self.live_off() => self.last_ok.is_none_or(|at| at <= since),
            _ => false,
        }
    }

    /// The time the data on screen is from, when it may be out of date: what counts on from
    /// it (an operation's elapsed time) stops there. `None`: the data is current.
    pub fn data_time(&self) -> Option<Timestamp> {
        // A page whose operation is gone counts nothing on either: it stops where last seen.
        if let Some(seen) = self.gone_page() {
            return Some(seen.or(self.last_ok).unwrap_or(self.now));
        }
        match self.stale() {
            true => Some(self.last_ok.unwrap_or(self.now)),
            false => None,
        }
    }

    /// Whether the visible screen's last load failed.
    pub fn load_failed(&self) -> bool {
        self.load_error().is_some()
    }

    /// Why the visible screen's last load failed, if it did.
    pub(crate) fn load_error(&self) -> Option<&ApiError> {
        match self.screen {
            Screen::Operations => self.ops.all.error.as_ref(),
            Screen::Operation => self.detail.as_ref().and_then(|d| d.op.error.as_ref()),
            Screen::Clusters => self.clusters.all.error.as_ref(),
            Screen::Cluster => self.cluster.as_ref().and_then(|p| p.cluster.error.as_ref()),
        }
    }

    /// The dashboard's own Kubernetes credentials were refused (401 on the in-process path,
    /// not a server's bearer token): with the CA rotation that most likely replaced them, when
    /// one the dashboard has seen has handed new credentials over or completed.
    pub fn credentials_refused(&self) -> Option<CredentialsRefused<'_>> {
        let e = self.load_error()?;
        let own = !matches!(e.param("via"), Some("token" | "no-token"));
        if e.code != ichor_model::Code::Unauthenticated || !own {
            return None;
        }
        let seen = self
            .ops
            .all
            .data
            .iter()
            .flatten()
            .chain(self.detail.iter().filter_map(|d| d.op.data.as_ref()));
        let rotation = seen
            .filter(|o| o.credentials_handed_over())
            .max_by_key(|o| o.created_at);
        Some(CredentialsRefused { rotation })
    }
}
