//! What the dashboard says under the status bar: notices, and why a command is not offered.

use ichor_model::{ApiError, Created};

use super::WriteAction;

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
    /// The command line was given a command it does not know (as typed).
    UnknownCommand(String),
    /// A start whose outcome was being settled created nothing: the cluster's name.
    StartNotCreated(String),
    /// Kubernetes RBAC does not let the caller make this write in this namespace.
    NotPermitted(RbacWrite, String),
    /// `:ns` alone: which namespace is listed, and what can be typed.
    NamespaceUsage,
    /// `:ns` with a name Kubernetes would not take as a namespace (as typed).
    BadNamespace(String),
    /// `R` was answered: the screen shows what the server holds now.
    Refreshed,
    /// `:ctx` alone, or with a name the kubeconfig does not have (as typed): the contexts.
    ContextUsage(Option<String>),
    /// `:ctx` without a kubeconfig (a server, the demo).
    NoContexts,
    /// `:ctx NAME` while a write or a start's outcome is awaited: it is not switched.
    ContextBusy,
    /// `:ctx NAME` is being reached.
    ContextSwitching(String),
    /// The service is reached through context NAME now.
    ContextSwitched(String),
    /// Context NAME could not be reached; the one in use stays: why (bounded, inert).
    ContextFailed(String, String),
    /// The report of operation NAME was written to PATH.
    ReportSaved(String, String),
    /// The report of operation NAME could not be written: why (bounded, inert).
    ReportFailed(String, String),
    /// The cluster's name typed to confirm a write in a production context was not its name.
    NameNotTyped(String),
}

/// A write Kubernetes RBAC refused the caller, named as a Review names it (verb and resource).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RbacWrite {
    /// `patch talosoperations`: pause and resume.
    Patch,
    /// `delete talosoperations`.
    Delete,
    /// A start: `create talosoperations`, and the start's claim (`create`/`update leases`).
    Start,
}

impl RbacWrite {
    /// The Fluent id of the sentence (its argument: `namespace`).
    pub fn message_id(self) -> &'static str {
        match self {
            RbacWrite::Patch => "why-not-permitted-patch",
            RbacWrite::Delete => "why-not-permitted-delete",
            RbacWrite::Start => "why-not-permitted-start",
        }
    }
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
    /// The operation no longer exists.
    Gone,
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
            Why::Gone => "why-gone",
        }
    }
}
