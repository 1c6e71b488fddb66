//! What was confirmed is what gets written. Every write (pause, resume, delete, start) goes
//! through the dashboard's own stack, as a person makes it (keys → update → perform → the
//! retrying client → the path's client → the service → the embedded API), on every path, with a
//! fault at the write and the world changed between the question and the answer. Each case
//! asserts the write log, the words on screen, and that nothing is written later on its own.

use crate::common;

use common::dialog::{dialog, review};
use common::driver::Driver;
use common::paths::{Path, User, dashboard_client};
use common::{fixtures, names, op, small_cluster};
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{Dialog, NewOpStep, Screen, State};
use ichor_demo::apiserver::{self as apiserver, EmbeddedApi, FaultRule};
use ichor_model::OperationKind;
use ichor_resources::{TalosOperationStatus, names as labels};
use ichor_views::i18n::Lang;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use serde_json::json;
use std::time::Duration;

/// The deadline of every call in these tests; a delayed write outlasts it. Generous, so that a
/// loaded machine does not make a read outlast it.
const DEADLINE: Duration = Duration::from_millis(1000);
const DELAY: Duration = Duration::from_millis(2500);

/// A fault met by the write itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// The connection is refused or reset before the request is carried out.
    Refused,
    /// The request is carried out, then the connection is reset: the answer is lost.
    AppliedThenReset,
    /// No answer within the deadline.
    Timeout,
    /// 503.
    Unavailable,
    /// Answered (504) after the deadline, then carried out: the API server got it, the caller
    /// stopped waiting, and it lands later all the same.
    Late,
}

const FAULTS: [Fault; 6] = [
    Fault::None,
    Fault::Refused,
    Fault::AppliedThenReset,
    Fault::Timeout,
    Fault::Unavailable,
    Fault::Late,
];

fn inject(api: &EmbeddedApi, fault: Fault, verb: &str, resource: &str) {
    let rule = FaultRule::on(verb, resource);
    let f = match fault {
        Fault::None => return,
        Fault::Refused => apiserver::Fault::Reset,
        Fault::AppliedThenReset => apiserver::Fault::ResetAfterApply,
        Fault::Timeout => apiserver::Fault::Delay(DELAY),
        Fault::Unavailable => apiserver::Fault::Unavailable,
        Fault::Late => apiserver::Fault::Late {
            answer: DELAY,
            apply: DELAY + Duration::from_millis(300),
        },
    };
    api.fail_when(rule, f);
}

/// Whether the write happened by the time its answer came, for a fault and an unchanged world.
fn applied(fault: Fault) -> bool {
    matches!(fault, Fault::None | Fault::AppliedThenReset)
}

/// Whether the write arrives after its answer was given up on: over gRPC the server carries a
/// write through to its end when the caller's deadline passes (in-process the request dies with
/// the deadline); a write the API server answered late and carried out arrives on every path.
/// The screen then says it may still arrive, and it does, once.
fn late(path: Path, fault: Fault) -> bool {
    (matches!(path, Path::Grpc | Path::Connect) && fault == Fault::Timeout) || fault == Fault::Late
}

/// What changes between the question and the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    None,
    /// The operation was deleted and a running one of the same name took its place.
    Replaced,
    /// Someone changed its spec (max unavailable).
    Spec,
    /// It finished.
    Finished,
}

const CHANGES: [Change; 4] = [
    Change::None,
    Change::Replaced,
    Change::Spec,
    Change::Finished,
];

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

fn seed(api: &EmbeddedApi, name: &str, phase: &str, paused: bool) {
    let mut o = op(name, "c1", "talos", 1);
    o.spec.paused = paused;
    o.status = Some(TalosOperationStatus {
        phase: phase.into(),
        ..Default::default()
    });
    api.seed(&o).unwrap();
}

fn change(api: &EmbeddedApi, name: &str, change: Change) {
    match change {
        Change::None => {}
        Change::Replaced => {
            api.remove("talosoperations", "default", name);
            seed(api, name, "Running", false);
        }
        Change::Spec => {
            api.edit("talosoperations", "default", name, |o| {
                o["spec"]["maxUnavailable"] = json!(3);
            });
        }
        Change::Finished => {
            api.edit("talosoperations", "default", name, |o| {
                o["status"]["phase"] = json!("Completed");
            });
        }
    }
}

