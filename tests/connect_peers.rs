//! Real peers from the Connect project, with no generated code on their side (the services and
//! messages come from the API's descriptor set, written to a file here, plus a test-only
//! `google.rpc.ErrorInfo`):
//!
//! 1. a connect-es client (tests/interop/connect_client.mjs) against `serve` over each of its
//!    transports: the Connect protocol over HTTP/1.1 and HTTP/2, in binary and in JSON; gRPC;
//!    gRPC-Web; and the Connect protocol (JSON), gRPC and gRPC-Web again with gzip both ways
//!    (connect-es's `compressionGzip`, every message compressed). On each it lists, plans, has a start refused (reading the reason from the
//!    ErrorInfo in the error's details), starts, pauses, resumes and deletes;
//! 2. a connect-es server standing in for ichor-ui (tests/interop/connect_server.mjs), whose
//!    canned answers and refusals the dashboard's client decodes into the domain types over
//!    the Connect protocol (HTTP/1.1) and over gRPC (h2c): what our client would meet at a
//!    connect-go ichor-ui.
//!
//! Needs `$ICHOR_NODE_MODULES`: a node_modules folder with @connectrpc/connect,
//! @connectrpc/connect-node and @bufbuild/protobuf v2 (`.ci/run` installs them). Without it the
//! tests are skipped with a notice, unless `$CI` is set, when they fail.

use crate::common;

use common::server::{Options, start};
use common::small_cluster;
use ichor_client::remote::{Protocol, RemoteClient, RemoteOptions};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationKind;
use ichor_model::{
    Code, Confirmed, MachinePhase, Operation, OperationEffect, OperationRequest, Phase, Reason,
};
use ichor_model::{OperationClient, ServerVersion};
use ichor_resources::{CniSpec, TalosCluster, TalosClusterSpec, machine};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub(crate) const INTEROP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop");

/// The node_modules folder with connect-es, or `None` (with a notice) to skip.
pub(crate) fn node_modules() -> Option<String> {
    match std::env::var("ICHOR_NODE_MODULES") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            if std::env::var_os("CI").is_some() {
                panic!(
                    "ICHOR_NODE_MODULES is not set but CI is: the Connect peer tests must run in CI (.ci/run sets it up)"
                );
            }
            eprintln!(
                "skipping the Connect peer test: set ICHOR_NODE_MODULES to a node_modules folder with @connectrpc/connect, @connectrpc/connect-node and @bufbuild/protobuf v2 (.ci/run does)"
            );
            None
        }
    }
}

