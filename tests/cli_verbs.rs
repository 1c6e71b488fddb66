//! The commands beside the dashboard (ADR 0068, Decision 6 and the CA rotation amendment), run
//! as the binary runs them (`ichor_tui::cli::verbs::run` on the dashboard's own client stack)
//! on every path: the plan and the question, the typed name, `--yes`, no write without a
//! terminal or on n, writes bound to what was asked about, `--follow`/`--watch` exit codes,
//! tables, JSON and the words in en and ja. Every refusal asserts the write log is empty.

use crate::common;

use common::paths::{Path, User, dashboard_client};
use common::{names, op, small_cluster};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::{OperationClient, OperationKind};
use ichor_resources::{MachineProgress, TalosOperationStatus};
use ichor_tui::cli::verbs::args::{Output, Verb, WriteKind};
use ichor_tui::cli::verbs::{Exit, Io, run};
use ichor_views::i18n::{Lang, Texts};
use std::io::{BufRead, Cursor, Read};
use std::time::Duration;

/// What a run printed and how it ended.
pub struct Ran {
    pub exit: Exit,
    pub out: String,
    pub err: String,
}

/// Answers typed at the questions; `then` runs once, when the first answer is read (the world
/// changing while the person reads the plan).
pub struct Typed {
    text: Cursor<Vec<u8>>,
    then: Option<Box<dyn FnOnce() + Send>>,
}

impl Typed {
    pub fn new(text: &str) -> Typed {
        Typed {
            text: Cursor::new(text.as_bytes().to_vec()),
            then: None,
        }
    }

    pub fn then(mut self, f: impl FnOnce() + Send + 'static) -> Typed {
        self.then = Some(Box::new(f));
        self
    }
}

impl Read for Typed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.fill_buf()?.len().min(buf.len());
        buf[..n].copy_from_slice(&self.text.fill_buf()?[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Typed {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if let Some(f) = self.then.take() {
            f();
        }
        self.text.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.text.consume(n)
    }
}

/// Runs `verb` in `default` on `client`; `typed`: a terminal with these answers, `None`: none.
pub async fn ran(
    client: &dyn OperationClient,
    verb: Verb,
    typed: Option<Typed>,
    lang: Lang,
) -> Ran {
    ran_polling(client, verb, typed, lang, Duration::from_millis(40)).await
}

/// [`ran`] with `--follow` and `--watch` reading every `poll` when nothing is pushed.
pub async fn ran_polling(
    client: &dyn OperationClient,
    verb: Verb,
    typed: Option<Typed>,
    lang: Lang,
    poll: Duration,
) -> Ran {
    ran_as(client, verb, typed, lang, poll, Guard::default()).await
}

/// How the context and the flags guard a run.
#[derive(Clone, Copy, Default)]
pub struct Guard<'a> {
    /// The context, when the config marks it production.
    pub production: Option<&'a str>,
    /// `--confirm-cluster`.
    pub confirm: Option<&'a str>,
}

/// Runs `verb` in `default` on `client` as the binary does: `typed` a terminal's answers,
/// `poll` the interval of `--follow` and `--watch` without pushes, `guard` the context's.
pub async fn ran_as(
    client: &dyn OperationClient,
    verb: Verb,
    typed: Option<Typed>,
    lang: Lang,
    poll: Duration,
    guard: Guard<'_>,
) -> Ran {
    ran_with(
        client,
        verb,
        (typed, lang, poll, guard),
        jiff::Timestamp::now,
    )
    .await
}

/// [`ran`] with the times said as of `clock`'s.
pub async fn ran_at(
    client: &dyn OperationClient,
    verb: Verb,
    lang: Lang,
    clock: fn() -> jiff::Timestamp,
) -> Ran {
    let how = (None, lang, Duration::from_millis(40), Guard::default());
    ran_with(client, verb, how, clock).await
}

