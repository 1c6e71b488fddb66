//! ListOperationEvents on every path, through the real kube client code against the embedded
//! API: the events of the operation (its uid) and of its machines for it (related to its uid;
//! naming no operation, while it lived), newest first, at most 100, their text made inert; a
//! caller who may not read Events is refused as Kubernetes refuses them, and nothing is written.

use crate::common;

use common::op;
use common::paths::{Path, User, connect};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_model::{
    Code, EventsWanted, MAX_EVENT_MESSAGE, MAX_EVENTS, MAX_EVENTS_ALL, OperationEvent,
};
use ichor_resources::*;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Event, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

const NAME: &str = "prod-eu-talos-e1";

fn t0() -> Timestamp {
    "2026-11-29T10:00:00Z".parse().unwrap()
}

fn at(secs: i64) -> Time {
    Time(t0() + SignedDuration::from_secs(secs))
}

/// The operation, created at t0, working on machines m1 and m2; and its uid.
fn world() -> (EmbeddedApi, String) {
    let api = EmbeddedApi::default();
    let mut o = op(NAME, "prod-eu", "talos", 1);
    o.metadata.creation_timestamp = Some(Time(t0()));
    let machine = |name: &str, phase: &str| MachineProgress {
        name: name.into(),
        phase: phase.into(),
        ..Default::default()
    };
    o.status = Some(TalosOperationStatus {
        phase: "Running".into(),
        machines: vec![machine("m1", "Completed"), machine("m2", "Running")],
        ..Default::default()
    });
    api.seed(&o).unwrap();
    let uid = api
        .object("talosoperations", "default", NAME)
        .and_then(|o| o["metadata"]["uid"].as_str().map(str::to_string))
        .unwrap();
    (api, uid)
}

/// An event about `kind`/`name` (with `uid` when given), last seen `secs` after t0.
fn event(n: usize, kind: &str, name: &str, uid: Option<&str>, reason: &str, secs: i64) -> Event {
    let mut e = Event {
        involved_object: ObjectReference {
            kind: Some(kind.into()),
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: uid.map(str::to_string),
            api_version: Some("ichor.maesh.dev/v1alpha1".into()),
            ..Default::default()
        },
        reason: Some(reason.into()),
        message: Some(format!("{reason} of {name}")),
        type_: Some("Normal".into()),
        count: Some(1),
        first_timestamp: Some(at(secs)),
        last_timestamp: Some(at(secs)),
        ..Default::default()
    };
    e.metadata.name = Some(format!("{name}.{n:04}"));
    e.metadata.namespace = Some("default".into());
    e
}

