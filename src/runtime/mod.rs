//! The event loop, which wires the pure app to the terminal, the views and the client: terminal input, API results, retry reports and timers become Actions on one
//! channel; `update` turns them into Effects that workers run against the client; a frame is
//! drawn only when it differs from the last one, and the loop wakes only for polls and for a
//! clock whose display changes.

mod live;
mod workers;
use workers::Workers;
mod panics;
mod perform;
pub mod report;
pub mod terminal;

pub use live::reopen_waits;
pub(crate) use panics::{payload_text, report_panic};
pub use perform::perform;

use futures::{Stream, StreamExt};
use ichor_app::action::{Action, Effect};
use ichor_app::state::State;
use ichor_app::update::{start, update};
use ichor_model::{OperationClient, RetryEvent};
use ichor_views::i18n::Texts;
use ichor_views::widgets::{Ctx, Theme};
use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The shortest time between two frames: a burst of updates (a relist of 10,000 operations)
/// is drawn once.
const FRAME_INTERVAL: std::time::Duration = std::time::Duration::from_millis(16);

/// Wall-clock time that follows tokio's clock (so tests on a paused clock see time move).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    base: Timestamp,
    at: tokio::time::Instant,
}

impl Clock {
    pub fn new(base: Timestamp) -> Clock {
        Clock {
            base,
            at: tokio::time::Instant::now(),
        }
    }

    pub fn now(&self) -> Timestamp {
        let elapsed =
            jiff::SignedDuration::try_from(self.at.elapsed()).unwrap_or(jiff::SignedDuration::ZERO);
        self.base + elapsed
    }

    fn instant_at(&self, t: Timestamp) -> tokio::time::Instant {
        let d = t.duration_since(self.now());
        let d = std::time::Duration::try_from(d).unwrap_or(std::time::Duration::ZERO);
        tokio::time::Instant::now() + d
    }
}

/// Hooks the terminal layer provides (suspend on Ctrl-Z). Tests use the no-op.
pub trait Host {
    /// Restores the terminal, stops the process until `fg`, then takes the terminal again.
    fn suspend(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Says an operation's outcome (the bell, a desktop notification).
    fn notify(&mut self, _title: &str, _body: &str) -> anyhow::Result<()> {
        Ok(())
    }
    /// Reaches the service through kubeconfig context `context` (`:ctx`): `None` when this
    /// dashboard has no kubeconfig to switch in.
    fn reach_context(&mut self, _context: &str) -> Option<Reaching> {
        None
    }
}

/// The service reached through another kubeconfig context.
pub struct Reached {
    pub client: Arc<dyn OperationClient>,
    pub route: ichor_app::state::Route,
    pub namespace: String,
    pub all_namespaces: bool,
    /// Who the context's credentials are, when known before the first answer.
    pub user: Option<String>,
    /// The config marks the context production (by its name, or by its API server's).
    pub production: bool,
    /// Writes are off there (`--read-only`, or the config marks the context read only).
    pub read_only: bool,
    /// The API server the context reaches (the status bar names it).
    pub api_server: Option<ichor_model::ApiServer>,
}

/// A context being reached: the new connection, or why there is none (one line, bounded).
pub type Reaching =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Reached, String>> + Send>>;

/// What reaches a kubeconfig context by its name (`:ctx`).
pub type ContextReacher = Box<dyn FnMut(&str) -> Reaching + Send>;

/// A host that does nothing (tests, benchmarks).
pub struct NoHost;
impl Host for NoHost {}

/// What a run did (tests and benchmarks count draws).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames written to the terminal (they differed from the one on it).
    pub draws: u64,
    /// Frames laid out and rendered (a draw, or one found identical to the screen).
    pub renders: u64,
    pub wakeups: u64,
}

