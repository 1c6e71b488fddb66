//! How long: the time an operation and each running machine have spent in their current phase
//! (each counted from the moment it names: `since.rs`), the pace so far (the time the machines
//! of a role that finished took, by a statistic one outlier cannot move), whether a running
//! machine is slow, and an estimate of the end (`estimate.rs`).
//!
//! Everything is derived from the status as the controller reports it (times from the cluster:
//! untrusted). A time in the future counts from now, a machine that finished before it started
//! has no duration, and every sum is checked and bounded by [`MAX_ESTIMATE`]: no timestamp can
//! overflow or panic here.
//!
//! "Slow" is a bound over the pace: a running machine is slow once its time in the step passes
//! `factor × pace` and `pace + margin`, whichever is later ([`SlowRule`]; by default twice the
//! pace and at least 30 seconds over it, so a step of seconds is not called slow for a second's
//! jitter). There is no bound before a machine of the same role has finished.

use crate::{Cluster, MachinePhase, Operation, OperationKind, Phase};
use jiff::{SignedDuration, Timestamp};
use std::collections::BTreeMap;

/// The longest estimate said; past it the estimate is this (a week: nothing real takes longer,
/// and a hostile timestamp cannot make it grow without bound).
pub const MAX_ESTIMATE: SignedDuration = SignedDuration::from_secs(7 * 86_400);

/// The role every machine whose role is not known counts as.
const UNKNOWN_ROLE: &str = "";

/// When a running machine is slow: past `factor` times the pace, and at least `margin` over it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlowRule {
    /// From 1 to 100.
    pub factor: f64,
    pub margin: SignedDuration,
}

impl SlowRule {
    /// The largest factor taken.
    pub const MAX_FACTOR: f64 = 100.0;
    /// The largest margin taken.
    pub const MAX_MARGIN: SignedDuration = SignedDuration::from_secs(86_400);

    /// The time in a step past which a machine whose role's pace is `pace` is slow.
    pub fn bound(&self, pace: SignedDuration) -> SignedDuration {
        let factor = match self.factor {
            f if f.is_nan() => 1.0,
            f => f.clamp(1.0, Self::MAX_FACTOR),
        };
        let scaled = SignedDuration::try_from_secs_f64(pace.as_secs_f64() * factor)
            .unwrap_or(MAX_ESTIMATE)
            .min(MAX_ESTIMATE);
        let margin = self.margin.clamp(SignedDuration::ZERO, Self::MAX_MARGIN);
        let over = pace.checked_add(margin).unwrap_or(MAX_ESTIMATE);
        scaled.max(over)
    }
}

impl Default for SlowRule {
    /// Twice the pace, and at least 30 seconds over it.
    fn default() -> Self {
        SlowRule {
            factor: 2.0,
            margin: SignedDuration::from_secs(30),
        }
    }
}

/// The machines' roles, by name, as a cluster says them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roles(BTreeMap<String, String>);

impl Roles {
    /// The roles of `cluster`'s machines.
    pub fn of(cluster: &Cluster) -> Roles {
        Roles(
            cluster
                .machines
                .iter()
                .map(|m| (m.name.clone(), m.role.clone()))
                .collect(),
        )
    }

    /// The role of `machine`, if known.
    pub fn get(&self, machine: &str) -> Option<&str> {
        self.0.get(machine).map(String::as_str)
    }

    /// Whether every machine named is known.
    pub fn knows_all<'a>(&self, mut machines: impl Iterator<Item = &'a str>) -> bool {
        machines.all(|m| self.0.contains_key(m))
    }

    fn of_machine(&self, machine: &str) -> &str {
        self.get(machine).unwrap_or(UNKNOWN_ROLE)
    }
}

/// The operation's current phase and since when. Only a running operation's time ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseSince {
    /// Running (since it started, or since it was last resumed).
    Running(Timestamp),
    /// A pause was asked for and has not taken effect yet: since it was asked.
    Pausing(Timestamp),
    /// Paused: since the pause took effect (the step under way when it was asked finished).
    Paused(Timestamp),
    /// Waiting for the cluster lock another operation holds (since the condition said so).
    WaitingForLock(Timestamp),
    /// Created, not started yet.
    Pending(Timestamp),
}

/// One running machine's time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineTime {
    pub name: String,
    /// As the cluster says it; `None`: not known.
    pub role: Option<String>,
    /// When its step started, and how long it has run.
    pub since: Timestamp,
    pub in_step: SignedDuration,
    /// The pace of its role in this run (see [`Paces`]); `None` before a machine of its role
    /// finished.
    pub pace: Option<SignedDuration>,
    /// How many finished machines the pace is read from.
    pub paced_by: usize,
    /// The time past which it is slow (see [`SlowRule`]).
    pub bound: Option<SignedDuration>,
    pub slow: bool,
}

