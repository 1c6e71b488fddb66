//! Retrying over a scripted fake client, on tokio's paused clock: no sleeps, no timed
//! assertions; the delays are read from the events and from the paused clock.

use super::*;
use ichor_model::OperationKind;
use ichor_model::Phase;
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// The one test fake, its answers scripted per call; it records every call.
type Fake = crate::fake::FakeClient;

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
        uid: format!("uid-{name}"),
        generation: 1,
        request_id: None,
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
        history: Vec::new(),
        current: Some("v1.9.2".into()),
        target: Some("v1.9.3".into()),
        unreadable: None,
        resource_version: String::new(),
        summary: None,
        deleting: None,
    }
}

fn req() -> OperationRequest {
    OperationRequest {
        namespace: "default".into(),
        cluster: Some("c1".into()),
        kind: OperationKind::Talos,
        target: Some("1.9.3".into()),
        max_unavailable: None,
        request_id: None,
        confirmed_plan: None,
    }
}

fn created(op: Operation) -> Created {
    Created {
        operation: op,
        found: false,
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

fn confirmed(op: &Operation) -> Confirmed {
    op.confirmed()
}

#[tokio::test(start_paused = true)]
async fn a_pause_is_sent_once_and_a_lost_answer_is_found_out_by_reading() {
    let op = operation("o", OperationKind::Talos, Phase::Running, Timestamp::now());
    let paused = Operation {
        paused: true,
        ..op.clone()
    };
    // The answer was lost, and the operation is paused: it happened.
    let fake = Arc::new(Fake::default());
    fake.pauses.lock().unwrap().push_back(Err(unavailable()));
    fake.gets.lock().unwrap().push_back(Ok(paused.clone()));
    let (c, _rx) = retrying(&fake, no_jitter());
    let got = c
        .set_operation_paused("default", "o", true, Some(&confirmed(&op)))
        .await
        .unwrap();
    assert_eq!(got, paused);
    assert_eq!(fake.calls(), ["pause", "get"], "sent once, then read");
    // Not paused: it did not happen, and it is not sent again.
    let fake = Arc::new(Fake::default());
    fake.pauses
        .lock()
        .unwrap()
        .push_back(Err(ApiError::new(Code::DeadlineExceeded, "no answer")));
    fake.gets
        .lock()
        .unwrap()
        .extend([Err(unavailable()), Ok(op.clone())]);
    let (c, _rx) = retrying(&fake, no_jitter());
    let e = c
        .set_operation_paused("default", "o", true, Some(&confirmed(&op)))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::WriteNotApplied));
    assert_eq!(
        e.param("late"),
        Some("yes"),
        "a deadline: it may still arrive"
    );
    assert_eq!(
        fake.calls(),
        ["pause", "get", "get"],
        "the read is retried, the write is not"
    );
    // Another operation has the name now.
    let fake = Arc::new(Fake::default());
    fake.pauses.lock().unwrap().push_back(Err(unavailable()));
    fake.gets.lock().unwrap().push_back(Ok(Operation {
        uid: "another".into(),
        ..paused.clone()
    }));
    let (c, _rx) = retrying(&fake, no_jitter());
    let e = c
        .set_operation_paused("default", "o", true, Some(&confirmed(&op)))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::OperationReplaced));
}