/// What the frame on screen was drawn from: a frame is laid out again only when one of these
/// moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Drawn {
    revision: u64,
    size: (u16, u16),
    /// When the clock's words on it (ages, "updated …", a countdown) change next.
    clock_change: Option<jiff::Timestamp>,
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
    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            texts: &self.texts,
            theme: self.theme,
        }
    }

    /// Starts the effects that call the service on workers, which post their results back as
    /// Actions; returns the effects the loop itself handles (suspend, quit). A write once sent
    /// runs to its end on its worker, as in `serve`: abandoning it stops the waiting (the app
    /// drops its answer), never the write, so nothing it began is left half done.
    fn run_effects(
        &self,
        effects: Vec<Effect>,
        tx: &mpsc::UnboundedSender<Action>,
        workers: &mut Workers,
    ) -> Vec<Effect> {
        let mut local = Vec::new();
        for e in effects {
            match e {
                Effect::Suspend
                | Effect::Quit
                | Effect::Notify { .. }
                | Effect::SwitchContext(_) => {
                    local.push(e);
                    continue;
                }
                Effect::SaveReport { namespace, name } => {
                    let client = self.client.clone();
                    let lang = self.texts.lang();
                    let (tz, tx) = (self.state.tz.clone(), tx.clone());
                    tokio::spawn(async move {
                        let dir = std::env::current_dir().map_err(|e| e.to_string());
                        let saved = match dir {
                            Ok(dir) => {
                                let of = (namespace.as_str(), name.as_str());
                                report::save(client.as_ref(), lang, tz, &dir, of).await
                            }
                            Err(e) => Err(e),
                        };
                        let _ = tx.send(Action::ReportSaved {
                            name,
                            result: saved,
                        });
                    });
                    continue;
                }
                Effect::Watch { sub, request } => {
                    workers
                        .live
                        .replace(self.client.clone(), sub, request, tx.clone());
                    continue;
                }
                _ => {}
            }
            let client = self.client.clone();
            let tx = tx.clone();
            let what = e.what();
            let slot = e.slot();
            let task = tokio::spawn(async move {
                let answer = panics::answered(what, perform(client.as_ref(), e)).await;
                if let Some(action) = answer {
                    let _ = tx.send(action);
                }
            });
            if let Some(slot) = slot {
                workers.read(slot, task.abort_handle());
            }
        }
        local
    }

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

    /// At most one frame per [`FRAME_INTERVAL`]: waits out the interval since the last draw,
    /// applying what arrives meanwhile, so it joins this frame. Says whether the screen must be
    /// repainted whole.
    async fn wait_for_frame<B>(
        &mut self,
        drawn_at: Option<tokio::time::Instant>,
        rx: &mut mpsc::UnboundedReceiver<Action>,
        terminal: &mut Terminal<B>,
        host: &mut dyn Host,
        tx: &mpsc::UnboundedSender<Action>,
        workers: &mut Workers,
    ) -> anyhow::Result<bool>
    where
        B: Backend,
        B::Error: Send + Sync + 'static,
    {
        let Some(at) = drawn_at.filter(|at| at.elapsed() < FRAME_INTERVAL) else {
            return Ok(false);
        };
        tokio::time::sleep_until(at + FRAME_INTERVAL).await;
        let mut repaint = false;
        while let Ok(a) = rx.try_recv() {
            repaint |= self.apply(a, terminal, host, tx, workers)?;
        }
        Ok(repaint)
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

    /// The words of an outcome's notification: a title and a line.
    fn notification(
        &self,
        outcome: ichor_app::state::Outcome,
        name: &str,
        cluster: &str,
    ) -> (String, String) {
        use ichor_app::state::Outcome;
        let key = match outcome {
            Outcome::Completed => "notify-completed",
            Outcome::Failed => "notify-failed",
            Outcome::AwaitsCredentials => "notify-awaits-credentials",
            Outcome::Slow => "notify-slow",
        };
        let t = &self.texts;
        (
            t.t("notify-title"),
            t.tr(key, &[("name", name), ("cluster", cluster)]),
        )
    }

    /// What a frame drawn now is drawn from.
    fn drawn(&self) -> Drawn {
        Drawn {
            revision: self.state.revision,
            size: self.state.size,
            clock_change: ichor_views::next_clock_change(&self.state),
        }
    }

    /// Whether a frame must be laid out: the state moved, the size changed, the clock's words
    /// changed, or the screen was cleared. An answer that changed nothing costs no layout.
    fn needs_frame(&self, drawn: Option<Drawn>, cleared: bool) -> bool {
        let Some(d) = drawn else {
            return true;
        };
        cleared
            || d.revision != self.state.revision
            || d.size != self.state.size
            || d.clock_change.is_some_and(|at| self.state.now >= at)
    }

    /// Draws the frame if it differs from the one on screen; says whether it drew. The app
    /// learns first how many rows the views show at this size (it pages by them). The frame is
    /// rendered into the terminal's own buffer and compared with the one on screen by its
    /// fingerprint, so no third copy of the screen is kept.
    fn draw_if_changed<B>(
        &mut self,
        terminal: &mut Terminal<B>,
        last: &mut Option<Fingerprint>,
    ) -> anyhow::Result<bool>
    where
        B: Backend,
        B::Error: Send + Sync + 'static,
    {
        let viewport = ichor_views::viewport(&self.state, &self.ctx(), self.state.size);
        if viewport != self.state.viewport {
            update(&mut self.state, Action::Viewport(viewport));
        }
        terminal.autoresize()?;
        let buf = terminal.current_buffer_mut();
        buf.reset();
        ichor_views::render(&self.state, &self.ctx(), buf.area, buf);
        let frame = Fingerprint::of(buf);
        if *last == Some(frame) {
            buf.reset();
            return Ok(false);
        }
        terminal.apply_buffer()?;
        *last = Some(frame);
        Ok(true)
    }

    /// Applies one action and starts its effects; says whether the screen must be repainted
    /// whole (after a redraw request or a suspend).
    fn apply<B>(
        &mut self,
        a: Action,
        terminal: &mut Terminal<B>,
        host: &mut dyn Host,
        tx: &mpsc::UnboundedSender<Action>,
        workers: &mut Workers,
    ) -> anyhow::Result<bool>
    where
        B: Backend,
        B::Error: Send + Sync + 'static,
    {
        let mut repaint = false;
        if a == Action::Redraw {
            full_redraw(terminal)?;
            repaint = true;
        }
        self.state.now = self.clock.now();
        let effects = update(&mut self.state, a);
        for e in self.run_effects(effects, tx, workers) {
            match e {
                Effect::Suspend => {
                    host.suspend()?;
                    full_redraw(terminal)?;
                    repaint = true;
                }
                Effect::Quit => self.state.quit = true,
                Effect::SwitchContext(context) => match host.reach_context(&context) {
                    Some(reaching) => workers.reach(context, reaching),
                    None => {
                        let message = "this dashboard has no kubeconfig".to_string();
                        let failed = Action::ContextFailed { context, message };
                        let _ = tx.send(failed);
                    }
                },
                Effect::Notify {
                    outcome,
                    name,
                    cluster,
                } => {
                    let (title, body) = self.notification(outcome, &name, &cluster);
                    if let Err(e) = host.notify(&title, &body) {
                        tracing::info!(error = %e, "the notification could not be written");
                    }
                }
                _ => {}
            }
        }
        Ok(repaint)
    }
}

