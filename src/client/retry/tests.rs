//! Retrying over a scripted fake client, on tokio's paused clock: no sleeps, no timed
//! assertions; the delays are read from the events and from the paused clock.

use super::*;
use crate::model::OperationKind;
use crate::model::Phase;
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

type Answer<T> = Result<T, ApiError>;

/// A client whose answers are scripted per method; it records every call.
#[derive(Default)]
struct Fake {
    lists: Mutex<VecDeque<Answer<Vec<Operation>>>>,
    gets: Mutex<VecDeque<Answer<Operation>>>,
    creates: Mutex<VecDeque<Answer<Created>>>,
    pauses: Mutex<VecDeque<Answer<Operation>>>,
    deletes: Mutex<VecDeque<Answer<()>>>,
    calls: Mutex<Vec<&'static str>>,
    user: Option<String>,
}

fn pop<T>(q: &Mutex<VecDeque<Answer<T>>>, what: &str) -> Answer<T> {
    q.lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| panic!("no scripted answer left for {what}"))
}

impl Fake {
    fn calls(&self) -> Vec<&'static str> {
        self.calls.lock().unwrap().clone()
    }
    fn record(&self, c: &'static str) {
        self.calls.lock().unwrap().push(c);
    }
}

#[async_trait::async_trait]
impl OperationClient for Arc<Fake> {
    fn backend(&self) -> Backend {
        Backend::Remote {
            url: "http://fake".into(),
        }
    }
    fn user(&self) -> Option<String> {
        self.user.clone()
    }
    async fn list_operations(&self, _ns: Option<&str>) -> Result<Vec<Operation>, ApiError> {
        self.record("list");
        pop(&self.lists, "list")
    }
    async fn get_operation(&self, _ns: &str, _name: &str) -> Result<Operation, ApiError> {
        self.record("get");
        pop(&self.gets, "get")
    }
    async fn plan_operation(&self, _req: &OperationRequest) -> Result<Plan, ApiError> {
        unimplemented!("not scripted")
    }
    async fn create_operation(&self, _req: &OperationRequest) -> Result<Created, ApiError> {
        self.record("create");
        pop(&self.creates, "create")
    }
    async fn set_operation_paused(
        &self,
        _ns: &str,
        _name: &str,
        _paused: bool,
    ) -> Result<Operation, ApiError> {
        self.record("pause");
        pop(&self.pauses, "pause")
    }
    async fn delete_operation(&self, _ns: &str, _name: &str) -> Result<(), ApiError> {
        self.record("delete");
        pop(&self.deletes, "delete")
    }
    async fn list_clusters(&self, _ns: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        unimplemented!("not scripted")
    }
    async fn get_cluster(&self, _ns: &str, _name: &str) -> Result<Cluster, ApiError> {
        unimplemented!("not scripted")
    }
}

fn unavailable() -> ApiError {
    ApiError::new(Code::Unavailable, "connection refused")
}

fn no_jitter() -> RetryPolicy {
    RetryPolicy {
        jitter: 0.0,
        ..RetryPolicy::default()
    }
}

fn retrying(
    fake: &Arc<Fake>,
    policy: RetryPolicy,
) -> (Retrying<Arc<Fake>>, UnboundedReceiver<RetryEvent>) {
    let (tx, rx) = unbounded_channel();
    (Retrying::with_policy(fake.clone(), tx, policy), rx)
}

fn events(rx: &mut UnboundedReceiver<RetryEvent>) -> Vec<RetryEvent> {
    let mut v = Vec::new();
    while let Ok(e) = rx.try_recv() {
        v.push(e);
    }
    v
}

fn delays(ev: &[RetryEvent]) -> Vec<Duration> {
    ev.iter()
        .filter_map(|e| match e {
            RetryEvent::Retrying { delay, .. } => Some(*delay),
            _ => None,
        })
        .collect()
}