async fn ran_with(
    client: &dyn OperationClient,
    verb: Verb,
    (typed, lang, poll, guard): (Option<Typed>, Lang, Duration, Guard<'_>),
    clock: fn() -> jiff::Timestamp,
) -> Ran {
    let texts = Texts::new(lang);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut typed = typed;
    let mut io = Io {
        texts: &texts,
        out: &mut out,
        err: &mut err,
        answers: typed.as_mut().map(|t| t as &mut dyn BufRead),
        poll,
        tz: jiff::tz::TimeZone::UTC,
        production: guard.production.map(Into::into),
        confirm_cluster: guard.confirm.map(str::to_string),
        slow: Default::default(),
        clock,
    };
    let exit = run(client, "default", &verb, &mut io).await;
    Ran {
        exit,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
    }
}

pub fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

async fn client(path: Path, api: &EmbeddedApi, user: User) -> std::sync::Arc<dyn OperationClient> {
    dashboard_client(path, api, user, Duration::from_secs(5)).await
}

pub fn start(kind: OperationKind, cluster: &str, target: Option<&str>, yes: bool) -> Verb {
    Verb::Start {
        kind,
        cluster: Some(cluster.into()),
        target: target.map(str::to_string),
        max_unavailable: None,
        yes,
        follow: false,
    }
}

fn write(kind: WriteKind, name: &str, yes: bool) -> Verb {
    Verb::Write {
        kind,
        name: name.into(),
        yes,
    }
}

/// Seeds `name` on c1 in `phase`; with a failure, c1-w-a failed and the reason set.
pub fn seed(api: &EmbeddedApi, name: &str, phase: &str, failure: Option<&str>) {
    let mut o = op(name, "c1", "talos", 1);
    o.spec.paused = phase == "Paused" && failure.is_none();
    let m = |name: &str, phase: &str, message: &str| MachineProgress {
        name: name.into(),
        phase: phase.into(),
        message: message.into(),
        ..Default::default()
    };
    o.status = Some(TalosOperationStatus {
        phase: phase.into(),
        failure_reason: failure.map(str::to_string),
        machines: vec![
            m("c1-cp-a", "Completed", "running Talos v1.9.3"),
            m(
                "c1-w-a",
                if failure.is_some() {
                    "Failed"
                } else {
                    "Running"
                },
                "installer\u{1b}[31m exited 1",
            ),
            m("c1-w-b", "Pending", ""),
        ],
        ..Default::default()
    });
    api.seed(&o).unwrap();
}

fn created(api: &EmbeddedApi) -> Vec<String> {
    names(&api.write_log())
        .into_iter()
        .filter(|w| w.starts_with("create talosoperations"))
        .collect()
}

async fn a_start_shows_the_plan_and_n_writes_nothing(path: Path) {
    let api = world();
    let c = client(path, &api, User::Admin).await;
    let verb = start(OperationKind::Talos, "c1", Some("v1.9.3"), false);
    let r = ran(c.as_ref(), verb, Some(Typed::new("n\n")), Lang::En).await;
    assert_eq!(r.exit, Exit::Refused, "{r:?}", r = r.err);
    for said in [
        "Plan: Talos upgrade on cluster c1",
        "Each machine is upgraded and rebooted, one step at a time.",
        "5 machines in 5 steps · v1.9.2 → v1.9.3",
        "Start writes spec.talosVersion: v1.9.2 → v1.9.3 on TalosCluster c1",
        "Held, skipped (1):\n  – c1-w-held: disk replacement",
        "Not approved, not touched (1):\n  – c1-w-unapproved (worker)",
        "In this order:\n 1. c1-cp-a (control)\n 2. c1-cp-b (control)\n 3. c1-w-c (worker)\n 4. c1-w-a (worker)\n 5. c1-w-b (worker)",
    ] {
        assert!(r.out.contains(said), "{path:?}: {said:?} in\n{}", r.out);
    }
    assert!(
        r.err
            .contains("Start the Talos upgrade on cluster c1? [y/N]"),
        "{}",
        r.err
    );
    assert!(r.err.contains("Nothing was written."), "{}", r.err);
    // Anything but y or yes is No, the end of input too.
    for answer in ["\n", "no\n", "ja\n", ""] {
        let verb = start(OperationKind::Talos, "c1", Some("1.9.3"), false);
        let r = ran(c.as_ref(), verb, Some(Typed::new(answer)), Lang::En).await;
        assert_eq!(r.exit, Exit::Refused, "{answer:?}");
    }
    assert!(
        api.write_log().is_empty(),
        "{path:?}: {:?}",
        names(&api.write_log())
    );
}

async fn y_starts_it_bound_to_the_plan_shown(path: Path) {
    let api = world();
    let c = client(path, &api, User::Admin).await;
    // The version without its v.
    let verb = start(OperationKind::Talos, "c1", Some("1.9.3"), false);
    let r = ran(c.as_ref(), verb, Some(Typed::new("y\n")), Lang::En).await;
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}", r.err);
    assert!(r.out.contains("Started c1-talos-"), "{}", r.out);
    assert!(
        r.out.contains("Wrote spec.talosVersion: v1.9.2 → v1.9.3."),
        "{}",
        r.out
    );
    assert_eq!(created(&api).len(), 1, "{path:?}");
    let ops = c.list_operations(Some("default")).await.unwrap();
    assert!(
        ops[0]
            .request_id
            .as_deref()
            .is_some_and(|id| id.len() == 32)
    );
    // The cluster changes while the person reads the plan: the start is refused, as the
    // dashboard's is, and nothing is written.
    let api = world();
    let c = client(path, &api, User::Admin).await;
    let changed = api.clone();
    let typed = Typed::new("y\n").then(move || {
        changed.edit("machines", "default", "c1-w-held", |m| {
            m["metadata"]["annotations"] = serde_json::json!({});
        });
    });
    let verb = start(OperationKind::Talos, "c1", Some("v1.9.3"), false);
    let r = ran(c.as_ref(), verb, Some(typed), Lang::En).await;
    assert_eq!(r.exit, Exit::Refused, "{path:?}: {}", r.out);
    assert!(r.err.contains("changed since"), "{path:?}: {}", r.err);
    assert!(
        api.write_log().is_empty(),
        "{path:?}: {:?}",
        names(&api.write_log())
    );
}