fn reasons(events: &[OperationEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{} {}", e.object_name, e.reason))
        .collect()
}

async fn the_operations_and_its_machines_events_newest_first(path: Path) {
    let (api, uid) = world();
    let mut failed = event(4, "Machine", "m2", None, "StepFailed", 40);
    failed.type_ = Some("Warning".into());
    let mut again = event(3, "Machine", "m1", None, "StepCompleted", 30);
    again.count = Some(2);
    again.first_timestamp = Some(at(25));
    for e in [
        event(1, "TalosOperation", NAME, Some(&uid), "Started", 10),
        event(2, "Machine", "m1", None, "StepStarted", 20),
        again,
        failed,
        // An earlier operation of the same name: another uid.
        event(
            5,
            "TalosOperation",
            NAME,
            Some("another-uid"),
            "Completed",
            -100,
        ),
        // m1 before this operation was created: another rollout's.
        event(6, "Machine", "m1", None, "StepCompleted", -50),
        // A machine this operation does not touch, and another operation.
        event(7, "Machine", "m9", None, "StepStarted", 50),
        event(
            8,
            "TalosOperation",
            "prod-eu-talos-other",
            None,
            "Started",
            60,
        ),
    ] {
        api.seed(&e).unwrap();
    }
    api.clear_write_log();
    let c = connect(path, &api, User::Viewer).await;
    let events = c.list_operation_events("default", NAME).await.unwrap();
    assert_eq!(
        reasons(&events),
        [
            "m2 StepFailed",
            "m1 StepCompleted",
            "m1 StepStarted",
            &format!("{NAME} Started"),
        ],
        "{path:?}"
    );
    assert!(events[0].warning && !events[1].warning);
    assert_eq!(events[0].object_kind, "Machine");
    assert_eq!(events[3].object_kind, "TalosOperation");
    assert_eq!(events[1].count, 2);
    assert_eq!(events[1].first_at, Some(at(25).0));
    assert_eq!(events[1].at(), Some(at(30).0));
    assert_eq!(events[1].message, "StepCompleted of m1");
    assert!(api.write_log().is_empty(), "a read writes nothing");
}

/// Event times have whole seconds: a step started and completed within one second reads
/// completed first, as the API wrote them.
async fn within_one_second_the_later_write_is_the_newer(path: Path) {
    let (api, uid) = world();
    for e in [
        event(1, "TalosOperation", NAME, Some(&uid), "Started", 10),
        event(2, "Machine", "m1", None, "StepStarted", 10),
        event(3, "Machine", "m1", None, "StepCompleted", 10),
        event(4, "TalosOperation", NAME, Some(&uid), "Completed", 10),
    ] {
        api.seed(&e).unwrap();
    }
    let c = connect(path, &api, User::Viewer).await;
    let events = c.list_operation_events("default", NAME).await.unwrap();
    assert_eq!(
        reasons(&events),
        [
            &format!("{NAME} Completed"),
            "m1 StepCompleted",
            "m1 StepStarted",
            &format!("{NAME} Started"),
        ],
        "{path:?}"
    );
}

async fn text_from_the_cluster_is_made_inert_and_bounded(path: Path) {
    let (api, uid) = world();
    let mut e = event(1, "TalosOperation", NAME, Some(&uid), "Started", 10);
    e.reason = Some("Start\u{1b}[2Jed\u{7}".into());
    e.message = Some(format!(
        "by \u{1b}]0;owned\u{7}alice\r\n\u{202e}{}",
        "x".repeat(5000)
    ));
    api.seed(&e).unwrap();
    let c = connect(path, &api, User::Viewer).await;
    let events = c.list_operation_events("default", NAME).await.unwrap();
    assert_eq!(events.len(), 1);
    let got = &events[0];
    for s in [&got.reason, &got.message, &got.object_name] {
        assert!(
            !s.chars()
                .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "{path:?}: {s:?}"
        );
    }
    assert!(
        got.message.chars().count() <= MAX_EVENT_MESSAGE,
        "{}",
        got.message.len()
    );
    assert!(got.message.ends_with('…'), "cut, and says so");
}

async fn at_most_the_newest_hundred(path: Path) {
    let (api, uid) = world();
    for i in 0..150 {
        api.seed(&event(
            i,
            "TalosOperation",
            NAME,
            Some(&uid),
            &format!("R{i:03}"),
            i as i64,
        ))
        .unwrap();
    }
    let c = connect(path, &api, User::Viewer).await;
    let events = c.list_operation_events("default", NAME).await.unwrap();
    assert_eq!(events.len(), MAX_EVENTS);
    assert_eq!(events[0].reason, "R149");
    assert_eq!(events[MAX_EVENTS - 1].reason, "R050");
}

/// `all` loads every event up to the bound, and each answer says how many there are; a call
/// without it (as clients before it made) gets the newest hundred, as before.
async fn all_when_asked_for_and_how_many_there_are(path: Path) {
    let (api, uid) = world();
    let n = MAX_EVENTS_ALL + 20;
    for i in 0..n {
        let secs = i64::try_from(i).unwrap();
        api.seed(&event(
            i,
            "TalosOperation",
            NAME,
            Some(&uid),
            &format!("R{i:04}"),
            secs,
        ))
        .unwrap();
    }
    let c = connect(path, &api, User::Viewer).await;
    let newest = c
        .list_events("default", NAME, EventsWanted::Newest)
        .await
        .unwrap();
    assert_eq!(newest.events.len(), MAX_EVENTS, "{path:?}");
    assert_eq!(newest.total, Some(n), "{path:?}: the count known");
    assert_eq!(newest.left_out(), Some(n - MAX_EVENTS));
    let all = c
        .list_events("default", NAME, EventsWanted::All)
        .await
        .unwrap();
    assert_eq!(all.events.len(), MAX_EVENTS_ALL, "{path:?}: bounded");
    assert_eq!(all.total, Some(n), "{path:?}");
    assert_eq!(all.events[0].reason, format!("R{:04}", n - 1));
    assert_eq!(all.events[MAX_EVENTS_ALL - 1].reason, "R0020");
    let plain = c.list_operation_events("default", NAME).await.unwrap();
    assert_eq!(
        plain, newest.events,
        "{path:?}: absent is the newest, as before"
    );
}

async fn a_caller_who_may_not_read_events_is_refused(path: Path) {
    let (api, uid) = world();
    api.seed(&event(1, "TalosOperation", NAME, Some(&uid), "Started", 10))
        .unwrap();
    api.clear_write_log();
    let c = connect(path, &api, User::OperationsReader).await;
    // The operation itself they may read.
    assert_eq!(c.get_operation("default", NAME).await.unwrap().name, NAME);
    let e = c.list_operation_events("default", NAME).await.unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied, "{path:?}: {e:?}");
    assert!(e.message.contains("events"), "{}", e.message);
    assert!(api.write_log().is_empty());
}

