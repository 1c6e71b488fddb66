//! The commands as the built binary runs them: in a pty (the y/N question and the typed name
//! answered with keys), without a terminal (one line naming --yes, exit 2, nothing written),
//! and the exit codes a pipeline sees (0 done, 1 refused, 2 usage, 3 the operation failed),
//! against the embedded API served over HTTP (in-process, with a kubeconfig) and `serve`.

use crate::common::lines::{Fd, Lines, after_clock};
use crate::common::pty;

use crate::common::{names, server};
use ichor_demo::apiserver::EmbeddedApi;
use pty::{Answers, Pty, Spawn};
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// The embedded API over HTTP on loopback, a kubeconfig for its admin, and a runtime that
/// keeps them (and the test's servers and controller) running.
pub(crate) struct Cluster {
    pub(crate) api: EmbeddedApi,
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) home: tempfile::TempDir,
    pub(crate) kubeconfig: String,
    /// The API's URL, as the kubeconfig names it.
    pub(crate) url: String,
}

impl Cluster {
    pub(crate) fn new() -> Cluster {
        let api = super::world();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
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
        Cluster {
            api,
            rt,
            kubeconfig: path.display().to_string(),
            url: format!("http://{addr}"),
            home,
        }
    }

    /// The flags that reach the service in-process with the kubeconfig.
    fn reach(&self) -> Vec<String> {
        let log = self.home.path().join("log").display().to_string();
        [
            "--kubeconfig",
            &self.kubeconfig,
            "--backend",
            "in-process",
            "--log-file",
            &log,
        ]
        .map(str::to_string)
        .to_vec()
    }

    /// `ichor-tui ARGS` in a 120×30 pty.
    pub(crate) fn pty(&self, args: &[&str]) -> Pty {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend(self.reach());
        Spawn {
            binary: Path::new(BIN),
            args: all,
            env: Vec::new(),
            cols: 120,
            rows: 30,
            home: self.home.path(),
            answers: Answers::Narrow,
        }
        .start()
    }

    /// `ichor-tui ARGS` without a terminal (its own session, stdin from /dev/null): the exit
    /// code, stdout and stderr.
    pub(crate) fn run(&self, args: &[&str], reach: bool) -> (i32, String, String) {
        use std::os::unix::process::CommandExt as _;
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("LANG", "en_US.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if reach {
            cmd.args(self.reach());
        }
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of this process.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let until = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < until, "ichor-tui {args:?} did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        let (mut out, mut err) = (String::new(), String::new());
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(!err.contains("panicked"), "{err}");
        (status.code().unwrap_or(-1), out, err)
    }

    pub(crate) fn written(&self) -> Vec<String> {
        names(&self.api.write_log())
    }
}

#[test]
fn the_y_n_question_in_a_terminal_n_writes_nothing_y_starts() {
    let c = Cluster::new();
    let mut p = c.pty(&["upgrade", "talos", "1.9.3", "--cluster", "c1"]);
    p.wait_text("Start the Talos upgrade on cluster c1? [y/N]");
    let screen = p.screen();
    assert!(
        screen.contains("5 machines in 5 steps · v1.9.2 → v1.9.3"),
        "{screen}"
    );
    p.send("n\r");
    assert_eq!(p.wait_exit(), 1);
    assert!(p.screen().contains("Nothing was written."));
    assert!(c.written().is_empty(), "{:?}", c.written());
    // Enter alone is the default, No.
    let mut p = c.pty(&["upgrade", "talos", "1.9.3", "--cluster", "c1"]);
    p.wait_text("[y/N]");
    p.send("\r");
    assert_eq!(p.wait_exit(), 1);
    assert!(c.written().is_empty(), "{:?}", c.written());
    let mut p = c.pty(&["upgrade", "talos", "v1.9.3", "--cluster", "c1"]);
    p.wait_text("[y/N]");
    p.send("y\r");
    assert_eq!(p.wait_exit(), 0, "{}", p.screen());
    assert!(p.screen().contains("Started c1-talos-"), "{}", p.screen());
    let created = c
        .written()
        .iter()
        .filter(|w| w.starts_with("create talosoperations"))
        .count();
    assert_eq!(created, 1, "{:?}", c.written());
}

#[test]
fn a_shutdown_asks_for_the_name_typed_then_y_n() {
    let c = Cluster::new();
    let mut p = c.pty(&["cluster", "shutdown", "c1", "--lang", "ja"]);
    p.wait_text("確認のため、クラスター名 c1 を入力してください：");
    p.send("c2\r");
    assert_eq!(p.wait_exit(), 1);
    assert!(
        p.screen()
            .contains("「c2」は c1 ではありません。何も書き込んでいません。"),
        "{}",
        p.screen()
    );
    assert!(c.written().is_empty());
    let mut p = c.pty(&["cluster", "shutdown", "c1"]);
    p.wait_text("Type the cluster name c1 to confirm:");
    p.send("c1\r");
    p.wait_text("Start the Shutdown on cluster c1? [y/N]");
    p.send("y\r");
    assert_eq!(p.wait_exit(), 0, "{}", p.screen());
    assert!(
        p.screen().contains("Started c1-shutdown-"),
        "{}",
        p.screen()
    );
    let created = c
        .written()
        .iter()
        .filter(|w| w.starts_with("create talosoperations"))
        .count();
    assert_eq!(created, 1, "{:?}", c.written());
}

