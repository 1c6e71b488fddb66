//! The one wrapper every backend goes through: transient faults (Unavailable,
//! DeadlineExceeded) of reads retried with backoff; writes never retried, and refused without
//! a call when the dashboard runs read-only.
//!
//! A read is retried as it is, for up to 10 minutes, each wait reported to the dashboard. A write
//! (start, pause, resume, delete) is sent once: a person confirmed it against what they saw, and
//! a retry minutes later would land on whatever the cluster holds by then. When a write's answer
//! is lost, the client finds out what happened by reading (the operation carrying the start's
//! request id; the operation's uid and spec), and says so; trying again is the person's new
//! action, against fresh state.

use ichor_model::{
    ApiError, Cluster, Code, Confirmed, Created, ListQuery, Operation, OperationPage,
    OperationRequest, Permissions, Plan, Reason,
};
use ichor_model::{OperationClient, RetryEvent, read_only_refusal};
use jiff::Timestamp;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

/// How long to wait between attempts and when to stop.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// The first delay.
    pub initial: Duration,
    /// Delays double up to this.
    pub max_delay: Duration,
    /// Stop retrying this long after the first failure and return the last error.
    pub give_up_after: Duration,
    /// Each delay is scaled by a random factor in `1 ± jitter`.
    pub jitter: f64,
}

impl RetryPolicy {
    /// The delays before jitter: `initial`, doubling up to `max_delay` (backon's exponential
    /// backoff; when to stop is ours: `give_up_after`, counted from the first failure).
    fn delays(&self) -> backon::ExponentialBackoff {
        use backon::BackoffBuilder as _;
        backon::ExponentialBuilder::new()
            .with_min_delay(self.initial)
            .with_max_delay(self.max_delay)
            .with_factor(2.0)
            .without_max_times()
            .build()
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            give_up_after: Duration::from_secs(600),
            jitter: 0.2,
        }
    }
}

/// A client that retries the transient faults of `inner`, reporting each wait on `events`;
/// read-only, it refuses every write itself.
pub struct Retrying<C> {
    inner: C,
    events: UnboundedSender<RetryEvent>,
    policy: RetryPolicy,
    rng: Mutex<fastrand::Rng>,
    read_only: bool,
    /// A wait was reported and no call has been answered since: the next answer, of any call,
    /// says the side answers again (a call that waited may have been stopped, replaced by a
    /// later read of the same thing, and will never say so itself).
    faulted: std::sync::atomic::AtomicBool,
}

/// What one attempt of a call decided.
enum Step<T> {
    Done(Result<T, ApiError>),
    /// A transient fault: wait and try again.
    Again(ApiError),
}

impl<C: OperationClient> Retrying<C> {
    pub fn new(inner: C, events: UnboundedSender<RetryEvent>) -> Retrying<C> {
        Retrying::with_policy(inner, events, RetryPolicy::default())
    }

