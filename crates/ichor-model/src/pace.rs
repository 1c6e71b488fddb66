//! How long: the time an operation and each running machine have spent in their current phase,
//! the pace so far (the median time of the machines of the same role that finished), whether a
//! running machine is slow, and an estimate of the end at the pace so far.
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
    /// The median time of the machines of its role that finished; `None` before one did.
    pub pace: Option<SignedDuration>,
    /// How many finished machines the pace is the median of.
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

/// How long the rest will take at the pace so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimate {
    /// Nothing to estimate: the operation does not run (finished, paused, waiting) or walks
    /// no machines.
    None,
    /// No machine has finished yet: there is no pace.
    NoPaceYet,
    /// About `left` (at most [`MAX_ESTIMATE`]); `running_left` of it is what the steps under
    /// way have left, which goes down as they run (the rest only changes as machines finish).
    About {
        left: SignedDuration,
        running_left: SignedDuration,
    },
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

/// The paces so far: by role, and of every machine that finished.
struct Paces {
    by_role: BTreeMap<String, (SignedDuration, usize)>,
    any: Option<(SignedDuration, usize)>,
}

impl Paces {
    fn of(op: &Operation, roles: &Roles) -> Paces {
        let mut by_role: BTreeMap<String, Vec<SignedDuration>> = BTreeMap::new();
        for m in op
            .machines
            .iter()
            .filter(|m| m.phase == MachinePhase::Completed)
        {
            let Some(d) = m
                .started_at
                .zip(m.finished_at)
                .and_then(|(s, f)| span(s, f))
            else {
                continue;
            };
            by_role
                .entry(roles.of_machine(&m.name).to_string())
                .or_default()
                .push(d);
        }
        let all: Vec<SignedDuration> = by_role.values().flatten().copied().collect();
        let n = all.len();
        Paces {
            any: median(all).map(|d| (d, n)),
            by_role: by_role
                .into_iter()
                .filter_map(|(r, d)| {
                    let n = d.len();
                    median(d).map(|m| (r, (m, n)))
                })
                .collect(),
        }
    }

    /// The pace of `role`'s machines, and how many it is the median of.
    fn of_role(&self, role: &str) -> Option<(SignedDuration, usize)> {
        self.by_role.get(role).copied()
    }

    /// The pace of `role`, else of every machine that finished (for the estimate).
    fn for_estimate(&self, role: &str) -> Option<SignedDuration> {
        self.of_role(role).or(self.any).map(|(d, _)| d)
    }
}

impl Operation {
    /// The operation's phase and since when, as far as the status says.
    fn phase_since(&self) -> Option<PhaseSince> {
        if let Some(c) = self.lock_condition()
            && matches!(self.phase, Phase::Pending | Phase::Unknown)
        {
            return c.last_transition_time.map(PhaseSince::WaitingForLock);
        }
        match &self.phase {
            Phase::Running => {
                let resumed = self
                    .paused_at
                    .filter(|_| !self.paused)
                    .filter(|r| self.started_at.is_none_or(|s| *r > s));
                resumed.or(self.started_at).map(PhaseSince::Running)
            }
            Phase::Paused => self.paused_at.map(PhaseSince::Paused),
            Phase::Pending | Phase::Unknown => self.created_at.map(PhaseSince::Pending),
            _ => None,
        }
    }

    /// The pace so far of each role that has one (the median time of its machines that
    /// finished), in the roles' order.
    pub fn role_paces(&self, roles: &Roles) -> Vec<SignedDuration> {
        Paces::of(self, roles)
            .by_role
            .into_values()
            .map(|(d, _)| d)
            .collect()
    }

    /// The operation's times as of `now`: its phase, each running machine's time against the
    /// pace of its role, and the estimate of the end.
    pub fn timing(&self, roles: &Roles, rule: SlowRule, now: Timestamp) -> Timing {
        let paces = Paces::of(self, roles);
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
        let estimate = self.estimate(roles, &paces, &running);
        Timing {
            phase: self.phase_since(),
            running,
            estimate,
        }
    }

    fn estimate(&self, roles: &Roles, paces: &Paces, running: &[MachineTime]) -> Estimate {
        let walks = self.kind.is_some_and(OperationKind::touches_machines);
        if self.phase != Phase::Running || !walks || self.machines.is_empty() {
            return Estimate::None;
        }
        if paces.any.is_none() {
            return Estimate::NoPaceYet;
        }
        let pace = |name: &str| paces.for_estimate(roles.of_machine(name));
        let running_left = running
            .iter()
            .filter_map(|m| pace(&m.name).map(|p| p.saturating_sub(m.in_step)))
            .filter(|d| d.is_positive())
            .max()
            .unwrap_or(SignedDuration::ZERO)
            .min(MAX_ESTIMATE);
        let mut left = running_left;
        for step in self.steps_left(roles) {
            let t = step.iter().filter_map(|m| pace(m)).max();
            left = left
                .checked_add(t.unwrap_or(SignedDuration::ZERO))
                .unwrap_or(MAX_ESTIMATE)
                .min(MAX_ESTIMATE);
        }
        Estimate::About {
            left,
            running_left: running_left.min(left),
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

#[cfg(test)]
mod tests;