async fn a_shutdown_and_a_ca_rotation_need_the_name_typed(path: Path) {
    for kind in [OperationKind::Shutdown, OperationKind::CaRotation] {
        let api = world();
        let c = client(path, &api, User::Admin).await;
        for typed in ["c2\ny\n", "C1\ny\n", "\n", ""] {
            let r = ran(
                c.as_ref(),
                start(kind, "c1", None, false),
                Some(Typed::new(typed)),
                Lang::En,
            )
            .await;
            assert_eq!(r.exit, Exit::Refused, "{kind:?} {typed:?}");
            assert!(
                r.err.contains("Type the cluster name c1 to confirm:"),
                "{}",
                r.err
            );
            assert!(
                r.err.contains("is not c1: nothing was written."),
                "{}",
                r.err
            );
            assert!(
                !r.err.contains("[y/N]"),
                "no y/N before the name: {}",
                r.err
            );
        }
        assert!(api.write_log().is_empty(), "{path:?} {kind:?}");
        // The name, then n.
        let r = ran(
            c.as_ref(),
            start(kind, "c1", None, false),
            Some(Typed::new("c1\nn\n")),
            Lang::En,
        )
        .await;
        assert_eq!(r.exit, Exit::Refused);
        assert!(api.write_log().is_empty(), "{path:?} {kind:?}");
        let r = ran(
            c.as_ref(),
            start(kind, "c1", None, false),
            Some(Typed::new("c1\ny\n")),
            Lang::En,
        )
        .await;
        assert_eq!(r.exit, Exit::Done, "{path:?} {kind:?}: {}", r.err);
        assert_eq!(created(&api).len(), 1);
        if kind == OperationKind::CaRotation {
            for said in [
                "Each machine is reconfigured once per pass, without a reboot (5 passes).",
                "The kubelet restarts on each machine in the passes that change the Kubernetes CA.",
                "Your credentials for c1 (kubeconfig, talosconfig) stop working when the old CA is dropped",
                "run ichor cluster bundle-export c1.",
                "Held, but not skipped (1): a machine left out would be locked out",
            ] {
                assert!(r.out.contains(said), "{said:?} in\n{}", r.out);
            }
            // The reminder after the start.
            let after = r.out.split("Started ").nth(1).unwrap_or_default();
            assert!(
                after.contains("ichor cluster bundle-export c1"),
                "{}",
                r.out
            );
        } else {
            assert!(
                r.out
                    .contains("Held, but not skipped (1): a shutdown stops every machine."),
                "{}",
                r.out
            );
        }
    }
}