    pub fn with_policy(
        inner: C,
        events: UnboundedSender<RetryEvent>,
        policy: RetryPolicy,
    ) -> Retrying<C> {
        Retrying {
            inner,
            events,
            policy,
            rng: Mutex::new(fastrand::Rng::new()),
            read_only: false,
            faulted: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Read-only (`--read-only`): every write is refused without a call, and the caller may do
    /// nothing.
    pub fn read_only(mut self, read_only: bool) -> Retrying<C> {
        self.read_only = read_only;
        self
    }

    /// Refuses a write when read-only.
    fn writable(&self, what: &str) -> Result<(), ApiError> {
        if self.read_only {
            return Err(read_only_refusal(what));
        }
        Ok(())
    }

    /// The wrapped client.
    #[cfg(test)]
    pub(crate) fn inner(&self) -> &C {
        &self.inner
    }

    fn send(&self, e: RetryEvent) {
        // The dashboard may be gone; the call's result still reaches the caller.
        let _ = self.events.send(e);
    }

    fn jittered(&self, d: Duration) -> Duration {
        let j = self.policy.jitter.clamp(0.0, 1.0);
        if j == 0.0 {
            return d;
        }
        let r = self
            .rng
            .lock()
            .map(|mut rng| rng.f64())
            .unwrap_or_else(|p| p.into_inner().f64());
        d.mul_f64(1.0 - j + 2.0 * j * r)
    }

    /// Runs `attempt` until it is done, retrying while it says `Again`, with backoff, for up to
    /// the policy's limit. `attempt` gets the attempt number (1, 2, …).
    async fn run<T, F, Fut>(&self, what: &str, mut attempt: F) -> Result<T, ApiError>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Step<T>>,
    {
        let mut n: u32 = 1;
        let mut first_failure: Option<(Instant, Timestamp)> = None;
        let mut delays = self.policy.delays();
        loop {
            let err = match attempt(n).await {
                Step::Done(r) => {
                    let faulted = self
                        .faulted
                        .swap(false, std::sync::atomic::Ordering::SeqCst);
                    if n > 1 || faulted {
                        self.send(RetryEvent::Recovered {
                            what: what.to_string(),
                        });
                    }
                    return r;
                }
                Step::Again(e) => e,
            };
            let (started, since) =
                *first_failure.get_or_insert_with(|| (Instant::now(), Timestamp::now()));
            let elapsed = started.elapsed();
            if elapsed >= self.policy.give_up_after {
                tracing::warn!(what, attempts = n, error = %err, "giving up retrying");
                self.faulted
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                self.send(RetryEvent::GaveUp {
                    what: what.to_string(),
                    since,
                    error: err.clone(),
                });
                return Err(err);
            }
            let delay = delays.next().unwrap_or(self.policy.max_delay);
            let wait = self
                .jittered(delay)
                .min(self.policy.give_up_after - elapsed);
            tracing::info!(what, attempt = n, delay_ms = wait.as_millis() as u64, error = %err, "transient fault, retrying");
            self.faulted
                .store(true, std::sync::atomic::Ordering::SeqCst);
            self.send(RetryEvent::Retrying {
                what: what.to_string(),
                attempt: n,
                delay: wait,
                since,
                error: err,
            });
            tokio::time::sleep(wait).await;
            n += 1;
        }
    }

    /// A call retried as it is.
    async fn plain<T, F, Fut>(&self, what: &str, mut call: F) -> Result<T, ApiError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        self.run(what, |_| {
            let fut = call();
            async move {
                match fut.await {
                    Err(e) if e.code.is_transient() => Step::Again(e),
                    r => Step::Done(r),
                }
            }
        })
        .await
    }

    /// A write whose outcome is unknown (the answer was lost, or the server could not tell):
    /// what reading the cluster says about it. The read is retried like any read.
    async fn find_out<T>(
        &self,
        action: &str,
        operation: &str,
        cause: &ApiError,
        read: impl Future<Output = Result<Found<T>, ApiError>>,
    ) -> Result<T, ApiError> {
        let late = if cause.code == Code::DeadlineExceeded {
            "yes"
        } else {
            "no"
        };
        // Said in the reason's own words (locales/en), with the cause as its detail.
        let refused = |code, reason, extra: &[(&str, &str)]| {
            let mut p = vec![("action", action), ("operation", operation), ("late", late)];
            p.extend_from_slice(extra);
            ApiError::said(code, reason, &p)
        };
        tracing::info!(action, operation, error = %cause, "a write's outcome is unknown: reading to find out");
        match read.await {
            Ok(Found::Applied(v)) => Ok(v),
            Ok(Found::NotApplied) => Err(refused(
                Code::Aborted,
                Reason::WriteNotApplied,
                &[("detail", &cause.message)],
            )),
            Ok(Found::Replaced { phase }) => Err(refused(
                Code::Aborted,
                Reason::OperationReplaced,
                &[("phase", &phase)],
            )),
            Ok(Found::Gone) => Err(refused(
                Code::NotFound,
                Reason::WriteTargetGone,
                &[("detail", &cause.message)],
            )),
            Err(e) => Err(refused(
                Code::Unavailable,
                Reason::WriteOutcomeUnknown,
                &[("detail", &e.message)],
            )),
        }
    }
}

/// START_OUTCOME_UNKNOWN made by the client: the start's answer was lost on its way back, and
/// no operation carries its request id yet. It is looked for until
/// [`ichor_service::START_OUTCOME_KNOWN_WITHIN`] from now.
fn start_outcome_unknown(req: &OperationRequest, id: &str, cause: &ApiError) -> ApiError {
    let until = Timestamp::now()
        .checked_add(jiff::SignedDuration::from_secs(
            ichor_service::START_OUTCOME_KNOWN_WITHIN.as_secs() as i64,
        ))
        .unwrap_or_else(|_| Timestamp::now());
    let until = until.to_string();
    let cluster = req.cluster.clone().unwrap_or_default();
    let detail = cause.param("detail").unwrap_or(&cause.message).to_string();
    ApiError::said(
        Code::Unavailable,
        Reason::StartOutcomeUnknown,
        &[
            ("cluster", &cluster),
            ("operation", ""),
            ("actor", ""),
            ("until", &until),
            ("request_id", id),
            ("detail", &detail),
        ],
    )
}

/// WRITE_NOT_APPLIED for a start that never left this client.
fn not_sent_start(req: &OperationRequest, cause: &ApiError) -> ApiError {
    let cluster = req.cluster.clone().unwrap_or_default();
    let detail = cause.param("detail").unwrap_or(&cause.message).to_string();
    ApiError::said(
        Code::Aborted,
        Reason::WriteNotApplied,
        &[
            ("action", "start"),
            ("operation", &cluster),
            // Never sent: no connection to the server could be made.
            ("late", "not-sent"),
            ("detail", &detail),
        ],
    )
}

/// What a read after a lost answer found.
enum Found<T> {
    /// The write happened; here is its result.
    Applied(T),
    /// It did not (yet) happen.
    NotApplied,
    /// The confirmed operation is gone and another one has its name.
    Replaced { phase: String },
    /// The operation is gone: whether the write landed before it went cannot be known.
    Gone,
}

/// Whether a write's error leaves its outcome unknown: no answer came from the service.
fn outcome_unknown(e: &ApiError) -> bool {
    e.code.is_transient()
}

#[async_trait::async_trait]
impl<C: OperationClient> OperationClient for Retrying<C> {
    fn user(&self) -> Option<String> {
        self.inner.user()
    }