#[tokio::test(start_paused = true)]
async fn a_delete_is_sent_once_and_a_lost_answer_is_found_out_by_reading() {
    let op = operation(
        "o",
        OperationKind::Talos,
        Phase::Completed,
        Timestamp::now(),
    );
    let gone = || ApiError::refused(Code::NotFound, Reason::OperationNotFound, &[], "gone");
    // Gone: it happened.
    let fake = Arc::new(Fake::default());
    fake.deletes.lock().unwrap().push_back(Err(unavailable()));
    fake.gets.lock().unwrap().push_back(Err(gone()));
    let (c, _rx) = retrying(&fake, no_jitter());
    c.delete_operation("default", "o", Some(&confirmed(&op)))
        .await
        .unwrap();
    assert_eq!(fake.calls(), ["delete", "get"]);
    // The same operation is there: it did not happen.
    let fake = Arc::new(Fake::default());
    fake.deletes.lock().unwrap().push_back(Err(unavailable()));
    fake.gets.lock().unwrap().push_back(Ok(op.clone()));
    let (c, _rx) = retrying(&fake, no_jitter());
    let e = c
        .delete_operation("default", "o", Some(&confirmed(&op)))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::WriteNotApplied));
    assert_eq!(fake.calls(), ["delete", "get"]);
    // A running operation took the name: it is another one, and it is not touched.
    let fake = Arc::new(Fake::default());
    fake.deletes.lock().unwrap().push_back(Err(unavailable()));
    fake.gets.lock().unwrap().push_back(Ok(Operation {
        uid: "new".into(),
        phase: Phase::Running,
        ..op.clone()
    }));
    let (c, _rx) = retrying(&fake, no_jitter());
    let e = c
        .delete_operation("default", "o", Some(&confirmed(&op)))
        .await
        .unwrap_err();
    assert_eq!(
        (e.reason, e.param("phase")),
        (Some(Reason::OperationReplaced), Some("Running"))
    );
    assert_eq!(fake.calls(), ["delete", "get"]);
    // On the first attempt NotFound is the answer, as it is.
    let fake = Arc::new(Fake::default());
    fake.deletes.lock().unwrap().push_back(Err(gone()));
    let (c, _rx) = retrying(&fake, no_jitter());
    assert_eq!(
        c.delete_operation("default", "o", None)
            .await
            .unwrap_err()
            .code,
        Code::NotFound
    );
}

#[tokio::test(start_paused = true)]
async fn a_write_whose_outcome_cannot_be_read_says_so_after_the_read_gives_up() {
    let op = operation("o", OperationKind::Talos, Phase::Running, Timestamp::now());
    let fake = Arc::new(Fake::default());
    fake.deletes.lock().unwrap().push_back(Err(unavailable()));
    fake.gets
        .lock()
        .unwrap()
        .extend(std::iter::repeat_with(|| Err(unavailable())).take(40));
    let (c, _rx) = retrying(&fake, no_jitter());
    let e = c
        .delete_operation("default", "o", Some(&confirmed(&op)))
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(Reason::WriteOutcomeUnknown));
    let calls = fake.calls();
    assert_eq!(calls.iter().filter(|c| **c == "delete").count(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_start_with_a_lost_answer_is_found_by_its_request_id() {
    let fake = Arc::new(Fake::default());
    let now = Timestamp::now();
    fake.creates
        .lock()
        .unwrap()
        .push_back(Err(ApiError::new(Code::DeadlineExceeded, "no answer")));
    let mine = Operation {
        request_id: Some("r-lost".into()),
        ..operation("c1-talos-abc", OperationKind::Talos, Phase::Unknown, now)
    };
    // Not it: the same kind and cluster, but another start's request id.
    let theirs = Operation {
        request_id: Some("r-other".into()),
        ..operation("theirs", OperationKind::Talos, Phase::Running, now)
    };
    fake.lists
        .lock()
        .unwrap()
        .extend([Err(unavailable()), Ok(vec![theirs, mine.clone()])]);
    let (c, mut rx) = retrying(&fake, no_jitter());
    let request = OperationRequest {
        request_id: Some("r-lost".into()),
        ..req()
    };
    let got = c.create_operation(&request).await.unwrap();
    assert_eq!(got.operation, mine);
    assert!(got.found);
    assert_eq!(
        fake.calls(),
        ["create", "list", "list"],
        "not created twice"
    );
    assert!(matches!(
        events(&mut rx).last(),
        Some(RetryEvent::Recovered { .. })
    ));
}

/// Not found after a lost answer is not "did not happen": the create may still land, so the
/// outcome is unknown and said so (with the request id to look for), never "start again".
#[tokio::test(start_paused = true)]
async fn a_start_not_found_after_a_lost_answer_is_unknown_and_not_made_again() {
    let fake = Arc::new(Fake::default());
    let now = Timestamp::now();
    fake.creates.lock().unwrap().push_back(Err(unavailable()));
    fake.lists.lock().unwrap().push_back(Ok(vec![operation(
        "old",
        OperationKind::Talos,
        Phase::Failed,
        now,
    )]));
    let (c, _rx) = retrying(&fake, no_jitter());
    let e = c.create_operation(&req()).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::StartOutcomeUnknown));
    assert_eq!(e.code, Code::Unavailable);
    let sent = fake.request_ids.lock().unwrap()[0].clone();
    assert_eq!(e.param("request_id"), Some(sent.as_str()));
    let until: Timestamp = e.param("until").unwrap().parse().unwrap();
    assert!(until > Timestamp::now());
    assert_eq!(fake.calls(), ["create", "list"]);
    // The server's own word on it is passed on as it is.
    let fake = Arc::new(Fake::default());
    let theirs = ApiError::refused(
        Code::Unavailable,
        Reason::StartOutcomeUnknown,
        &[("until", "2026-12-01T12:00:00Z"), ("request_id", "r-2")],
        "settling",
    );
    fake.creates.lock().unwrap().push_back(Err(theirs.clone()));
    fake.lists.lock().unwrap().push_back(Ok(Vec::new()));
    let (c, _rx) = retrying(&fake, no_jitter());
    assert_eq!(c.create_operation(&req()).await.unwrap_err(), theirs);
    // The request id the client made was sent, and a given one is kept.
    let fake = Arc::new(Fake::default());
    fake.creates.lock().unwrap().push_back(Ok(created(operation(
        "x",
        OperationKind::Talos,
        Phase::Unknown,
        now,
    ))));
    let (c, _rx) = retrying(&fake, no_jitter());
    let given = OperationRequest {
        request_id: Some("r-1".into()),
        ..req()
    };
    c.create_operation(&given).await.unwrap();
    assert_eq!(*fake.request_ids.lock().unwrap(), ["r-1"]);
}

