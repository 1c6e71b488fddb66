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

#[path = "hostile/arbitrary.rs"]
mod arbitrary;
#[path = "hostile/log_lines.rs"]
mod log_lines;

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