    fn server_version(&self) -> ichor_model::ServerVersion {
        self.inner.server_version()
    }

    async fn list_page(&self, query: &ListQuery) -> Result<OperationPage, ApiError> {
        self.plain("listing operations", || self.inner.list_page(query))
            .await
    }

    async fn get_operation(&self, namespace: &str, name: &str) -> Result<Operation, ApiError> {
        self.plain("reading the operation", || {
            self.inner.get_operation(namespace, name)
        })
        .await
    }

    async fn get_operation_manifest(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError> {
        self.plain("reading the operation's resource", || {
            self.inner.get_operation_manifest(namespace, name)
        })
        .await
    }

    async fn plan_operation(&self, req: &OperationRequest) -> Result<Plan, ApiError> {
        self.plain("planning the operation", || self.inner.plan_operation(req))
            .await
    }

    /// A start is sent once. When its answer is lost, the operation that carries its request
    /// id is looked for: found, the start happened. Not found is not "did not happen": the
    /// create may still land (the server settles it, holding the cluster's start claim), so the
    /// answer is START_OUTCOME_UNKNOWN, the server's own when it gave one, and the dashboard
    /// keeps looking until the outcome is settled.
    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError> {
        self.writable("starting an operation")?;
        let mut req = req.clone();
        let id = req
            .request_id
            .get_or_insert_with(ichor_model::new_request_id)
            .clone();
        let cause = match self.inner.create_operation(&req).await {
            Err(e) if outcome_unknown(&e) => e,
            r => return r,
        };
        tracing::info!(error = %cause, "a start's outcome is unknown: reading for its request id");
        let found = self
            .plain("checking whether the start happened", || {
                self.inner.find_start(&req.namespace, &id)
            })
            .await;
        match found {
            Ok(Some(operation)) => Ok(Created {
                operation,
                found: true,
                spec_written: None,
                warnings: Vec::new(),
            }),
            Ok(None) | Err(_) if cause.reason == Some(Reason::StartOutcomeUnknown) => Err(cause),
            // No connection could be made: the start never left, so it did not happen.
            Ok(None) if cause.param("sent") == Some("no") => Err(not_sent_start(&req, &cause)),
            Ok(None) | Err(_) => Err(start_outcome_unknown(&req, &id, &cause)),
        }
    }

    /// A pause or resume is sent once; a lost answer is found out by reading the operation.
    async fn set_operation_paused(
        &self,
        namespace: &str,
        name: &str,
        paused: bool,
        confirmed: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        self.writable(if paused {
            "pausing an operation"
        } else {
            "resuming an operation"
        })?;
        let cause = match self
            .inner
            .set_operation_paused(namespace, name, paused, confirmed)
            .await
        {
            Err(e) if outcome_unknown(&e) => e,
            r => return r,
        };
        let read = async {
            let op = match self
                .plain("checking whether the write happened", || {
                    self.inner.get_operation(namespace, name)
                })
                .await
            {
                Err(e) if e.code == Code::NotFound => return Ok(Found::Gone),
                r => r?,
            };
            Ok(if confirmed.is_some_and(|c| c.uid != op.uid) {
                Found::Replaced {
                    phase: op.phase.as_str().to_string(),
                }
            } else if op.paused == paused {
                Found::Applied(op)
            } else {
                Found::NotApplied
            })
        };
        let action = if paused { "pause" } else { "resume" };
        self.find_out(action, name, &cause, read).await
    }

    /// A delete is sent once; a lost answer is found out by reading the operation: gone is
    /// deleted, the same uid is not deleted, another uid is another operation, untouched.
    async fn delete_operation(
        &self,
        namespace: &str,
        name: &str,
        confirmed: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        self.writable("deleting an operation")?;
        let cause = match self
            .inner
            .delete_operation(namespace, name, confirmed)
            .await
        {
            Err(e) if outcome_unknown(&e) => e,
            r => return r,
        };
        let read = async {
            match self
                .plain("checking whether the delete happened", || {
                    self.inner.get_operation(namespace, name)
                })
                .await
            {
                Err(e) if e.code == Code::NotFound => Ok(Found::Applied(())),
                Err(e) => Err(e),
                Ok(op) if confirmed.is_some_and(|c| c.uid != op.uid) => Ok(Found::Replaced {
                    phase: op.phase.as_str().to_string(),
                }),
                Ok(_) => Ok(Found::NotApplied),
            }
        };
        self.find_out("delete", name, &cause, read).await
    }

    async fn list_events(
        &self,
        namespace: &str,
        name: &str,
        wanted: ichor_model::EventsWanted,
    ) -> Result<ichor_model::OperationEvents, ApiError> {
        self.plain("reading the events", || {
            self.inner.list_events(namespace, name, wanted)
        })
        .await
    }

    fn pushes(&self) -> bool {
        self.inner.pushes()
    }

    /// Not retried here: a stream that cannot be opened or breaks makes the dashboard poll,
    /// and it subscribes again by itself.
    async fn watch_operations(
        &self,
        req: &ichor_model::WatchRequest,
    ) -> Result<ichor_model::Updates, ApiError> {
        self.inner.watch_operations(req).await
    }

    async fn permissions(&self, namespace: &str) -> Result<Permissions, ApiError> {
        if self.read_only {
            return Ok(Permissions::default());
        }
        self.plain("asking what you may do", || {
            self.inner.permissions(namespace)
        })
        .await
    }

    async fn list_clusters(&self, namespace: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        self.plain("listing clusters", || self.inner.list_clusters(namespace))
            .await
    }

    async fn get_cluster(&self, namespace: &str, name: &str) -> Result<Cluster, ApiError> {
        self.plain("reading the cluster", || {
            self.inner.get_cluster(namespace, name)
        })
        .await
    }
}

#[cfg(test)]
mod tests;