fn operation(name: &str, kind: OperationKind, phase: Phase, created: Timestamp) -> Operation {
    Operation {
        namespace: "default".into(),
        name: name.into(),
        cluster: "c1".into(),
        kind: Some(kind),
        kind_raw: kind.as_str().into(),
        max_unavailable: 1,
        paused: false,
        phase,
        failure_reason: None,
        machines: vec![],
        ca_rotation: None,
        conditions: vec![],
        created_at: Some(created),
        started_at: None,
        finished_at: None,
        actor: Some("operator".into()),
        paused_by: None,
        paused_at: None,
        current: Some("v1.9.2".into()),
        target: Some("v1.9.3".into()),
    }
}

fn req() -> OperationRequest {
    OperationRequest {
        namespace: "default".into(),
        cluster: Some("c1".into()),
        kind: OperationKind::Talos,
        target: Some("1.9.3".into()),
        max_unavailable: None,
    }
}

fn created(op: Operation) -> Created {
    Created {
        operation: op,
        spec_written: None,
        warnings: vec![],
    }
}

#[tokio::test(start_paused = true)]
async fn reads_are_retried_with_doubling_delays_until_they_succeed() {
    let fake = Arc::new(Fake::default());
    fake.lists.lock().unwrap().extend([
        Err(unavailable()),
        Err(ApiError::new(Code::DeadlineExceeded, "slow")),
        Err(unavailable()),
        Ok(vec![]),
    ]);
    let (c, mut rx) = retrying(&fake, no_jitter());
    let t0 = Instant::now();
    assert_eq!(c.list_operations(None).await.unwrap(), vec![]);
    assert_eq!(t0.elapsed(), Duration::from_secs(1 + 2 + 4));
    let ev = events(&mut rx);
    assert_eq!(delays(&ev), [1, 2, 4].map(Duration::from_secs), "{ev:?}");
    let attempts: Vec<u32> = ev
        .iter()
        .filter_map(|e| match e {
            RetryEvent::Retrying { attempt, what, .. } => {
                assert_eq!(what, "listing operations");
                Some(*attempt)
            }
            _ => None,
        })
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
    assert_eq!(
        ev.last(),
        Some(&RetryEvent::Recovered {
            what: "listing operations".into()
        })
    );
    // The first failure's time is kept for every event of the call.
    let sinces: Vec<Timestamp> = ev
        .iter()
        .filter_map(|e| match e {
            RetryEvent::Retrying { since, .. } => Some(*since),
            _ => None,
        })
        .collect();
    assert!(sinces.windows(2).all(|w| w[0] == w[1]));
}

#[tokio::test(start_paused = true)]
async fn delays_stop_at_30_s_and_retrying_stops_after_10_minutes() {
    let fake = Arc::new(Fake::default());
    fake.gets
        .lock()
        .unwrap()
        .extend((0..100).map(|_| Err(unavailable())));
    let (c, mut rx) = retrying(&fake, no_jitter());
    let t0 = Instant::now();
    let e = c.get_operation("default", "x").await.unwrap_err();
    assert_eq!(e, unavailable(), "the last error is returned");
    assert_eq!(t0.elapsed(), Duration::from_secs(600));
    let ev = events(&mut rx);
    let d = delays(&ev);
    assert_eq!(&d[..7], [1, 2, 4, 8, 16, 30, 30].map(Duration::from_secs));
    assert!(d.iter().all(|d| *d <= Duration::from_secs(30)));
    assert_eq!(d.iter().sum::<Duration>(), Duration::from_secs(600));
    assert!(
        matches!(ev.last(), Some(RetryEvent::GaveUp { .. })),
        "{:?}",
        ev.last()
    );
    assert_eq!(fake.calls().len(), d.len() + 1);
}

