//! The event loop, which wires the pure app to the terminal, the views and the client: terminal input, API results, retry reports and timers become Actions on one
//! channel; `update` turns them into Effects that workers run against the client; a frame is
//! drawn only when it differs from the last one, and the loop wakes only for polls and for a
//! clock whose display changes.
//!
//! Here: the [`Runtime`] and its loop (`run`: what wakes it, what a wake-up does). The rest
//! by concern: `effects.rs` (an action applied and its effects started), `frames.rs` (when a
//! frame is laid out and when it is written), `host.rs` (the terminal layer's hooks and the
//! `:ctx` switch), `clock.rs` (the wall clock that follows tokio's), `workers.rs` (the tasks
//! that call the client), `live.rs` (the subscription), `terminal/` (the terminal's lifecycle).

mod clock;
mod effects;
mod frames;
mod host;
mod live;
mod workers;
use workers::Workers;
mod panics;
mod perform;
pub mod report;
pub mod terminal;

pub use clock::Clock;
pub(crate) use frames::full_redraw;
pub use host::{ContextReacher, Host, NoHost, Reached, Reaching};
pub use live::reopen_waits;
pub(crate) use panics::{payload_text, report_panic};
pub use perform::perform;

use frames::{Drawn, Fingerprint};
use futures::{Stream, StreamExt};
use ichor_app::action::Action;
use ichor_app::state::State;
use ichor_app::update::{start, update};
use ichor_model::{OperationClient, RetryEvent};
use ichor_views::i18n::Texts;
use ichor_views::widgets::Theme;
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::sync::Arc;
use tokio::sync::mpsc;

/// What a run did (tests and benchmarks count draws).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames written to the terminal (they differed from the one on it).
    pub draws: u64,
    /// Frames laid out and rendered (a draw, or one found identical to the screen).
    pub renders: u64,
    pub wakeups: u64,
}

/// Everything a run needs besides the terminal.
pub struct Runtime {
    pub state: State,
    pub client: Arc<dyn OperationClient>,
    pub texts: Texts,
    pub theme: Theme,
    pub clock: Clock,
}

impl Runtime {
    /// Runs until the user quits or `input` ends.
    pub async fn run<B, I>(
        mut self,
        terminal: &mut Terminal<B>,
        mut input: I,
        mut retry: mpsc::UnboundedReceiver<RetryEvent>,
        host: &mut dyn Host,
    ) -> anyhow::Result<Stats>
    where
        B: Backend,
        B::Error: Send + Sync + 'static,
        I: Stream<Item = Action> + Unpin,
    {
        let (mut tx, mut rx) = mpsc::unbounded_channel::<Action>();
        let mut stats = Stats::default();
        let size = terminal.size()?;
        self.state.size = (size.width, size.height);
        self.state.now = self.clock.now();
        if self.client.pushes() {
            self.state.live.mode = ichor_app::state::LiveMode::Waiting;
        }
        let first = start(&mut self.state);
        panics::report_to(tx.clone());
        let mut workers = Workers::default();
        self.run_effects(first, &tx, &mut workers);
        let mut last: Option<Fingerprint> = None;
        let mut drawn: Option<Drawn> = None;
        let mut drawn_at: Option<tokio::time::Instant> = None;
        let mut input_open = true;
        loop {
            if self.needs_frame(drawn, last.is_none()) {
                if self
                    .wait_for_frame(drawn_at, &mut rx, terminal, host, &tx, &mut workers)
                    .await?
                {
                    last = None;
                }
                stats.renders += 1;
                if self.draw_if_changed(terminal, &mut last)? {
                    stats.draws += 1;
                    drawn_at = Some(tokio::time::Instant::now());
                }
                drawn = Some(self.drawn());
            }
            if self.state.quit || !input_open {
                break;
            }
            let wake = self.wake_at();
            let mut actions = Vec::new();
            tokio::select! {
                Some(a) = rx.recv() => actions.push(a),
                a = input.next(), if input_open => match a {
                    Some(a) => actions.push(a),
                    None => input_open = false,
                },
                Some(ev) = retry.recv() => actions.push(Action::Retry(ev)),
                (context, reached) = workers.reaching(), if workers.is_reaching() => {
                    actions.push(self.switch(context, reached, &mut tx, &mut rx, &mut workers));
                }
                _ = sleep_until(wake) => {
                    stats.wakeups += 1;
                    actions.push(Action::Tick);
                }
            }
            // Coalesce a burst of results into one frame.
            while let Ok(a) = rx.try_recv() {
                actions.push(a);
            }
            for a in actions {
                if self.apply(a, terminal, host, &tx, &mut workers)? {
                    last = None;
                }
            }
            self.note_what_the_server_said();
        }
        Ok(stats)
    }

    /// What the server said of its version and of whom it took the calls for, as its last
    /// answers said them (remote backends).
    fn note_what_the_server_said(&mut self) {
        let version = self.client.server_version();
        if version != self.state.session.server_version {
            update(&mut self.state, Action::ServerVersion(version));
        }
        if let Some(user) = self.client.user()
            && self.state.session.user.as_ref() != Some(&user)
        {
            update(&mut self.state, Action::User(user));
        }
    }

    /// When the loop wakes by itself: the next poll, the next change of the clock's words on
    /// screen, the next look for a settling start; `None`: only for input and answers.
    fn wake_at(&self) -> Option<tokio::time::Instant> {
        let settling = self.state.settling.as_ref().map(|s| s.next_check);
        [
            self.state.next_poll,
            ichor_views::next_clock_change(&self.state),
            settling,
        ]
        .into_iter()
        .flatten()
        .min()
        .map(|t| self.clock.instant_at(t))
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