async fn an_operation_that_is_not_there(path: Path) {
    let (api, _) = world();
    let c = connect(path, &api, User::Viewer).await;
    let e = c
        .list_operation_events("default", "prod-eu-talos-gone")
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::NotFound, "{path:?}: {e:?}");
    let e = c
        .list_operation_events("default", "Not A Name")
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{path:?}: {e:?}");
    assert!(api.write_log().is_empty());
}

/// The simulated controller's own Events, as a rollout goes: read through the path as they
/// come.
async fn a_rollouts_events_as_the_controller_records_them(path: Path) {
    use ichor_demo::apiserver::auth::users;
    use ichor_demo::controller::Controller;
    use kube::api::{Api, PostParams};
    let api = EmbeddedApi::default();
    let mut now = Timestamp::now();
    ichor_demo::demo::seed(&api, now).unwrap();
    let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let name = "staging-talos-followed";
    ops.create(&PostParams::default(), &op(name, "staging", "talos", 1))
        .await
        .unwrap();
    let c = connect(path, &api, User::Viewer).await;
    let mut seen_machine_step = false;
    for _ in 0..200 {
        now += SignedDuration::from_secs(2);
        ctrl.reconcile(now).await.unwrap();
        let events = c.list_operation_events("default", name).await.unwrap();
        assert!(
            events.windows(2).all(|w| w[0].at() >= w[1].at()),
            "newest first: {:?}",
            reasons(&events)
        );
        seen_machine_step |= events
            .iter()
            .any(|e| e.object_kind == "Machine" && e.reason.starts_with("Step"));
        let phase = ops
            .get(name)
            .await
            .unwrap()
            .status
            .unwrap_or_default()
            .phase;
        if phase == "Completed" {
            assert_eq!(events[0].reason, "Completed", "{:?}", reasons(&events));
            assert!(events.iter().any(|e| e.reason == "Started"));
            assert!(seen_machine_step, "{:?}", reasons(&events));
            return;
        }
    }
    panic!("{path:?}: the rollout did not complete");
}

