//! The estimate of the end, and what it rests on:
//! - each step to come takes the pace of its slowest role ([`Paces::for_estimate`]): this run's
//!   pace of the role, else the last completed runs' (said so), else this run's of any role;
//! - a running machine within its pace has the rest of its pace left; one past its pace is
//!   expected to need its overrun again, so the estimate grows while it runs on, never stays;
//! - a slow machine ([`super::SlowRule`]) has no end anyone can say: the estimate names it and
//!   says the rest after it;
//! - nothing is estimated while no step will start (pausing, paused, stopped by a failure):
//!   the machines left are counted instead.

use super::{Estimate, MAX_ESTIMATE, MachineTime, PaceBasis, Paces, Roles};
use crate::{Operation, OperationKind, Phase};
use jiff::SignedDuration;

/// What a running machine has left at `pace`: the rest of it, or past it, its overrun again.
fn running_left(m: &MachineTime, pace: SignedDuration) -> (SignedDuration, bool) {
    match pace.checked_sub(m.in_step) {
        Some(left) if !left.is_negative() => (left, false),
        _ => (m.in_step.saturating_sub(pace).min(MAX_ESTIMATE), true),
    }
}

fn capped(a: SignedDuration, b: SignedDuration) -> SignedDuration {
    a.checked_add(b).unwrap_or(MAX_ESTIMATE).min(MAX_ESTIMATE)
}

/// The estimate of `op`, whose running machines are `running`.
pub(super) fn of(
    op: &Operation,
    roles: &Roles,
    paces: &Paces<'_>,
    running: &[MachineTime],
) -> Estimate {
    let walks = op.kind.is_some_and(OperationKind::touches_machines);
    if op.phase.is_finished() || !walks || op.machines.is_empty() {
        return Estimate::None;
    }
    let halted = op.paused || op.phase == Phase::Paused;
    if halted {
        let a = op.advance();
        return Estimate::Halted {
            machines_left: a.total.saturating_sub(a.done),
            failed: op.paused_by_failure(),
        };
    }
    if op.phase != Phase::Running {
        return Estimate::None;
    }
    if paces.for_estimate(super::UNKNOWN_ROLE).is_none() {
        return Estimate::NoPaceYet;
    }
    let mut prior_used = false;
    let mut pace = |name: &str| {
        let (d, prior) = paces.for_estimate(roles.of_machine(name))?;
        prior_used |= prior;
        Some(d)
    };
    // The steps under way, but for the slow machines.
    let (mut under_way, mut growing) = (SignedDuration::ZERO, false);
    for m in running.iter().filter(|m| !m.slow) {
        if let Some(p) = pace(&m.name) {
            let (left, past) = running_left(m, p);
            under_way = under_way.max(left);
            growing |= past;
        }
    }
    let mut rest = SignedDuration::ZERO;
    for step in op.steps_left(roles) {
        let t = step.iter().filter_map(|m| pace(m)).max();
        rest = capped(rest, t.unwrap_or(SignedDuration::ZERO));
    }
    let basis = match prior_used {
        true => PaceBasis::PriorRuns(paces.prior_runs()),
        false => PaceBasis::SoFar,
    };
    let left = capped(under_way, rest);
    let slowest = running.iter().filter(|m| m.slow).max_by_key(|m| m.in_step);
    if let Some(s) = slowest {
        return Estimate::AfterSlow {
            machine: s.name.clone(),
            slow_for: s.in_step,
            since: s.since,
            more: running.iter().filter(|m| m.slow).count().saturating_sub(1),
            then: left,
            basis,
        };
    }
    Estimate::About {
        left,
        running_left: under_way.min(left),
        growing,
        basis,
    }
}