impl MachineTime {
    /// When it turns slow, if it has not yet and it will.
    pub fn slow_at(&self) -> Option<Timestamp> {
        let bound = self.bound.filter(|_| !self.slow)?;
        self.since.checked_add(bound).ok()
    }
}

/// Where the pace an estimate counts with comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaceBasis {
    /// The machines of this run that finished.
    SoFar,
    /// For a role none of whose machines has finished yet: the last completed runs of the same
    /// kind on the same cluster (how many).
    PriorRuns(usize),
}

/// How long the rest will take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Estimate {
    /// Nothing to estimate: the operation is finished, has not started, or walks no machines.
    None,
    /// Pausing, paused or stopped by a failure: no step will start, so no time is said; how
    /// many machines (machine passes, for a CA rotation) are left.
    Halted {
        machines_left: usize,
        /// A failed machine stopped it: the machines left will not run in this operation.
        failed: bool,
    },
    /// No machine has finished yet, in this run or a completed one before it: there is no pace.
    NoPaceYet,
    /// About `left` (at most [`MAX_ESTIMATE`]); `running_left` of it is what the steps under
    /// way have left. While every running machine is within its pace it goes down a second a
    /// second; once one is past its pace (`growing`), it is expected to need its overrun again,
    /// so the estimate grows with it.
    About {
        left: SignedDuration,
        running_left: SignedDuration,
        growing: bool,
        basis: PaceBasis,
    },
    /// A running machine is slow (see [`SlowRule`]): nothing can say when it ends, so the
    /// estimate names it and says the rest after it.
    AfterSlow {
        /// The slow machine that has run longest in its step.
        machine: String,
        /// Its time in the step so far.
        slow_for: SignedDuration,
        /// When its step started.
        since: Timestamp,
        /// How many other machines are slow.
        more: usize,
        /// The rest once the slow ones finish (the other steps under way and those to come).
        then: SignedDuration,
        basis: PaceBasis,
    },
}

/// The pace of each role in the last completed runs of the same kind on the same cluster, for
/// the estimate before a machine of the role has finished in this run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PriorPaces {
    /// By role, the pace and how many machines it is read from.
    pub by_role: BTreeMap<String, (SignedDuration, usize)>,
    /// How many runs they were read from.
    pub runs: usize,
}

/// How many completed operations a read of the prior runs looks through for its kind.
const PRIOR_LOOKED_AT: u32 = 50;

impl PriorPaces {
    /// The last `max` completed runs of `kind` on `cluster` in `namespace`, newest first, each
    /// read whole (a run that cannot be read is left out): what [`PriorPaces::of`] reads.
    pub async fn read_runs(
        client: &dyn crate::OperationClient,
        namespace: &str,
        cluster: &str,
        kind: OperationKind,
        max: usize,
    ) -> Result<Vec<Operation>, crate::ApiError> {
        let query = crate::ListQuery {
            namespace: Some(namespace.to_string()),
            cluster: Some(cluster.to_string()),
            phases: vec![Phase::Completed],
            page_size: PRIOR_LOOKED_AT,
            view: crate::View::Summary,
            ..crate::ListQuery::default()
        };
        let page = client.list_page(&query).await?;
        let names: Vec<String> = page
            .operations
            .iter()
            .filter(|o| o.kind == Some(kind) && o.cluster == cluster)
            .take(max)
            .map(|o| o.name.clone())
            .collect();
        let mut runs = Vec::with_capacity(names.len());
        for name in names {
            if let Ok(op) = client.get_operation(namespace, &name).await {
                runs.push(op);
            }
        }
        Ok(runs)
    }

    /// The paces of `runs` (completed operations with their machines), their machines' roles
    /// read from `roles`; the same statistic as this run's ([`Paces`]).
    pub fn of(runs: &[Operation], roles: &Roles, rule: SlowRule) -> PriorPaces {
        let mut by_role: BTreeMap<String, Vec<SignedDuration>> = BTreeMap::new();
        for op in runs {
            for (role, d) in finished_times(op, roles) {
                by_role.entry(role).or_default().push(d);
            }
        }
        PriorPaces {
            by_role: by_role
                .into_iter()
                .filter_map(|(r, d)| robust_pace(d, rule).map(|p| (r, p)))
                .collect(),
            runs: runs.len(),
        }
    }
}

/// The times of an operation, as of a moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    pub phase: Option<PhaseSince>,
    /// The machines running, in the operation's order.
    pub running: Vec<MachineTime>,
    pub estimate: Estimate,
}

impl Timing {
    /// Whether a running machine is slow.
    pub fn slow(&self) -> bool {
        self.running.iter().any(|m| m.slow)
    }