/// The words on a 120×40 screen, in English, as one line: borders dropped and runs of blanks
/// (line ends included) made one space, so a sentence wrapped across lines reads whole.
fn screen(state: &State) -> String {
    let term = common::snap::draw(state, Lang::En, 120, 40, Default::default());
    let buf = term.backend().buffer();
    let text: String = (0..buf.area.height)
        .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
        .map(|(x, y)| match buf[(x, y)].symbol() {
            "│" | "┌" | "┐" | "└" | "┘" | "─" => " ".to_string(),
            s => s.to_string(),
        })
        .collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Nothing more is written once the scenario is over: not by a retry, not by a late request
/// (every request the API received has been answered and carried out).
async fn nothing_later(api: &EmbeddedApi, case: &str) {
    let before = names(&api.write_log());
    common::api_settled(api).await;
    assert_eq!(
        names(&api.write_log()),
        before,
        "{case}: a write came later"
    );
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    Pause,
    Resume,
    Delete,
}

/// One pause, resume or delete: the operation as it is when asked, the key, the change, `y`.
async fn write_case(path: Path, write: Write, fault: Fault, ch: Change) {
    let case = format!("{path:?} {write:?} fault={fault:?} change={ch:?}");
    let api = world();
    let name = "op";
    match write {
        Write::Pause => seed(&api, name, "Running", false),
        Write::Resume => seed(&api, name, "Paused", true),
        Write::Delete => seed(&api, name, "Completed", false),
    }
    // A delete of a finished operation cannot see it finish: it is asked about a running one.
    if write == Write::Delete && ch == Change::Finished {
        change(&api, name, Change::None);
        api.edit("talosoperations", "default", name, |o| {
            o["status"]["phase"] = json!("Running");
        });
    }
    let client = dashboard_client(path, &api, User::Admin, DEADLINE).await;
    let mut d = Driver::new(fixtures::state(), client).await;
    assert_eq!(
        d.state.ops.selected().map(|o| o.name.as_str()),
        Some(name),
        "{case}"
    );
    let (key, verb) = match write {
        Write::Pause => ('p', "patch"),
        Write::Resume => ('r', "patch"),
        Write::Delete => ('d', "delete"),
    };
    d.key(Key::ch(key)).await;
    assert!(
        matches!(d.state.dialog, Some(Dialog::Confirm(_))),
        "{case}: asked"
    );
    change(&api, name, ch);
    inject(&api, fault, verb, "talosoperations");
    d.key(Key::ch('y')).await;
    assert!(d.state.pending.is_none(), "{case}: answered");

    let text = screen(&d.state);
    let log = names(&api.write_log());
    let wrote = vec![format!("{verb} talosoperations by admin")];
    if ch != Change::None {
        assert!(log.is_empty(), "{case}: wrote {log:?}");
        let words = match ch {
            Change::Replaced => "another operation of the same name took its place",
            Change::Spec => "its spec was changed",
            _ => "it has finished",
        };
        assert!(text.contains(words), "{case}: screen says\n{text}");
        assert!(text.contains("Nothing was written"), "{case}\n{text}");
        if ch == Change::Replaced {
            let theirs = api.object("talosoperations", "default", name).unwrap();
            assert_eq!(theirs["status"]["phase"], "Running", "{case}: untouched");
            assert_eq!(theirs["spec"]["paused"], false, "{case}: untouched");
        }
    } else {
        let done = match write {
            Write::Pause => "Paused op",
            Write::Resume => "Resumed op",
            Write::Delete => "Deleted op",
        };
        // A write carried through late may land before the client reads back (on a loaded
        // machine the deadline and the read-back can outlast the delay): then the read finds it
        // done, truly. Otherwise the screen says it did not happen yet and may still arrive;
        // either way it is the one write.
        let found_done = text.contains(done);
        if applied(fault) || (late(path, fault) && found_done) {
            assert!(found_done, "{case}: screen says\n{text}");
            if applied(fault) {
                assert_eq!(log, wrote, "{case}");
            }
        } else {
            if !late(path, fault) {
                assert!(log.is_empty(), "{case}: wrote {log:?}");
            }
            assert!(
                text.contains("did not happen") && text.contains("Nothing was retried"),
                "{case}: screen says\n{text}"
            );
            if late(path, fault) {
                assert!(
                    text.contains("the request may still arrive"),
                    "{case}\n{text}"
                );
            }
        }
        if late(path, fault) {
            common::api_settled(&api).await;
            assert_eq!(
                names(&api.write_log()),
                wrote,
                "{case}: the one write, late"
            );
        }
    }
    nothing_later(&api, &case).await;
}

async fn every_pause_resume_and_delete(path: Path) {
    let mut cases = Vec::new();
    for write in [Write::Pause, Write::Resume, Write::Delete] {
        for fault in FAULTS {
            for ch in CHANGES {
                cases.push(write_case(path, write, fault, ch));
            }
        }
    }
    futures::future::join_all(cases).await;
}

/// What changes between the Review and Start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StartChange {
    None,
    /// The cluster's spec was changed to the target by someone else: the plan writes no spec.
    SpecChanged,
    /// A machine was put on hold: the steps differ.
    MachineHeld,
    /// An operation was started on the cluster (the lock is taken).
    LockTaken,
    /// Another start claimed the cluster and is creating its operation.
    Claimed,
    /// A change the plan does not show (another version field): the start goes ahead.
    Unrelated,
}

