//! `operation list` and `operation get`: kubectl-style tables in the person's language, or
//! `-o json|yaml` in a stable shape of our own (field names and order fixed here, snapshotted in
//! the tests). Text from the cluster has its control characters removed on every path.

use super::args::Output;
use super::{Exit, Io};
use ichor_model::inert::{sanitize, width};
use ichor_model::{MachinePhase, Operation, Phase};
use ichor_views::i18n::Texts;
use serde_json::{Value, json};

/// The words of an operation's state: a pause a failed machine caused, a pause asked for and not
/// yet taken, the lock waited for, told apart as the dashboard tells them.
pub(crate) fn state_word(t: &Texts, op: &Operation) -> String {
    if op.unreadable.is_some() {
        return t.t("state-unreadable");
    }
    if let Some(finalizers) = &op.deleting {
        // A delete that finalizers hold: neither gone nor an error.
        let waiting: Vec<String> = finalizers.iter().map(|f| sanitize(f)).collect();
        return match waiting.as_slice() {
            [] => t.t("state-deleting"),
            _ => t.tr(
                "state-deleting-waiting",
                &[("finalizers", &waiting.join(", "))],
            ),
        };
    }
    let id = match &op.phase {
        _ if op.paused_by_failure() => "state-paused-failed",
        Phase::Pending | Phase::Unknown if op.lock_holder().is_some() => "state-waiting-lock",
        Phase::Running | Phase::Pending | Phase::Unknown if op.paused => "state-pausing",
        Phase::Unknown => "phase-new",
        Phase::Pending => "phase-pending",
        Phase::Running => "phase-running",
        Phase::Paused => "phase-paused",
        Phase::Completed => "phase-completed",
        Phase::Failed => "phase-failed",
        Phase::Other(s) => return sanitize(s),
    };
    t.t(id)
}

/// A machine's phase in words.
pub(crate) fn machine_phase_word(t: &Texts, p: &MachinePhase) -> String {
    match p {
        MachinePhase::Other(s) => sanitize(s),
        known => t.t(&format!("mphase-{}", known.as_str().to_lowercase())),
    }
}

/// The kind in words.
pub(crate) fn kind_word(t: &Texts, op: &Operation) -> String {
    match (op.kind, &op.unreadable) {
        (_, Some(_)) if op.kind.is_none() => t.t("kind-unreadable"),
        (Some(k), _) => t.t(&format!("kind-short-{}", k.as_str())),
        (None, _) => sanitize(&op.kind_raw),
    }
}

/// How far it is: machines done over machines ("3/5"; a CA rotation in machine passes).
pub(crate) fn progress(op: &Operation) -> String {
    let a = op.advance();
    format!("{}/{}", a.done, a.total)
}

/// An age as kubectl says it: 45s, 12m, 5h, 3d.
fn age(op: &Operation, now: jiff::Timestamp) -> String {
    let Some(at) = op.created_at else {
        return "-".into();
    };
    let s = (now - at).get_seconds().max(0);
    match s {
        0..120 => format!("{s}s"),
        120..7200 => format!("{}m", s / 60),
        7200..172_800 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// Rows laid out in columns three spaces apart, by display width (Japanese is two columns a
/// character); the last column is not padded.
pub(crate) fn table(rows: &[Vec<String>]) -> Vec<String> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| width(s))
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                line.push_str(cell);
                if c + 1 < r.len() {
                    let w = widths.get(c).copied().unwrap_or(0);
                    line.push_str(&" ".repeat(w.saturating_sub(width(cell)) + 3));
                }
            }
            line
        })
        .collect()
}

fn time(t: Option<jiff::Timestamp>) -> Value {
    t.map_or(Value::Null, |t| Value::String(t.to_string()))
}

fn text(s: Option<&str>) -> Value {
    s.map_or(Value::Null, |s| Value::String(sanitize(s)))
}