    /// When a running machine turns slow next, if one will.
    pub fn next_slow_at(&self) -> Option<Timestamp> {
        self.running.iter().filter_map(MachineTime::slow_at).min()
    }
}

/// The duration from `from` to `to`, when it is one (not negative).
fn span(from: Timestamp, to: Timestamp) -> Option<SignedDuration> {
    let d = to.duration_since(from);
    (!d.is_negative()).then_some(d)
}

/// The median of `d` (sorted here); `None` when empty.
pub(crate) fn median(mut d: Vec<SignedDuration>) -> Option<SignedDuration> {
    d.sort();
    let mid = d.len() / 2;
    match d.len() {
        0 => None,
        n if n % 2 == 1 => d.get(mid).copied(),
        _ => {
            // Halves first: their sum cannot overflow.
            let (a, b) = (*d.get(mid - 1)? / 2, *d.get(mid)? / 2);
            a.checked_add(b)
        }
    }
}

/// The time each machine of `op` that completed took, with its role.
fn finished_times<'a>(
    op: &'a Operation,
    roles: &'a Roles,
) -> impl Iterator<Item = (String, SignedDuration)> + 'a {
    op.machines
        .iter()
        .filter(|m| m.phase == MachinePhase::Completed)
        .filter_map(move |m| {
            let d = m
                .started_at
                .zip(m.finished_at)
                .and_then(|(s, f)| span(s, f))?;
            Some((roles.of_machine(&m.name).to_string(), d))
        })
}

/// The pace of some machines' times, and how many it is read from: the median of those that
/// were not slow. Which were slow is judged against the lower median (the middle time, or the
/// lower of the two middle ones), so one machine that took minutes among machines that took
/// seconds neither sets the pace nor moves it ({4 s, 4 m}: 4 s). `None` when empty.
pub(crate) fn robust_pace(
    mut times: Vec<SignedDuration>,
    rule: SlowRule,
) -> Option<(SignedDuration, usize)> {
    times.sort();
    let lower = *times.get(times.len().checked_sub(1)? / 2)?;
    let bound = rule.bound(lower);
    let kept: Vec<SignedDuration> = times.into_iter().filter(|d| *d <= bound).collect();
    let n = kept.len();
    median(kept).map(|m| (m, n))
}

/// The paces of a run: by role, and of every machine that finished; with the prior runs'
/// for the roles none of whose machines has finished yet.
pub(crate) struct Paces<'a> {
    by_role: BTreeMap<String, (SignedDuration, usize)>,
    any: Option<(SignedDuration, usize)>,
    prior: Option<&'a PriorPaces>,
}

impl<'a> Paces<'a> {
    fn of(op: &Operation, roles: &Roles, rule: SlowRule, prior: Option<&'a PriorPaces>) -> Self {
        let mut by_role: BTreeMap<String, Vec<SignedDuration>> = BTreeMap::new();
        for (role, d) in finished_times(op, roles) {
            by_role.entry(role).or_default().push(d);
        }
        let all: Vec<SignedDuration> = by_role.values().flatten().copied().collect();
        Paces {
            any: robust_pace(all, rule),
            by_role: by_role
                .into_iter()
                .filter_map(|(r, d)| robust_pace(d, rule).map(|p| (r, p)))
                .collect(),
            prior: prior.filter(|p| !p.by_role.is_empty()),
        }
    }

    /// The pace of `role`'s machines in this run, and how many it is read from.
    fn of_role(&self, role: &str) -> Option<(SignedDuration, usize)> {
        self.by_role.get(role).copied()
    }

    /// The pace the estimate counts `role`'s machines with: this run's, else the prior runs',
    /// else this run's of every role, else the prior runs' of any role; and whether it came
    /// from the prior runs.
    pub(crate) fn for_estimate(&self, role: &str) -> Option<(SignedDuration, bool)> {
        let prior_role = || self.prior.and_then(|p| p.by_role.get(role));
        let prior_any = || self.prior.and_then(|p| p.by_role.values().max());
        self.of_role(role)
            .map(|(d, _)| (d, false))
            .or_else(|| prior_role().map(|(d, _)| (*d, true)))
            .or_else(|| self.any.map(|(d, _)| (d, false)))
            .or_else(|| prior_any().map(|(d, _)| (*d, true)))
    }

    /// How many prior runs the estimate may count with.
    pub(crate) fn prior_runs(&self) -> usize {
        self.prior.map_or(0, |p| p.runs)
    }
}

impl Operation {
    /// The pace so far of each role that has one, in the roles' order (the default
    /// [`SlowRule`] judges which finished machines were slow).
    pub fn role_paces(&self, roles: &Roles) -> Vec<SignedDuration> {
        Paces::of(self, roles, SlowRule::default(), None)
            .by_role
            .into_values()
            .map(|(d, _)| d)
            .collect()
    }

