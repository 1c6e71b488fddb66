//! Retrying transient faults (Unavailable, DeadlineExceeded) with backoff, for any client.
//!
//! Reads are retried as they are. Pause/resume and delete are idempotent enough to retry; a
//! delete that meets NotFound after a retried attempt has done its work. A start whose outcome
//! is unknown is not blindly repeated: before each new attempt the namespace's operations are
//! listed and an unfinished one the start may already have created is returned as its result;
//! only when there is none is the start made again (the ADR's spec-first order makes a rerun
//! safe: a spec that already names the target is not written twice). If that new start is
//! refused because of an unfinished operation, the listing is made once more: the refusal may
//! name the operation the first attempt created after all.

use super::{Backend, OperationClient, RetryEvent};
use crate::model::{ApiError, Cluster, Code, Created, Operation, OperationRequest, Plan, Reason};
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

/// How far from the call's start a found operation's creation time may be and still count as
/// the start's own: creation times have second resolution and the server's clock is not ours.
const CREATED_SKEW: jiff::SignedDuration = jiff::SignedDuration::from_secs(5);

/// A client that retries the transient faults of `inner`, reporting each wait on `events`.
pub struct Retrying<C> {
    inner: C,
    events: UnboundedSender<RetryEvent>,
    policy: RetryPolicy,
    rng: Mutex<fastrand::Rng>,
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
        }
    }

    /// The wrapped client.
    pub fn inner(&self) -> &C {
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
        let mut delay = self.policy.initial;
        loop {
            let err = match attempt(n).await {
                Step::Done(r) => {
                    if n > 1 {
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
                self.send(RetryEvent::GaveUp {
                    what: what.to_string(),
                    since,
                    error: err.clone(),
                });
                return Err(err);
            }
            let wait = self
                .jittered(delay)
                .min(self.policy.give_up_after - elapsed);
            tracing::info!(what, attempt = n, delay_ms = wait.as_millis() as u64, error = %err, "transient fault, retrying");
            self.send(RetryEvent::Retrying {
                what: what.to_string(),
                attempt: n,
                delay: wait,
                since,
                error: err,
            });
            tokio::time::sleep(wait).await;
            delay = (delay * 2).min(self.policy.max_delay);
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

    /// The unfinished operation a start of `req`, begun at `began`, may have created.
    async fn find_created(
        &self,
        req: &OperationRequest,
        began: Timestamp,
    ) -> Result<Option<Operation>, ApiError> {
        let ops = self.inner.list_operations(Some(&req.namespace)).await?;
        let user = self.inner.user();
        let target = req.target.as_deref().map(|t| t.trim_start_matches('v'));
        let since = began - CREATED_SKEW;
        Ok(ops
            .into_iter()
            .filter(|o| req.cluster.as_ref().is_none_or(|c| *c == o.cluster))
            .filter(|o| o.kind == Some(req.kind))
            .filter(|o| o.max_unavailable == req.max_unavailable.unwrap_or(1))
            .filter(|o| !o.phase.is_finished())
            .filter(|o| o.created_at.is_some_and(|t| t >= since))
            .filter(|o| match (&user, &o.actor) {
                (Some(u), Some(a)) => u == a,
                _ => true,
            })
            .filter(|o| match (target, o.target.as_deref()) {
                (Some(want), Some(got)) => want == got.trim_start_matches('v'),
                _ => true,
            })
            .max_by_key(|o| o.created_at))
    }
}

#[async_trait::async_trait]
impl<C: OperationClient> OperationClient for Retrying<C> {
    fn backend(&self) -> Backend {
        self.inner.backend()
    }

    fn user(&self) -> Option<String> {
        self.inner.user()
    }

    async fn list_operations(&self, namespace: Option<&str>) -> Result<Vec<Operation>, ApiError> {
        self.plain("listing operations", || {
            self.inner.list_operations(namespace)
        })
        .await
    }

    async fn get_operation(&self, namespace: &str, name: &str) -> Result<Operation, ApiError> {
        self.plain("reading the operation", || {
            self.inner.get_operation(namespace, name)
        })
        .await
    }

    async fn plan_operation(&self, req: &OperationRequest) -> Result<Plan, ApiError> {
        self.plain("planning the operation", || self.inner.plan_operation(req))
            .await
    }

    /// A start: after a transient fault (the outcome unknown, including a spec written and a
    /// create that failed transiently), look for what the start created before starting again.
    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError> {
        let began = Timestamp::now();
        self.run("starting the operation", |n| async move {
            if n > 1 {
                match self.find_created(req, began).await {
                    Ok(Some(operation)) => {
                        tracing::info!(
                            operation = %operation.name,
                            "a start whose outcome was unknown had created the operation"
                        );
                        return Step::Done(Ok(Created {
                            operation,
                            spec_written: None,
                            warnings: Vec::new(),
                        }));
                    }
                    Ok(None) => {}
                    Err(e) if e.code.is_transient() => return Step::Again(e),
                    Err(e) => return Step::Done(Err(e)),
                }
            }
            match self.inner.create_operation(req).await {
                Err(e) if e.code.is_transient() => Step::Again(e),
                // An earlier attempt may have created the operation after the listing above
                // (the server was still working when the client gave up on it): the refusal
                // then names our own operation.
                Err(e) if n > 1 && e.reason == Some(Reason::UnfinishedOperation) => {
                    match self.find_created(req, began).await {
                        Ok(Some(operation)) => Step::Done(Ok(Created {
                            operation,
                            spec_written: None,
                            warnings: Vec::new(),
                        })),
                        _ => Step::Done(Err(e)),
                    }
                }
                r => Step::Done(r),
            }
        })
        .await
    }

    async fn set_operation_paused(
        &self,
        namespace: &str,
        name: &str,
        paused: bool,
    ) -> Result<Operation, ApiError> {
        let what = if paused {
            "pausing the operation"
        } else {
            "resuming the operation"
        };
        self.plain(what, || {
            self.inner.set_operation_paused(namespace, name, paused)
        })
        .await
    }

    /// A delete: NotFound after a retried attempt means an earlier attempt deleted it.
    async fn delete_operation(&self, namespace: &str, name: &str) -> Result<(), ApiError> {
        self.run("deleting the operation", |n| async move {
            match self.inner.delete_operation(namespace, name).await {
                Err(e) if e.code.is_transient() => Step::Again(e),
                Err(e) if n > 1 && e.code == Code::NotFound => Step::Done(Ok(())),
                r => Step::Done(r),
            }
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
