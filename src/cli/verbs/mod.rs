//! The commands beside the dashboard (ADR 0068, Decision 6 and the CA rotation amendment):
//! `upgrade`, `cni`, `cluster shutdown|rotate-ca` and
//! `operation list|get|pause|resume|delete|report`,
//! on the dashboard's own client (the retrying wrapper over the route the settings choose), so
//! every refusal is the service's, on every path.
//!
//! Exit codes: 0 done, 1 refused (by the service, by the person at the question, or an error),
//! 2 usage (a wrong flag; a write without a terminal and without `--yes`), 3 the operation
//! failed (`--follow`, `get --watch`: it failed, or a failed machine paused it).

pub mod args;
mod ask;
mod entry;
mod feed;
mod follow;
mod guard;
pub mod jsonpath;
mod list;
mod output;
mod plan_text;
mod report;
mod show;
mod start;
mod verb;
mod write;

pub(crate) use entry::as_dashboard;
pub use entry::{run_verb, verb_of};

/// Where a command's log goes: its `--log-file`.
pub(crate) fn entry_log_file(cli: &crate::cli::Cli) -> Option<&std::path::Path> {
    verb_of(cli).and_then(|(_, reach)| reach.log_file.as_deref())
}

use args::Verb;
use ichor_model::{ApiError, OperationClient};
use ichor_views::i18n::Texts;
use std::io::{BufRead, Write};
use std::time::Duration;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It did what it was asked.
    Done,
    /// Refused: by the service, by the person at the question, or an error.
    Refused,
    /// Used wrongly: a write without a terminal and without `--yes`.
    Usage,
    /// The operation followed failed, or a failed machine paused it.
    Failed,
}

impl Exit {
    /// Every exit, by its code (the manual's EXIT STATUS lists them).
    pub const ALL: [Exit; 4] = [Exit::Done, Exit::Refused, Exit::Usage, Exit::Failed];

    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Refused => 1,
            Exit::Usage => 2,
            Exit::Failed => 3,
        }
    }
}

/// Where a command prints and reads, and how often it polls: the process's own streams, or a
/// test's buffers.
pub struct Io<'a> {
    pub texts: &'a Texts,
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    /// Where the answers to questions come from: `None` without a terminal.
    pub answers: Option<&'a mut dyn BufRead>,
    /// How often `--follow` and `get --watch` read the operation (ADR 0068: 2 s).
    pub poll: Duration,
    /// The time zone of the clock times printed.
    pub tz: jiff::tz::TimeZone,
    /// The context, when the config marks it (or its API server) production: every write asks
    /// for the cluster's name typed, and `--yes` needs it given (`--confirm-cluster`).
    pub production: Option<Production>,
    /// `--confirm-cluster NAME`: the cluster a write is on, named to confirm it.
    pub confirm_cluster: Option<String>,
    /// When a running machine is slow (`[timing]`).
    pub slow: ichor_model::SlowRule,
    /// The time the tables and the times are said as of (`jiff::Timestamp::now`; a test's
    /// fixed moment).
    pub clock: fn() -> jiff::Timestamp,
}

/// A production context, as the guard names it: the context, and the API server it reaches
/// when known (a context is production when it or another context to its server is marked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Production {
    pub context: String,
    pub api_server: Option<String>,
}

impl From<&str> for Production {
    /// A context marked by its name, with no API server named.
    fn from(context: &str) -> Production {
        Production {
            context: context.to_string(),
            api_server: None,
        }
    }
}

/// How often `--follow` and `--watch` read, as the ADR's CLI polls.
pub const POLL: Duration = Duration::from_secs(2);

impl Io<'_> {
    /// A line on standard output. A closed pipe (`| head`) is not an error of the command.
    pub(crate) fn say(&mut self, line: &str) {
        let _ = writeln!(self.out, "{line}");
    }

    /// A line on standard error.
    pub(crate) fn warn(&mut self, line: &str) {
        let _ = writeln!(self.err, "{line}");
    }

    /// A failed call, in the person's language, on standard error.
    pub(crate) fn fail(&mut self, e: &ApiError) -> Exit {
        let line = ichor_views::words::error_text(self.texts, e);
        self.warn(&line);
        Exit::Refused
    }

    /// The message `id` with string arguments.
    pub(crate) fn tr(&self, id: &str, args: &[(&str, &str)]) -> String {
        self.texts.tr(id, args)
    }
}

/// Runs `verb` in `namespace` on `client`.
pub async fn run(
    client: &dyn OperationClient,
    namespace: &str,
    verb: &Verb,
    io: &mut Io<'_>,
) -> Exit {
    if verb.asks() && io.answers.is_none() {
        let line = io.tr("cli-needs-yes", &[("command", &verb.command())]);
        io.warn(&line);
        return Exit::Usage;
    }
    match verb {
        Verb::Start { .. } => start::run(client, namespace, verb, io).await,
        Verb::List {
            all_namespaces,
            output,
            no_headers,
            watch,
        } => {
            let ns = (!all_namespaces).then_some(namespace);
            let table = list::Table {
                all_namespaces: *all_namespaces,
                no_headers: *no_headers,
                watch: *watch,
            };
            list::run(client, io, ns, table, output).await
        }
        Verb::Get {
            name,
            output,
            watch,
        } => {
            let op = match client.get_operation(namespace, name).await {
                Ok(op) => op,
                Err(e) => return io.fail(&e),
            };
            let around = show::Around::read(client, &op).await;
            show::get(io, &op, &around, output);
            if *watch {
                return follow::follow(client, namespace, name, io, Some(op), false).await;
            }
            Exit::Done
        }
        Verb::Write { kind, name, yes } => {
            write::run(client, namespace, *kind, name, *yes, io).await
        }
        Verb::Report { name, output } => report::run(client, namespace, name, *output, io).await,
    }
}
