//! The dashboard's one subscription (WatchOperations), kept open by the runtime: its updates
//! become Actions; when it breaks the app polls and the status bar says so, and the runtime
//! opens it again by itself, after the waits of [`reopen_waits`].

use futures::StreamExt as _;
use ichor_app::action::{Action, LiveEvent};
use ichor_model::{ApiError, Code, OperationClient, SILENCE_LIMIT, WatchRequest};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// The wait before the first reopening, before its jitter; it doubles up to [`LONGEST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait between two reopenings, before its jitter (which at most doubles it).
const LONGEST_WAIT: Duration = Duration::from_secs(15);

/// The waits between a broken subscription and the next one: 1 to 2 s, doubling to 15 to
/// 30 s (backon's exponential backoff, each wait with a jitter of up to itself, so that the
/// dashboards one restarted server dropped do not all come back at one instant). After an
/// update the waits start again from the first. Public for the benches, whose dashboards
/// wait as the dashboard does.
pub fn reopen_waits() -> backon::ExponentialBackoff {
    use backon::BackoffBuilder as _;
    backon::ExponentialBuilder::new()
        .with_min_delay(FIRST_WAIT)
        .with_max_delay(LONGEST_WAIT)
        .with_factor(2.0)
        .with_jitter()
        .without_max_times()
        .build()
}

/// The subscription running now; a new one replaces it.
#[derive(Default)]
pub(crate) struct Subscription(Option<tokio::task::AbortHandle>);

impl Subscription {
    /// Starts following `request` as subscription `sub`, ending the one before.
    pub(crate) fn replace(
        &mut self,
        client: Arc<dyn OperationClient>,
        sub: u64,
        request: WatchRequest,
        tx: UnboundedSender<Action>,
    ) {
        if let Some(old) = self.0.take() {
            old.abort();
        }
        let task = tokio::spawn(follow(client, sub, request, tx));
        self.0 = Some(task.abort_handle());
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// How a stream ended.
enum Ended {
    /// The backend does not push.
    Unsupported,
    /// Broken: open it again later.
    Broken(ApiError),
    /// The dashboard is gone.
    Gone,
}

async fn follow(
    client: Arc<dyn OperationClient>,
    sub: u64,
    request: WatchRequest,
    tx: UnboundedSender<Action>,
) {
    let live = |event| tx.send(Action::Live { sub, event }).is_ok();
    let mut waits = reopen_waits();
    loop {
        match once(client.as_ref(), sub, &request, &tx, &mut waits).await {
            Ended::Unsupported => {
                live(LiveEvent::Unsupported);
                return;
            }
            Ended::Gone => return,
            Ended::Broken(e) => {
                if !live(LiveEvent::Off(e)) {
                    return;
                }
            }
        }
        tokio::time::sleep(waits.next().unwrap_or(LONGEST_WAIT)).await;
    }
}

/// One stream, from opening to its end.
async fn once(
    client: &dyn OperationClient,
    sub: u64,
    request: &WatchRequest,
    tx: &UnboundedSender<Action>,
    waits: &mut backon::ExponentialBackoff,
) -> Ended {
    let unsupported = |e: &ApiError| e.code == Code::Unimplemented;
    let mut updates = match client.watch_operations(request).await {
        Ok(u) => u,
        Err(e) if unsupported(&e) => return Ended::Unsupported,
        Err(e) => return Ended::Broken(e),
    };
    let mut first = true;
    loop {
        let update = match tokio::time::timeout(SILENCE_LIMIT, updates.next()).await {
            Err(_) => {
                return Ended::Broken(ApiError::new(
                    Code::Unavailable,
                    "the stream of updates fell silent",
                ));
            }
            Ok(None) => {
                return Ended::Broken(ApiError::new(
                    Code::Unavailable,
                    "the stream of updates ended",
                ));
            }
            Ok(Some(Err(e))) if first && unsupported(&e) => return Ended::Unsupported,
            Ok(Some(Err(e))) => return Ended::Broken(e),
            Ok(Some(Ok(u))) => u,
        };
        if first {
            first = false;
            *waits = reopen_waits();
            if tx
                .send(Action::Live {
                    sub,
                    event: LiveEvent::On,
                })
                .is_err()
            {
                return Ended::Gone;
            }
        }
        let pushed = Action::Pushed {
            sub,
            update: Box::new(update),
        };
        if tx.send(pushed).is_err() {
            return Ended::Gone;
        }
    }
}
