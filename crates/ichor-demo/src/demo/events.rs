//! The Events of the demo's operations in flight, as the controller would have recorded them
//! (Events expire after an hour in Kubernetes, so the finished history has none): the staging
//! upgrade under way and the edge-tokyo upgrade paused by a failed machine.

use super::{NAMESPACE, at};
use crate::apiserver::EmbeddedApi;
use crate::controller::{Note, NoteContext, Regarding, event, event_name};
use anyhow::Context as _;
use ichor_resources::{Machine, OperationKind, TalosOperation, parse_time, plan_steps};
use jiff::Timestamp;

/// What the controller told of the operation `name` (kind, cluster, target): each note with
/// how many minutes ago.
fn seed_notes(
    api: &EmbeddedApi,
    name: &str,
    target: &str,
    notes: impl FnOnce(&NoteContext) -> Vec<(i64, Note)>,
    now: Timestamp,
) -> anyhow::Result<()> {
    let op: TalosOperation = api
        .stored("talosoperations", NAMESPACE, name)
        .map(serde_json::from_value)
        .transpose()
        .with_context(|| format!("reading the demo operation {name}"))?
        .with_context(|| format!("the demo operation {name} is not seeded"))?;
    let machines: Vec<Machine> = op
        .status
        .iter()
        .flat_map(|s| s.machines.iter())
        .filter_map(|m| api.stored("machines", NAMESPACE, &m.name))
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    let kind = OperationKind::parse(&op.spec.kind).unwrap_or(OperationKind::Talos);
    let plan = plan_steps(kind, &machines, op.spec.max_unavailable);
    let ctx = NoteContext {
        operation: name,
        kind,
        cluster: &op.spec.cluster,
        target,
        plan: &plan,
    };
    for (seq, (minutes_ago, note)) in (0u64..).zip(notes(&ctx)) {
        let when = parse_time(&at(now, minutes_ago)).unwrap_or(now);
        let object = match &note.regarding {
            Regarding::Operation => name.to_string(),
            Regarding::Machine(m) => m.clone(),
        };
        let ev = event(&note, &op, &machines, when, event_name(&object, when, seq));
        api.seed(&ev).context("seeding a demo event")?;
    }
    Ok(())
}

/// Stores the Events of the staging and edge-tokyo upgrades (after [`super::seed`]'s
/// operations and machines).
pub(crate) fn seed_events(api: &EmbeddedApi, now: Timestamp) -> anyhow::Result<()> {
    let op = "staging-talos-x7k2p";
    seed_notes(
        api,
        op,
        "v1.9.3",
        |ctx| {
            vec![
                (2, ctx.started()),
                (
                    2,
                    Note::step_started(op, "staging-cp1", "installing Talos v1.9.3 and rebooting"),
                ),
                (
                    1,
                    Note::step_completed(op, "staging-cp1", "running Talos v1.9.3"),
                ),
                (
                    0,
                    Note::step_started(op, "staging-w01", "installing Talos v1.9.3 and rebooting"),
                ),
            ]
        },
        now,
    )?;
    let op = "edge-tokyo-talos-m4q9z";
    seed_notes(
        api,
        op,
        "v1.9.3",
        |ctx| {
            let mut notes = vec![(40, ctx.started())];
            let order: Vec<String> = ctx.plan.order().map(str::to_string).collect();
            for (i, m) in (0i64..).zip(order.iter().take(5)) {
                let doing = "installing Talos v1.9.3 and rebooting";
                notes.push((40 - 6 * i, Note::step_started(op, m, doing)));
                notes.push((
                    36 - 6 * i,
                    Note::step_completed(op, m, "running Talos v1.9.3"),
                ));
            }
            if let Some(m) = order.get(5) {
                let error = "installer exited with code 1: image verification failed";
                notes.push((
                    10,
                    Note::step_started(op, m, "installing Talos v1.9.3 and rebooting"),
                ));
                notes.extend(Note::step_failed(op, m, error).map(|n| (6, n)));
            }
            notes
        },
        now,
    )
}
