//! kubectl's habits, through the built binary against the demo cluster's API served over HTTP
//! (a kubeconfig per demo user) and a `serve` process: the connection flags before the command
//! as after it, a flag the command does not act on refused by name, `-o name`, `-o jsonpath`,
//! `--no-headers`, `--as` / `--as-group` (acted on in-process, refused where the route cannot,
//! nothing written when refused), `version`, the manual page and `RUST_LOG`.

use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::demo::DemoCluster;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// An operation of the demo's that stays as it is at the slowest demo speed (staging's running
/// upgrade: its next machine step is minutes away).
const OP: &str = "staging-talos-x7k2p";

/// The demo cluster (its controller at the slowest speed) served over HTTP on loopback, with a
/// kubeconfig naming a context for each demo user.
pub struct Demo {
    pub api: EmbeddedApi,
    _demo: DemoCluster,
    _rt: tokio::runtime::Runtime,
    pub home: tempfile::TempDir,
    pub kubeconfig: String,
}

impl Demo {
    pub fn new() -> Demo {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let demo = {
            let _in = rt.enter();
            DemoCluster::start(0.1).unwrap()
        };
        let api = demo.api.clone();
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("kubeconfig");
        let served = api.clone();
        let addr = rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(ichor_demo::apiserver::server::serve(served, listener));
            addr
        });
        ichor_demo::apiserver::server::write_kubeconfig(&path, &addr).unwrap();
        Demo {
            api,
            _demo: demo,
            _rt: rt,
            kubeconfig: path.display().to_string(),
            home,
        }
    }

    /// `ichor-tui ARGS` without a terminal (stdin from /dev/null), `env` added to a clean
    /// environment whose HOME is the demo's: the exit code, stdout and stderr.
    pub fn run(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        run_in(self.home.path(), args, env)
    }
}

/// `ichor-tui ARGS` in a clean environment whose HOME is `home`, within 90 s.
pub fn run_in(home: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("LANG", "en_US.UTF-8")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.output());
    });
    let out = rx
        .recv_timeout(Duration::from_secs(90))
        .unwrap_or_else(|_| panic!("ichor-tui {args:?} did not exit within 90 s"))
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

#[test]
fn connection_flags_before_the_command_are_the_flags_after_it() {
    let d = Demo::new();
    let k = d.kubeconfig.as_str();
    let before = d.run(
        &[
            "--kubeconfig",
            k,
            "-n",
            "default",
            "--backend",
            "in-process",
            "op",
            "list",
            "-o",
            "name",
        ],
        &[],
    );
    let after = d.run(
        &[
            "op",
            "list",
            "-o",
            "name",
            "--kubeconfig",
            k,
            "-n",
            "default",
            "--backend",
            "in-process",
        ],
        &[],
    );
    let between = d.run(
        &[
            "op",
            "--kubeconfig",
            k,
            "list",
            "-o",
            "name",
            "-n",
            "default",
            "--backend",
            "in-process",
        ],
        &[],
    );
    assert_eq!(before.0, 0, "{}", before.2);
    assert_eq!(before, after);
    assert_eq!(before, between);
    let names: Vec<&str> = before.1.lines().collect();
    assert!(names.len() >= 5, "{names:?}");
    assert!(names.contains(&format!("talosoperation.ichor.maesh.dev/{OP}").as_str()));
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("talosoperation.ichor.maesh.dev/"))
    );
    // -A before `op list`: every namespace, the NAMESPACE column; --no-headers drops the header.
    let (code, out, err) = d.run(
        &[
            "-A",
            "--kubeconfig",
            k,
            "--backend",
            "in-process",
            "op",
            "list",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NAMESPACE   NAME"), "{out}");
    let (_, bare, _) = d.run(
        &[
            "-A",
            "--kubeconfig",
            k,
            "--backend",
            "in-process",
            "op",
            "list",
            "--no-headers",
        ],
        &[],
    );
    assert_eq!(
        bare.lines().collect::<Vec<_>>(),
        out.lines().skip(1).collect::<Vec<_>>()
    );
    assert!(
        bare.lines()
            .any(|l| l.starts_with("default") && l.contains(OP)),
        "{bare}"
    );
    // `ichor-tui --kubeconfig K serve` is `ichor-tui serve --kubeconfig K`: its help lists its
    // own flags only.
    let (code, help, _) = d.run(&["serve", "--help"], &[]);
    assert_eq!(code, 0);
    assert!(
        help.contains("--kubeconfig") && !help.contains("--namespace"),
        "{help}"
    );
    assert!(!help.contains("--as "), "{help}");
    let (_, help, _) = d.run(&["op", "list", "--help"], &[]);
    assert!(
        help.contains("--namespace") && help.contains("--as <USER>"),
        "{help}"
    );
    assert!(
        help.contains("--no-headers") && !help.contains("--color"),
        "{help}"
    );
}

#[test]
fn a_flag_the_command_does_not_act_on_is_refused_by_name() {
    let d = Demo::new();
    for (args, says) in [
        (
            &["--color", "never", "op", "list"][..],
            "--color does nothing for `ichor-tui operation`",
        ),
        (
            &["-n", "default", "serve"],
            "--namespace does nothing for `ichor-tui serve`",
        ),
        (
            &["-A", "op", "get", OP],
            "--all-namespaces does nothing for `ichor-tui operation`",
        ),
        (
            &["--server", "http://127.0.0.1:9", "completion", "bash"],
            "--server does nothing",
        ),
    ] {
        let (code, out, err) = d.run(args, &[]);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.starts_with("error: ") && err.contains(says),
            "{args:?}: {err}"
        );
    }
    assert!(d.api.write_log().is_empty() || only_controller(&d.api));
}

