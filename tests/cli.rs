//! The binary at its edges: started without a terminal, or with a flag, a config file or a
//! kubeconfig that is wrong, it says so in one line a person can act on, with no panic.

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ichor-tui");

/// What a run left: the exit code and stderr.
struct Exit {
    code: Option<i32>,
    stderr: String,
}

impl Exit {
    /// The one line on stderr; fails on more, or on a panic.
    fn line(&self) -> &str {
        assert!(
            !self.stderr.contains("panicked"),
            "no panic: {:?}",
            self.stderr
        );
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line on stderr: {:?}", self.stderr);
        lines[0]
    }
}

/// Runs `ichor-tui ARGS` in its own session (no controlling terminal, as under cron, CI or
/// `ssh` without `-t`), stdin from /dev/null and stdout piped, in a clean environment whose
/// HOME is `home`; at most 30 s.
fn run(home: &Path, args: &[&str]) -> Exit {
    use std::os::unix::process::CommandExt as _;
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .arg("--log-file")
        .arg(home.join("log"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("LANG", "en_US.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of this process.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ichor-tui {args:?} did not exit within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Exit {
        code: status.code(),
        stderr,
    }
}

fn write(dir: &Path, name: &str, text: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:1\n\
contexts:\n- name: alpha\n  context:\n    cluster: c\n    user: u\n- name: beta\n  context:\n    cluster: c\n    user: u\n\
current-context: alpha\nusers:\n- name: u\n  user:\n    token: t\n";

#[test]
fn without_a_terminal_the_dashboard_says_so_and_exits_2() {
    let home = tempfile::tempdir().unwrap();
    let exit = run(home.path(), &["--demo"]);
    assert_eq!(
        exit.line(),
        "ichor-tui needs a terminal: standard input and standard output are not terminals (run it from an interactive shell, or use `ssh -t`)"
    );
    assert_eq!(exit.code, Some(2));
    // The demo cluster was not even started: the check comes before any backend.
    let kcfg = write(home.path(), "kcfg", KUBECONFIG.as_bytes());
    let exit = run(home.path(), &["--kubeconfig", &kcfg]);
    assert!(exit.line().starts_with("ichor-tui needs a terminal: "));
    assert_eq!(exit.code, Some(2));
}

#[test]
fn subcommands_need_no_terminal() {
    let home = tempfile::tempdir().unwrap();
    let exit = run(home.path(), &["serve", "--listen", "not-an-address"]);
    assert_eq!(
        exit.line(),
        "ichor-tui: parsing --listen \"not-an-address\": an address and port: 127.0.0.1:8080, [::1]:8080, localhost:8080 (both loopbacks) or [::]:8080 (every address, IPv6 and IPv4)"
    );
    assert_eq!(exit.code, Some(1));
}

#[test]
fn a_config_file_named_by_the_flag_must_exist_and_parse() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("nope.toml").display().to_string();
    let exit = run(home.path(), &["--demo", "--config", &missing]);
    assert_eq!(
        exit.line(),
        format!("ichor-tui: config file {missing} (--config) does not exist")
    );
    assert_eq!(exit.code, Some(1));

    let bad = write(
        home.path(),
        "bad.toml",
        b"namespace = \"prod\"\ncolor = \"sometimes\"\n",
    );
    let exit = run(home.path(), &["--demo", "--config", &bad]);
    assert_eq!(
        exit.line(),
        format!(
            "ichor-tui: config file {bad}:2:9: unknown variant `sometimes`, expected one of `auto`, `always`, `never`"
        )
    );

    // The default file may be missing (HOME is empty), but not malformed.
    let dir = home.path().join("config").join("ichor-tui");
    std::fs::create_dir_all(&dir).unwrap();
    let default = write(&dir, "config.toml", b"read-only = maybe\n");
    let exit = run(home.path(), &["--demo"]);
    assert_eq!(
        exit.line(),
        format!(
            "ichor-tui: config file {default}:1:13: string values must be quoted, expected literal string"
        )
    );
}

#[test]
fn kubeconfig_errors_say_each_cause_once() {
    let home = tempfile::tempdir().unwrap();
    let exit = run(home.path(), &["--kubeconfig", "/nonexistent/kcfg"]);
    let io = std::fs::read("/nonexistent/kcfg").unwrap_err();
    assert_eq!(
        exit.line(),
        format!("ichor-tui: cannot read kubeconfig /nonexistent/kcfg: {io}")
    );
    assert_eq!(exit.code, Some(1));

    let latin1 = write(home.path(), "latin1", b"current-context: caf\xe9\n");
    assert_eq!(
        run(home.path(), &["--kubeconfig", &latin1]).line(),
        format!("ichor-tui: kubeconfig {latin1}: not UTF-8 text")
    );

    // kube's own reader panics on this one (index out of bounds).
    let odd = write(home.path(), "odd", b"\xff\xfeA");
    assert_eq!(
        run(home.path(), &["--kubeconfig", &odd]).line(),
        format!(
            "ichor-tui: kubeconfig {odd}: not UTF-16 text (an odd number of bytes after the byte-order mark)"
        )
    );

    let yaml = write(home.path(), "yaml", b"contexts:\n- name: [a\n");
    let line = run(home.path(), &["--kubeconfig", &yaml])
        .line()
        .to_string();
    assert!(
        line.starts_with(&format!("ichor-tui: kubeconfig {yaml}:2:")),
        "{line}"
    );

    // $KUBECONFIG is read when the flag is not given.
    let mut cmd_home = home.path().to_path_buf();
    cmd_home.push("h2");
    std::fs::create_dir_all(&cmd_home).unwrap();
    let exit = run(&cmd_home, &[]);
    let default = cmd_home.join(".kube").join("config");
    let io = std::fs::read(&default).unwrap_err();
    assert_eq!(
        exit.line(),
        format!(
            "ichor-tui: cannot read kubeconfig {}: {io}",
            default.display()
        )
    );
}

#[test]
fn a_context_that_does_not_exist_lists_the_contexts_there_are() {
    let home = tempfile::tempdir().unwrap();
    let kcfg = write(home.path(), "kcfg", KUBECONFIG.as_bytes());
    let want = format!(
        "ichor-tui: kubeconfig context \"nope\" not found in {kcfg} (contexts: alpha, beta)"
    );
    let exit = run(home.path(), &["--kubeconfig", &kcfg, "--context", "nope"]);
    assert_eq!(exit.line(), want);
    assert_eq!(exit.code, Some(1));
    // serve reads the kubeconfig the same way.
    let exit = run(
        home.path(),
        &["serve", "--kubeconfig", &kcfg, "--context", "nope"],
    );
    assert_eq!(exit.line(), want);
}

#[test]
fn out_of_range_flags_are_refused_by_the_parser() {
    let home = tempfile::tempdir().unwrap();
    for (args, first) in [
        (
            &["--demo", "--demo-speed", "0"][..],
            "error: invalid value '0' for '--demo-speed <FACTOR>': 0 is not in 0.1..=1000",
        ),
        (
            &["--call-timeout", "0"][..],
            "error: invalid value '0' for '--call-timeout <SECONDS>': 0 is not in 1..=3600",
        ),
    ] {
        let exit = run(home.path(), args);
        assert_eq!(exit.code, Some(2), "{args:?}");
        assert_eq!(exit.stderr.lines().next(), Some(first), "{args:?}");
        assert!(!exit.stderr.contains("panicked"));
    }
}

#[test]
fn a_missing_token_file_is_said_once() {
    let home = tempfile::tempdir().unwrap();
    let exit = run(
        home.path(),
        &[
            "--server",
            "http://127.0.0.1:1",
            "--token-file",
            "/nonexistent/token",
        ],
    );
    let io = std::fs::read("/nonexistent/token").unwrap_err();
    assert_eq!(
        exit.line(),
        format!("ichor-tui: reading the token file /nonexistent/token: {io}")
    );
}

#[test]
fn serve_without_credentials_says_both_places_it_looked() {
    let home = tempfile::tempdir().unwrap();
    let exit = run(home.path(), &["serve", "--listen", "127.0.0.1:0"]);
    let config = home.path().join(".kube").join("config");
    let io = std::fs::read(&config).unwrap_err();
    let line = exit.line();
    assert!(
        line.starts_with(&format!(
            "ichor-tui: no Kubernetes credentials: cannot read kubeconfig {}: {io}; and not in a cluster (",
            config.display()
        )),
        "{line}"
    );
    assert_eq!(exit.code, Some(1));
}

/// `ichor-tui ARGS` run to its end with stdout: exit code, stdout, stderr.
fn output(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The long flags a help text lists.
fn flags(help: &str) -> Vec<String> {
    help.split_whitespace()
        .filter_map(|w| w.strip_prefix("--"))
        .map(|w| {
            w.trim_end_matches([',', '.', ')'])
                .split(['=', '<'])
                .next()
                .unwrap_or("")
                .to_string()
        })
        .filter(|f| !f.is_empty())
        .collect()
}

#[test]
fn each_subcommand_takes_only_the_flags_it_acts_on() {
    let (code, help, _) = output(&["serve", "--help"]);
    assert_eq!(code, Some(0));
    assert!(
        help.contains("Connect protocol, gRPC and gRPC-Web"),
        "{help}"
    );
    let serve = flags(&help);
    for want in [
        "listen",
        "tls-cert",
        "tls-key",
        "insecure-listen",
        "allow-anonymous",
        "read-only",
        "demo",
        "kubeconfig",
        "context",
        "log-file",
        "connections-per-person",
        "calls-per-person",
        "bodies-per-person",
        "subscribing-per-person",
        "live-queries-per-person",
        "fair-queues",
        "queue-hand",
        "queue-length",
    ] {
        assert!(
            serve.iter().any(|f| f == want),
            "serve --help lists --{want}: {serve:?}"
        );
    }
    for dashboard_only in [
        "server",
        "protocol",
        "token-file",
        "ca-file",
        "lang",
        "color",
        "ascii",
        "call-timeout",
        "namespace",
        "all-namespaces",
        "backend",
        "ambiguous-width",
        "config",
    ] {
        assert!(
            !serve.iter().any(|f| f == dashboard_only),
            "serve --help lists --{dashboard_only}: {serve:?}"
        );
        let (code, _, err) = output(&["serve", &format!("--{dashboard_only}"), "x"]);
        assert_eq!(code, Some(2), "serve --{dashboard_only} is refused: {err}");
        assert!(err.contains("unexpected argument"), "{err}");
    }
    let (code, help, _) = output(&["demo-cluster", "--help"]);
    assert_eq!(code, Some(0));
    let demo = flags(&help);
    assert!(
        !demo
            .iter()
            .any(|f| f == "server" || f == "read-only" || f == "tls-cert"),
        "{demo:?}"
    );
    // A flag before a subcommand is never taken and ignored: one the subcommand acts on reaches
    // it (`--read-only serve` is `serve --read-only`, docs/commands.md), another is refused.
    for before in [
        &["--color", "never"][..],
        &["-n", "x"],
        &["--server", "http://x"],
    ] {
        let args: Vec<&str> = before.iter().copied().chain(["serve"]).collect();
        let (code, _, err) = output(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("does nothing for `ichor-tui serve`"), "{err}");
    }
    let (code, help, _) = output(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(!flags(&help).iter().any(|f| f == "tls-cert"), "{help}");
}

/// `serve --read-only` is a read-only server: every write is refused PERMISSION_DENIED with
/// reason READ_ONLY over the Connect protocol (curl), and the operation is untouched.
#[test]
fn serve_read_only_refuses_every_write() {
    use std::io::BufRead as _;
    if Command::new("curl").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "curl is missing but CI is set"
        );
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--demo",
            "--read-only",
            "--listen",
            "127.0.0.1:0",
            "--log-file",
        ])
        .arg(home.path().join("log"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .trim()
        .strip_prefix("serving on ")
        .unwrap()
        .to_string();
    let call = |method: &str, body: &str| {
        let out = Command::new("curl")
            .args([
                "-sS",
                "-w",
                "\n%{http_code}",
                "-H",
                "Content-Type: application/json",
            ])
            .args(["-H", "Authorization: Bearer demo-admin-token", "-d", body])
            .arg(format!(
                "http://{addr}/ichor.v1alpha1.OperationService/{method}"
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let op = r#"{"namespace": "default", "name": "staging-talos-x7k2p"}"#;
    let pause = r#"{"namespace": "default", "name": "staging-talos-x7k2p", "paused": true}"#;
    let start =
        r#"{"namespace": "default", "cluster": "staging", "kind": "OPERATION_KIND_SHUTDOWN"}"#;
    for (method, body) in [
        ("SetOperationPaused", pause),
        ("DeleteOperation", op),
        ("CreateOperation", start),
    ] {
        let answer = call(method, body);
        assert!(answer.ends_with("\n403"), "{method}: {answer}");
        assert!(
            answer.contains("\"code\":\"permission_denied\""),
            "{method}: {answer}"
        );
        assert!(answer.contains("read-only"), "{method}: {answer}");
    }
    let read = call("GetOperation", op);
    assert!(read.ends_with("\n200"), "reads are served: {read}");
    assert!(
        !read.contains("\"paused\":true"),
        "nothing was paused: {read}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// Like client-go, the dashboard never sends its token over plain HTTP beyond loopback: a
/// refusal that names TLS and the opt-out, before anything is contacted.
#[test]
fn a_token_is_not_sent_over_plain_http_beyond_loopback() {
    let home = tempfile::tempdir().unwrap();
    let token = write(home.path(), "token", b"s3cret\n");
    let exit = run(
        home.path(),
        &["--server", "http://10.0.0.7:50051", "--token-file", &token],
    );
    let line = exit.line();
    assert!(
        line.contains("plain HTTP") && line.contains("https://"),
        "{line}"
    );
    assert!(line.contains("--insecure-send-token-over-http"), "{line}");
    assert!(!line.contains("s3cret"), "{line}");
    assert_eq!(exit.code, Some(1));
    // With the opt-out it goes on, to the next thing it needs: a terminal.
    let exit = run(
        home.path(),
        &[
            "--server",
            "http://10.0.0.7:50051",
            "--token-file",
            &token,
            "--insecure-send-token-over-http",
        ],
    );
    assert!(!exit.stderr.contains("plain HTTP"), "{}", exit.stderr);
}

#[test]
fn a_key_bound_twice_or_an_unknown_action_is_refused_at_start_by_its_line() {
    let home = tempfile::tempdir().unwrap();
    let unknown = write(
        home.path(),
        "unknown.toml",
        b"lang = \"en\"\n[keys]\npause = \"P\"\npasue = \"x\"\n",
    );
    let exit = run(home.path(), &["--demo", "--config", &unknown]);
    assert!(
        exit.line().starts_with(&format!(
            "ichor-tui: config file {unknown}:4:1: [keys] has no action \"pasue\"; the actions are up, down,"
        )),
        "{}",
        exit.stderr
    );
    assert_eq!(exit.code, Some(1));
    let clash = write(
        home.path(),
        "clash.toml",
        b"[keys]\nrefresh = \"F\"\npause = \"d\"\n",
    );
    let exit = run(home.path(), &["--demo", "--config", &clash]);
    assert_eq!(
        exit.line(),
        format!(
            "ichor-tui: config file {clash}:3:9: [keys] pause: d is already delete's key on the Operations screen"
        )
    );
    assert_eq!(exit.code, Some(1));
}

#[test]
fn a_production_or_read_only_context_guards_the_commands() {
    let home = tempfile::tempdir().unwrap();
    // The demo's context is `demo`.
    let production = write(
        home.path(),
        "production.toml",
        b"[[contexts]]\nmatch = \"de*\"\nproduction = true\n",
    );
    let pause = |config: &str, more: &[&str]| {
        let mut args = vec![
            "--demo",
            "--config",
            config,
            "operation",
            "pause",
            "staging-talos-x7k2p",
            "--yes",
        ];
        args.extend_from_slice(more);
        run(home.path(), &args)
    };
    let exit = pause(&production, &[]);
    assert_eq!(
        exit.line(),
        "Context demo is production: --yes writes only with --confirm-cluster NAME naming the cluster. Nothing was written."
    );
    assert_eq!(exit.code, Some(2));
    let exit = pause(&production, &["--confirm-cluster", "prod-eu"]);
    assert_eq!(
        exit.line(),
        "--confirm-cluster prod-eu is not staging, the cluster of this write: nothing was written."
    );
    assert_eq!(exit.code, Some(1));
    let read_only = write(
        home.path(),
        "read-only.toml",
        b"[[contexts]]\nmatch = \"demo\"\nread-only = true\n",
    );
    let exit = pause(&read_only, &["--confirm-cluster", "staging"]);
    assert!(
        exit.line().starts_with("Read-only"),
        "a read-only context writes nothing: {}",
        exit.stderr
    );
    assert_eq!(exit.code, Some(1));
}
