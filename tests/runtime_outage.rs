//! The status bar and the banner through an outage, second by second, on tokio's paused clock.

use crate::common::fixtures;
use crate::tokio_stream_from;
use ichor_app::action::{Action, Key};
use ichor_model::{
    ApiError, Cluster, Code, Confirmed, Created, Operation, OperationClient, OperationRequest,
    Permissions, Plan,
};
use ichor_runtime::{Clock, NoHost, Runtime};
use ichor_views::i18n::{Lang, Texts};
use ichor_views::widgets::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A backend that keeps every frame written, with the (paused) time it was written at: what
/// the screen said each second is the last frame written by then.
struct Recorder {
    inner: TestBackend,
    started: tokio::time::Instant,
    frames: Arc<Mutex<Vec<(Duration, String)>>>,
}

impl ratatui::backend::Backend for Recorder {
    type Error = <TestBackend as ratatui::backend::Backend>::Error;
    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a ratatui::buffer::Cell)>,
    {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<ratatui::layout::Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<ratatui::layout::Position>>(
        &mut self,
        position: P,
    ) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ratatui::backend::ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<ratatui::layout::Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<ratatui::backend::WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()?;
        let buf = self.inner.buffer();
        let text = (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n");
        self.frames
            .lock()
            .unwrap()
            .push((self.started.elapsed(), text));
        Ok(())
    }
}

/// A backend that pushes (a heartbeat every 15 s) and goes away for a while: while it is
/// away, every read fails Unavailable and the stream it was sending breaks.
struct GoesAway {
    ops: Vec<Operation>,
    up: Arc<std::sync::atomic::AtomicBool>,
}

#[async_trait::async_trait]
impl OperationClient for GoesAway {
    fn pushes(&self) -> bool {
        true
    }
    async fn watch_operations(
        &self,
        req: &ichor_model::WatchRequest,
    ) -> Result<ichor_model::Updates, ApiError> {
        let refused = || ApiError::new(Code::Unavailable, "connection refused");
        if !self.up.load(Ordering::SeqCst) {
            return Err(refused());
        }
        let page = ichor_service::list::page(self.ops.clone(), &req.list)?;
        let up = self.up.clone();
        let updates = futures::stream::unfold((Some(page), up, 0u32), move |(first, up, quiet)| {
            async move {
                if let Some(page) = first {
                    let u = ichor_model::WatchUpdate {
                        page: Some(page),
                        ..Default::default()
                    };
                    return Some((Ok(u), (None, up, 0)));
                }
                let mut quiet = quiet;
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    if !up.load(Ordering::SeqCst) {
                        let broke = ApiError::new(Code::Unavailable, "connection reset");
                        // Ends after its error: the next poll of it says it ended.
                        return Some((Err(broke), (None, up, u32::MAX)));
                    }
                    quiet += 1;
                    if quiet == 15 {
                        let beat = ichor_model::WatchUpdate {
                            heartbeat: true,
                            ..Default::default()
                        };
                        return Some((Ok(beat), (None, up, 0)));
                    }
                }
            }
        });
        Ok(Box::pin(updates))
    }
    async fn list_page(
        &self,
        q: &ichor_model::ListQuery,
    ) -> Result<ichor_model::OperationPage, ApiError> {
        if !self.up.load(Ordering::SeqCst) {
            return Err(ApiError::new(Code::Unavailable, "connection refused"));
        }
        ichor_service::list::page(self.ops.clone(), q)
    }
    async fn get_operation(&self, _: &str, _: &str) -> Result<Operation, ApiError> {
        Err(ApiError::new(Code::NotFound, "not in this test"))
    }
    async fn plan_operation(&self, _: &OperationRequest) -> Result<Plan, ApiError> {
        Err(ApiError::new(Code::Unimplemented, "not in this test"))
    }
    async fn create_operation(&self, _: &OperationRequest) -> Result<Created, ApiError> {
        Err(ApiError::new(Code::Unimplemented, "not in this test"))
    }
    async fn set_operation_paused(
        &self,
        _: &str,
        _: &str,
        _: bool,
        _: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        Err(ApiError::new(Code::Unimplemented, "not in this test"))
    }
    async fn delete_operation(
        &self,
        _: &str,
        _: &str,
        _: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        Err(ApiError::new(Code::Unimplemented, "not in this test"))
    }
    async fn permissions(&self, _: &str) -> Result<Permissions, ApiError> {
        Ok(Permissions::default())
    }
    async fn list_clusters(&self, _: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        Ok(Vec::new())
    }
    async fn get_cluster(&self, _: &str, _: &str) -> Result<Cluster, ApiError> {
        Err(ApiError::new(Code::NotFound, "none"))
    }
}

/// The countdown in a banner: (which countdown, seconds left), `None` without one.
fn countdown(banner: &str) -> Option<(u32, u32)> {
    if banner.contains("retrying now") {
        return Some((0, 0));
    }
    let secs = |s: &str| s.split(" s").next()?.trim().parse::<u32>().ok();
    if let Some(rest) = banner.split("retrying in ").nth(1) {
        return Some((1, secs(rest)?));
    }
    let rest = banner.split("retry ").nth(1)?;
    let (round, rest) = rest.split_once(" in ")?;
    Some((round.trim().parse().ok()?, secs(rest)?))
}