/// Whether every write so far is the simulated controller's.
fn only_controller(api: &EmbeddedApi) -> bool {
    use ichor_demo::apiserver::auth::users::CONTROLLER;
    api.write_log().iter().all(|w| w.user == CONTROLLER)
}

#[test]
fn output_name_and_jsonpath_over_the_json_shape() {
    let d = Demo::new();
    let k = d.kubeconfig.as_str();
    let reach = ["--kubeconfig", k, "--backend", "in-process"];
    let with = |rest: &[&str]| {
        let args: Vec<&str> = rest.iter().chain(reach.iter()).copied().collect();
        d.run(&args, &[])
    };
    let (code, names, err) = with(&["op", "list", "-o", "name"]);
    assert_eq!(code, 0, "{err}");
    let (code, listed, err) = with(&[
        "op",
        "list",
        "-o",
        "jsonpath={range .items[*]}{.name}{\"\\n\"}{end}",
    ]);
    assert_eq!(code, 0, "{err}");
    let prefixed: Vec<String> = listed
        .lines()
        .map(|n| format!("talosoperation.ichor.maesh.dev/{n}"))
        .collect();
    assert_eq!(prefixed, names.lines().collect::<Vec<_>>());
    let (code, one, err) = with(&["op", "get", OP, "-o", "jsonpath={.name} {.cluster} {.kind}"]);
    assert_eq!(
        (code, one.as_str()),
        (0, "staging-talos-x7k2p staging talos"),
        "{err}"
    );
    let (code, one, _) = with(&["op", "get", OP, "-o", "name"]);
    assert_eq!(
        (code, one.trim()),
        (0, "talosoperation.ichor.maesh.dev/staging-talos-x7k2p")
    );
    let filter = format!("jsonpath={{.kind}}: {{.items[?(@.name==\"{OP}\")].cluster}}");
    let (code, kinds, _) = with(&["op", "list", "-o", &filter]);
    assert_eq!((code, kinds.as_str()), (0, "OperationList: staging"));
    // A broken template is a usage error, said in a line before anything is asked.
    let (code, out, err) = with(&["op", "list", "-o", "jsonpath={range .items[*]}{.name}"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("{range} without {end}"), "{err}");
}

#[test]
fn as_impersonates_in_process_and_is_refused_where_it_cannot() {
    use ichor_demo::apiserver::auth::users::{OPERATOR, VIEWER};
    let d = Demo::new();
    let k = d.kubeconfig.as_str();
    // The viewer may not pause: refused by the API as the viewer, nothing written.
    let (code, _, err) = d.run(
        &[
            "--kubeconfig",
            k,
            "--as",
            "viewer",
            "--as-group",
            "ichor:viewers",
            "op",
            "pause",
            OP,
            "--yes",
        ],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("viewer"),
        "the refusal names whom it acted as: {err}"
    );
    assert!(d.api.writes_by(VIEWER).is_empty());
    assert!(
        only_controller(&d.api),
        "nothing written: {:?}",
        d.api.write_log()
    );
    // The operator, with its group, may: the write is the operator's, not the admin's.
    let (code, out, err) = d.run(
        &[
            "op",
            "pause",
            OP,
            "--yes",
            "--kubeconfig",
            k,
            "--as",
            "operator",
            "--as-group",
            "ichor:operators",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let by_operator = d.api.writes_by(OPERATOR);
    assert_eq!(by_operator.len(), 1, "{:?}", d.api.write_log());
    assert!(d.api.writes_by("admin").is_empty());
    // Where impersonation cannot be done, it is refused before anything is asked.
    for (args, says) in [
        (
            &[
                "--server",
                "http://127.0.0.1:9",
                "--as",
                "viewer",
                "op",
                "list",
            ][..],
            "--as cannot be used with --server",
        ),
        (
            &[
                "--kubeconfig",
                k,
                "--backend",
                "remote",
                "--as",
                "viewer",
                "op",
                "list",
            ],
            "--backend remote",
        ),
        (
            &[
                "--kubeconfig",
                k,
                "--as-group",
                "ichor:viewers",
                "op",
                "list",
            ],
            "needs --as USER",
        ),
        (
            &["--demo", "--as", "viewer", "op", "list"],
            "--as needs a kubeconfig",
        ),
    ] {
        let (code, out, err) = d.run(args, &[]);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(d.api.writes_by(OPERATOR).len(), 1, "nothing more written");
}

#[test]
fn version_names_the_commit_and_the_route_and_the_servers_version() {
    let d = Demo::new();
    let k = d.kubeconfig.as_str();
    let commit = git_commit();
    let (code, out, err) = d.run(&["version", "--client"], &[]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!("Client Version: {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(lines[1], format!("Commit: {commit}"));
    assert!(lines[2].starts_with("Build Date: 20"), "{out}");
    assert_eq!(lines.len(), 3, "nothing contacted: {out}");
    let (_, flag, _) = d.run(&["--version"], &[]);
    assert!(
        flag.starts_with(&format!(
            "ichor-tui {} (commit {commit}, built 20",
            env!("CARGO_PKG_VERSION")
        )),
        "{flag}"
    );
    // In-process: the service is this binary; the Kubernetes API says its own version.
    let (code, out, err) = d.run(
        &[
            "--kubeconfig",
            k,
            "--backend",
            "in-process",
            "version",
            "-o",
            "json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["clientVersion"]["commit"], commit.as_str());
    assert_eq!(v["serverVersion"]["route"]["kind"], "in-process");
    assert_eq!(v["serverVersion"]["route"]["context"], "ichor-demo");
    assert_eq!(v["serverVersion"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        v["serverVersion"]["kubernetesVersion"]
            .as_str()
            .is_some_and(|s| s.starts_with('v')),
        "{out}"
    );
    // A server names its version in every answer.
    let log = d.home.path().join("serve.log");
    let (_serve, first) = crate::common::process::Process::start(
        &[
            "serve",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--allow-anonymous",
        ],
        &log,
    );
    let url = format!(
        "http://{}",
        first.trim().strip_prefix("serving on ").unwrap()
    );
    let (code, out, err) = d.run(&["version", "--server", &url, "-o", "yaml"], &[]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
    assert_eq!(
        v["serverVersion"]["route"],
        serde_json::json!({"kind": "server", "url": url})
    );
    assert_eq!(
        v["serverVersion"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{out}"
    );
    assert_eq!(
        v["serverVersion"]["kubernetesVersion"],
        serde_json::Value::Null
    );
    // Nothing answers: the client's part, then the error, exit 1.
    let (code, out, err) = d.run(
        &[
            "version",
            "--server",
            "http://127.0.0.1:9",
            "--call-timeout",
            "2",
        ],
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Client Version: ") && !out.contains("Server Version"),
        "{out}"
    );
    assert!(
        err.starts_with("ichor-tui: the server's version: not reached: "),
        "{err}"
    );
}

/// This checkout's commit as build.rs gives it: "unknown" outside a git checkout.
fn git_commit() -> String {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => "unknown".into(),
    }
}

#[test]
fn the_manual_page_names_every_command_and_renders() {
    let home = tempfile::tempdir().unwrap();
    let (code, page, err) = run_in(home.path(), &["man"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH ichor-tui 1"),
        "{page}"
    );
    for sub in [
        "demo\\-cluster",
        "serve",
        "upgrade",
        "cni",
        "cluster",
        "operation",
        "version",
        "completion",
        "man",
    ] {
        assert!(
            page.contains(&format!("ichor\\-tui\\-{sub}(1)")),
            "{sub} in:\n{page}"
        );
    }
    // man renders it (groff comes with man-db).
    let mut man = Command::new("man")
        .args(["-l", "-"])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("man runs");
    use std::io::Write as _;
    man.stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let shown = man.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(
        text.contains("ichor-tui-operation(1)") && text.contains("--kubeconfig"),
        "{text}"
    );
    // --dir: a page for each command, as a package installs them.
    let dir = home.path().join("man1");
    let (code, _, err) = run_in(
        home.path(),
        &["man", "--dir", &dir.display().to_string()],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    for page in [
        "ichor-tui.1",
        "ichor-tui-operation.1",
        "ichor-tui-operation-list.1",
        "ichor-tui-cluster-rotate-ca.1",
    ] {
        assert!(dir.join(page).exists(), "{page}");
    }
}

#[test]
fn rust_log_is_honoured_beside_ichor_tui_log() {
    let home = tempfile::tempdir().unwrap();
    let lines = |env: &[(&str, &str)], name: &str| {
        let log = home.path().join(name);
        let log_arg = log.display().to_string();
        let (code, _, err) = run_in(
            home.path(),
            &["--demo", "op", "list", "--log-file", &log_arg],
            env,
        );
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(&log).unwrap_or_default()
    };
    let default = lines(&[], "default.log");
    assert!(default.contains(" INFO "), "{default}");
    assert!(!default.contains(" DEBUG "), "{default}");
    let quiet = lines(&[("RUST_LOG", "error")], "quiet.log");
    assert!(!quiet.contains(" INFO "), "{quiet}");
    let debug = lines(&[("RUST_LOG", "debug")], "debug.log");
    assert!(debug.contains(" DEBUG "), "RUST_LOG=debug");
    let ours = lines(
        &[("RUST_LOG", "error"), ("ICHOR_TUI_LOG", "info")],
        "ours.log",
    );
    assert!(ours.contains(" INFO "), "ICHOR_TUI_LOG wins: {ours}");
}
