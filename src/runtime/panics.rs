//! A panic in a worker is a bug, but it must not freeze the dashboard: the effect that panicked
//! is answered with TaskFailed (said on screen), a panic in any other background task is
//! reported the same way, and the terminal is given back only when the thread that draws
//! panics (the program then ends).

use futures::FutureExt;
use ichor_app::action::Action;
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use tokio::sync::mpsc::UnboundedSender;

tokio::task_local! {
    /// Set while an effect's worker runs: its own answer says that it failed.
    static IN_EFFECT: ();
}

/// Where a panic in a background task is reported while a dashboard runs.
static REPORT: Mutex<Option<UnboundedSender<Action>>> = Mutex::new(None);

/// The most characters of a panic's message that are shown.
const MAX_MESSAGE: usize = 200;

/// Reports background panics to `tx` from now on (until it is closed).
pub(super) fn report_to(tx: UnboundedSender<Action>) {
    if let Ok(mut r) = REPORT.lock() {
        *r = Some(tx);
    }
}

/// Runs an effect's worker: a panic in it is its answer, TaskFailed.
pub(super) async fn answered<F>(what: &'static str, fut: F) -> Option<Action>
where
    F: Future<Output = Option<Action>>,
{
    match IN_EFFECT
        .scope((), AssertUnwindSafe(fut).catch_unwind())
        .await
    {
        Ok(action) => action,
        Err(payload) => Some(Action::TaskFailed {
            what: what.to_string(),
            message: payload_text(payload.as_ref()),
        }),
    }
}

/// The panic hook's question: whether this panic is reported to the running dashboard (which
/// goes on) rather than ending the program. `false` on the thread that draws, and when no
/// dashboard runs.
pub(crate) fn report_panic(message: &str) -> bool {
    if std::thread::current().name() == Some("main") {
        return false;
    }
    if IN_EFFECT.try_with(|_| ()).is_ok() {
        // The effect's own answer says it.
        return true;
    }
    let Ok(report) = REPORT.lock() else {
        return false;
    };
    report.as_ref().is_some_and(|tx| {
        tx.send(Action::TaskFailed {
            what: "a background task".to_string(),
            message: bounded(message),
        })
        .is_ok()
    })
}

/// What a panic said, bounded and inert.
pub(crate) fn payload_text(payload: &(dyn Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string());
    bounded(&text)
}

fn bounded(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    ichor_model::inert::truncate(&ichor_model::inert::sanitize(&one_line), MAX_MESSAGE)
}