#[tokio::test(start_paused = true)]
async fn refusals_of_writes_are_answers_not_unknown_outcomes() {
    let fake = Arc::new(Fake::default());
    fake.creates.lock().unwrap().extend([
        Err(ApiError::refused(
            Code::FailedPrecondition,
            Reason::UnfinishedOperation,
            &[],
            "busy",
        )),
        // A half-success is an answer: it says what was written.
        Err(ApiError::refused(
            Code::Aborted,
            Reason::SpecWrittenCreateFailed,
            &[("field", "spec.talosVersion")],
            "start the same operation again to finish",
        )),
    ]);
    let (c, mut rx) = retrying(&fake, no_jitter());
    let e = c.create_operation(&req()).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::UnfinishedOperation));
    let e = c.create_operation(&req()).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::SpecWrittenCreateFailed));
    assert_eq!(fake.calls(), ["create", "create"]);
    assert!(events(&mut rx).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_call_stopped_while_it_waited_is_followed_by_recovered_from_the_next_answer() {
    let fake = Arc::new(Fake::default());
    fake.lists
        .lock()
        .unwrap()
        .extend([Err(unavailable()), Ok(vec![])]);
    fake.gets
        .lock()
        .unwrap()
        .push_back(Err(ApiError::new(Code::NotFound, "gone")));
    let (c, mut rx) = retrying(&fake, no_jitter());
    // The list waits after its first fault, and is stopped there (a later read replaced it).
    let waiting = tokio::time::timeout(Duration::from_millis(500), c.list_operations(None)).await;
    assert!(waiting.is_err());
    assert!(matches!(events(&mut rx)[..], [RetryEvent::Retrying { .. }]));
    // The next call is answered at once (NotFound is an answer): the side answers again.
    assert_eq!(
        c.get_operation("default", "x").await.unwrap_err().code,
        Code::NotFound
    );
    assert_eq!(
        events(&mut rx),
        [RetryEvent::Recovered {
            what: "reading the operation".into()
        }]
    );
    assert_eq!(c.list_operations(None).await.unwrap(), vec![], "said once");
    assert!(events(&mut rx).is_empty());
}