#[test]
fn without_a_terminal_a_write_needs_yes_and_exit_codes_are_as_documented() {
    let c = Cluster::new();
    super::seed(&c.api, "broken", "Paused", Some("machine c1-w-a failed"));
    for args in [
        &["upgrade", "talos", "1.9.3"][..],
        &["cni", "kube-proxy", "replaced"],
        &["cluster", "rotate-ca", "c1"],
        &["op", "delete", "broken"],
    ] {
        let (code, out, err) = c.run(args, true);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("Add --yes to confirm without the question."),
            "{err}"
        );
    }
    assert!(c.written().is_empty());
    // Usage: a flag that does not exist.
    assert_eq!(c.run(&["op", "list", "--bogus"], true).0, 2);
    // Refused: the resume of a failure pause, a get of nothing.
    let (code, _, err) = c.run(&["op", "resume", "broken", "--yes"], true);
    assert_eq!(code, 1);
    assert!(err.contains("resuming does nothing"), "{err}");
    assert_eq!(c.run(&["op", "get", "nothing"], true).0, 1);
    assert!(c.written().is_empty());
    // The operation failed: 3.
    let (code, out, err) = c.run(&["op", "get", "broken", "--watch"], true);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(err.contains("Machine c1-w-a failed"), "{err}");
    let (code, out, _) = c.run(&["op", "list", "-o", "json"], true);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["items"][0]["name"], "broken");
}

#[test]
fn follow_in_a_pipeline_exits_0_when_it_completes_over_serve_too() {
    let c = Cluster::new();
    let url = c.rt.block_on(async {
        let _ctrl = super::drive(&c.api);
        std::mem::forget(_ctrl);
        let running = server::start(&c.api, Default::default()).await;
        let url = running.url(false);
        std::mem::forget(running);
        url
    });
    let token = c.home.path().join("token");
    std::fs::write(&token, ichor_demo::apiserver::auth::users::ADMIN_TOKEN).unwrap();
    let token = token.display().to_string();
    let remote = [
        "--server",
        &url,
        "--token-file",
        &token,
        "--protocol",
        "grpc",
    ];
    let mut args = vec![
        "upgrade",
        "kubernetes",
        "1.33.0",
        "--cluster",
        "c1",
        "--yes",
        "--follow",
    ];
    args.extend(remote);
    let (code, out, err) = c.run(&args, false);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Following c1-kubernetes-"), "{out}");
    assert!(out.trim_end().ends_with("completed."), "{out}");
    let mut args = vec!["op", "list"];
    args.extend(remote);
    let (code, out, _) = c.run(&args, false);
    assert_eq!(code, 0);
    assert!(out.contains("Completed"), "{out}");
}

/// The first line on stderr that contains `want`; the process is then killed.
fn stderr_line(args: &[&str], want: &str) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env("LANG", "en_US.UTF-8");
    Lines::spawn(&mut cmd).wait(Fd::Err, want, |l| l.contains(want))
}

#[test]
fn an_unreachable_server_is_retried_with_the_dashboards_words() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("log").display().to_string();
    // Nothing listens on port 1: connection refused, retried (for 10 minutes) and said so.
    let args = [
        "op",
        "list",
        "--server",
        "http://127.0.0.1:1",
        "--log-file",
        &log,
    ];
    let line = stderr_line(&args, "retrying");
    // The time it is said at first, as the lines of a follow.
    assert!(
        after_clock(&line, " ").starts_with("ichor-ui server not answering, retrying in "),
        "{line}"
    );
    let mut ja = args.to_vec();
    ja.extend(["--lang", "ja"]);
    let line = stderr_line(&ja, "再試行");
    assert!(
        line.contains(" から応答がありません（ichor-ui サーバー）。"),
        "{line}"
    );
}

/// A proxy in front of `target` whose every answer names server version 9.0.0.
async fn skewed(target: std::net::SocketAddr) -> std::net::SocketAddr {
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client: Client<_, hyper::body::Incoming> =
        Client::builder(TokioExecutor::new()).build_http();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let client = client.clone();
            let svc =
                hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let client = client.clone();
                    async move {
                        let (mut parts, body) = req.into_parts();
                        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
                        parts.uri = format!("http://{target}{path}").parse().unwrap();
                        parts.version = http::Version::HTTP_11;
                        let mut resp = client
                            .request(http::Request::from_parts(parts, body))
                            .await?;
                        resp.headers_mut()
                            .insert("ichor-version", http::HeaderValue::from_static("9.0.0"));
                        Ok::<_, hyper_util::client::legacy::Error>(resp)
                    }
                });
            tokio::spawn(async move {
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

#[test]
fn a_server_too_far_from_this_version_gets_no_write_with_yes_too() {
    let c = Cluster::new();
    let url = c.rt.block_on(async {
        let running = server::start(&c.api, Default::default()).await;
        let proxy = skewed(running.addr).await;
        std::mem::forget(running);
        format!("http://{proxy}")
    });
    let token = c.home.path().join("token");
    std::fs::write(&token, ichor_demo::apiserver::auth::users::ADMIN_TOKEN).unwrap();
    let token = token.display().to_string();
    let remote = ["--server", url.as_str(), "--token-file", &token];
    let with = |args: &[&'static str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(remote);
        c.run(&all, false)
    };
    // The starts first, on a cluster where they would go ahead; then the writes to an operation.
    let starts = [
        &["upgrade", "talos", "1.9.3", "--cluster", "c1", "--yes"][..],
        &["cluster", "shutdown", "c1", "--yes"],
    ];
    for (i, args) in starts
        .into_iter()
        .chain([
            &["op", "pause", "run", "--yes"][..],
            &["op", "delete", "run", "--yes"],
        ])
        .enumerate()
    {
        if i == 2 {
            super::seed(&c.api, "run", "Running", None);
            // Reads work.
            let (code, out, err) = with(&["op", "list"]);
            assert_eq!(code, 0, "{err}");
            assert!(out.contains("run"), "{out}");
        }
        let (code, _, err) = with(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains("9.0.0"), "{args:?}: {err}");
    }
    assert!(c.written().is_empty(), "{:?}", c.written());
}