#[tokio::test(start_paused = true)]
async fn delays_carry_jitter_of_at_most_20_percent() {
    let fake = Arc::new(Fake::default());
    fake.gets
        .lock()
        .unwrap()
        .extend((0..100).map(|_| Err(unavailable())));
    let (c, mut rx) = retrying(&fake, RetryPolicy::default());
    c.get_operation("default", "x").await.unwrap_err();
    let d = delays(&events(&mut rx));
    let mut nominal = Duration::from_secs(1);
    let mut differ = false;
    for got in &d[..d.len() - 1] {
        assert!(
            *got >= nominal.mul_f64(0.8) && *got <= nominal.mul_f64(1.2),
            "{got:?} vs {nominal:?}"
        );
        differ |= *got != nominal;
        nominal = (nominal * 2).min(Duration::from_secs(30));
    }
    assert!(differ, "some jitter was applied: {d:?}");
}

#[tokio::test(start_paused = true)]
async fn faults_that_are_not_transient_are_returned_at_once() {
    for code in [
        Code::NotFound,
        Code::PermissionDenied,
        Code::Unauthenticated,
        Code::InvalidArgument,
        Code::FailedPrecondition,
    ] {
        let fake = Arc::new(Fake::default());
        fake.gets
            .lock()
            .unwrap()
            .push_back(Err(ApiError::new(code, "no")));
        let (c, mut rx) = retrying(&fake, RetryPolicy::default());
        let t0 = Instant::now();
        assert_eq!(
            c.get_operation("default", "x").await.unwrap_err().code,
            code
        );
        assert_eq!(t0.elapsed(), Duration::ZERO);
        assert!(events(&mut rx).is_empty());
        assert_eq!(fake.calls(), ["get"]);
    }
}

#[tokio::test(start_paused = true)]
async fn pause_is_retried() {
    let fake = Arc::new(Fake::default());
    let op = operation("o", OperationKind::Talos, Phase::Paused, Timestamp::now());
    fake.pauses
        .lock()
        .unwrap()
        .extend([Err(unavailable()), Ok(op.clone())]);
    let (c, _rx) = retrying(&fake, no_jitter());
    assert_eq!(
        c.set_operation_paused("default", "o", true).await.unwrap(),
        op
    );
    assert_eq!(fake.calls(), ["pause", "pause"]);
}

#[tokio::test(start_paused = true)]
async fn a_delete_that_meets_not_found_after_a_retry_has_done_its_work() {
    let fake = Arc::new(Fake::default());
    fake.deletes.lock().unwrap().extend([
        Err(unavailable()),
        Err(ApiError::refused(
            Code::NotFound,
            Reason::OperationNotFound,
            &[],
            "gone",
        )),
    ]);
    let (c, _rx) = retrying(&fake, no_jitter());
    c.delete_operation("default", "o").await.unwrap();
    assert_eq!(fake.calls(), ["delete", "delete"]);
    // On the first attempt NotFound is the answer.
    let fake = Arc::new(Fake::default());
    fake.deletes
        .lock()
        .unwrap()
        .push_back(Err(ApiError::new(Code::NotFound, "gone")));
    let (c, _rx) = retrying(&fake, no_jitter());
    assert_eq!(
        c.delete_operation("default", "o").await.unwrap_err().code,
        Code::NotFound
    );
}