impl Runtime {
    /// A context was reached (or not): on success every read and the subscription of the
    /// connection before are stopped, and what they still send is dropped with their channel
    /// (a write cannot be in flight: `:ctx` waits for it); the new client answers from now on.
    fn switch(
        &mut self,
        context: String,
        reached: Result<Reached, String>,
        tx: &mut mpsc::UnboundedSender<Action>,
        rx: &mut mpsc::UnboundedReceiver<Action>,
        workers: &mut Workers,
    ) -> Action {
        let reached = match reached {
            Ok(r) => r,
            Err(message) => return Action::ContextFailed { context, message },
        };
        *workers = Workers::default();
        (*tx, *rx) = mpsc::unbounded_channel();
        panics::report_to(tx.clone());
        self.client = reached.client;
        Action::ContextReached(Box::new(ichor_app::action::Reached {
            context,
            route: reached.route,
            namespace: reached.namespace,
            all_namespaces: reached.all_namespaces,
            user: reached.user,
            pushes: self.client.pushes(),
            production: reached.production,
            read_only: reached.read_only,
            api_server: reached.api_server,
        }))
    }
}

/// What identifies a frame: two 64-bit SipHash hashes of the whole buffer (area, symbols,
/// colours, modifiers), each salted with its own first byte, so two frames that differ are told
/// apart but for a chance of about one in 2^128. (Ratatui's `Hash` of a buffer agrees with its
/// `Eq`: a blank cell is one, however it was made.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint(u64, u64);

impl Fingerprint {
    fn of(buf: &Buffer) -> Fingerprint {
        use std::hash::{Hash, Hasher};
        let hash = |key: u8| {
            let mut h = std::hash::DefaultHasher::new();
            key.hash(&mut h);
            buf.hash(&mut h);
            h.finish()
        };
        Fingerprint(hash(0), hash(1))
    }
}

/// Clears the screen and forgets the frame on it, so the next draw repaints everything.
/// (`Terminal::clear` would ask the terminal for the cursor position, whose answer the input
/// stream may read first; `resize` clears without asking.)
pub(crate) fn full_redraw<B: Backend>(terminal: &mut Terminal<B>) -> Result<(), B::Error> {
    let size = terminal.size()?;
    terminal.resize(Rect::new(0, 0, size.width, size.height))
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::Fingerprint;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Style};

    fn screen(text: &str, style: Style) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 2));
        buf.set_string(0, 0, text, style);
        buf
    }

    #[test]
    fn frames_that_differ_in_a_letter_a_colour_or_a_size_are_told_apart() {
        let plain = Fingerprint::of(&screen("Running 2/4", Style::default()));
        assert_eq!(
            plain,
            Fingerprint::of(&screen("Running 2/4", Style::default()))
        );
        assert_ne!(
            plain,
            Fingerprint::of(&screen("Running 3/4", Style::default()))
        );
        let red = Style::default().fg(Color::Red);
        assert_ne!(plain, Fingerprint::of(&screen("Running 2/4", red)));
        let mut wider = Buffer::empty(Rect::new(0, 0, 21, 2));
        wider.set_string(0, 0, "Running 2/4", Style::default());
        assert_ne!(plain, Fingerprint::of(&wider));
    }

    #[test]
    fn a_blank_cell_is_one_however_it_was_made() {
        let mut spaces = screen("Running", Style::default());
        spaces.set_string(0, 1, "    ", Style::default());
        assert_eq!(
            Fingerprint::of(&spaces),
            Fingerprint::of(&screen("Running", Style::default()))
        );
    }
}
