//! The dialogs over the screens: the new-operation dialog, the y/N question before a write,
//! and what a write waits for.

use super::{Loaded, WriteAction};
use ichor_model::{ApiError, Cluster, Confirmed, Operation, OperationKind, Plan};
use jiff::Timestamp;

/// An open dialog.
#[derive(Clone, Debug, PartialEq)]
pub enum Dialog {
    /// A text to read, scrolled: the keys, a resource as YAML, a page's text whole.
    Read(Reading),
    Confirm(Confirm),
    NewOperation(Box<NewOperation>),
    /// The page's events, all of them, from this row down.
    Events {
        scroll: usize,
    },
}

impl Dialog {
    /// The keys (`?`), from the top.
    pub(crate) fn keys() -> Dialog {
        Dialog::Read(Reading::of(ReadingOf::Keys))
    }

    /// The keys of the dialog `over` (`?` in it), which is open again when they close.
    pub(crate) fn keys_over(over: Dialog) -> Dialog {
        Dialog::Read(Reading {
            over: Some(Box::new(over)),
            ..Reading::of(ReadingOf::Keys)
        })
    }

    /// The dialog the keys are read over, if they are.
    pub fn under_keys(&self) -> Option<&Dialog> {
        match self {
            Dialog::Read(r) => r.over.as_deref(),
            _ => None,
        }
    }

    /// Which dialog this is, as far as its layout goes.
    pub fn shown(&self) -> DialogShown {
        match self {
            Dialog::Read(r) => match r.what {
                ReadingOf::Keys => DialogShown::Keys,
                _ => DialogShown::Reading,
            },
            Dialog::Confirm(c) => DialogShown::Confirm(c.action),
            Dialog::NewOperation(d) => match d.step {
                NewOpStep::Form => DialogShown::Form,
                NewOpStep::Review => DialogShown::Review {
                    seq: d.seq,
                    planned: !d.plan.loading && d.plan.data.is_some(),
                },
                NewOpStep::Starting { .. } => DialogShown::Starting,
            },
            Dialog::Events { .. } => DialogShown::Events,
        }
    }
}

/// Which dialog is open, as far as what it shows goes: a key goes to a dialog only once the
/// views have drawn this one. A Review is another once its plan has come (Start only after the
/// plan was on screen).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialogShown {
    Keys,
    Reading,
    Confirm(WriteAction),
    Form,
    Review { seq: u64, planned: bool },
    Starting,
    Events,
}

/// A text read in a dialog, and how far it is scrolled. Read only: nothing in it writes.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub what: ReadingOf,
    /// The first line shown.
    pub scroll: usize,
    /// The dialog the keys (`?`) were asked for over: open again when they close, and still
    /// given the answers it waits for.
    pub over: Option<Box<Dialog>>,
    /// `/` in the text: what is looked for, and where.
    pub search: Search,
}

impl Reading {
    pub(crate) fn of(what: ReadingOf) -> Reading {
        Reading {
            what,
            scroll: 0,
            over: None,
            search: Search::default(),
        }
    }
}

/// A search in a text read (`/`, then `n`/`N`): the views find the lines that hold it (they
/// lay the text out) and say where the next and previous are ([`SearchRoom`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Search {
    pub text: String,
    /// The text is being typed.
    pub typing: bool,
    /// The line of the match moved to last; `None`: none yet (the next is looked for from
    /// the first line shown).
    pub at: Option<usize>,
}

/// What is read.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadingOf {
    /// Every key of the screen (`?`).
    Keys,
    /// An operation's resource as YAML (`y`), as the service read it.
    Manifest {
        namespace: String,
        name: String,
        yaml: Loaded<String>,
    },
    /// Everything the operation's page says, whole: names, reasons and messages uncut (Enter
    /// on the page). Drawn from the page's operation, so it follows the polls.
    Operation,
    /// Everything the cluster's page says, whole.
    Cluster,
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
    pub(crate) namespace: String,
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
    /// The last start's outcome is not known yet: Start is not offered until it is settled.
    pub settling: bool,
    pub(crate) seq: u64,
    /// The context is production: every start needs the cluster's name typed.
    pub production: bool,
}

impl NewOperation {
    /// Shutdown and CA rotation need the cluster name typed before Start, and every start in
    /// a production context.
    pub fn needs_typed_name(&self) -> bool {
        self.production
            || matches!(
                self.kind,
                OperationKind::Shutdown | OperationKind::CaRotation
            )
    }

    /// Whether Start is offered: the plan is on screen, nothing blocks it and the caller may
    /// start it. Only then does the typed-name field exist.
    pub fn start_offered(&self) -> bool {
        self.step == NewOpStep::Review
            && !self.settling
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

    /// Whether the focused field takes text: the version typed in the form, max unavailable,
    /// and the typed name while Start is offered. Every printable key is then the field's
    /// (capitals, `?` and `R` included); only keys that cannot be text act.
    pub fn takes_text(&self) -> bool {
        match self.step {
            NewOpStep::Form => match self.field {
                FormField::Target => self.kind != OperationKind::Cni,
                FormField::MaxUnavailable => true,
                FormField::Kind => false,
            },
            NewOpStep::Review => self.needs_typed_name() && self.start_offered(),
            NewOpStep::Starting { .. } => false,
        }
    }
}

/// A y/N question before a write. The default answer is No.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confirm {
    pub action: WriteAction,
    pub(crate) namespace: String,
    pub name: String,
    /// Where the operation was when asked: what a delete does depends on it.
    pub asked: AskedAbout,
    /// What the question was asked about: the write is refused if the operation differs.
    pub(crate) confirmed: Confirmed,
    /// The operation's cluster.
    pub cluster: String,
    /// In a production context, the cluster's name as typed so far: the write needs it typed
    /// exactly, then Enter (`None`: y/N).
    pub typed: Option<String>,
}

/// Where an operation was when a question about it was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskedAbout {
    /// Running (a delete stops it after the current machine).
    Running,
    /// Not started yet: waiting for the cluster lock or the controller.
    Waiting,
    /// Paused by the person.
    Paused,
    /// Paused by a failed machine.
    PausedByFailure,
    Completed,
    Failed,
}

impl AskedAbout {
    /// Where `op` is now.
    pub(crate) fn of(op: &Operation) -> AskedAbout {
        use ichor_model::Phase;
        match &op.phase {
            _ if op.paused_by_failure() => AskedAbout::PausedByFailure,
            Phase::Completed => AskedAbout::Completed,
            Phase::Failed => AskedAbout::Failed,
            Phase::Paused => AskedAbout::Paused,
            Phase::Pending | Phase::Unknown => AskedAbout::Waiting,
            Phase::Running | Phase::Other(_) => AskedAbout::Running,
        }
    }
}

/// A start whose answer was lost or whose create got no answer: its operation is looked for by
/// the start's request id until the create can no longer land, then the outcome is said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettlingStart {
    pub(crate) namespace: String,
    pub cluster: String,
    pub request_id: String,
    /// Until when the create could still land.
    pub until: Timestamp,
    /// When it is looked for next.
    pub next_check: Timestamp,
    /// A look is out, begun then.
    pub(crate) looking_since: Option<Timestamp>,
}

/// A write that was sent and whose answer has not come yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingWrite {
    pub action: WriteAction,
    pub namespace: String,
    pub name: String,
    pub(crate) since: Timestamp,
    /// The write's request number: an answer with another one is not this write's.
    pub seq: u64,
}
