//! What a command comes to, whatever its spelling ([`Verb`]), and what follows from it: whether
//! it writes, asks, watches, or prints for programs.

use super::args::{Output, ReportFormat};
use ichor_model::OperationKind;

/// A pause, resume or delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    Pause,
    Resume,
    Delete,
}

/// What a command comes to, whatever its spelling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verb {
    Start {
        kind: OperationKind,
        cluster: Option<String>,
        target: Option<String>,
        max_unavailable: Option<i32>,
        yes: bool,
        follow: bool,
    },
    List {
        all_namespaces: bool,
        output: Output,
        no_headers: bool,
        watch: bool,
    },
    Get {
        name: String,
        output: Output,
        watch: bool,
    },
    Write {
        kind: WriteKind,
        name: String,
        yes: bool,
    },
    Report {
        name: String,
        output: ReportFormat,
    },
}

impl Verb {
    /// Whether it writes (and therefore asks first).
    pub fn writes(&self) -> bool {
        matches!(self, Verb::Start { .. } | Verb::Write { .. })
    }

    /// Whether it watches until stopped or until the operation ends (`--follow`, `--watch`).
    pub fn watches(&self) -> bool {
        match self {
            Verb::Start { follow, .. } => *follow,
            Verb::Get { watch, .. } | Verb::List { watch, .. } => *watch,
            Verb::Write { .. } | Verb::Report { .. } => false,
        }
    }

    /// Whether its standard output is for a program (`-o name|json|yaml|jsonpath`, a JSON
    /// report): then standard error says nothing of the route either.
    pub fn prints_for_programs(&self) -> bool {
        match self {
            Verb::List { output, .. } | Verb::Get { output, .. } => {
                !matches!(output, Output::Table | Output::Wide)
            }
            Verb::Report { output, .. } => *output == ReportFormat::Json,
            Verb::Start { .. } | Verb::Write { .. } => false,
        }
    }

    /// Whether it asks a question before it writes.
    pub fn asks(&self) -> bool {
        match self {
            Verb::Start { yes, .. } | Verb::Write { yes, .. } => !yes,
            _ => false,
        }
    }

    /// The command as a person typed it, for messages.
    pub fn command(&self) -> String {
        match self {
            Verb::Start { kind, .. } => match kind {
                OperationKind::Talos => "ichor-tui upgrade talos".into(),
                OperationKind::Kubernetes => "ichor-tui upgrade kubernetes".into(),
                OperationKind::Ichor => "ichor-tui upgrade ichor".into(),
                OperationKind::Cni => "ichor-tui cni kube-proxy".into(),
                OperationKind::Shutdown => "ichor-tui cluster shutdown".into(),
                OperationKind::CaRotation => "ichor-tui cluster rotate-ca".into(),
            },
            Verb::List { .. } => "ichor-tui operation list".into(),
            Verb::Get { .. } => "ichor-tui operation get".into(),
            Verb::Report { .. } => "ichor-tui operation report".into(),
            Verb::Write { kind, .. } => format!(
                "ichor-tui operation {}",
                match kind {
                    WriteKind::Pause => "pause",
                    WriteKind::Resume => "resume",
                    WriteKind::Delete => "delete",
                }
            ),
        }
    }
}