#[tokio::test(start_paused = true)]
async fn a_start_with_an_unknown_outcome_returns_the_operation_it_created() {
    let fake = Arc::new(Fake {
        user: Some("operator".into()),
        ..Fake::default()
    });
    let now = Timestamp::now();
    let mine = operation("c1-talos-abc", OperationKind::Talos, Phase::Unknown, now);
    fake.creates
        .lock()
        .unwrap()
        .push_back(Err(ApiError::new(Code::DeadlineExceeded, "no answer")));
    fake.lists.lock().unwrap().push_back(Ok(vec![
        // Not it: finished, another kind, made before the start, by someone else.
        operation("old", OperationKind::Talos, Phase::Completed, now),
        operation("cni", OperationKind::Cni, Phase::Running, now),
        operation(
            "earlier",
            OperationKind::Talos,
            Phase::Running,
            now - jiff::SignedDuration::from_secs(3600),
        ),
        Operation {
            actor: Some("admin".into()),
            ..operation("theirs", OperationKind::Talos, Phase::Running, now)
        },
        mine.clone(),
    ]));
    let (c, mut rx) = retrying(&fake, no_jitter());
    let got = c.create_operation(&req()).await.unwrap();
    assert_eq!(got.operation, mine);
    assert_eq!(fake.calls(), ["create", "list"], "not created twice");
    assert!(matches!(
        events(&mut rx).last(),
        Some(RetryEvent::Recovered { .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn a_start_that_created_nothing_is_made_again() {
    let fake = Arc::new(Fake::default());
    let now = Timestamp::now();
    let op = operation("c1-talos-new", OperationKind::Talos, Phase::Unknown, now);
    fake.creates.lock().unwrap().extend([
        // The spec was written, the create failed transiently: retried the same way.
        Err(ApiError::refused(
            Code::Unavailable,
            Reason::SpecWrittenCreateFailed,
            &[("field", "spec.talosVersion")],
            "start the same operation again to finish",
        )),
        Err(unavailable()),
        Ok(created(op.clone())),
    ]);
    fake.lists.lock().unwrap().extend([
        Ok(vec![operation(
            "old",
            OperationKind::Talos,
            Phase::Failed,
            now,
        )]),
        // The listing itself may meet the fault: that is one more failed attempt.
        Err(unavailable()),
        Ok(vec![]),
    ]);
    let (c, mut rx) = retrying(&fake, no_jitter());
    let got = c.create_operation(&req()).await.unwrap();
    assert_eq!(got.operation, op);
    assert_eq!(
        fake.calls(),
        ["create", "list", "create", "list", "list", "create"]
    );
    assert_eq!(delays(&events(&mut rx)), [1, 2, 4].map(Duration::from_secs));
}

#[tokio::test(start_paused = true)]
async fn a_refused_start_is_not_retried() {
    let fake = Arc::new(Fake::default());
    fake.creates
        .lock()
        .unwrap()
        .push_back(Err(ApiError::refused(
            Code::FailedPrecondition,
            Reason::UnfinishedOperation,
            &[],
            "busy",
        )));
    let (c, mut rx) = retrying(&fake, no_jitter());
    let e = c.create_operation(&req()).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::UnfinishedOperation));
    assert_eq!(fake.calls(), ["create"]);
    assert!(events(&mut rx).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_start_refused_for_its_own_late_operation_returns_that_operation() {
    let fake = Arc::new(Fake::default());
    let mine = operation(
        "c1-talos-late",
        OperationKind::Talos,
        Phase::Pending,
        Timestamp::now(),
    );
    fake.creates.lock().unwrap().extend([
        Err(ApiError::new(Code::DeadlineExceeded, "no answer in time")),
        Err(ApiError::refused(
            Code::FailedPrecondition,
            Reason::UnfinishedOperation,
            &[("operation", "c1-talos-late")],
            "busy",
        )),
    ]);
    fake.lists
        .lock()
        .unwrap()
        .extend([Ok(vec![]), Ok(vec![mine.clone()])]);
    let (c, _rx) = retrying(&fake, no_jitter());
    assert_eq!(c.create_operation(&req()).await.unwrap().operation, mine);
    assert_eq!(fake.calls(), ["create", "list", "create", "list"]);
    // Someone else's operation holding the cluster is the refusal it is.
    let fake = Arc::new(Fake::default());
    fake.creates.lock().unwrap().extend([
        Err(unavailable()),
        Err(ApiError::refused(
            Code::FailedPrecondition,
            Reason::UnfinishedOperation,
            &[],
            "busy",
        )),
    ]);
    fake.lists.lock().unwrap().extend([Ok(vec![]), Ok(vec![])]);
    let (c, _rx) = retrying(&fake, no_jitter());
    let e = c.create_operation(&req()).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::UnfinishedOperation));
}
