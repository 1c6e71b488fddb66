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

#[path = "cli_habits/about.rs"]
mod about;
#[path = "cli_habits/man_pages.rs"]
mod man_pages;

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
    // The pause, and the Event that records it: both the operator's.
    let by_operator = d.api.writes_by(OPERATOR);
    let resources: Vec<&str> = by_operator.iter().map(|w| w.resource.as_str()).collect();
    assert_eq!(
        resources,
        ["talosoperations", "events"],
        "{:?}",
        d.api.write_log()
    );
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
    assert_eq!(
        d.api.writes_by(OPERATOR).len(),
        by_operator.len(),
        "nothing more written"
    );
}

/// Where the service is looked for is said once on standard error, then why the cluster is
/// read directly, once; before an output for programs (`-o name|json|yaml|jsonpath`, a JSON
/// report), neither.
#[test]
fn the_route_is_said_once_and_not_before_an_output_for_programs() {
    let d = Demo::new();
    let k = d.kubeconfig.as_str();
    let (code, out, err) = d.run(&["op", "list", "--kubeconfig", k], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(OP), "{out}");
    assert_eq!(err.matches("Looking for ichor-ui").count(), 1, "{err}");
    assert_eq!(err.matches("read directly").count(), 1, "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
    for o in ["name", "json", "yaml", "jsonpath={.kind}"] {
        let (code, out, err) = d.run(&["op", "list", "-o", o, "--kubeconfig", k], &[]);
        assert_eq!(code, 0, "-o {o}: {err}");
        assert!(!out.is_empty(), "-o {o}");
        assert_eq!(err, "", "-o {o}");
    }
    let (code, out, err) = d.run(&["op", "get", OP, "-o", "json", "--kubeconfig", k], &[]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let (code, _, err) = d.run(&["op", "report", OP, "-o", "json", "--kubeconfig", k], &[]);
    assert_eq!((code, err.as_str()), (0, ""));
}

/// `op --help` names every verb in its summary, `report` included.
#[test]
fn the_operation_commands_summary_names_every_verb() {
    let home = tempfile::tempdir().unwrap();
    let (code, help, _) = run_in(home.path(), &["op", "--help"], &[]);
    assert_eq!(code, 0);
    let summary = help.lines().next().unwrap_or_default();
    for verb in ["list", "get", "pause", "resume", "delete", "report"] {
        assert!(summary.contains(verb), "{verb} in {summary}");
    }
}
