//! Interop from outside Rust: a Python client generated from the project's .proto files with
//! grpcio-tools (tests/interop/client.py) lists clusters, plans and starts an operation against
//! the built binary's `serve --demo`, and follows it to completion. Before the start it sends a
//! table of hostile requests (oversized, empty, traversal and escape-laden fields, unknown kinds,
//! negative and huge numbers): each is refused INVALID_ARGUMENT with its reason and a grpc-message
//! under 200 bytes (OUT_OF_RANGE for the one over the server's 1 MiB message limit, refused by
//! the transport before the service sees it), nothing is written, and the server keeps
//! answering. The server then stops on SIGTERM and exits cleanly.
//!
//! Needs `$ICHOR_PYTHON`: a Python with grpcio, grpcio-tools, grpcio-status and
//! grpcio-reflection (`.ci/run` makes one). Without it the test is skipped with a notice,
//! unless `$CI` is set, when it fails.

use crate::common;

use common::process::Process;
use ichor_demo::apiserver::auth::users;
use std::process::Command;
use std::time::Duration;

pub(crate) fn python() -> Option<String> {
    match std::env::var("ICHOR_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            if std::env::var_os("CI").is_some() {
                panic!(
                    "ICHOR_PYTHON is not set but CI is: the interop test must run in CI (.ci/run sets it up)"
                );
            }
            eprintln!(
                "skipping the Python interop test: set ICHOR_PYTHON to a Python with grpcio and grpcio-tools (.ci/run does)"
            );
            None
        }
    }
}

#[test]
fn a_python_client_generated_from_the_protos_starts_and_follows_an_operation() {
    let Some(python) = python() else {
        return;
    };
    let log = tempfile::NamedTempFile::new().unwrap();
    let (server, first) = Process::start(
        &[
            "serve",
            "--demo",
            "--demo-speed",
            "20",
            "--listen",
            "127.0.0.1:0",
        ],
        log.path(),
    );
    let addr = first
        .strip_prefix("serving on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/client.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(&addr)
        .args(["--token", users::OPERATOR_TOKEN])
        .output()
        .unwrap_or_else(|e| panic!("running {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the Python client failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("refused as expected: TARGET_NOT_TAKEN"),
        "{stdout}"
    );
    assert!(
        stdout.contains("requests refused, nothing written, the server still answers"),
        "{stdout}"
    );
    assert!(
        stdout.contains("by operator"),
        "the actor is the token's user: {stdout}"
    );
    assert!(stdout.contains("phase=Completed"), "{stdout}");
    assert!(stdout.trim_end().ends_with("OK"), "{stdout}");

    // SIGTERM: the server stops gracefully and exits 0.
    let status = server.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status after SIGTERM: {status}");
    let log = std::fs::read_to_string(log.path()).unwrap();
    assert!(log.contains("server stopped"), "{log}");
    assert!(!log.contains(users::OPERATOR_TOKEN), "no token in the log");
    // Hostile input is quoted back short: no line of the server's log carries it whole.
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 2000, "a log line of {longest} bytes");
}

/// grpcio where the hostile-load issue found serve wanting (tests/interop/hostile.py): bodies
/// that are not messages are INVALID_ARGUMENT.
#[test]
fn grpcio_finds_malformed_bodies_refused_as_invalid_argument() {
    hostile(&["malformed"]);
}

/// grpcio with gzip: its requests compressed, its answers asked for compressed.
#[test]
fn grpcio_calls_with_gzip_are_answered() {
    hostile(&["gzip"]);
}

/// grpcio-reflection: a file comes with its imports; an unknown symbol is answered in the
/// stream, which stays open.
#[test]
fn grpcio_reflection_gets_files_with_their_imports_and_errors_in_the_stream() {
    hostile(&["reflection"]);
}

/// grpcio-reflection: both versions of reflection are listed, and a field and an enum value
/// resolve to their file (grpcio's descriptor database asks that way).
#[test]
fn grpcio_reflection_lists_both_versions_and_resolves_fields_and_enum_values() {
    hostile(&["symbols"]);
}

/// grpc.health.v1 whole, with stubs generated from proto/grpc/health/v1/health.proto: Check,
/// List, and a Watch of an unknown service that says SERVICE_UNKNOWN and stays open.
#[test]
fn grpcio_finds_the_health_service_whole() {
    hostile(&["health"]);
}

/// Runs tests/interop/hostile.py's `checks` against the built binary's `serve --demo`.
fn hostile(checks: &[&str]) {
    let Some(python) = python() else {
        return;
    };
    let log = tempfile::NamedTempFile::new().unwrap();
    let (server, first) =
        Process::start(&["serve", "--demo", "--listen", "127.0.0.1:0"], log.path());
    let addr = first.strip_prefix("serving on ").unwrap().to_string();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/hostile.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(&addr)
        .args(["--token", users::VIEWER_TOKEN])
        .args(checks)
        .output()
        .unwrap_or_else(|e| panic!("running {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "hostile.py {checks:?}:\n{stdout}\n{stderr}"
    );
    for check in checks {
        assert!(stdout.contains(&format!("{check}: OK")), "{stdout}");
    }
    let status = server.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status after SIGTERM: {status}");
}

/// The Python `kubernetes` client against `demo-cluster` (tests/interop/kube_client.py): the
/// CRDs, its dynamic client's `server_side_apply` twice with a changed field, a second
/// manager's conflict (409, nothing written), a forced apply, and a list sent as its default
/// merge patch (400). Needs the `kubernetes` package in `$ICHOR_PYTHON` (`.ci/run`).
#[test]
fn the_python_kubernetes_client_applies_server_side() {
    let Some(python) = python() else {
        return;
    };
    let dc = crate::kubectl::start();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/kube_client.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(&dc.kubeconfig)
        .output()
        .unwrap_or_else(|e| panic!("running {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "kube_client.py:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("conflict: 409 naming .spec.maxUnavailable and python-a"),
        "{stdout}"
    );
    assert!(stdout.trim_end().ends_with("OK"), "{stdout}");
}