async fn without_a_terminal_no_write_is_asked_or_made(path: Path) {
    let api = world();
    seed(&api, "run", "Running", None);
    let c = client(path, &api, User::Admin).await;
    let before = api.request_count();
    for (verb, command) in [
        (
            start(OperationKind::Talos, "c1", Some("v1.9.3"), false),
            "ichor-tui upgrade talos",
        ),
        (
            start(OperationKind::Shutdown, "c1", None, false),
            "ichor-tui cluster shutdown",
        ),
        (
            start(OperationKind::CaRotation, "c1", None, false),
            "ichor-tui cluster rotate-ca",
        ),
        (
            start(OperationKind::Cni, "c1", Some("replaced"), false),
            "ichor-tui cni kube-proxy",
        ),
        (
            write(WriteKind::Pause, "run", false),
            "ichor-tui operation pause",
        ),
        (
            write(WriteKind::Resume, "run", false),
            "ichor-tui operation resume",
        ),
        (
            write(WriteKind::Delete, "run", false),
            "ichor-tui operation delete",
        ),
    ] {
        let r = ran(c.as_ref(), verb, None, Lang::En).await;
        assert_eq!(r.exit, Exit::Usage);
        assert_eq!(
            r.err,
            format!(
                "{command} asks before it writes, and standard input is not a terminal: nothing was written. Add --yes to confirm without the question.\n"
            )
        );
        assert!(r.out.is_empty());
    }
    assert_eq!(
        api.request_count(),
        before,
        "{path:?}: nothing was even asked"
    );
    assert!(api.write_log().is_empty());
}

async fn yes_skips_the_question_and_the_plan_not_the_refusals(path: Path) {
    let api = world();
    let c = client(path, &api, User::Admin).await;
    // A downgrade, a jump, an unknown target: refused by the create, nothing written.
    for target in ["v1.9.1", "v1.11.0", "banana"] {
        let r = ran(
            c.as_ref(),
            start(OperationKind::Talos, "c1", Some(target), true),
            None,
            Lang::En,
        )
        .await;
        assert_eq!(r.exit, Exit::Refused, "{target}: {}", r.out);
        assert!(!r.err.is_empty());
    }
    assert!(
        api.write_log().is_empty(),
        "{path:?}: {:?}",
        names(&api.write_log())
    );
    let r = ran(
        c.as_ref(),
        start(OperationKind::Kubernetes, "c1", Some("1.33.0"), true),
        None,
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}", r.err);
    assert!(!r.out.contains("In this order"), "no plan: {}", r.out);
    assert!(r.err.is_empty(), "no question: {}", r.err);
    assert_eq!(created(&api).len(), 1);
    // Another start on the cluster now is refused for the unfinished one.
    let before = api.write_log().len();
    let r = ran(
        c.as_ref(),
        start(OperationKind::Cni, "c1", Some("replaced"), true),
        None,
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Refused);
    assert!(
        r.err.contains("c1-kubernetes-"),
        "names the unfinished one: {}",
        r.err
    );
    assert_eq!(api.write_log().len(), before);
    // Read-only writes nothing, with --yes too.
    let api = world();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let ro = ichor_client::retry::Retrying::new(client(path, &api, User::Admin).await, tx)
        .read_only(true);
    let r = ran(
        &ro,
        start(OperationKind::Talos, "c1", Some("v1.9.3"), true),
        None,
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Refused);
    assert!(r.err.contains("read-only"), "{}", r.err);
    assert!(api.write_log().is_empty());
}