    /// The operation's times as of `now`: its phase, each running machine's time against the
    /// pace of its role, and the estimate of the end.
    pub fn timing(&self, roles: &Roles, rule: SlowRule, now: Timestamp) -> Timing {
        self.timing_with(roles, rule, None, now)
    }

    /// [`Operation::timing`], the estimate counting with `prior`'s paces for the roles none of
    /// whose machines has finished in this run.
    pub fn timing_with(
        &self,
        roles: &Roles,
        rule: SlowRule,
        prior: Option<&PriorPaces>,
        now: Timestamp,
    ) -> Timing {
        let paces = Paces::of(self, roles, rule, prior);
        let running: Vec<MachineTime> = self
            .machines
            .iter()
            .filter(|m| m.phase == MachinePhase::Running && m.finished_at.is_none())
            .filter_map(|m| {
                let since = m.started_at?;
                let in_step = span(since, now).unwrap_or(SignedDuration::ZERO);
                let role = roles.get(&m.name);
                let paced = paces.of_role(role.unwrap_or(UNKNOWN_ROLE));
                let bound = paced.map(|(p, _)| rule.bound(p));
                Some(MachineTime {
                    name: m.name.clone(),
                    role: role.map(str::to_string),
                    since,
                    in_step,
                    pace: paced.map(|(p, _)| p),
                    paced_by: paced.map_or(0, |(_, n)| n),
                    bound,
                    slow: self.phase == Phase::Running && bound.is_some_and(|b| in_step > b),
                })
            })
            .collect();
        let estimate = estimate::of(self, roles, &paces, &running);
        Timing {
            phase: self.phase_since(),
            running,
            estimate,
        }
    }

    /// The steps not begun, in the plan's order: the Pending machines grouped as the executor
    /// groups them (see [`group_steps`]), and a CA rotation's passes to come over every
    /// machine again.
    fn steps_left<'a>(&'a self, roles: &Roles) -> Vec<Vec<&'a str>> {
        let pending = self
            .machines
            .iter()
            .filter(|m| m.phase == MachinePhase::Pending)
            .map(|m| m.name.as_str());
        let mut steps = group_steps(self, pending, roles);
        if self.kind == Some(OperationKind::CaRotation) {
            let passes_left = self
                .ca_rotation
                .as_ref()
                .and_then(|c| c.pass_view())
                .map_or(0, |r| {
                    r.passes.saturating_sub(r.pass).clamp(0, crate::CA_PASSES)
                });
            let every = self
                .machines
                .iter()
                .filter(|m| m.phase != MachinePhase::Skipped);
            for _ in 0..passes_left {
                steps.extend(every.clone().map(|m| vec![m.name.as_str()]));
            }
        }
        steps
    }

    /// The step of the plan (1-based) each machine it walks belongs to, in its order.
    pub fn step_numbers(&self, roles: &Roles) -> BTreeMap<String, usize> {
        let walked = self
            .machines
            .iter()
            .filter(|m| m.phase != MachinePhase::Skipped)
            .map(|m| m.name.as_str());
        group_steps(self, walked, roles)
            .into_iter()
            .enumerate()
            .flat_map(|(i, step)| step.into_iter().map(move |n| (n.to_string(), i + 1)))
            .collect()
    }
}

/// `machines` (in the operation's order) grouped as the executor groups them: control planes
/// one at a time, workers by max unavailable; a shutdown's workers together, then its control
/// planes; a CA rotation one at a time. A machine whose role is not known counts as a worker.
fn group_steps<'a>(
    op: &Operation,
    machines: impl Iterator<Item = &'a str>,
    roles: &Roles,
) -> Vec<Vec<&'a str>> {
    let cp = |n: &str| roles.get(n) == Some("controlplane");
    match op.kind {
        Some(OperationKind::Shutdown) => {
            let (cps, workers): (Vec<&str>, Vec<&str>) = machines.partition(|n| cp(n));
            [workers, cps]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect()
        }
        Some(OperationKind::CaRotation) => machines.map(|n| vec![n]).collect(),
        _ => {
            let group = usize::try_from(op.max_unavailable).unwrap_or(1).max(1);
            let mut steps: Vec<Vec<&str>> = Vec::new();
            let mut workers: Vec<&str> = Vec::new();
            for n in machines {
                if cp(n) {
                    if !workers.is_empty() {
                        steps.push(std::mem::take(&mut workers));
                    }
                    steps.push(vec![n]);
                    continue;
                }
                workers.push(n);
                if workers.len() == group {
                    steps.push(std::mem::take(&mut workers));
                }
            }
            if !workers.is_empty() {
                steps.push(workers);
            }
            steps
        }
    }
}

mod estimate;
mod since;

#[cfg(test)]
mod tests;