/// One operation in the stable JSON shape. `whole`: with its machines (a get); a list row has
/// only the counts.
pub fn operation_json(op: &Operation, whole: bool) -> Value {
    let a = op.advance();
    let mut v = json!({
        "namespace": sanitize(&op.namespace),
        "name": sanitize(&op.name),
        "uid": sanitize(&op.uid),
        "cluster": sanitize(&op.cluster),
        "kind": sanitize(op.kind.map_or(op.kind_raw.as_str(), |k| k.as_str())),
        "phase": sanitize(op.phase.as_str()),
        "paused": op.paused,
        "pausedByFailure": op.paused_by_failure(),
        "maxUnavailable": op.max_unavailable,
        "current": text(op.current.as_deref()),
        "target": text(op.target.as_deref()),
        "startedBy": text(op.actor.as_deref()),
        "createdAt": time(op.created_at),
        "startedAt": time(op.started_at),
        "finishedAt": time(op.finished_at),
        "progress": {"done": a.done, "total": a.total},
        "caRotation": op.ca_rotation.as_ref().map_or(Value::Null, |c| json!({
            "stage": sanitize(&c.stage), "pass": c.pass, "passes": c.passes,
        })),
        "waitingForLockHeldBy": text(op.lock_holder()),
        "failureReason": text(op.failure_reason.as_deref()),
        "failedMachine": text(op.failed_machine().map(|m| m.name.as_str())),
        "unreadable": text(op.unreadable.as_deref()),
        "deletingWaitingFor": op.deleting.as_ref().map_or(Value::Null, |f| {
            Value::Array(f.iter().map(|x| Value::String(sanitize(x))).collect())
        }),
    });
    if whole && let Value::Object(m) = &mut v {
        let machines = op
            .machines
            .iter()
            .map(|m| {
                json!({
                    "name": sanitize(&m.name),
                    "phase": sanitize(m.phase.as_str()),
                    "message": sanitize(&m.message),
                    "startedAt": time(m.started_at),
                    "finishedAt": time(m.finished_at),
                })
            })
            .collect();
        m.insert("machines".into(), Value::Array(machines));
    }
    v
}

/// The resource and group kubectl names an operation with (`-o name`).
pub const NAME_PREFIX: &str = "talosoperation.ichor.maesh.dev/";

/// `value` as JSON, YAML or a JSONPath template's text on standard output.
fn print_value(io: &mut Io<'_>, value: &Value, output: &Output) -> Exit {
    let text = match output {
        Output::Yaml => serde_saphyr::to_string(value).map_err(|e| e.to_string()),
        Output::JsonPath(t) => match super::jsonpath::Template::parse(t) {
            Ok(t) => {
                // As kubectl: exactly what the template says, no line added.
                let _ = io.out.write_all(t.render(value).as_bytes());
                return Exit::Done;
            }
            Err(e) => Err(format!("-o jsonpath: {e}")),
        },
        _ => serde_json::to_string_pretty(value).map_err(|e| e.to_string()),
    };
    match text {
        Ok(t) => {
            io.say(t.trim_end());
            Exit::Done
        }
        Err(e) => {
            io.warn(&format!("ichor-tui: writing the output: {e}"));
            Exit::Refused
        }
    }
}

/// How a list's table is laid out.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Table {
    /// The NAMESPACE column.
    pub(super) all_namespaces: bool,
    /// No header line (`--no-headers`).
    pub(super) no_headers: bool,
}