/// The status bar and the banner, second by second, through an outage of the pushing backend
/// (at 20 s, for 40 s): "live" while the stream delivers; from the moment it breaks, never
/// "live" and never "just now", but the time of the data, "live updates off" and, once a read
/// failed, the side that does not answer; a countdown that only goes down, and a new one said
/// as one; "live" again as soon as the backend answers.
#[tokio::test(start_paused = true)]
async fn the_status_bar_through_an_outage_second_by_second() {
    let up = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let inner = GoesAway {
        ops: vec![fixtures::running_rollout()],
        up: up.clone(),
    };
    let (retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    let policy = ichor_client::retry::RetryPolicy {
        jitter: 0.0,
        ..Default::default()
    };
    let client = Arc::new(ichor_client::retry::Retrying::with_policy(
        inner, retry_tx, policy,
    ));
    let runtime = Runtime {
        state: fixtures::state(),
        client,
        texts: Texts::new(Lang::En),
        theme: Theme::default(),
        clock: Clock::new(fixtures::now()),
    };
    let (keys_tx, keys_rx) = tokio::sync::mpsc::unbounded_channel::<Action>();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(20)).await;
        up.store(false, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(40)).await;
        up.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(40)).await;
        let _ = keys_tx.send(Action::Key(Key::ch('q')));
    });
    let frames = Arc::new(Mutex::new(Vec::new()));
    let backend = Recorder {
        inner: TestBackend::new(120, 30),
        started: tokio::time::Instant::now(),
        frames: frames.clone(),
    };
    let mut term = Terminal::new(backend).unwrap();
    runtime
        .run(&mut term, tokio_stream_from(keys_rx), retry_rx, &mut NoHost)
        .await
        .unwrap();
    let frames = frames.lock().unwrap().clone();
    let at = |s: u64| {
        frames
            .iter()
            .rev()
            .find(|(t, _)| *t <= Duration::from_secs(s))
            .map(|(_, f)| f.clone())
            .unwrap_or_default()
    };
    // The backend answers again at 60 s; the first read after it (at its retry, at most the
    // longest wait later) ends the outage. The subscription's own waits are jittered, so the
    // second is found, not fixed: the first whose status bar no longer says the API is not
    // answering.
    let back = (61..100)
        .find(|s| {
            !at(*s)
                .lines()
                .next()
                .unwrap_or_default()
                .contains("not answering")
        })
        .unwrap_or(100);
    assert!(
        back <= 91,
        "no read answered within 30 s of the backend's return"
    );
    let mut said = Vec::new();
    let mut last_count: Option<(u32, u32)> = None;
    for s in 1..100 {
        let screen = at(s);
        let mut lines = screen.lines();
        let bar = lines.next().unwrap_or_default().to_string();
        let banner = lines.next().unwrap_or_default().trim().to_string();
        said.push(format!("{s:3} s │{bar}│ {banner}"));
        let live = bar.contains("│ live") && !bar.contains("live updates off");
        match s {
            1..=19 => assert!(live, "{}", said.join("\n")),
            // From the break (found within a second) until the backend is back and pushing.
            21..=60 => {
                assert!(!live, "{}", said.join("\n"));
                assert!(!bar.contains("just now"), "{}", said.join("\n"));
                assert!(bar.contains("data from 12:00"), "{}", said.join("\n"));
                assert!(bar.contains("live updates off"), "{}", said.join("\n"));
            }
            // A read answered again: the subscription is asked for again at once, not after
            // its own backoff (up to 30 s more).
            s if s >= back + 2 => assert!(live, "live again after {back} s: {}", said.join("\n")),
            _ => {}
        }
        if (23..=60).contains(&s) {
            assert!(
                bar.contains("Kubernetes API not answering"),
                "a read failed: {}",
                said.join("\n")
            );
        }
        // Within one countdown the seconds only go down; a new one has the next number.
        if let Some((round, left)) = countdown(&banner).filter(|(r, _)| *r > 0) {
            if let Some((was_round, was_left)) = last_count {
                match round == was_round {
                    true => assert!(left <= was_left, "up at {s} s:\n{}", said.join("\n")),
                    false => assert_eq!(round, was_round + 1, "at {s} s:\n{}", said.join("\n")),
                }
            }
            last_count = Some((round, left));
        }
        if (21..=60).contains(&s) {
            assert!(banner.contains("(since 12:00)"), "{}", said.join("\n"));
        }
    }
    let end = at(99);
    let bar = end.lines().next().unwrap_or_default();
    assert!(
        bar.contains("│ live") && !bar.contains("off"),
        "live again:\n{}",
        said.join("\n")
    );
    assert!(
        said.iter().any(|l| l.contains("retry 2 in")),
        "a second countdown says so:\n{}",
        said.join("\n")
    );
}
