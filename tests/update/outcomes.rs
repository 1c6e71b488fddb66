//! Outcomes said once: never for the first state seen, never again after an outage.

use super::*;

/// A poll's answer with `ops` (a changed page).
fn answered(s: &mut State, ops: Vec<ichor_model::Operation>) -> Vec<Effect> {
    let seq = s.seq;
    update(
        s,
        Action::OperationsPage {
            seq,
            more: false,
            result: Ok(ichor_model::OperationPage {
                total: ops.len(),
                version: format!("v{}", s.revision),
                operations: ops,
                ..Default::default()
            }),
        },
    )
}

fn notified(effects: &[Effect]) -> Vec<(ichor_app::state::Outcome, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Notify { outcome, name, .. } => Some((*outcome, name.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn an_outcome_is_said_once_and_never_for_the_first_state_seen() {
    use ichor_app::state::Outcome;
    let mut s = fixtures::state();
    s.notifications.on = true;
    start(&mut s);
    let running = fixtures::running_rollout();
    let first = answered(&mut s, vec![running.clone(), fixtures::completed()]);
    assert!(
        notified(&first).is_empty(),
        "the first state seen is never said"
    );
    let mut done = running.clone();
    done.phase = Phase::Completed;
    done.resource_version.push('1');
    let change = answered(&mut s, vec![done.clone(), fixtures::completed()]);
    assert_eq!(
        notified(&change),
        [(Outcome::Completed, running.name.clone())]
    );
    done.resource_version.push('2');
    let again = answered(&mut s, vec![done, fixtures::completed()]);
    assert!(notified(&again).is_empty(), "never twice for one change");
    // A failure pause of another one is said; off, nothing is.
    let mut failed = fixtures::paused_by_failure();
    let mut before = failed.clone();
    before.phase = Phase::Running;
    before.failure_reason = None;
    answered(&mut s, vec![before.clone()]);
    failed.resource_version.push('3');
    let said = answered(&mut s, vec![failed.clone()]);
    assert_eq!(notified(&said), [(Outcome::Failed, failed.name.clone())]);
    let mut quiet = fixtures::state();
    start(&mut quiet);
    answered(&mut quiet, vec![before]);
    assert!(
        notified(&answered(&mut quiet, vec![failed])).is_empty(),
        "off: nothing"
    );
}

#[test]
fn what_a_key_was_told_before_an_outage_is_not_said_again_after_it() {
    let mut s = listed(fixtures::list());
    s.session.read_only = true;
    let retrying = ichor_model::RetryEvent::Retrying {
        what: "listing operations".into(),
        attempt: 1,
        delay: std::time::Duration::from_secs(2),
        since: now(),
        error: ApiError::new(Code::Unavailable, "connection refused"),
    };
    let recovered = ichor_model::RetryEvent::Recovered {
        what: "listing operations".into(),
    };
    // Pressed before the outage: its answer ends with the state it answered.
    key(&mut s, Key::ch('p'));
    assert_eq!(s.notice, Some(Notice::Unavailable(Why::ReadOnly)));
    update(&mut s, Action::Retry(retrying.clone()));
    assert_eq!(s.notice, None);
    // Pressed during it (hidden under the connection's banner): not said after it either.
    key(&mut s, Key::ch('p'));
    assert_eq!(s.notice, Some(Notice::Unavailable(Why::ReadOnly)));
    update(&mut s, Action::Retry(recovered));
    assert_eq!(s.conn, Conn::Ok);
    assert_eq!(s.notice, None);
    // A write's outcome is not a key's answer: it stays.
    s.notice = Some(Notice::Done(
        WriteAction::Pause,
        "prod-eu-talos-8xk2m".into(),
    ));
    update(&mut s, Action::Retry(retrying));
    assert_eq!(
        s.notice,
        Some(Notice::Done(
            WriteAction::Pause,
            "prod-eu-talos-8xk2m".into()
        ))
    );
}
