//! `operation get`, and the stable JSON shape `operation list` prints too: a kubectl-style table
//! in the person's language, in the dashboard's words (`ichor_views::words`), or `-o
//! json|yaml` in a stable shape of our own (field names and order fixed here, snapshotted in
//! the tests). Text from the cluster has its control characters removed on every path.

use super::args::Output;
use super::{Exit, Io};
use ichor_model::Operation;
use ichor_model::inert::sanitize;
use ichor_views::i18n::Texts;
use ichor_views::listing::text_table;
use ichor_views::words::{kind_text, machine_count, machine_phase_word, state_word};
use serde_json::{Value, json};

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
        "pausedBy": text(op.paused_by.as_deref()),
        "pausedAt": time(op.paused_at),
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
        m.insert("history".into(), super::report::history_json(&op.history));
    }
    v
}

/// The resource and group kubectl names an operation with (`-o name`).
pub const NAME_PREFIX: &str = "talosoperation.ichor.maesh.dev/";

/// `value` as JSON, YAML or a JSONPath template's text on standard output.
pub(super) fn print_value(io: &mut Io<'_>, value: &Value, output: &Output) -> Exit {
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
    let now = (io.clock)();
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
        (t.t("field-kind"), kind_text(t, op.kind, &op.kind_raw)),
        (t.t("field-cluster"), sanitize(&op.cluster)),
        (t.t("field-state"), state),
    ];
    if let Some(target) = ichor_views::listing::target_words(op) {
        facts.push((t.t("field-target"), target));
    }
    if let Some(a) = &op.actor {
        facts.push((t.t("field-started-by"), sanitize(a)));
    }
    facts.extend(who_paused_and_resumed(t, op, timed));
    facts.push((t.t("field-progress"), machine_count(op)));
    if let Some(e) = ichor_views::pace::estimate_text(t, &timed.timing.estimate) {
        facts.push((t.t("field-estimate"), e));
    }
    if let Some(pass) = super::follow::pass_text(t, op) {
        facts.push((t.t("field-ca-pass"), pass));
    }
    let rows: Vec<Vec<String>> = facts.into_iter().map(|(k, v)| vec![k, v]).collect();
    text_table(&rows, &[])
}

/// Who paused, resumed or asked for a delete, and when, as facts: every entry of the history but
/// the start ("Started by" says it); an operation paused before the history was kept says who
/// last paused or resumed it.
fn who_paused_and_resumed(t: &Texts, op: &Operation, timed: &Timed<'_>) -> Vec<(String, String)> {
    let (shown, _) = ichor_views::history::shown(&op.history, usize::MAX);
    let clock = ichor_views::history::clock_in(timed.tz, timed.now);
    let said: Vec<String> = match (shown.is_empty(), &op.paused_by) {
        (false, _) => shown
            .iter()
            .map(|e| ichor_views::history::entry_at(t, e, &clock))
            .collect(),
        (true, Some(by)) if op.history.is_empty() => {
            let when = op.paused_at.map(&clock).unwrap_or_default();
            let id = if op.paused { "paused-by" } else { "resumed-by" };
            vec![t.tr(id, &[("user", &sanitize(by)), ("time", &when)])]
        }
        _ => Vec::new(),
    };
    match said.is_empty() {
        true => Vec::new(),
        false => vec![(t.t("field-history"), said.join("; "))],
    }
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
    text_table(&rows, &[])
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .collect()
}