const START_CHANGES: [StartChange; 6] = [
    StartChange::None,
    StartChange::SpecChanged,
    StartChange::MachineHeld,
    StartChange::LockTaken,
    StartChange::Claimed,
    StartChange::Unrelated,
];

fn start_change(api: &EmbeddedApi, ch: StartChange) {
    match ch {
        StartChange::None => {}
        StartChange::SpecChanged => {
            api.edit("talosclusters", "default", "c1", |c| {
                c["spec"]["talosVersion"] = json!("v1.9.3");
            });
        }
        StartChange::MachineHeld => {
            api.edit("machines", "default", "c1-w-a", |m| {
                m["metadata"]["annotations"] = json!({labels::UPGRADE_HOLD: "firmware"});
            });
        }
        StartChange::LockTaken => seed(api, "theirs", "Running", false),
        StartChange::Claimed => {
            let now = jiff::Timestamp::now();
            let lease = Lease {
                metadata: kube::api::ObjectMeta {
                    name: Some(format!("{}c1", labels::START_CLAIM_PREFIX)),
                    namespace: Some("default".into()),
                    annotations: Some(
                        [
                            (labels::CLAIM_OPERATION.to_string(), "c1-talos-zzzzz".into()),
                            (labels::ACTOR.to_string(), "carol".into()),
                        ]
                        .into(),
                    ),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some("someone-elses-start".into()),
                    renew_time: Some(MicroTime(now)),
                    lease_duration_seconds: Some(60),
                    ..Default::default()
                }),
            };
            api.seed(&lease).unwrap();
        }
        StartChange::Unrelated => {
            api.edit("talosclusters", "default", "c1", |c| {
                c["spec"]["kubernetesVersion"] = json!("v1.32.4");
            });
        }
    }
}

/// What became of a start whose create met `fault` on `path`, once everything has landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Came {
    /// Answered: the operation exists.
    Started,
    /// Answered 503: the spec was written, the create refused.
    HalfDone,
    /// No answer in time: its outcome is settled afterwards, with this many operations.
    Settled(usize),
}

fn came(path: Path, fault: Fault) -> Came {
    match fault {
        Fault::None | Fault::AppliedThenReset => Came::Started,
        Fault::Unavailable => Came::HalfDone,
        // Reset before it was carried out: nothing lands.
        Fault::Refused => Came::Settled(0),
        // In-process the request dies with the deadline; a server carries it to its end.
        Fault::Timeout => Came::Settled(usize::from(late(path, fault))),
        Fault::Late => Came::Settled(1),
    }
}

