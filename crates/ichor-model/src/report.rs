//! A run's report, for a change ticket: what an operation was, who started it and when, the
//! plan's order, each machine's start, end, time and result, the warnings recorded, the
//! failure, what the machines run at the end, and the totals. The same data for the CLI's
//! `operation report` (Markdown or JSON) and the dashboard's report key; words are the views'.

use crate::pace::{Roles, SlowRule, robust_pace};
use crate::{Cluster, MachinePhase, Operation, OperationEvent, OperationKind, RunningApart};
use crate::{HistoryAction, Phase};

/// The reason of the Event OperationService records when a delete is asked for.
pub const DELETE_REQUESTED: &str = "DeleteRequested";
use jiff::{SignedDuration, Timestamp};

/// One machine of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportMachine {
    pub name: String,
    /// As the cluster says it; `None`: not known.
    pub role: Option<String>,
    /// The step of the plan it belongs to (1-based).
    pub step: usize,
    pub phase: MachinePhase,
    pub message: String,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    /// From its start to its end, when both are known and in order.
    pub took: Option<SignedDuration>,
    /// What it reports it runs now (Talos, Kubernetes), when the cluster was read.
    pub talos_version: Option<String>,
    pub kubernetes_version: Option<String>,
}

/// The machines counted, and the times.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub machines: usize,
    pub completed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Pending or running when the report was made.
    pub left: usize,
    /// From the operation's start to its end, or to the report while it has not ended
    /// (`ended` false).
    pub took: Option<SignedDuration>,
    /// The run ended: completed, failed, stopped by a failed machine, or deleted.
    pub ended: bool,
    /// The pace of a finished machine, by role (`""`: role not known): the median of the
    /// machines that were not slow, as the dashboard's estimate counts it.
    pub pace: Vec<(String, SignedDuration)>,
    pub warnings: usize,
}

/// What the report says of one operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub operation: Operation,
    /// When the report was made.
    pub at: Timestamp,
    pub machines: Vec<ReportMachine>,
    /// The Warning events, oldest first.
    pub warnings: Vec<OperationEvent>,
    /// The deletes asked for (OperationService's Events), oldest first.
    pub deletes: Vec<OperationEvent>,
    /// The cluster could not be read: the roles and what the machines run are not known.
    pub cluster_read: bool,
    /// The events could not be read (the warnings are then not known), and why.
    pub events_error: Option<crate::ApiError>,
    /// Machines that report another Talos version than the cluster's spec, at the end.
    pub talos_apart: Option<RunningApart>,
    pub totals: Totals,
}

impl Report {
    /// The report of `op` as of `at`, with its cluster (for the roles and what the machines
    /// run) and its events, when they could be read.
    pub fn of(
        op: &Operation,
        cluster: Option<&Cluster>,
        events: &[OperationEvent],
        at: Timestamp,
    ) -> Report {
        let roles = cluster.map(Roles::of).unwrap_or_default();
        let step_of = op.step_numbers(&roles);
        let machines: Vec<ReportMachine> = op
            .machines
            .iter()
            .map(|m| {
                let reported = cluster.and_then(|c| c.machines.iter().find(|x| x.name == m.name));
                ReportMachine {
                    name: m.name.clone(),
                    role: roles.get(&m.name).map(str::to_string),
                    step: step_of.get(&m.name).copied().unwrap_or(0),
                    phase: m.phase.clone(),
                    message: m.message.clone(),
                    started_at: m.started_at,
                    finished_at: m.finished_at,
                    took: m
                        .started_at
                        .zip(m.finished_at)
                        .map(|(s, f)| f.duration_since(s))
                        .filter(|d| !d.is_negative()),
                    talos_version: reported.and_then(|r| r.talos_version.clone()),
                    kubernetes_version: reported.and_then(|r| r.kubernetes_version.clone()),
                }
            })
            .collect();
        let mut warnings: Vec<OperationEvent> =
            events.iter().filter(|e| e.warning).cloned().collect();
        warnings.sort_by_key(OperationEvent::at);
        let totals = totals(op, &machines, events, at);
        Report {
            operation: op.clone(),
            at,
            machines,
            warnings,
            deletes: {
                let mut d: Vec<OperationEvent> = events
                    .iter()
                    .filter(|e| e.reason == DELETE_REQUESTED && e.object_kind == "TalosOperation")
                    .cloned()
                    .collect();
                d.sort_by_key(OperationEvent::at);
                d
            },
            cluster_read: cluster.is_some(),
            events_error: None,
            talos_apart: cluster.and_then(|c| c.running_apart(crate::Component::Talos)),
            totals,
        }
    }

