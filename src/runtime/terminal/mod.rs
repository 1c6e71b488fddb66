//! The terminal's lifecycle in one place: raw mode and the alternate screen are restored on
//! every way out (quit, error, panic, SIGTERM, SIGHUP, SIGINT), and Ctrl-Z suspends with the
//! terminal restored and resumes with a full redraw.

mod ambiwidth;
mod notify;

pub use notify::Notifier;

use crate::Host;
use crossterm::event::{Event, EventStream, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, terminal};
use futures::{Stream, StreamExt};
use ichor_app::action::{Action, Key, KeyCode};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The dashboard's terminal.
pub(crate) type Tty = Terminal<CrosstermBackend<Stdout>>;

/// Why the dashboard cannot run here, as the one line to print, or `None` when it can: it
/// reads keys from standard input and draws on standard output, and both must be terminals
/// (not /dev/null, a pipe, cron or `ssh` without `-t`).
pub fn missing_terminal(stdin: bool, stdout: bool) -> Option<String> {
    let what = match (stdin, stdout) {
        (true, true) => return None,
        (false, true) => "standard input is not a terminal",
        (true, false) => "standard output is not a terminal",
        (false, false) => "standard input and standard output are not terminals",
    };
    Some(format!(
        "ichor-tui needs a terminal: {what} (run it from an interactive shell, or use `ssh -t`)"
    ))
}

/// Whether colour codes reach the terminal, as the settings decided. crossterm drops them by
/// itself when `NO_COLOR` is set, which would defeat an explicit `--color always` (no-color.org:
/// a flag given for the run wins; NO_COLOR only changes the default).
pub fn colour(on: bool) {
    crossterm::style::Colored::set_ansi_color_disabled(!on);
}

/// Takes the terminal: raw mode, alternate screen, hidden cursor. Unless the settings say how
/// wide it draws East Asian ambiguous characters (`ambiguous_wide`), measures it before the
/// first frame; returns whether they are wide.
pub fn enter(ambiguous_wide: Option<bool>) -> io::Result<(Tty, bool)> {
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    execute!(io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)?;
    let wide = ambiguous_wide.unwrap_or_else(|| ambiwidth::measure(ambiwidth::TIMEOUT));
    let mut t = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    crate::full_redraw(&mut t)?;
    Ok((t, wide))
}

/// Gives the terminal back as it was. Safe to call more than once and from a panic hook.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
        let _ = terminal::disable_raw_mode();
    }
}

/// Restores the terminal before a panic message is printed. A panic in a background task is
/// reported to the running dashboard instead (logged, said on screen, the program goes on and
/// still quits on `q`): restoring the terminal under a program that goes on would leave it
/// unable to read keys.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = crate::payload_text(info.payload());
        if crate::report_panic(&message) {
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()));
            tracing::error!(message, at, "a background task panicked");
            return;
        }
        restore();
        previous(info);
    }));
}

/// Restores the terminal when dropped (errors and early returns).
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Suspends on Ctrl-Z like a shell job: the terminal is restored, the process stops, and `fg`
/// takes the terminal again; says an operation's outcome as the terminal takes it.
pub struct TtyHost {
    notifier: Notifier,
    /// Reaches the service through a kubeconfig context (`:ctx`), when there is a kubeconfig.
    contexts: Option<crate::ContextReacher>,
}

impl TtyHost {
    /// A host whose notifications suit this terminal (see [`Notifier::from_env`]).
    pub fn new() -> TtyHost {
        TtyHost {
            notifier: Notifier::from_env(|k| std::env::var(k).ok()),
            contexts: None,
        }
    }

    /// `:ctx NAME` reaches the service with `reach(NAME)`.
    pub fn reaching_contexts(mut self, reach: crate::ContextReacher) -> TtyHost {
        self.contexts = Some(reach);
        self
    }
}

impl Default for TtyHost {
    fn default() -> Self {
        TtyHost::new()
    }
}

impl Host for TtyHost {
    fn reach_context(&mut self, context: &str) -> Option<crate::Reaching> {
        self.contexts.as_mut().map(|reach| reach(context))
    }

    fn notify(&mut self, title: &str, body: &str) -> anyhow::Result<()> {
        self.notifier.say(title, body)?;
        Ok(())
    }

    fn suspend(&mut self) -> anyhow::Result<()> {
        restore();
        // SAFETY: raise(3) has no memory-safety preconditions; SIGTSTP stops the process until
        // SIGCONT, the default job-control behaviour.
        unsafe {
            libc::raise(libc::SIGTSTP);
        }
        terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        execute!(io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)?;
        Ok(())
    }
}

/// Maps a terminal event to an Action.
pub(crate) fn action_of(ev: Event) -> Option<Action> {
    match ev {
        Event::Key(k) if k.kind != KeyEventKind::Release => {
            let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
            let code = match k.code {
                crossterm::event::KeyCode::Char(c) => KeyCode::Char(c),
                crossterm::event::KeyCode::Enter => KeyCode::Enter,
                crossterm::event::KeyCode::Esc => KeyCode::Esc,
                crossterm::event::KeyCode::Tab => KeyCode::Tab,
                crossterm::event::KeyCode::BackTab => KeyCode::BackTab,
                crossterm::event::KeyCode::Backspace => KeyCode::Backspace,
                crossterm::event::KeyCode::Up => KeyCode::Up,
                crossterm::event::KeyCode::Down => KeyCode::Down,
                crossterm::event::KeyCode::Left => KeyCode::Left,
                crossterm::event::KeyCode::Right => KeyCode::Right,
                crossterm::event::KeyCode::PageUp => KeyCode::PageUp,
                crossterm::event::KeyCode::PageDown => KeyCode::PageDown,
                crossterm::event::KeyCode::Home => KeyCode::Home,
                crossterm::event::KeyCode::End => KeyCode::End,
                _ => return None,
            };
            Some(Action::Key(Key { code, ctrl }))
        }
        Event::Resize(w, h) => Some(Action::Resize(w, h)),
        Event::FocusGained => Some(Action::Redraw),
        _ => None,
    }
}

/// Terminal input and the terminating signals, as one stream of Actions.
pub fn input() -> io::Result<impl Stream<Item = Action> + Unpin> {
    use tokio::signal::unix::{SignalKind, signal};
    let keys = EventStream::new().filter_map(|ev| async move { ev.ok().and_then(action_of) });
    let mut signals = Vec::new();
    for kind in [
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::interrupt(),
    ] {
        let mut s = signal(kind)?;
        signals.push(
            futures::stream::poll_fn(move |cx| s.poll_recv(cx))
                .map(|_| Action::Terminate)
                .boxed(),
        );
    }
    let mut cont = signal(SignalKind::from_raw(libc::SIGCONT))?;
    signals.push(
        futures::stream::poll_fn(move |cx| cont.poll_recv(cx))
            .map(|_| Action::Redraw)
            .boxed(),
    );
    Ok(futures::stream::select(
        keys.boxed(),
        futures::stream::select_all(signals),
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_line_names_what_is_not_a_terminal() {
        use super::missing_terminal;
        assert_eq!(missing_terminal(true, true), None);
        let tail = " (run it from an interactive shell, or use `ssh -t`)";
        for (stdin, stdout, what) in [
            (false, true, "standard input is not a terminal"),
            (true, false, "standard output is not a terminal"),
            (
                false,
                false,
                "standard input and standard output are not terminals",
            ),
        ] {
            assert_eq!(
                missing_terminal(stdin, stdout).unwrap(),
                format!("ichor-tui needs a terminal: {what}{tail}")
            );
        }
    }
}
