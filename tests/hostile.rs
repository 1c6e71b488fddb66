//! Hostile input at the service's edge, on every path (in-process, impersonated, gRPC): every
//! argument is checked before any call to Kubernetes, a violation is InvalidArgument with its
//! own reason and a short, inert quote of the input, nothing is written, and no request, however
//! large or strange, gets a code that would be retried or that says the server broke. Also: the
//! log stays bounded when an object cannot be read.

use crate::common;

use common::paths::{Path, User, connect};
use common::{op, small_cluster};
use ichor_demo::apiserver::{EmbeddedApi, Fault, FaultRule};
use ichor_model::OperationClient;
use ichor_model::{ApiError, Code, Confirmed, OperationKind, OperationRequest, Reason};
use ichor_resources::TalosOperationStatus;
use proptest::prelude::*;
use std::sync::{Arc, Mutex};

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

fn req(kind: OperationKind) -> OperationRequest {
    OperationRequest::new("default", Some("c1"), kind)
}

/// Every resource the service reads or writes answers 503 to the first request that reaches
/// it: an argument that is not checked before the call comes back Unavailable, not refused.
fn trap(api: &EmbeddedApi) {
    for resource in [
        "talosoperations",
        "talosclusters",
        "machines",
        "ichorinstallations",
        "leases",
    ] {
        api.fail_when(
            FaultRule {
                verb: None,
                resource: Some(resource.into()),
                skip: 0,
            },
            Fault::Unavailable,
        );
    }
}

/// What a refusal of hostile input must look like.
fn assert_refused(what: &str, e: &ApiError, reason: Reason) {
    assert_eq!(
        (e.code, e.reason),
        (Code::InvalidArgument, Some(reason)),
        "{what}: {e:?}"
    );
    assert!(
        e.message.len() < 200,
        "{what}: message of {} bytes",
        e.message.len()
    );
    assert!(
        !e.message.chars().any(char::is_control),
        "{what}: {:?}",
        e.message
    );
    for (k, v) in &e.params {
        assert!(v.chars().count() <= 33, "{what}: param {k} = {v:?}");
        assert!(
            !v.chars().any(char::is_control),
            "{what}: param {k} = {v:?}"
        );
    }
}

type Call = Box<
    dyn for<'a> Fn(
        &'a dyn OperationClient,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<(), ApiError>> + Send + 'a>,
    >,
>;

fn call<F>(f: F) -> Call
where
    F: for<'a> Fn(
            &'a dyn OperationClient,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<(), ApiError>> + Send + 'a>,
        > + 'static,
{
    Box::new(f)
}