async fn pause_resume_delete_ask_about_the_operation_as_it_is(path: Path) {
    let api = world();
    seed(&api, "run", "Running", None);
    let c = client(path, &api, User::Operator).await;
    for kind in [WriteKind::Pause, WriteKind::Delete] {
        let r = ran(
            c.as_ref(),
            write(kind, "run", false),
            Some(Typed::new("n\n")),
            Lang::En,
        )
        .await;
        assert_eq!(r.exit, Exit::Refused);
    }
    assert!(api.write_log().is_empty(), "{path:?}");
    let r = ran(
        c.as_ref(),
        write(WriteKind::Pause, "run", false),
        Some(Typed::new("y\n")),
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Done, "{}", r.err);
    assert!(r.err.contains("Pause run? [y/N]"), "{}", r.err);
    assert!(r.out.contains("Paused run"), "{}", r.out);
    assert_eq!(
        names(&api.write_log()),
        ["patch talosoperations by operator"]
    );
    // Replaced between the question and the answer: refused, nothing written.
    let swap = api.clone();
    let typed = Typed::new("y\n").then(move || {
        swap.remove("talosoperations", "default", "run");
        seed(&swap, "run", "Running", None);
    });
    let r = ran(
        c.as_ref(),
        write(WriteKind::Delete, "run", false),
        Some(typed),
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Refused, "{path:?}: {}", r.out);
    assert_eq!(
        names(&api.write_log()).len(),
        1,
        "{path:?}: {:?}",
        names(&api.write_log())
    );
    let r = ran(
        c.as_ref(),
        write(WriteKind::Delete, "run", true),
        None,
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Done, "{}", r.err);
    assert!(r.out.contains("Deleted run."));
    assert_eq!(names(&api.write_log()).len(), 2);
}

async fn resuming_a_failure_pause_is_refused_with_the_reason(path: Path) {
    let api = world();
    seed(
        &api,
        "broken",
        "Paused",
        Some("machine c1-w-a failed: installer exited 1"),
    );
    let c = client(path, &api, User::Operator).await;
    for (verb, typed) in [
        (write(WriteKind::Resume, "broken", true), None),
        (
            write(WriteKind::Resume, "broken", false),
            Some(Typed::new("y\n")),
        ),
    ] {
        let r = ran(c.as_ref(), verb, typed, Lang::En).await;
        assert_eq!(r.exit, Exit::Refused);
        assert_eq!(
            r.err,
            "broken was paused by a failed machine (c1-w-a): resuming does nothing. Nothing retries and nothing is rolled back: delete it and start again.\n"
        );
    }
    // The service refuses it too, on every path (a client that asks no question).
    let e = c
        .set_operation_paused("default", "broken", false, None)
        .await
        .unwrap_err();
    assert_eq!(e.reason, Some(ichor_model::Reason::ResumeAfterFailure));
    assert!(api.write_log().is_empty(), "{path:?}");
}

crate::matrix!(
    a_start_shows_the_plan_and_n_writes_nothing,
    y_starts_it_bound_to_the_plan_shown,
    a_shutdown_and_a_ca_rotation_need_the_name_typed,
    without_a_terminal_no_write_is_asked_or_made,
    yes_skips_the_question_and_the_plan_not_the_refusals,
    pause_resume_delete_ask_about_the_operation_as_it_is,
    resuming_a_failure_pause_is_refused_with_the_reason,
);

#[path = "cli_list.rs"]
mod cli_list;
#[path = "cli_verbs_follow.rs"]
mod cli_verbs_follow;
#[path = "cli_verbs_process.rs"]
pub(crate) mod cli_verbs_process;

/// The demo controller, driven fast: each pass 5 s later than the last, every 150 ms (the
/// commands poll every 40 ms, so they see every stage).
pub fn drive(api: &EmbeddedApi) -> tokio::task::JoinHandle<()> {
    let ctrl = ichor_demo::controller::Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    tokio::spawn(async move {
        let mut now = jiff::Timestamp::now();
        loop {
            now += jiff::SignedDuration::from_secs(5);
            let _ = ctrl.reconcile(now).await;
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    })
}

pub fn output(o: &str) -> Output {
    match o {
        "json" => Output::Json,
        "yaml" => Output::Yaml,
        "wide" => Output::Wide,
        _ => Output::Table,
    }
}
