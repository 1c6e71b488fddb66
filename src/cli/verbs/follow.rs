//! `--follow` and `get --watch`: the operation as [`super::feed`] brings it (pushed, else read
//! every 2 s; the retrying client retries a transient fault of a read at that pace for 10
//! minutes, says each new wait on standard error and says when the API answers again), a
//! line for each change of its state, progress, CA rotation stage or lock, and of each machine's
//! phase; a line when a machine turns slow (at the moment it does, with its cause: its time in
//! the step against its role's pace, and its last Warning); the end: 0 when it completes, 3
//! when it fails or a failed machine pauses it (naming the machine, with the reason and that
//! nothing retries and nothing is rolled back).

use super::feed::{Feed, Seen, Watched};
use super::{Exit, Io};
use ichor_model::inert::sanitize;
use ichor_model::{Operation, OperationClient, OperationKind, Phase};
use ichor_views::i18n::Texts;
use ichor_views::words::{machine_count, machine_phase_word, state_word};

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
    let mut parts = vec![state_word(t, op), machine_count(op)];
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
    let mut slow = SaidSlow::default();
    if let Some(op) = &last {
        // What `get` printed of its slow machines is not said again.
        let r = read_roles(client, op).await;
        slow.seed(&op.timing(&r, io.slow, (io.clock)()));
        roles = Some(r);
    }
    let watched = Watched::One {
        namespace: namespace.to_string(),
        name: name.to_string(),
    };
    let mut feed = Feed::open(client, watched).await;
    let mut wake = None;
    loop {
        if let Some(op) = &last
            && let Some(exit) = ended(io, op)
        {
            return exit;
        }
        let op = match feed.next(client, io, last.is_none(), wake).await {
            Ok(Seen::One(op)) => *op,
            Ok(Seen::Woken | Seen::Page(_)) => match &last {
                Some(op) => op.clone(),
                None => continue,
            },
            Err(e) => return io.fail(&e),
        };
        // The machines' roles, for the pace, read once.
        if roles.is_none() {
            roles = Some(read_roles(client, &op).await);
        }
        let timing = op.timing(
            roles.as_ref().unwrap_or(&Default::default()),
            io.slow,
            (io.clock)(),
        );
        let estimate = ichor_views::pace::estimate_text(io.texts, &timing.estimate);
        let lines = changes(io.texts, &io.tz, (last.as_ref(), &op), estimate);
        for line in lines {
            io.say(&line);
        }
        slow.say(client, io, &op, &timing).await;
        wake = timing.next_slow_at();
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

/// The roles of `op`'s cluster's machines, for the pace (none when it cannot be read).
pub(super) async fn read_roles(client: &dyn OperationClient, op: &Operation) -> ichor_model::Roles {
    client
        .get_cluster(&op.namespace, &op.cluster)
        .await
        .map(|c| ichor_model::Roles::of(&c))
        .unwrap_or_default()
}

/// The machines said to be slow, so that each turning slow is said once (again if it turns
/// slow again after it finished, in a CA rotation's next pass).
#[derive(Default)]
struct SaidSlow(std::collections::BTreeSet<String>);

impl SaidSlow {
    /// Counts the machines slow in `timing` as said.
    fn seed(&mut self, timing: &ichor_model::Timing) {
        self.0 = timing
            .running
            .iter()
            .filter(|m| m.slow)
            .map(|m| m.name.clone())
            .collect();
    }

    /// Says each machine that turned slow since the last time, as the dashboard's slow mark
    /// says it (how long in this step against its role's pace, and its last Warning, read
    /// then).
    async fn say(
        &mut self,
        client: &dyn OperationClient,
        io: &mut Io<'_>,
        op: &Operation,
        timing: &ichor_model::Timing,
    ) {
        let mut turned = timing.clone();
        turned
            .running
            .retain(|m| m.slow && !self.0.contains(&m.name));
        self.seed(timing);
        if turned.running.is_empty() {
            return;
        }
        let events = client
            .list_operation_events(&op.namespace, &op.name)
            .await
            .unwrap_or_default();
        let (said, _) =
            ichor_views::pace::slow_said(io.texts, &io.tz, &turned, &events, usize::MAX);
        let clock = clock(&io.tz);
        for s in said {
            io.say(&format!("{clock}   ⚠ {}", s.slow));
            if let Some(w) = s.last_warning {
                io.say(&format!("{clock}     {w}"));
            }
        }
    }
}