/// `operation list`.
pub(super) fn list(
    io: &mut Io<'_>,
    ops: &[Operation],
    layout: Table,
    namespace: Option<&str>,
    output: &Output,
) -> Exit {
    if *output == Output::Name {
        for op in ops {
            io.say(&format!("{NAME_PREFIX}{}", sanitize(&op.name)));
        }
        return Exit::Done;
    }
    if !matches!(output, Output::Table | Output::Wide) {
        let items: Vec<Value> = ops.iter().map(|o| operation_json(o, false)).collect();
        return print_value(
            io,
            &json!({"kind": "OperationList", "items": items}),
            output,
        );
    }
    let all_namespaces = layout.all_namespaces;
    let t = io.texts;
    if ops.is_empty() {
        let line = match namespace {
            Some(ns) => t.tr("operations-empty", &[("ns", &sanitize(ns))]),
            None => t.t("operations-empty-all"),
        };
        io.warn(&line);
        return Exit::Done;
    }
    let mut head = vec![];
    if all_namespaces {
        head.push("col-namespace");
    }
    let wide = *output == Output::Wide;
    head.extend(["col-name", "col-kind"]);
    if wide {
        head.push("col-target");
    }
    head.extend([
        "col-cluster",
        "col-state",
        "col-progress",
        "col-age",
        "col-actor",
    ]);
    let mut rows = vec![head.iter().map(|id| t.t(id)).collect::<Vec<_>>()];
    let now = jiff::Timestamp::now();
    for op in ops {
        let mut row = vec![];
        if all_namespaces {
            row.push(sanitize(&op.namespace));
        }
        row.extend([sanitize(&op.name), kind_word(t, op)]);
        if wide {
            row.push(target_word(op));
        }
        row.extend([
            sanitize(&op.cluster),
            state_word(t, op),
            progress(op),
            age(op, now),
            op.actor.as_deref().map_or_else(|| "-".into(), sanitize),
        ]);
        rows.push(row);
    }
    let lines = table(&rows);
    for line in lines.iter().skip(usize::from(layout.no_headers)) {
        io.say(line);
    }
    Exit::Done
}

/// Where the operation goes, as its start recorded it; `-` when nothing was recorded.
fn target_word(op: &Operation) -> String {
    match (&op.current, &op.target) {
        (Some(c), Some(t)) => format!("{} → {}", sanitize(c), sanitize(t)),
        (None, Some(t)) => format!("→ {}", sanitize(t)),
        _ => "-".into(),
    }
}

/// What `operation get` reads besides the operation, each as far as it can be read: its
/// cluster (the machines' roles, for their pace) and its events (the slow machines' last
/// Warnings).
pub(crate) struct Around {
    pub(crate) roles: ichor_model::Roles,
    pub(crate) events: Vec<ichor_model::OperationEvent>,
}

impl Around {
    pub(crate) async fn read(client: &dyn ichor_model::OperationClient, op: &Operation) -> Around {
        let unfinished = !op.phase.is_finished() && op.unreadable.is_none();
        if !unfinished {
            return Around {
                roles: Default::default(),
                events: Vec::new(),
            };
        }
        let roles = client
            .get_cluster(&op.namespace, &op.cluster)
            .await
            .map(|c| ichor_model::Roles::of(&c))
            .unwrap_or_default();
        let events = client
            .list_operation_events(&op.namespace, &op.name)
            .await
            .unwrap_or_default();
        Around { roles, events }
    }
}

/// `operation get`.
pub(super) fn get(io: &mut Io<'_>, op: &Operation, around: &Around, output: &Output) -> Exit {
    if *output == Output::Name {
        io.say(&format!("{NAME_PREFIX}{}", sanitize(&op.name)));
        return Exit::Done;
    }
    let now = jiff::Timestamp::now();
    let timing = op.timing(&around.roles, io.slow, now);
    if !matches!(output, Output::Table | Output::Wide) {
        let mut v = operation_json(op, true);
        if let Value::Object(m) = &mut v {
            m.insert("timing".into(), super::report::timing_json(&timing));
        }
        return print_value(io, &v, output);
    }
    let timed = Timed {
        timing: &timing,
        around,
        now,
        tz: &io.tz,
    };
    for line in detail(io.texts, op, &timed) {
        io.say(&line);
    }
    Exit::Done
}

/// An operation's times as of a moment, with what was read around it, clock times in a zone.
pub(crate) struct Timed<'a> {
    pub(crate) timing: &'a ichor_model::Timing,
    pub(crate) around: &'a Around,
    pub(crate) now: jiff::Timestamp,
    pub(crate) tz: &'a jiff::tz::TimeZone,
}