async fn start_case(path: Path, fault: Fault, ch: StartChange) {
    let case = format!("{path:?} start fault={fault:?} change={ch:?}");
    let api = world();
    let client = dashboard_client(path, &api, User::Admin, DEADLINE).await;
    let mut d = review(client, "c1", OperationKind::Talos, Some("1.9.3")).await;
    assert!(dialog(&d).can_start(), "{case}");
    start_change(&api, ch);
    inject(&api, fault, "create", "talosoperations");
    d.code(KeyCode::Enter).await;
    let text = screen(&d.state);
    let log = names(&api.write_log());
    let by = |s: &str| format!("{s} by admin");
    let goes_ahead = matches!(ch, StartChange::None | StartChange::Unrelated);
    if !goes_ahead {
        assert!(log.is_empty(), "{case}: wrote {log:?}");
        let words = match ch {
            StartChange::SpecChanged | StartChange::MachineHeld => {
                "The plan changed since you reviewed it"
            }
            StartChange::LockTaken => "Operation theirs on cluster c1 has not completed",
            _ => "Another start on cluster c1 is under way (by carol)",
        };
        assert!(text.contains(words), "{case}: screen says\n{text}");
        let dl = dialog(&d);
        assert_eq!(dl.step, NewOpStep::Review, "{case}: the new Review");
        assert!(dl.plan.data.is_some(), "{case}: the plan is read again");
        if ch == StartChange::MachineHeld {
            // The new Review, and Start from it runs the new plan.
            assert!(text.contains("c1-w-a: firmware"), "{case}\n{text}");
            d.code(KeyCode::Enter).await;
            assert_eq!(d.state.screen, Screen::Operation, "{case}");
            assert_eq!(common::operations_created(&api), 1, "{case}");
        }
        nothing_later(&api, &case).await;
        return;
    }
    match came(path, fault) {
        Came::Started => {
            assert_eq!(
                log,
                [
                    by("create leases"),
                    by("update talosclusters"),
                    by("create talosoperations"),
                    by("update leases")
                ],
                "{case}: the claim given back once the create answered"
            );
            assert_eq!(d.state.screen, Screen::Operation, "{case}");
            assert!(text.contains("Started c1-talos-"), "{case}\n{text}");
        }
        Came::HalfDone => {
            assert_eq!(
                log,
                [
                    by("create leases"),
                    by("update talosclusters"),
                    by("update leases")
                ],
                "{case}"
            );
            assert!(
                text.contains("was written on TalosCluster c1, but creating the operation failed"),
                "{case}: screen says\n{text}"
            );
            let dl = dialog(&d);
            assert!(
                dl.plan.data.as_ref().unwrap().spec_change.is_none(),
                "{case}: the Review now writes no spec"
            );
        }
        Came::Settled(operations) => settled_start(&mut d, &api, &case, operations).await,
    }
    nothing_later(&api, &case).await;
}

/// A start whose create got no answer in time: the screen says its outcome is not known yet
/// and not to start again (never "did not happen"), the claim keeps other starts out until it is
/// settled, the late create (if any) lands once, and the dashboard's look for the start's request
/// id then says what came of it.
async fn settled_start(d: &mut Driver, api: &EmbeddedApi, case: &str, operations: usize) {
    let text = screen(&d.state);
    if operations == 1 && d.state.settling.is_none() {
        // The late create landed before the client's read after its lost answer: found.
        assert!(
            text.contains("Started c1-talos-"),
            "{case}: screen says\n{text}"
        );
        common::claim_given_back(api).await;
        assert_eq!(common::operations_created(api), 1, "{case}");
        return;
    }
    assert!(
        text.contains("is not known yet") && text.contains("Do not start again"),
        "{case}: screen says\n{text}"
    );
    assert!(!text.contains("did not happen"), "{case}\n{text}");
    assert!(
        !text.contains("start the same operation again"),
        "{case}\n{text}"
    );
    let settling = d.state.settling.clone().expect("the start is looked for");
    common::claim_given_back(api).await;
    assert_eq!(
        common::operations_created(api),
        operations,
        "{case}: {:?}",
        names(&api.write_log())
    );
    // The dashboard looks for it once the create can no longer land.
    d.state.now = settling.until + jiff::SignedDuration::from_secs(2);
    d.act(Action::Tick).await;
    d.state.now += jiff::SignedDuration::from_secs(4);
    d.act(Action::Tick).await;
    assert!(d.state.settling.is_none(), "{case}: settled");
    let text = screen(&d.state);
    if operations == 1 {
        assert!(
            text.contains("Started c1-talos-"),
            "{case}: screen says\n{text}"
        );
        assert_eq!(d.state.screen, Screen::Operation, "{case}");
    } else {
        assert!(
            text.contains("got no answer, and reading the cluster shows it did not happen"),
            "{case}: screen says\n{text}"
        );
        assert!(dialog(d).start_offered(), "{case}: Start is offered again");
    }
}

async fn every_start(path: Path) {
    let mut cases = Vec::new();
    for fault in FAULTS {
        for ch in START_CHANGES {
            // A refused start never reaches the create: one fault is enough for those.
            let refused = !matches!(ch, StartChange::None | StartChange::Unrelated);
            if refused && fault != Fault::None {
                continue;
            }
            cases.push(start_case(path, fault, ch));
        }
    }
    futures::future::join_all(cases).await;
}

macro_rules! on_every_path {
    ($($name:ident),* $(,)?) => {
        mod in_process {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name(super::Path::InProcess).await } )*
        }
        mod impersonated {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name(super::Path::Impersonated).await } )*
        }
        mod grpc {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name(super::Path::Grpc).await } )*
        }
        mod connect {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name(super::Path::Connect).await } )*
        }
    };
}

on_every_path!(every_pause_resume_and_delete, every_start);
