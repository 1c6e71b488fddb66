//! Driving the new-operation dialog as a person does: Clusters, the cluster, `n`, the kind, the
//! target, Enter for the Review.
#![allow(dead_code)]

use super::driver::Driver;
use super::fixtures;
use ichor_app::action::{Key, KeyCode};
use ichor_app::state::{Dialog, NewOpStep, NewOperation, Screen};
use ichor_model::OperationClient;
use ichor_model::OperationKind;
use std::sync::Arc;

pub async fn on_clusters(client: Arc<dyn OperationClient>) -> Driver {
    let mut d = Driver::new(fixtures::state(), client).await;
    d.key(Key::ch('2')).await;
    assert_eq!(d.state.screen, Screen::Clusters);
    d
}

pub async fn select(d: &mut Driver, cluster: &str) {
    for _ in 0..10 {
        if d.state
            .clusters
            .selected()
            .is_some_and(|c| c.name == cluster)
        {
            return;
        }
        d.key(Key::ch('j')).await;
    }
    panic!("no cluster {cluster}");
}

/// Opens the dialog on `cluster` with `kind` chosen.
pub async fn form(client: Arc<dyn OperationClient>, cluster: &str, kind: OperationKind) -> Driver {
    let mut d = on_clusters(client).await;
    select(&mut d, cluster).await;
    d.key(Key::ch('n')).await;
    let steps = OperationKind::ALL.iter().position(|k| *k == kind).unwrap();
    for _ in 0..steps {
        d.code(KeyCode::Down).await;
    }
    assert_eq!(dialog(&d).kind, kind);
    d
}

pub fn dialog(d: &Driver) -> &NewOperation {
    match &d.state.dialog {
        Some(Dialog::NewOperation(n)) => n,
        other => panic!("no dialog: {other:?}"),
    }
}

/// The form filled in for `kind` and submitted: the Review with the plan.
pub async fn review(
    client: Arc<dyn OperationClient>,
    cluster: &str,
    kind: OperationKind,
    target: Option<&str>,
) -> Driver {
    let mut d = form(client, cluster, kind).await;
    if let Some(t) = target {
        d.code(KeyCode::Tab).await;
        d.type_text(t).await;
    }
    d.code(KeyCode::Enter).await;
    assert_eq!(dialog(&d).step, NewOpStep::Review);
    assert!(dialog(&d).plan.data.is_some(), "{:?}", dialog(&d).plan);
    d
}
