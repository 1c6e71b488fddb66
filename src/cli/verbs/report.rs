//! `operation report NAME [-o markdown|json]`: a run's report for a change ticket, read whole
//! (the operation, its cluster, all its events) as the dashboard's report key reads it.
//! Markdown in the person's language, or JSON in a stable shape of our own (field names fixed
//! here); text from the cluster has its control characters removed on both.

use super::args::ReportFormat;
use super::{Exit, Io};
use ichor_model::inert::sanitize;
use ichor_model::{Estimate, HistoryEntry, OperationClient, PaceBasis, PhaseSince, Report, Timing};
use serde_json::{Value, json};

pub(super) async fn run(
    client: &dyn OperationClient,
    namespace: &str,
    name: &str,
    output: ReportFormat,
    io: &mut Io<'_>,
) -> Exit {
    let report = match Report::read(client, namespace, name, jiff::Timestamp::now()).await {
        Ok(r) => r,
        Err(e) => return io.fail(&e),
    };
    let text = match output {
        ReportFormat::Markdown => ichor_views::report::markdown(io.texts, &report, &io.tz),
        ReportFormat::Json => match serde_json::to_string_pretty(&report_json(&report)) {
            Ok(t) => t,
            Err(e) => {
                io.warn(&format!("ichor-tui: writing the output: {e}"));
                return Exit::Refused;
            }
        },
    };
    io.say(text.trim_end());
    Exit::Done
}

fn time(t: Option<jiff::Timestamp>) -> Value {
    t.map_or(Value::Null, |t| Value::String(t.to_string()))
}

fn secs(d: Option<jiff::SignedDuration>) -> Value {
    d.map_or(Value::Null, |d| json!(d.as_secs()))
}

fn text(s: Option<&str>) -> Value {
    s.map_or(Value::Null, |s| Value::String(sanitize(s)))
}

/// An operation's times in the stable JSON shape (`operation get -o json` carries it).
pub(crate) fn timing_json(timing: &Timing) -> Value {
    let (phase, since) = match timing.phase {
        Some(PhaseSince::Running(at)) => ("Running", Some(at)),
        Some(PhaseSince::Pausing(at)) => ("Pausing", Some(at)),
        Some(PhaseSince::Paused(at)) => ("Paused", Some(at)),
        Some(PhaseSince::WaitingForLock(at)) => ("WaitingForLock", Some(at)),
        Some(PhaseSince::Pending(at)) => ("Pending", Some(at)),
        None => ("", None),
    };
    let basis = |b: PaceBasis| match b {
        PaceBasis::SoFar => json!({"from": "thisRun"}),
        PaceBasis::PriorRuns(n) => json!({"from": "priorRuns", "runs": n}),
    };
    let estimate = match &timing.estimate {
        Estimate::None => json!(null),
        Estimate::NoPaceYet => json!({"known": false}),
        Estimate::Halted {
            machines_left,
            failed,
        } => {
            json!({"known": false, "halted": true, "machinesLeft": machines_left, "failed": failed})
        }
        Estimate::About { left, basis: b, .. } => {
            json!({"known": true, "leftSeconds": left.as_secs(), "pace": basis(*b)})
        }
        Estimate::AfterSlow {
            machine,
            slow_for,
            more,
            then,
            basis: b,
            ..
        } => json!({
            "known": false,
            "afterSlow": {
                "machine": sanitize(machine),
                "slowForSeconds": slow_for.as_secs(),
                "moreSlow": more,
            },
            "thenSeconds": then.as_secs(),
            "pace": basis(*b),
        }),
    };
    let running: Vec<Value> = timing
        .running
        .iter()
        .map(|m| {
            json!({
                "name": sanitize(&m.name),
                "role": text(m.role.as_deref()),
                "startedAt": time(Some(m.since)),
                "inStepSeconds": m.in_step.as_secs(),
                "paceSeconds": secs(m.pace),
                "slowAfterSeconds": secs(m.bound),
                "slow": m.slow,
            })
        })
        .collect();
    json!({
        "phase": if phase.is_empty() { Value::Null } else { json!(phase) },
        "since": time(since),
        "slow": timing.slow(),
        "estimate": estimate,
        "running": running,
    })
}

/// Who did what, in the stable JSON shape (`operation get -o json` carries it too): each entry
/// as read, inert.
pub(crate) fn history_json(history: &[HistoryEntry]) -> Value {
    Value::Array(
        history
            .iter()
            .map(|e| {
                json!({
                    "action": sanitize(e.action.as_str()),
                    "actor": sanitize(&e.actor),
                    "at": time(e.at),
                    "outcome": sanitize(e.outcome.as_str()),
                })
            })
            .collect(),
    )
}

/// The report in the stable JSON shape.
pub(crate) fn report_json(r: &Report) -> Value {
    let mut v = super::show::operation_json(&r.operation, false);
    let machines: Vec<Value> = r
        .machines
        .iter()
        .map(|m| {
            json!({
                "name": sanitize(&m.name),
                "role": text(m.role.as_deref()),
                "step": m.step,
                "result": sanitize(m.phase.as_str()),
                "message": sanitize(&m.message),
                "startedAt": time(m.started_at),
                "finishedAt": time(m.finished_at),
                "tookSeconds": secs(m.took),
                "talosVersion": text(m.talos_version.as_deref()),
                "kubernetesVersion": text(m.kubernetes_version.as_deref()),
            })
        })
        .collect();
    let warnings: Vec<Value> = r
        .warnings
        .iter()
        .map(|e| {
            json!({
                "at": time(e.at()),
                "objectKind": sanitize(&e.object_kind),
                "objectName": sanitize(&e.object_name),
                "reason": sanitize(&e.reason),
                "message": sanitize(&e.message),
                "count": e.count,
            })
        })
        .collect();
    let n = &r.totals;
    let pace: serde_json::Map<String, Value> = n
        .pace
        .iter()
        .map(|(role, d)| (sanitize(role), json!(d.as_secs())))
        .collect();
    if let Value::Object(m) = &mut v {
        m.insert("reportedAt".into(), time(Some(r.at)));
        m.insert("machines".into(), Value::Array(machines));
        m.insert(
            "warnings".into(),
            match &r.events_error {
                Some(_) => Value::Null,
                None => Value::Array(warnings),
            },
        );
        m.insert("clusterRead".into(), json!(r.cluster_read));
        m.insert("history".into(), history_json(&r.operation.history));
        m.insert(
            "totals".into(),
            json!({
                "machines": n.machines,
                "completed": n.completed,
                "failed": n.failed,
                "skipped": n.skipped,
                "left": n.left,
                "tookSeconds": secs(n.took),
                "ended": n.ended,
                "paceSecondsByRole": pace,
                "warnings": n.warnings,
            }),
        );
    }
    v
}
