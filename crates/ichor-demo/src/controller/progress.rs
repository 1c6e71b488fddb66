//! Moving an operation along: its first status, and each step of a running one (finishing
//! the machines whose time has come, pausing, starting the next step, the CA passes).

use super::{Controller, name_of};
use ichor_resources::{
    CA_PASS_STAGES, CA_PASSES, CaRotationStatus, Machine, MachineProgress, MachineSteps,
    OperationKind, TalosOperationStatus, format_time, names, parse_time,
};
use jiff::{SignedDuration, Timestamp};

/// An operation's first status: every machine of the plan Pending in its order, the held
/// ones Skipped; Running (or Paused); the first CA pass of a CA rotation.
pub(super) fn start(
    st: &mut TalosOperationStatus,
    kind: OperationKind,
    plan: &MachineSteps,
    paused: bool,
    now: Timestamp,
) {
    st.machines = plan
        .order()
        .map(|n| MachineProgress {
            name: n.to_string(),
            phase: "Pending".into(),
            ..Default::default()
        })
        .chain(plan.held.iter().map(|(n, reason)| MachineProgress {
            name: n.clone(),
            phase: "Skipped".into(),
            message: format!("held: {reason}"),
            ..Default::default()
        }))
        .collect();
    st.phase = if paused { "Paused" } else { "Running" }.into();
    st.started_at = Some(format_time(now));
    if kind == OperationKind::CaRotation {
        st.ca_rotation = Some(CaRotationStatus {
            stage: CA_PASS_STAGES[0].0.into(),
            pass: 1,
            passes: CA_PASSES,
        });
    }
}

/// What moving a running operation along needs to know.
pub(super) struct Progress<'a> {
    pub(super) kind: OperationKind,
    /// The version or mode the operation goes to (see [`Controller::target_text`]).
    pub(super) target: String,
    /// The CA rotation's pass (0 for other kinds).
    pub(super) pass: i32,
    /// The cluster's machines.
    pub(super) machines: &'a [Machine],
    pub(super) now: Timestamp,
    /// How long one machine step takes.
    pub(super) step: SignedDuration,
}

impl Progress<'_> {
    /// One move of a Running operation: finish the step under way, or pause, or start the next
    /// step, or (every machine of the pass done) start the next CA pass, or complete.
    pub(super) fn advance_running(
        &self,
        paused: bool,
        plan: &MachineSteps,
        st: &mut TalosOperationStatus,
    ) {
        if st.machines.iter().any(|m| m.phase == "Running") {
            self.finish_due_machines(st);
            return;
        }
        if paused {
            st.phase = "Paused".into();
            return;
        }
        if self.start_next_step(plan, st) {
            return;
        }
        // Every machine of this pass is done.
        if self.kind == OperationKind::Ichor && self.elapsed(st.started_at.as_deref()) < self.step {
            return;
        }
        if self.next_ca_pass(st) {
            return;
        }
        st.phase = "Completed".into();
        st.finished_at = Some(format_time(self.now));
    }

    /// The time since `since` (zero when unknown).
    fn elapsed(&self, since: Option<&str>) -> SignedDuration {
        since
            .and_then(parse_time)
            .map(|t| self.now.duration_since(t))
            .unwrap_or(SignedDuration::ZERO)
    }

    /// Whether the demo data marks the machine `name` to fail this kind of operation.
    fn fails(&self, name: &str) -> bool {
        self.machines.iter().any(|x| {
            name_of(x) == name
                && x.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(names::DEMO_FAIL))
                    .is_some_and(|k| k == self.kind.as_str())
        })
    }

    /// How many times as long the machine `name`'s steps take: the demo data's
    /// [`names::DEMO_SLOW`] (a whole number from 1 to 100; anything else is 1).
    fn slowness(&self, name: &str) -> i32 {
        self.machines
            .iter()
            .find(|x| name_of(*x) == name)
            .and_then(|x| x.metadata.annotations.as_ref()?.get(names::DEMO_SLOW))
            .and_then(|v| v.trim().parse::<i32>().ok())
            .map_or(1, |n| n.clamp(1, 100))
    }

    /// The step under way: its machines whose time has come are done, or failed (which pauses
    /// the operation with the failure). A slow machine past two ordinary steps says what it
    /// waits for.
    fn finish_due_machines(&self, st: &mut TalosOperationStatus) {
        for m in st.machines.iter_mut().filter(|m| m.phase == "Running") {
            let slowness = self.slowness(&m.name);
            let took = self.elapsed(m.started_at.as_deref());
            let long = |n: i32| self.step.checked_mul(n).unwrap_or(SignedDuration::MAX);
            if took < long(slowness) {
                if slowness > 2 && took >= long(2) {
                    m.message = super::notes::SLOW_MESSAGE.into();
                }
                continue;
            }
            m.finished_at = Some(format_time(self.now));
            if self.fails(&m.name) {
                m.phase = "Failed".into();
                m.message = "installer exited with code 1: image verification failed".into();
                st.failure_reason = Some(format!("machine {} failed: {}", m.name, m.message));
                st.phase = "Paused".into();
            } else {
                m.phase = "Completed".into();
                m.message = Controller::done_message(self.kind, &self.target, self.pass);
            }
        }
    }

    /// Starts the first step of the plan that still has Pending machines; false when none has.
    fn start_next_step(&self, plan: &MachineSteps, st: &mut TalosOperationStatus) -> bool {
        let pending = |name: &str| {
            st.machines
                .iter()
                .any(|m| m.name == name && m.phase == "Pending")
        };
        let Some(step) = plan
            .steps
            .iter()
            .map(|s| s.iter().filter(|n| pending(n)).cloned().collect::<Vec<_>>())
            .find(|s| !s.is_empty())
        else {
            return false;
        };
        for m in st.machines.iter_mut().filter(|m| step.contains(&m.name)) {
            m.phase = "Running".into();
            m.started_at = Some(format_time(self.now));
            m.finished_at = None;
            m.message = Controller::running_message(self.kind, &self.target, self.pass);
        }
        true
    }

    /// A CA rotation whose pass is done moves on: after pass 3 it first awaits the new
    /// credentials for a step, then every machine is Pending again for the next pass. False
    /// when there is no pass left (or no CA rotation).
    fn next_ca_pass(&self, st: &mut TalosOperationStatus) -> bool {
        let Some(ca) = st.ca_rotation.as_mut().filter(|ca| ca.pass < CA_PASSES) else {
            return false;
        };
        let last_finish = st
            .machines
            .iter()
            .filter_map(|m| m.finished_at.as_deref().and_then(parse_time))
            .max()
            .unwrap_or(self.now);
        // Between the issuing and the dropping passes the controller hands the new
        // credentials over and waits briefly for them to be picked up.
        if ca.pass == 3 && ca.stage != "AwaitingCredentials" {
            ca.stage = "AwaitingCredentials".into();
            return true;
        }
        if ca.stage == "AwaitingCredentials" && self.now.duration_since(last_finish) < self.step {
            return true;
        }
        ca.pass += 1;
        let idx = usize::try_from(ca.pass - 1)
            .unwrap_or(0)
            .min(CA_PASS_STAGES.len() - 1);
        ca.stage = CA_PASS_STAGES[idx].0.into();
        for m in st.machines.iter_mut() {
            m.phase = "Pending".into();
            m.started_at = None;
            m.finished_at = None;
            m.message = String::new();
        }
        true
    }
}