/// A machine's event counts by the operation it is related to: its uid when it names one, else
/// (related by name only, or not at all) only while the operation lived, from its creation to
/// its finish.
async fn a_machines_events_count_by_the_operation_they_are_related_to(path: Path) {
    let (api, uid) = world();
    assert!(api.edit("talosoperations", "default", NAME, |o| {
        o["status"]["phase"] = serde_json::json!("Completed");
        o["status"]["finishedAt"] = serde_json::json!("2026-11-29T10:01:40Z");
    }));
    let related = |mut e: Event, uid: Option<&str>| {
        e.related = Some(ObjectReference {
            kind: Some("TalosOperation".into()),
            name: Some(NAME.into()),
            namespace: Some("default".into()),
            uid: uid.map(str::to_string),
            ..Default::default()
        });
        e
    };
    for e in [
        related(event(1, "Machine", "m1", None, "Ours", 20), Some(&uid)),
        // Another operation's (an earlier one of the same name), within this one's life.
        related(
            event(2, "Machine", "m1", None, "Theirs", 30),
            Some("another-uid"),
        ),
        related(event(3, "Machine", "m2", None, "ByName", 40), None),
        related(event(4, "Machine", "m2", None, "ByNameAfter", 130), None),
        event(5, "Machine", "m1", None, "Unrelated", 50),
        // After it finished: a later operation's, or no operation's.
        event(6, "Machine", "m1", None, "UnrelatedAfter", 120),
        // Ours, recorded late (after the finish time, as a slow recorder may): the uid says.
        related(event(7, "Machine", "m2", None, "OursLate", 110), Some(&uid)),
    ] {
        api.seed(&e).unwrap();
    }
    let c = connect(path, &api, User::Viewer).await;
    let events = c.list_operation_events("default", NAME).await.unwrap();
    assert_eq!(
        reasons(&events),
        ["m2 OursLate", "m1 Unrelated", "m2 ByName", "m1 Ours"],
        "{path:?}"
    );
}

/// Two rollouts one after the other on the same cluster and machines, as the simulated
/// controller carries them out and records them: each operation's events are its own. The
/// second's machine steps came after the first was created, on the first's machines, but are
/// related to the second (its uid), so the first's events leave them out; and the other way.
async fn a_later_operations_machine_events_are_not_an_earlier_ones(path: Path) {
    use ichor_demo::apiserver::auth::users;
    use ichor_demo::controller::Controller;
    use kube::api::{Api, PostParams};
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let mut now = Timestamp::now();
    for name in ["c1-talos-first", "c1-kubernetes-second"] {
        let kind = name.split('-').nth(1).unwrap();
        ops.create(&PostParams::default(), &op(name, "c1", kind, 1))
            .await
            .unwrap();
        let mut done = false;
        for _ in 0..200 {
            now += SignedDuration::from_secs(2);
            ctrl.reconcile(now).await.unwrap();
            let st = ops.get(name).await.unwrap().status.unwrap_or_default();
            if st.phase == "Completed" {
                done = true;
                break;
            }
        }
        assert!(done, "{name} did not complete");
    }
    let c = connect(path, &api, User::Viewer).await;
    for (name, other) in [
        ("c1-talos-first", "c1-kubernetes-second"),
        ("c1-kubernetes-second", "c1-talos-first"),
    ] {
        let events = c.list_operation_events("default", name).await.unwrap();
        let steps: Vec<&OperationEvent> = events
            .iter()
            .filter(|e| e.object_kind == "Machine")
            .collect();
        // Five machines (one held, one not approved), each started and completed.
        assert_eq!(steps.len(), 10, "{path:?} {name}: {:?}", reasons(&events));
        for e in &steps {
            assert!(
                e.message.starts_with(&format!("{name}: ")),
                "{path:?}: {name} shows {other}'s {} of {}: {:?}",
                e.reason,
                e.object_name,
                e.message
            );
        }
        assert!(
            events.iter().all(|e| !e.message.contains(other)),
            "{path:?} {name}: {:?}",
            reasons(&events)
        );
    }
}

crate::matrix!(
    a_machines_events_count_by_the_operation_they_are_related_to,
    a_later_operations_machine_events_are_not_an_earlier_ones,
    the_operations_and_its_machines_events_newest_first,
    within_one_second_the_later_write_is_the_newer,
    text_from_the_cluster_is_made_inert_and_bounded,
    at_most_the_newest_hundred,
    all_when_asked_for_and_how_many_there_are,
    a_caller_who_may_not_read_events_is_refused,
    an_operation_that_is_not_there,
    a_rollouts_events_as_the_controller_records_them,
);