/// The operation's facts, its failure and its machines, as lines; with its times (as of
/// `timed.now`), the slow machines and their last Warnings.
pub(crate) fn detail(t: &Texts, op: &Operation, timed: &Timed<'_>) -> Vec<String> {
    let mut out = facts(t, op, timed);
    if let Some(why) = &op.unreadable {
        out.push(t.tr("operation-unreadable", &[("why", &sanitize(why))]));
        return out;
    }
    out.extend(notes(t, op, timed));
    out.extend(super::follow::failure_lines(t, op));
    out.push(String::new());
    if op.machines.is_empty() {
        out.push(t.t("cli-no-machines"));
        return out;
    }
    out.extend(machine_rows(t, op, timed));
    out
}

/// The operation's facts, as a table of two columns.
fn facts(t: &Texts, op: &Operation, timed: &Timed<'_>) -> Vec<String> {
    let state = ichor_views::pace::state_with_time_at(
        t,
        timed.now,
        timed.tz,
        state_word(t, op),
        timed.timing,
    );
    let mut facts = vec![
        (t.t("field-name"), sanitize(&op.name)),
        (t.t("field-namespace"), sanitize(&op.namespace)),
        (t.t("field-kind"), kind_word(t, op)),
        (t.t("field-cluster"), sanitize(&op.cluster)),
        (t.t("field-state"), state),
    ];
    if let (Some(c), Some(target)) = (&op.current, &op.target) {
        facts.push((
            t.t("field-target"),
            format!("{} → {}", sanitize(c), sanitize(target)),
        ));
    }
    if let Some(a) = &op.actor {
        facts.push((t.t("field-started-by"), sanitize(a)));
    }
    facts.push((t.t("field-progress"), progress(op)));
    if let Some(e) = ichor_views::pace::estimate_text(t, &timed.timing.estimate) {
        facts.push((t.t("field-estimate"), e));
    }
    if let Some(pass) = super::follow::pass_text(t, op) {
        facts.push((t.t("field-ca-pass"), pass));
    }
    let rows: Vec<Vec<String>> = facts.into_iter().map(|(k, v)| vec![k, v]).collect();
    table(&rows)
}

/// The slow machines with their last Warnings, and the lock waited for since when.
fn notes(t: &Texts, op: &Operation, timed: &Timed<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let events = &timed.around.events;
    let (said, _) = ichor_views::pace::slow_said(t, timed.tz, timed.timing, events, usize::MAX);
    for s in said {
        out.push(format!("⚠ {}", s.slow));
        out.extend(s.last_warning.map(|w| format!("  {w}")));
    }
    if let Some(holder) = op.lock_holder() {
        let holder = sanitize(holder);
        let since = op.lock_condition().and_then(|c| c.last_transition_time);
        out.push(match since {
            Some(at) => {
                let time = at.to_zoned(timed.tz.clone()).strftime("%H:%M").to_string();
                t.tr(
                    "waiting-for-lock-since",
                    &[("holder", &holder), ("time", &time)],
                )
            }
            None => t.tr("waiting-for-lock", &[("holder", &holder)]),
        });
    }
    out
}

/// The machines: each one's phase (slow said), time (against the pace while it runs) and
/// message.
fn machine_rows(t: &Texts, op: &Operation, timed: &Timed<'_>) -> Vec<String> {
    let mut rows = vec![vec![
        t.t("col-machine"),
        t.t("col-phase"),
        t.t("col-elapsed"),
        t.t("col-message"),
    ]];
    for m in &op.machines {
        let running = timed.timing.running.iter().find(|r| r.name == m.name);
        let phase = match running {
            Some(r) if r.slow => format!("⚠ {}", t.t("mphase-slow")),
            _ => machine_phase_word(t, &m.phase),
        };
        let time = match running {
            Some(r) => ichor_views::pace::machine_time_at(t, timed.now, r),
            None => m
                .started_at
                .zip(m.finished_at)
                .map(|(s, f)| ichor_views::report::span(t, Some(f.duration_since(s))))
                .unwrap_or_default(),
        };
        rows.push(vec![sanitize(&m.name), phase, time, sanitize(&m.message)]);
    }
    table(&rows)
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .collect()
}