/// The table: what is asked, and the reason it must be refused with.
fn table() -> Vec<(&'static str, Reason, Call)> {
    let big = || "x".repeat(5 * 1024);
    let huge = || "y".repeat(1_000_000);
    let plan = |r: OperationRequest| {
        call(move |c| {
            let r = r.clone();
            Box::pin(async move { c.plan_operation(&r).await.map(drop) })
        })
    };
    let create = |r: OperationRequest| {
        call(move |c| {
            let r = r.clone();
            Box::pin(async move { c.create_operation(&r).await.map(drop) })
        })
    };
    let list = |ns: String| {
        call(move |c| {
            let ns = ns.clone();
            Box::pin(async move { c.list_operations(Some(&ns)).await.map(drop) })
        })
    };
    let get = |ns: String, name: String| {
        call(move |c| {
            let (ns, name) = (ns.clone(), name.clone());
            Box::pin(async move { c.get_operation(&ns, &name).await.map(drop) })
        })
    };
    let with = |f: &dyn Fn(&mut OperationRequest), kind| {
        let mut r = req(kind);
        f(&mut r);
        r
    };
    use OperationKind::*;
    vec![
        (
            "list, empty namespace",
            Reason::InvalidNamespace,
            list(String::new()),
        ),
        (
            "list, ../kube-system",
            Reason::InvalidNamespace,
            list("../kube-system".into()),
        ),
        (
            "list, 5 KB namespace",
            Reason::InvalidNamespace,
            list(big()),
        ),
        (
            "list, 1 MB namespace",
            Reason::InvalidNamespace,
            list(huge()),
        ),
        (
            "list, escape",
            Reason::InvalidNamespace,
            list("\x1b[2J".into()),
        ),
        (
            "get, empty name",
            Reason::InvalidName,
            get("default".into(), String::new()),
        ),
        (
            "get, traversal",
            Reason::InvalidName,
            get("default".into(), "staging/../x".into()),
        ),
        (
            "get, a/b",
            Reason::InvalidName,
            get("default".into(), "a/b".into()),
        ),
        (
            "get, newline",
            Reason::InvalidName,
            get("default".into(), "x\n".into()),
        ),
        (
            "get, 1 MB name",
            Reason::InvalidName,
            get("default".into(), huge()),
        ),
        (
            "get, escape namespace",
            Reason::InvalidNamespace,
            get("\x1b[2J".into(), "x".into()),
        ),
        (
            "plan, traversal cluster",
            Reason::InvalidName,
            plan(with(&|r| r.cluster = Some("staging/../x".into()), Talos)),
        ),
        (
            "plan, 5 KB cluster",
            Reason::InvalidName,
            plan(with(&|r| r.cluster = Some(big()), Talos)),
        ),
        (
            "plan, 5 KB target",
            Reason::InvalidVersion,
            plan(with(&|r| r.target = Some(big()), Talos)),
        ),
        (
            "plan, 1 MB target",
            Reason::InvalidVersion,
            plan(with(&|r| r.target = Some(huge()), Kubernetes)),
        ),
        (
            "plan, escape target",
            Reason::InvalidVersion,
            plan(with(&|r| r.target = Some("\x1b[2Jv1.9.3".into()), Talos)),
        ),
        (
            "plan, cni mode",
            Reason::InvalidKubeProxyMode,
            plan(with(&|r| r.target = Some(big()), Cni)),
        ),
        (
            "plan, target where none is taken",
            Reason::TargetNotTaken,
            plan(with(&|r| r.target = Some(huge()), Shutdown)),
        ),
        (
            "plan, max unavailable -1",
            Reason::InvalidMaxUnavailable,
            plan(with(
                &|r| {
                    r.target = Some("v1.9.3".into());
                    r.max_unavailable = Some(-1);
                },
                Talos,
            )),
        ),
        (
            "plan, max unavailable 2147483647",
            Reason::InvalidMaxUnavailable,
            plan(with(
                &|r| {
                    r.target = Some("v1.9.3".into());
                    r.max_unavailable = Some(i32::MAX);
                },
                Talos,
            )),
        ),
        (
            "create, 5 KB request id",
            Reason::InvalidRequestId,
            create(with(&|r| r.request_id = Some(big()), Shutdown)),
        ),
        (
            "create, escape request id",
            Reason::InvalidRequestId,
            create(with(&|r| r.request_id = Some("\x1b[2J".into()), Shutdown)),
        ),
        (
            "create, fingerprint not hex",
            Reason::InvalidFingerprint,
            create(with(&|r| r.confirmed_plan = Some("zz\n".into()), Shutdown)),
        ),
        (
            "create, 1 MB fingerprint",
            Reason::InvalidFingerprint,
            create(with(
                &|r| r.confirmed_plan = Some("f".repeat(1_000_000)),
                Shutdown,
            )),
        ),
        (
            "create, traversal namespace",
            Reason::InvalidNamespace,
            create(with(&|r| r.namespace = "../kube-system".into(), Shutdown)),
        ),
        (
            "pause, bad confirmed uid",
            Reason::InvalidConfirmation,
            call(|c| {
                Box::pin(async move {
                    let confirmed = Confirmed {
                        uid: "\n".repeat(5000),
                        generation: 1,
                        finished: false,
                        paused: false,
                    };
                    c.set_operation_paused("default", "x", true, Some(&confirmed))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "pause, traversal name",
            Reason::InvalidName,
            call(|c| {
                Box::pin(async move {
                    c.set_operation_paused("default", "../x", true, None)
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "delete, a/b namespace",
            Reason::InvalidNamespace,
            call(|c| Box::pin(async move { c.delete_operation("a/b", "x", None).await })),
        ),
        (
            "permissions, traversal",
            Reason::InvalidNamespace,
            call(|c| Box::pin(async move { c.permissions("../x").await.map(drop) })),
        ),
        (
            "clusters, upper case",
            Reason::InvalidNamespace,
            call(|c| Box::pin(async move { c.list_clusters(Some("DEFAULT")).await.map(drop) })),
        ),
        (
            "cluster, traversal",
            Reason::InvalidName,
            call(|c| {
                Box::pin(async move { c.get_cluster("default", "staging/../x").await.map(drop) })
            }),
        ),
    ]
}

async fn hostile_arguments_are_refused_before_any_call(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    trap(&api);
    for (what, reason, f) in table() {
        let e = f(c.as_ref()).await.expect_err(&format!("{what}: accepted"));
        assert_refused(what, &e, reason);
    }
    assert!(api.write_log().is_empty(), "{:?}", api.write_log());
    // Nothing reached Kubernetes: the trap is still set, and springs now.
    let e = c.list_operations(Some("default")).await;
    assert!(
        e.is_err(),
        "the trap was not sprung by the refused calls, so it is by this one"
    );
}

async fn max_unavailable_is_at_most_the_clusters_workers(path: Path) {
    let api = world();
    let c = connect(path, &api, User::Admin).await;
    // c1 has five workers (one held, one not approved).
    let mut r = req(OperationKind::Talos);
    r.target = Some("v1.9.3".into());
    r.max_unavailable = Some(6);
    let e = c.plan_operation(&r).await.unwrap_err();
    assert_refused("6 of 5 workers", &e, Reason::MaxUnavailableOverWorkers);
    assert_eq!(
        (e.param("value"), e.param("workers"), e.param("cluster")),
        (Some("6"), Some("5"), Some("c1"))
    );
    let e = c.create_operation(&r).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::MaxUnavailableOverWorkers));
    r.max_unavailable = Some(5);
    assert!(c.plan_operation(&r).await.unwrap().blocked.is_none());
    // Kinds that do not group workers do not take it as a limit.
    let mut s = req(OperationKind::Shutdown);
    s.max_unavailable = Some(7);
    assert!(c.plan_operation(&s).await.is_ok());
    assert!(api.write_log().is_empty());
}

crate::matrix!(
    paths: [InProcess => in_process, Impersonated => impersonated, Grpc => grpc, Connect => connect];
    [
        hostile_arguments_are_refused_before_any_call,
        max_unavailable_is_at_most_the_clusters_workers,
    ]
);

// ---- arbitrary requests ----

/// A string as a hostile client sends it: sometimes valid, often not, up to a few KB.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just("default".to_string()),
        6 => Just("c1".to_string()),
        2 => Just("v1.9.3".to_string()),
        1 => Just(String::new()),
        1 => Just("../kube-system".to_string()),
        1 => Just("staging/../x".to_string()),
        1 => Just("\x1b[2J\n".to_string()),
        1 => "[a-z0-9.-]{0,70}",
        1 => "\\PC{0,40}",
        1 => any::<String>(),
        1 => proptest::collection::vec(any::<char>(), 0..5000).prop_map(String::from_iter),
    ]
}

fn number() -> impl Strategy<Value = i32> {
    prop_oneof![
        Just(1),
        Just(0),
        Just(-1),
        Just(i32::MAX),
        Just(i32::MIN),
        1..8i32,
        any::<i32>()
    ]
}

#[derive(Clone, Debug)]
enum Hostile {
    List(Option<String>),
    Get(String, String),
    Plan(OperationRequest),
    Create(OperationRequest),
    Pause(String, String, bool, Option<Confirmed>),
    Delete(String, String, Option<Confirmed>),
    Permissions(String),
    ListClusters(Option<String>),
    GetCluster(String, String),
}

fn request() -> impl Strategy<Value = OperationRequest> {
    (
        text(),
        proptest::option::of(text()),
        0..OperationKind::ALL.len(),
        proptest::option::of(text()),
        proptest::option::of(number()),
        proptest::option::of(text()),
        proptest::option::of(text()),
    )
        .prop_map(
            |(namespace, cluster, kind, target, max_unavailable, request_id, confirmed_plan)| {
                OperationRequest {
                    namespace,
                    cluster,
                    kind: OperationKind::ALL[kind],
                    target,
                    max_unavailable,
                    request_id,
                    confirmed_plan,
                }
            },
        )
}

fn confirmed() -> impl Strategy<Value = Option<Confirmed>> {
    proptest::option::of(
        (text(), any::<i64>(), any::<bool>(), any::<bool>()).prop_map(
            |(uid, generation, finished, paused)| Confirmed {
                uid,
                generation,
                finished,
                paused,
            },
        ),
    )
}

fn hostile() -> impl Strategy<Value = Hostile> {
    prop_oneof![
        proptest::option::of(text()).prop_map(Hostile::List),
        (text(), text()).prop_map(|(a, b)| Hostile::Get(a, b)),
        request().prop_map(Hostile::Plan),
        request().prop_map(Hostile::Create),
        (text(), text(), any::<bool>(), confirmed())
            .prop_map(|(a, b, p, c)| Hostile::Pause(a, b, p, c)),
        (text(), text(), confirmed()).prop_map(|(a, b, c)| Hostile::Delete(a, b, c)),
        text().prop_map(Hostile::Permissions),
        proptest::option::of(text()).prop_map(Hostile::ListClusters),
        (text(), text()).prop_map(|(a, b)| Hostile::GetCluster(a, b)),
    ]
}

async fn send(c: &dyn OperationClient, h: &Hostile) -> Result<(), ApiError> {
    match h {
        Hostile::List(ns) => c.list_operations(ns.as_deref()).await.map(drop),
        Hostile::Get(ns, name) => c.get_operation(ns, name).await.map(drop),
        Hostile::Plan(r) => c.plan_operation(r).await.map(drop),
        Hostile::Create(r) => c.create_operation(r).await.map(drop),
        Hostile::Pause(ns, name, p, conf) => c
            .set_operation_paused(ns, name, *p, conf.as_ref())
            .await
            .map(drop),
        Hostile::Delete(ns, name, conf) => c.delete_operation(ns, name, conf.as_ref()).await,
        Hostile::Permissions(ns) => c.permissions(ns).await.map(drop),
        Hostile::ListClusters(ns) => c.list_clusters(ns.as_deref()).await.map(drop),
        Hostile::GetCluster(ns, name) => c.get_cluster(ns, name).await.map(drop),
    }
}

/// Arbitrary requests on every path: the only answers are OK and the refusals a person can act
/// on, never a code that is retried or says the server broke; a refusal writes nothing.
#[test]
fn arbitrary_requests_get_only_ok_or_a_refusal_and_a_refusal_writes_nothing() {
    // The calls are driven with block_on on this thread: give it the stack a runtime worker has.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(arbitrary_requests)
        .unwrap()
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
}

fn arbitrary_requests() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let api = world();
    let clients: Vec<(Path, Arc<dyn OperationClient>)> = rt.block_on(async {
        let mut clients = Vec::new();
        for path in [Path::InProcess, Path::Impersonated, Path::Grpc] {
            clients.push((path, connect(path, &api, User::Operator).await));
        }
        clients
    });
    let config = ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let seen = std::cell::RefCell::new(std::collections::BTreeMap::<String, usize>::new());
    proptest!(config, |(h in hostile(), which in 0..3usize)| {
        let (path, client) = &clients[which];
        api.clear_write_log();
        let result = rt.block_on(send(client.as_ref(), &h));
        let outcome = match &result {
            Ok(()) => "OK".to_string(),
            Err(e) => format!("{:?}", e.code),
        };
        *seen.borrow_mut().entry(outcome).or_default() += 1;
        if let Err(e) = result {
            prop_assert!(
                matches!(
                    e.code,
                    Code::InvalidArgument
                        | Code::FailedPrecondition
                        | Code::NotFound
                        | Code::PermissionDenied
                ),
                "{path:?} {h:?}: {e:?}"
            );
            prop_assert!(api.write_log().is_empty(), "{path:?} {h:?} wrote {:?}", api.write_log());
            if e.code == Code::InvalidArgument {
                prop_assert!(e.message.len() < 200, "{path:?}: {}", e.message);
            }
        }
    });
    let seen = seen.into_inner();
    eprintln!("outcomes: {seen:?}");
    assert!(
        seen.contains_key("OK") && seen.contains_key("InvalidArgument"),
        "{seen:?}"
    );
}

// ---- the log ----

/// A writer the log goes to, for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn an_unreadable_object_and_hostile_requests_leave_short_log_lines() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        // Plain `info`, not the default filter that leaves kube's body-logging line out: the
        // service's reads must not reach that line at all.
        .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let api = world();
    // Many operations, one of them with a status nothing can read and a long value in it.
    for i in 0..200 {
        let mut o = op(&format!("op-{i:03}"), "c1", "talos", 1);
        o.status = Some(TalosOperationStatus {
            phase: "Completed".into(),
            failure_reason: Some("z".repeat(300)),
            ..Default::default()
        });
        api.seed(&o).unwrap();
    }
    assert!(api.edit("talosoperations", "default", "op-100", |v| {
        v["status"] = serde_json::json!({"phase": 42, "failureReason": "q".repeat(100_000)});
    }));
    for path in [Path::InProcess, Path::Grpc] {
        let c = connect(path, &api, User::Admin).await;
        let ops = c.list_operations(Some("default")).await.unwrap();
        assert_eq!(ops.len(), 200, "{path:?}");
        assert_eq!(ops.iter().filter(|o| o.unreadable.is_some()).count(), 1);
        let _ = c.get_operation("default", "op-100").await.unwrap();
        let _ = c
            .plan_operation(&req(OperationKind::Shutdown))
            .await
            .unwrap();
        for (_, _, f) in table() {
            let _ = f(c.as_ref()).await;
        }
    }
    let log = String::from_utf8_lossy(&captured.0.lock().unwrap()).to_string();
    assert!(
        log.contains("operations that cannot be read are listed as such"),
        "{}",
        &log[..log.len().min(2000)]
    );
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    eprintln!(
        "log: {} lines, the longest {longest} bytes",
        log.lines().count()
    );
    assert!(
        longest < 1000,
        "a log line of {longest} bytes: {}",
        log.lines()
            .max_by_key(|l| l.len())
            .unwrap_or_default()
            .chars()
            .take(300)
            .collect::<String>()
    );
    assert!(!log.contains("zzzzzzzzzz"), "no response body in the log");
}