/// Writes the API's descriptor set, plus google.rpc.ErrorInfo, to `dir`; returns the file.
/// Two encoded FileDescriptorSets side by side are one set with the files of both.
pub(crate) fn descriptors(dir: &Path) -> PathBuf {
    let error_info = protox::compile(
        ["google/rpc/error_details.proto"],
        [format!("{INTEROP}/proto")],
    )
    .expect("compiling tests/interop/proto/google/rpc/error_details.proto");
    let mut bytes = ichor_server::wire::proto::FILE_DESCRIPTOR_SET.to_vec();
    bytes.extend(prost::Message::encode_to_vec(&error_info));
    let path = dir.join("ichor.binpb");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The transports of the connect-es client, each working on a cluster of its own name.
const TRANSPORTS: [&str; 9] = [
    "connect-http1-proto",
    "connect-http1-json",
    "connect-http2-proto",
    "connect-http2-json",
    "grpc",
    "grpc-web",
    "connect-http1-json-gzip",
    "grpc-gzip",
    "grpc-web-gzip",
];

/// A cluster `name` (Talos v1.9.2) with a control plane and two workers, in `default`.
fn seed_cluster(api: &EmbeddedApi, name: &str) {
    let mut c = TalosCluster::new(
        name,
        TalosClusterSpec {
            talos_version: "v1.9.2".into(),
            kubernetes_version: "v1.32.3".into(),
            cni: CniSpec {
                kube_proxy: "enabled".into(),
            },
        },
    );
    c.metadata.namespace = Some("default".into());
    api.seed(&c).unwrap();
    for (m, role, order) in [
        ("cp", "controlplane", 1),
        ("w1", "worker", 2),
        ("w2", "worker", 3),
    ] {
        let mut m = machine(name, &format!("{name}-{m}"), role, Some(order), true, None);
        m.metadata.namespace = Some("default".into());
        api.seed(&m).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connect_es_client_plans_starts_pauses_resumes_and_deletes_over_every_transport() {
    let Some(modules) = node_modules() else {
        return;
    };
    let api = EmbeddedApi::default();
    small_cluster(&api);
    for t in TRANSPORTS {
        seed_cluster(&api, t);
    }
    let server = start(&api, Options::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let fds = descriptors(dir.path());

    let run = tokio::process::Command::new("node")
        .arg(format!("{INTEROP}/connect_client.mjs"))
        .arg("--descriptors")
        .arg(&fds)
        .args(["--url", &server.url(false)])
        .args(["--token", users::OPERATOR_TOKEN])
        .args(["--namespace", "default", "--cluster-per-transport"])
        .args(["--target", "v1.9.3"])
        .env("ICHOR_NODE_MODULES", &modules)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the connect-es client finishes within two minutes")
        .expect("running node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the connect-es client failed:\n{stdout}\n{stderr}"
    );
    for t in TRANSPORTS {
        assert!(stdout.contains(&format!("[{t}] OK")), "{t}:\n{stdout}");
        assert!(
            stdout.contains(&format!(
                "[{t}] refused as expected: TARGET_NOT_TAKEN {{\"kind\":\"shutdown\",\"value\":\"v9.9.9\"}}"
            )) || stdout.contains(&format!(
                "[{t}] refused as expected: TARGET_NOT_TAKEN {{\"value\":\"v9.9.9\",\"kind\":\"shutdown\"}}"
            )),
            "{t}: the ErrorInfo's metadata:\n{stdout}"
        );
        assert!(
            stdout.contains(&format!("[{t}] started default/")) && stdout.contains("by operator"),
            "{t}: the actor is the token's user:\n{stdout}"
        );
    }
    assert!(stdout.contains("OK: 9 transports"), "{stdout}");

    // Nine starts, each paused, resumed and deleted: nothing is left, and every write was the
    // operator's.
    let ops = common::server::client_over(
        &server.url(false),
        Some(users::VIEWER_TOKEN),
        Protocol::Connect,
    )
    .list_operations(Some("default"))
    .await
    .unwrap();
    assert!(ops.is_empty(), "{ops:?}");
    let writes = common::names(&api.write_log());
    let by_operator = |verb: &str| {
        writes
            .iter()
            .filter(|w| w.starts_with(verb) && w.ends_with(&format!("by {}", users::OPERATOR)))
            .count()
    };
    assert_eq!(by_operator("create talosoperations"), 9, "{writes:#?}");
    assert_eq!(by_operator("delete talosoperations"), 9, "{writes:#?}");
    assert_eq!(by_operator("patch talosoperations"), 18, "{writes:#?}");
    server.stop().await.unwrap();
}

/// The connect-es server, killed (by its pid) when dropped.
struct NodeServer {
    child: Child,
    http1: u16,
    h2c: u16,
}

impl Drop for NodeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NodeServer {
    fn start(modules: &str, fds: &Path) -> NodeServer {
        let mut child = Command::new("node")
            .arg(format!("{INTEROP}/connect_server.mjs"))
            .arg("--descriptors")
            .arg(fds)
            .args(["--version", "0.1.9"])
            .env("ICHOR_NODE_MODULES", modules)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawning node");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ports: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("the server said {line:?}: {e}"));
        let port = |k: &str| u16::try_from(ports[k].as_u64().unwrap()).unwrap();
        NodeServer {
            http1: port("http1"),
            h2c: port("h2c"),
            child,
        }
    }
}

fn canned_client(port: u16, protocol: Protocol, token: Option<&str>) -> RemoteClient {
    let mut o = RemoteOptions::new(format!("http://127.0.0.1:{port}")).with_protocol(protocol);
    o.token = token.map(str::to_string);
    o.deadline = Duration::from_secs(10);
    RemoteClient::new(o).unwrap()
}

fn request(cluster: &str, kind: OperationKind, target: Option<&str>) -> OperationRequest {
    let mut r = OperationRequest::new("default", Some(cluster), kind);
    r.target = target.map(str::to_string);
    r
}

/// Every answer and refusal of the canned server, decoded into the domain types.
async fn reads_every_answer(c: &RemoteClient, what: &str) {
    let op = reads_operations(c, what).await;
    reads_plans(c, what).await;
    writes(c, &op, what).await;
    reads_clusters(c, what).await;
}

/// The operation list and one operation, every field decoded; the server's version noted.
async fn reads_operations(c: &RemoteClient, what: &str) -> Operation {
    assert_eq!(c.server_version(), ServerVersion::NotYet, "{what}");
    let ops = c.list_operations(Some("default")).await.unwrap();
    assert_eq!(
        c.server_version(),
        ServerVersion::Known("0.1.9".into()),
        "{what}"
    );
    assert_eq!(ops.len(), 1, "{what}");
    let op = &ops[0];
    assert_eq!(
        (op.name.as_str(), op.cluster.as_str(), op.kind),
        ("prod-eu-talos-7xk2p", "prod-eu", Some(OperationKind::Talos)),
        "{what}"
    );
    assert_eq!(
        (op.phase.clone(), op.generation, op.uid.as_str()),
        (Phase::Running, 3, "6f1c2a9e-0000-4000-8000-000000000001"),
        "{what}"
    );
    assert_eq!(op.request_id.as_deref(), Some("req-7xk2p"), "{what}");
    assert_eq!(op.actor.as_deref(), Some("alice@example.com"), "{what}");
    assert_eq!(
        (op.current.as_deref(), op.target.as_deref()),
        (Some("v1.9.2"), Some("v1.9.3")),
        "{what}"
    );
    machines_and_conditions(op, what);
    let got = c
        .get_operation("default", "prod-eu-talos-7xk2p")
        .await
        .unwrap();
    assert_eq!(&got, op, "{what}");
    got
}

/// The canned operation's machines and conditions, as decoded.
fn machines_and_conditions(op: &Operation, what: &str) {
    let phases: Vec<_> = op.machines.iter().map(|m| m.phase.clone()).collect();
    assert_eq!(
        phases,
        [MachinePhase::Completed, MachinePhase::Running],
        "{what}"
    );
    assert_eq!(
        op.machines[0].finished_at.map(|t| t.to_string()).as_deref(),
        Some("2026-11-29T10:04:00Z"),
        "{what}"
    );
    assert_eq!(op.machines[1].finished_at, None, "{what}");
    assert_eq!(op.conditions[0].type_, "ClusterLockHeld", "{what}");
}

/// A plan, and a plan blocked by a structured refusal.
async fn reads_plans(c: &RemoteClient, what: &str) {
    let plan = c
        .plan_operation(&request("staging", OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    assert_eq!(plan.effect, OperationEffect::Reboot, "{what}");
    let steps: Vec<Vec<&str>> = plan
        .steps
        .iter()
        .map(|s| s.iter().map(|m| m.name.as_str()).collect())
        .collect();
    assert_eq!(
        steps,
        [vec!["staging-cp1"], vec!["staging-w01", "staging-w02"]],
        "{what}"
    );
    assert_eq!(plan.held[0].reason, "disk replacement", "{what}");
    assert_eq!(
        plan.spec_change.as_ref().map(|s| s.field.as_str()),
        Some("spec.talosVersion"),
        "{what}"
    );
    assert_eq!(plan.blocked, None, "{what}");
    assert_eq!(plan.fingerprint, "0123456789abcdef", "{what}");

    let blocked = c
        .plan_operation(&request("prod-eu", OperationKind::Shutdown, None))
        .await
        .unwrap();
    let refusal = blocked.blocked.expect("the shutdown's plan is blocked");
    assert_eq!(refusal.reason, Reason::UnfinishedOperation, "{what}");
    assert_eq!(
        refusal.params.get("operation").map(String::as_str),
        Some("prod-eu-talos-7xk2p"),
        "{what}"
    );
}

/// A start, a pause and a delete, bound to what was confirmed.
async fn writes(c: &RemoteClient, op: &Operation, what: &str) {
    let created = c
        .create_operation(&request("staging", OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap();
    assert_eq!(created.operation.name, "staging-talos-q9w8e", "{what}");
    assert_eq!(created.operation.phase, Phase::Unknown, "{what}");
    assert!(!created.found, "{what}");
    assert_eq!(
        created.spec_written.map(|s| s.to),
        Some("v1.9.3".into()),
        "{what}"
    );

    let confirmed = Confirmed {
        uid: op.uid.clone(),
        generation: op.generation,
        finished: false,
        paused: false,
    };
    let paused = c
        .set_operation_paused("default", &op.name, true, Some(&confirmed))
        .await
        .unwrap();
    assert!(paused.paused, "{what}");
    assert_eq!(paused.phase, Phase::Paused, "{what}");
    assert_eq!(
        paused.paused_by.as_deref(),
        Some("alice@example.com"),
        "{what}"
    );
    assert_eq!(paused.generation, 4, "{what}");
    c.delete_operation("default", &op.name, Some(&confirmed))
        .await
        .unwrap();
}

/// What the caller may do, and the clusters.
async fn reads_clusters(c: &RemoteClient, what: &str) {
    let may = c.permissions("default").await.unwrap();
    assert_eq!(
        (may.start, may.pause, may.delete),
        (true, true, false),
        "{what}"
    );

    let clusters = c.list_clusters(Some("default")).await.unwrap();
    assert_eq!(clusters.len(), 1, "{what}");
    let cl = &clusters[0];
    assert_eq!(cl.ichor_version.as_deref(), Some("v0.14.2"), "{what}");
    let orders: Vec<_> = cl.machines.iter().map(|m| m.order).collect();
    assert_eq!(orders, [Some(1), Some(10), None], "{what}");
    assert_eq!(
        cl.machines[2].hold.as_deref(),
        Some("disk replacement"),
        "{what}"
    );
    assert!(!cl.machines[2].approved, "{what}");
    assert_eq!(
        cl.tracking.as_ref().map(|t| t.tool.as_str()),
        Some("Argo CD"),
        "{what}"
    );
    assert_eq!(
        cl.active_operation.as_ref().map(|a| a.phase.clone()),
        Some(Phase::Running),
        "{what}"
    );
    assert_eq!(
        &c.get_cluster("default", "prod-eu").await.unwrap(),
        cl,
        "{what}"
    );
}

/// Every refusal of the canned server: the code, the reason and its parameters.
async fn reads_every_refusal(c: &RemoteClient, what: &str) {
    let e = c
        .create_operation(&request("prod-eu", OperationKind::Talos, Some("v1.9.3")))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::FailedPrecondition, Some(Reason::UnfinishedOperation)),
        "{what}: {e:?}"
    );
    for (k, v) in [
        ("operation", "prod-eu-talos-7xk2p"),
        ("cluster", "prod-eu"),
        ("phase", "Running"),
        ("kind", "talos"),
    ] {
        assert_eq!(e.param(k), Some(v), "{what}: {k} in {e:?}");
    }
    assert!(e.message.contains("has not completed"), "{what}: {e:?}");

    let e = c.list_operations(Some("forbidden")).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::PermissionDenied, Some(Reason::PermissionDenied)),
        "{what}: {e:?}"
    );
    assert_eq!(e.param("what"), Some("listing operations"), "{what}");

    let e = c.get_operation("default", "gone").await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::NotFound, Some(Reason::OperationNotFound)),
        "{what}: {e:?}"
    );
    assert_eq!(e.param("name"), Some("gone"), "{what}");

    let e = c.get_cluster("default", "nope").await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::NotFound, Some(Reason::ClusterNotFound)),
        "{what}: {e:?}"
    );

    // A refusal without details: the code and the words, no reason.
    let e = c.list_operations(Some("bare")).await.unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (Code::Unavailable, None),
        "{what}: {e:?}"
    );
    assert!(e.message.contains("not answering"), "{what}: {e:?}");
}

#[tokio::test]
async fn the_dashboards_client_reads_every_answer_and_refusal_of_a_connect_es_server() {
    let Some(modules) = node_modules() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = NodeServer::start(&modules, &descriptors(dir.path()));
    for (protocol, port, what) in [
        (Protocol::Connect, server.http1, "Connect over HTTP/1.1"),
        (Protocol::Grpc, server.h2c, "gRPC over h2c"),
    ] {
        let c = canned_client(port, protocol, Some("canned-token"));
        reads_every_answer(&c, what).await;
        reads_every_refusal(&c, what).await;
        // No token: the server's refusal, and the client says how to give one.
        let e = canned_client(port, protocol, None)
            .list_operations(Some("default"))
            .await
            .unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::Unauthenticated, Some(Reason::Unauthenticated)),
            "{what}: {e:?}"
        );
        assert_eq!(e.param("via"), Some("no-token"), "{what}");
    }
}
