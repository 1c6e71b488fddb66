//! `--follow` and `get --watch`: the operation pushed by WatchOperations where the backend
//! streams (a stream that breaks or cannot be opened: "live updates off", then a read every 2 s,
//! ADR 0068's CLI poll, and the stream asked for again after each read; the retrying client
//! retries a transient fault of a read for 10 minutes and says so on standard error), a
//! line for each change of its state, progress, CA rotation stage or lock, and of each machine's
//! phase; the end: 0 when it completes, 3 when it fails or a failed machine pauses it (naming
//! the machine, with the reason and that nothing retries and nothing is rolled back).

use super::show::{machine_phase_word, progress, state_word};
use super::{Exit, Io};
use ichor_model::inert::sanitize;
use ichor_model::{
    ApiError, Code, ListQuery, Operation, OperationClient, OperationKind, Phase, Updates,
    WatchRequest,
};
use ichor_views::i18n::Texts;

/// A CA rotation's "Pass n of 5: Stage", when known.
pub(crate) fn pass_text(t: &Texts, op: &Operation) -> Option<String> {
    let ca = op.ca_rotation.as_ref()?;
    let Some(r) = ca.pass_view() else {
        return Some(t.t("ca-preparing"));
    };
    let stage = match r.stage.as_str() {
        "" => String::new(),
        s => {
            let id = format!("ca-stage-{}", s.to_lowercase());
            if t.has(&id) { t.t(&id) } else { sanitize(s) }
        }
    };
    Some(t.tr(
        "ca-pass",
        &[
            ("pass", &r.pass.to_string()),
            ("passes", &r.passes.to_string()),
            ("stage", &stage),
        ],
    ))
}

/// The failure: which machine and what it said, the reason, and that nothing retries and
/// nothing is rolled back. Empty unless it failed or a failed machine paused it.
pub(crate) fn failure_lines(t: &Texts, op: &Operation) -> Vec<String> {
    if op.phase != Phase::Failed && !op.paused_by_failure() {
        return Vec::new();
    }
    let mut out = Vec::new();
    match op.failed_machine() {
        Some(m) if !m.message.is_empty() => out.push(t.tr(
            "failure-machine-said",
            &[
                ("machine", &sanitize(&m.name)),
                ("message", &sanitize(&m.message)),
            ],
        )),
        Some(m) => out.push(t.tr("failure-machine", &[("machine", &sanitize(&m.name))])),
        None => match &op.failure_reason {
            Some(r) => out.push(t.tr("failure-operation", &[("reason", &sanitize(r))])),
            None => out.push(t.t("failure-operation-no-reason")),
        },
    }
    if let (Some(r), Some(_)) = (&op.failure_reason, op.failed_machine()) {
        out.push(t.tr("failure-reason", &[("reason", &sanitize(r))]));
    }
    out.push(t.tr("cli-failure-advice", &[("name", &sanitize(&op.name))]));
    out
}

/// The line of an operation's state: "Running · 2/5 · Pass 2 of 5: Issuing · …".
fn state_line(t: &Texts, op: &Operation) -> String {
    let mut parts = vec![state_word(t, op), progress(op)];
    parts.extend(pass_text(t, op));
    if let Some(h) = op.lock_holder() {
        parts.push(t.tr("waiting-for-lock", &[("holder", &sanitize(h))]));
    }
    if op.paused
        && let Some(by) = &op.paused_by
    {
        parts.push(t.tr("cli-paused-by", &[("user", &sanitize(by))]));
    }
    parts.join(" · ")
}

/// The time each line of a follow starts with: "14:03:09".
pub(crate) fn clock(tz: &jiff::tz::TimeZone) -> String {
    jiff::Timestamp::now()
        .to_zoned(tz.clone())
        .strftime("%H:%M:%S")
        .to_string()
}

/// The lines a change from `last` to `op` prints; a state line printed says the estimate
/// too (`estimate`), which alone prints nothing.
fn changes(
    t: &Texts,
    tz: &jiff::tz::TimeZone,
    (last, op): (Option<&Operation>, &Operation),
    estimate: Option<String>,
) -> Vec<String> {
    let clock = clock(tz);
    let mut out = Vec::new();
    let line = state_line(t, op);
    if last.is_none_or(|l| state_line(t, l) != line) {
        let line = match estimate {
            Some(e) => format!("{line} · {e}"),
            None => line,
        };
        out.push(format!("{clock} {}: {line}", sanitize(&op.name)));
    }
    for m in &op.machines {
        let before = last.and_then(|l| l.machines.iter().find(|x| x.name == m.name));
        if before.is_some_and(|b| b.phase == m.phase && b.message == m.message) {
            continue;
        }
        if last.is_none() && m.phase == ichor_model::MachinePhase::Pending {
            continue;
        }
        let mut said = t.tr(
            "cli-machine-line",
            &[
                ("machine", &sanitize(&m.name)),
                ("phase", &machine_phase_word(t, &m.phase)),
            ],
        );
        if !m.message.is_empty() {
            said.push_str(&format!(" · {}", sanitize(&m.message)));
        }
        out.push(format!("{clock}   {said}"));
    }
    out
}