    /// The report of operation `name` in `namespace` as of `at`, read whole: the operation (its
    /// error is the report's), its cluster and all its events (bounded), each as far as it can
    /// be read. What the CLI's `operation report` and the dashboard's report key both read.
    pub async fn read(
        client: &dyn crate::OperationClient,
        namespace: &str,
        name: &str,
        at: Timestamp,
    ) -> Result<Report, crate::ApiError> {
        let op = client.get_operation(namespace, name).await?;
        let cluster = client.get_cluster(namespace, &op.cluster).await.ok();
        let events = client
            .list_events(namespace, name, crate::EventsWanted::All)
            .await;
        let (events, error) = match events {
            Ok(e) => (e.events, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        let mut report = Report::of(&op, cluster.as_ref(), &events, at);
        report.events_error = error;
        Ok(report)
    }

    /// Whether the run walks machines (an ichor upgrade does not).
    pub fn walks_machines(&self) -> bool {
        self.operation
            .kind
            .is_none_or(OperationKind::touches_machines)
    }
}

/// When the run ended, if it did: its finish; a pause a failed machine caused, when that machine
/// failed; a delete asked for, when it was asked.
fn ended_at(op: &Operation, events: &[OperationEvent]) -> Option<Timestamp> {
    let failed = || {
        op.machines
            .iter()
            .filter(|m| m.phase == MachinePhase::Failed)
            .filter_map(|m| m.finished_at)
            .max()
    };
    let last_finish = || op.machines.iter().filter_map(|m| m.finished_at).max();
    // The Event OperationService records for a delete (a delete request carries no entry).
    let deleted = || {
        let asked = events
            .iter()
            .filter(|e| e.reason == DELETE_REQUESTED && e.object_kind == "TalosOperation")
            .filter_map(OperationEvent::at)
            .max();
        let entry = op
            .history
            .iter()
            .rev()
            .find(|e| e.action == HistoryAction::Delete);
        asked.or(entry.and_then(|e| e.at))
    };
    match &op.phase {
        Phase::Completed | Phase::Failed => op.finished_at.or_else(failed).or_else(last_finish),
        _ if op.paused_by_failure() => failed().or_else(last_finish),
        _ if op.deleting.is_some() => deleted(),
        _ => None,
    }
}

fn totals(
    op: &Operation,
    machines: &[ReportMachine],
    events: &[OperationEvent],
    at: Timestamp,
) -> Totals {
    let count = |p: MachinePhase| machines.iter().filter(|m| m.phase == p).count();
    let warnings = events.iter().filter(|e| e.warning).count();
    let ended = ended_at(op, events);
    let end = ended.unwrap_or(at);
    let mut by_role: std::collections::BTreeMap<String, Vec<SignedDuration>> = Default::default();
    for m in machines
        .iter()
        .filter(|m| m.phase == MachinePhase::Completed)
    {
        if let Some(d) = m.took {
            by_role
                .entry(m.role.clone().unwrap_or_default())
                .or_default()
                .push(d);
        }
    }
    Totals {
        machines: machines.len(),
        completed: count(MachinePhase::Completed),
        failed: count(MachinePhase::Failed),
        skipped: count(MachinePhase::Skipped),
        left: machines
            .iter()
            .filter(|m| matches!(m.phase, MachinePhase::Pending | MachinePhase::Running))
            .count(),
        took: op
            .started_at
            .map(|s| end.duration_since(s))
            .filter(|d| !d.is_negative()),
        ended: ended.is_some(),
        pace: by_role
            .into_iter()
            .filter_map(|(r, d)| robust_pace(d, SlowRule::default()).map(|(m, _)| (r, m)))
            .collect(),
        warnings,
    }
}
