use super::*;
use crate::{convert, list, tolerant};
use ichor_model::{ListQuery, MachinePhase, MachineProgress, Order, SortBy, View};
use ichor_resources::TalosOperation;
use serde_json::json;

fn at(minute: i64) -> Option<Timestamp> {
    Timestamp::from_second(1_800_000_000 + minute * 60).ok()
}

fn machine(name: &str, phase: MachinePhase) -> MachineProgress {
    MachineProgress {
        name: name.into(),
        phase,
        message: "m".into(),
        started_at: None,
        finished_at: None,
    }
}

/// An operation with every field a summary carries set.
fn everything() -> Operation {
    Operation {
        namespace: "team-a".into(),
        name: "prod-talos-x1".into(),
        uid: "uid-1".into(),
        generation: 3,
        request_id: Some("req-1".into()),
        cluster: "prod".into(),
        kind: Some(OperationKind::CaRotation),
        kind_raw: "ca-rotation".into(),
        max_unavailable: 2,
        paused: true,
        phase: Phase::Other("Weird".into()),
        failure_reason: Some("cp-2 failed".into()),
        machines: vec![
            machine("cp-1", MachinePhase::Completed),
            machine("cp-2", MachinePhase::Failed),
            machine("w-1", MachinePhase::Running),
            machine("w-2", MachinePhase::Skipped),
        ],
        ca_rotation: Some(CaRotation {
            stage: "Dropping".into(),
            pass: 2,
            passes: 5,
        }),
        conditions: vec![Condition {
            type_: "ClusterLockHeld".into(),
            status: "True".into(),
            reason: "Held".into(),
            message: "held by prod-other".into(),
            last_transition_time: at(5),
        }],
        created_at: at(1),
        started_at: at(2),
        finished_at: at(3),
        actor: Some("alice@example.com".into()),
        paused_by: Some("bob".into()),
        paused_at: at(4),
        history: Vec::new(),
        current: Some("v1.9.2".into()),
        target: Some("v1.9.3".into()),
        unreadable: None,
        resource_version: "42".into(),
        summary: None,
        deleting: Some(vec!["ichor.maesh.dev/lock".into()]),
    }
}

#[test]
fn a_row_gives_back_the_summary_it_was_made_from() {
    let mut strings = Interner::default();
    let op = everything();
    let row = Row::of(op.clone(), &mut strings);
    assert_eq!(row.summary(), op.clone().summarized());
    // A summary made into a row again is the same summary.
    let again = Row::of(op.clone().summarized(), &mut strings);
    assert_eq!(again.summary(), op.summarized());
}

#[test]
fn a_plain_row_keeps_nothing_behind_the_rare_pointer() {
    let mut strings = Interner::default();
    let op = Operation {
        namespace: "default".into(),
        name: "done".into(),
        phase: Phase::Completed,
        created_at: at(1),
        actor: Some("security-bot".into()),
        ..Operation::default()
    };
    let row = Row::of(op.clone(), &mut strings);
    assert!(row.rare.is_none());
    assert_eq!(row.summary(), op.summarized());
}

#[test]
fn repeated_strings_are_held_once_and_forgotten_when_no_row_holds_them() {
    let mut strings = Interner::default();
    let a = Row::of(everything(), &mut strings);
    let mut other = everything();
    other.name = "prod-talos-x2".into();
    let b = Row::of(other, &mut strings);
    assert!(Arc::ptr_eq(&a.cluster, &b.cluster));
    assert!(Arc::ptr_eq(&a.namespace, &b.namespace));
    assert!(Arc::ptr_eq(
        a.actor.as_ref().unwrap(),
        b.actor.as_ref().unwrap()
    ));
    let held = strings.len();
    assert!(held > 0);
    drop((a, b));
    strings.prune();
    assert_eq!(strings.len(), 0);
}

/// A hostile object that cannot be read as a TalosOperation is still a row, and the row says
/// why; its text stays as the API gave it (made inert where it is shown).
#[test]
fn an_unreadable_object_is_a_row_that_says_so() {
    let raw = json!({
        "apiVersion": "ichor.maesh.dev/v1alpha1",
        "kind": "TalosOperation",
        "metadata": {
            "name": "evil",
            "namespace": "default",
            "uid": "u-evil",
            "resourceVersion": "7",
            "annotations": {"ichor.maesh.dev/actor": "\u{1b}[31mmallory"}
        },
        "spec": {"cluster": "prod\u{1b}]0;owned\u{7}", "kind": 42, "maxUnavailable": "x"},
        "status": {"phase": ["not", "a", "phase"]}
    });
    let u = match tolerant::decode::<TalosOperation>(raw) {
        Err(u) => u,
        Ok(_) => panic!("the object is not a TalosOperation"),
    };
    let op = convert::unreadable_operation(&u);
    let mut strings = Interner::default();
    let row = Row::of(op.clone(), &mut strings);
    let back = row.summary();
    assert_eq!(back, op.summarized());
    assert_eq!(back.name, "evil");
    assert!(back.unreadable.is_some(), "the row says it cannot be read");
    assert_eq!(back.cluster, "prod\u{1b}]0;owned\u{7}");
    assert_eq!(back.actor.as_deref(), Some("\u{1b}[31mmallory"));
}

fn history() -> Vec<Operation> {
    let phases = [
        Phase::Completed,
        Phase::Running,
        Phase::Failed,
        Phase::Paused,
        Phase::Pending,
    ];
    (0..40)
        .map(|i| Operation {
            namespace: if i % 3 == 0 { "a" } else { "b" }.into(),
            name: format!("op-{:02}", (i * 7) % 40),
            uid: format!("uid-{i}"),
            resource_version: format!("{i}"),
            cluster: if i % 2 == 0 { "prod" } else { "staging" }.into(),
            kind_raw: "talos".into(),
            phase: phases[i % phases.len()].clone(),
            actor: (i % 4 == 0).then(|| "alice".to_string()),
            created_at: at((i % 9) as i64),
            machines: vec![machine("cp-1", MachinePhase::Completed)],
            ..Operation::default()
        })
        .collect()
}

/// Rows page as the operations they were made from do: the same filters, orders, tokens,
/// versions and summaries.
#[test]
fn rows_page_as_their_operations_do() {
    let ops = history();
    let mut strings = Interner::default();
    let rows: Vec<Row> = ops
        .iter()
        .map(|o| Row::of(o.clone(), &mut strings))
        .collect();
    let orders = [SortBy::Age, SortBy::Name, SortBy::State];
    for by in orders {
        for reversed in [false, true] {
            for (text, cluster) in [("", None), ("ALICE", None), ("run", Some("prod"))] {
                let mut q = ListQuery {
                    view: View::Summary,
                    page_size: 7,
                    text: text.into(),
                    cluster: cluster.map(str::to_string),
                    order: Order { by, reversed },
                    ..ListQuery::default()
                };
                loop {
                    let want = list::page(ops.clone(), &q).unwrap();
                    let got = list::page_of(rows.iter(), &q, Row::summary).unwrap();
                    assert_eq!(got, want, "{q:?}");
                    match want.next_page_token {
                        Some(t) => q.page_token = Some(t),
                        None => break,
                    }
                }
            }
        }
    }
}