/// How it ended, said; `None` while it goes on.
fn ended(io: &mut Io<'_>, op: &Operation) -> Option<Exit> {
    let t = io.texts;
    let name = sanitize(&op.name);
    if let Some(why) = &op.unreadable {
        io.warn(&t.tr("operation-unreadable", &[("why", &sanitize(why))]));
        return Some(Exit::Refused);
    }
    if op.phase == Phase::Completed {
        io.say(&t.tr("cli-completed", &[("name", &name)]));
        if op.kind == Some(OperationKind::CaRotation) {
            io.say(&t.tr("ca-completed-bundle", &[("name", &sanitize(&op.cluster))]));
        }
        return Some(Exit::Done);
    }
    if op.phase == Phase::Failed || op.paused_by_failure() {
        for line in failure_lines(t, op) {
            io.warn(&line);
        }
        io.warn(&t.tr("cli-exit-failed", &[("name", &name)]));
        return Some(Exit::Failed);
    }
    None
}

/// The stream of `name`'s changes, when the backend pushes and the stream opens; `Err` when
/// it will not (refused, not there), `Ok(None)` when it did not open this time.
async fn subscribe(
    client: &dyn OperationClient,
    namespace: &str,
    name: &str,
) -> Result<Option<Updates>, ()> {
    if !client.pushes() {
        return Err(());
    }
    // The list page the stream also carries: one row, not read.
    let mut list = ListQuery::everything(Some(namespace));
    list.page_size = 1;
    let req = WatchRequest {
        list,
        follow: Some((namespace.to_string(), name.to_string())),
        page_deltas: false,
    };
    match client.watch_operations(&req).await {
        Ok(updates) => Ok(Some(updates)),
        Err(e) => {
            tracing::info!(error = %e, "no push: following by polling");
            if e.code.is_transient() {
                Ok(None)
            } else {
                Err(())
            }
        }
    }
}

/// Where the next state comes from: the stream while it lives, else a read after a poll.
struct Feed {
    updates: Option<Updates>,
    /// Whether to ask for the stream again after a read (it broke, it did not refuse).
    resubscribe: bool,
}

impl Feed {
    /// Asks for the stream; one that will not come is not asked for again.
    async fn open(&mut self, client: &dyn OperationClient, namespace: &str, name: &str) {
        match subscribe(client, namespace, name).await {
            Ok(updates) => self.updates = updates,
            Err(()) => self.resubscribe = false,
        }
    }

    /// The operation's next state; `first`: read at once.
    async fn next(
        &mut self,
        client: &dyn OperationClient,
        (namespace, name): (&str, &str),
        io: &mut Io<'_>,
        first: bool,
    ) -> Result<Operation, ApiError> {
        if let Some(updates) = self.updates.as_mut() {
            loop {
                let item = std::future::poll_fn(|cx| updates.as_mut().poll_next(cx)).await;
                match item {
                    Some(Ok(u)) => match u.followed {
                        Some(r) => return r,
                        None => continue,
                    },
                    Some(Err(e)) if e.code == Code::Unimplemented => {
                        self.resubscribe = false;
                        break;
                    }
                    Some(Err(_)) | None => {
                        let line = format!("{} {}", clock(&io.tz), io.texts.t("badge-live-off"));
                        io.warn(&line);
                        break;
                    }
                }
            }
            self.updates = None;
        } else if !first {
            tokio::time::sleep(io.poll).await;
        }
        let op = client.get_operation(namespace, name).await;
        if self.resubscribe && self.updates.is_none() {
            self.open(client, namespace, name).await;
        }
        op
    }
}

/// Follows `name` until it ends. `first`: the operation already printed (get --watch);
/// `announce`: say first that it is followed (after a start).
pub(super) async fn follow(
    client: &dyn OperationClient,
    namespace: &str,
    name: &str,
    io: &mut Io<'_>,
    first: Option<Operation>,
    announce: bool,
) -> Exit {
    if announce {
        let line = io.tr("cli-following", &[("name", &sanitize(name))]);
        io.say(&line);
    }
    let mut last = first;
    let mut roles: Option<ichor_model::Roles> = None;
    let mut told_credentials = false;
    let mut feed = Feed {
        updates: None,
        resubscribe: true,
    };
    feed.open(client, namespace, name).await;
    loop {
        if let Some(op) = &last
            && let Some(exit) = ended(io, op)
        {
            return exit;
        }
        let next = feed
            .next(client, (namespace, name), io, last.is_none())
            .await;
        let op = match next {
            Ok(op) => op,
            Err(e) => return io.fail(&e),
        };
        // The machines' roles, for the pace, read once.
        if roles.is_none() {
            let cluster = client.get_cluster(namespace, &op.cluster).await;
            roles = Some(
                cluster
                    .map(|c| ichor_model::Roles::of(&c))
                    .unwrap_or_default(),
            );
        }
        let timing = op.timing(
            roles.as_ref().unwrap_or(&Default::default()),
            io.slow,
            jiff::Timestamp::now(),
        );
        let estimate = ichor_views::pace::estimate_text(io.texts, &timing.estimate);
        let lines = changes(io.texts, &io.tz, (last.as_ref(), &op), estimate);
        for line in lines {
            io.say(&line);
        }
        let awaits = op
            .ca_rotation
            .as_ref()
            .is_some_and(|c| c.awaits_credentials());
        if awaits && !told_credentials {
            let line = io.tr(
                "ca-awaiting-credentials",
                &[("name", &sanitize(&op.cluster))],
            );
            io.say(&line);
        }
        told_credentials |= awaits;
        last = Some(op);
    }
}
