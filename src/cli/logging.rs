//! Where the log goes and how its lines are written. The dashboard owns the terminal, so it
//! (and the one-shot commands beside it) log to a file (`--log-file`, else the state
//! directory). A server (`serve`, `demo-cluster`) logs to stderr, which a container runtime
//! collects (`kubectl logs`), unless `--log-file` names a file; one that cannot write its file
//! says so on stderr and logs there. The commands that write nothing of their own (`version`,
//! `completion`, `man`) log only to a file `--log-file` names: they need no log directory, so
//! they run on a read-only root. `--log-format json` writes one JSON object a line
//! (tracing-subscriber's JSON format, its fields at the top level).

use anyhow::Context as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of text an event.
    #[default]
    Text,
    /// One JSON object a line: timestamp, level, target, message and the event's fields.
    Json,
}

/// Where a run logs and how.
#[derive(Clone, Copy, Debug)]
pub struct LogSetup<'a> {
    /// `--log-file`.
    pub file: Option<&'a Path>,
    /// A server (`serve`, `demo-cluster`): stderr unless `file`.
    pub server: bool,
    pub format: LogFormat,
    /// A command that writes nothing of its own (`version`, `completion`, `man`): a log only
    /// where `file` names one, so it needs no log directory (a read-only root, an image).
    pub only_if_named: bool,
}

/// Where the lines go, once chosen.
pub(super) struct Sink {
    pub(super) writer: Box<dyn std::io::Write + Send>,
    /// stderr (a person or a collector reads it there).
    pub(super) stderr: bool,
    /// Colours: only on a terminal, only for text.
    pub(super) ansi: bool,
}

impl Sink {
    fn stderr(format: LogFormat) -> Sink {
        Sink {
            writer: Box::new(std::io::stderr()),
            stderr: true,
            ansi: format == LogFormat::Text && std::io::stderr().is_terminal(),
        }
    }
}

/// The dashboard's log file when no `--log-file` is given.
fn default_file() -> PathBuf {
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join("ichor-tui")
        .join("ichor-tui.log")
}

fn open(path: &Path) -> anyhow::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating log directory {}", dir.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening log file {}", path.display()))
}

/// Where `setup` sends the log. A server that cannot write its file says so on stderr (the
/// only place it can) and logs there; the dashboard's failure is the caller's to say.
pub(super) fn sink(setup: &LogSetup) -> anyhow::Result<Sink> {
    let file = match (setup.server, setup.file) {
        (true, None) => return Ok(Sink::stderr(setup.format)),
        (true, Some(path)) => match open(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!(
                    "ichor-tui: {}; logging to stderr instead",
                    ichor_model::error_text::one_line(&e)
                );
                return Ok(Sink::stderr(setup.format));
            }
        },
        (false, Some(path)) => open(path)?,
        (false, None) if setup.only_if_named => {
            return Ok(Sink {
                writer: Box::new(std::io::sink()),
                stderr: false,
                ansi: false,
            });
        }
        (false, None) => open(&default_file())?,
    };
    Ok(Sink {
        writer: Box::new(file),
        stderr: false,
        ansi: false,
    })
}

/// Installs the subscriber: `filter`'s events, written to `writer` in `format`.
pub(super) fn install(
    writer: tracing_appender::non_blocking::NonBlocking,
    filter: tracing_subscriber::EnvFilter,
    format: LogFormat,
    ansi: bool,
) -> anyhow::Result<()> {
    let builder = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(ansi)
        .with_env_filter(filter);
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
    };
    installed.map_err(|e| anyhow::anyhow!("setting up logging: {e}"))
}
