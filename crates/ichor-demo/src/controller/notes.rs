//! What the controller tells about an operation as it carries it out: the Events it records,
//! read off the difference between an operation's status before and after a pass (so a
//! status write that loses a race records nothing, and the next pass tells it again).
//!
//! On the TalosOperation: `Started`, `WaitingForLock`, `Paused`, `Resumed`, `PassStarted` and
//! `AwaitingCredentials` (CA rotation), `Completed`, and the Warnings `MachineFailed` and
//! `Failed`. On each Machine, `related` to the operation: `StepStarted`, `StepCompleted` and
//! the Warnings `StepSlow` and `StepFailed`. On an object the controller cannot read (an operation, a cluster
//! or a machine), the Warning `Unreadable`, once per resourceVersion.

use ichor_resources::{MachineSteps, OperationKind, TalosOperationStatus, parse_time};

/// The reasons the controller records, as Events carry them.
pub mod reasons {
    /// The operation took the cluster lock and started (Normal, on the operation).
    pub const STARTED: &str = "Started";
    /// Another operation holds the cluster lock (Normal, on the operation).
    pub const WAITING_FOR_LOCK: &str = "WaitingForLock";
    /// `spec.paused`: no further step starts (Normal, on the operation).
    pub const PAUSED: &str = "Paused";
    /// `spec.paused` cleared: the next step starts (Normal, on the operation).
    pub const RESUMED: &str = "Resumed";
    /// A CA rotation pass started (Normal, on the operation).
    pub const PASS_STARTED: &str = "PassStarted";
    /// A CA rotation waits for the new credentials to be picked up (Normal, on the operation).
    pub const AWAITING_CREDENTIALS: &str = "AwaitingCredentials";
    /// Every machine done (Normal, on the operation).
    pub const COMPLETED: &str = "Completed";
    /// A machine failed; the operation is paused for good (Warning, on the operation).
    pub const MACHINE_FAILED: &str = "MachineFailed";
    /// The operation failed (Warning, on the operation).
    pub const FAILED: &str = "Failed";
    /// A machine's step started (Normal, on the machine).
    pub const STEP_STARTED: &str = "StepStarted";
    /// A machine's step finished (Normal, on the machine).
    pub const STEP_COMPLETED: &str = "StepCompleted";
    /// A machine's step failed (Warning, on the machine).
    pub const STEP_FAILED: &str = "StepFailed";
    /// A machine's step takes longer than it should; what it waits for (Warning, on the
    /// machine).
    pub const STEP_SLOW: &str = "StepSlow";
    /// An object cannot be read as its type: it is skipped (Warning, on the object).
    pub const UNREADABLE: &str = "Unreadable";
}

/// What an Event is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Regarding {
    Operation,
    Machine(String),
}

/// An Event's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Severity {
    Normal,
    Warning,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Normal => "Normal",
            Severity::Warning => "Warning",
        }
    }
}

/// One Event to record about an operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) regarding: Regarding,
    pub(crate) severity: Severity,
    pub(crate) reason: &'static str,
    /// What was done (events.k8s.io's `action`).
    pub(crate) action: &'static str,
    pub(crate) message: String,
}

impl Note {
    fn on_operation(reason: &'static str, action: &'static str, message: String) -> Note {
        Note {
            regarding: Regarding::Operation,
            severity: Severity::Normal,
            reason,
            action,
            message,
        }
    }

    fn on_machine(machine: &str, reason: &'static str, message: String) -> Note {
        Note {
            regarding: Regarding::Machine(machine.to_string()),
            severity: Severity::Normal,
            reason,
            action: "Step",
            message,
        }
    }

    fn warning(mut self) -> Note {
        self.severity = Severity::Warning;
        self
    }

    /// Another operation holds the cluster lock.
    pub(crate) fn waiting_for_lock(cluster: &str, holder: &str) -> Note {
        Note::on_operation(
            reasons::WAITING_FOR_LOCK,
            "WaitForLock",
            format!("Waiting for the cluster lock of {cluster}, held by {holder}"),
        )
    }

    /// The operation failed for `reason`.
    pub(crate) fn failed(reason: &str) -> Note {
        Note::on_operation(reasons::FAILED, "Fail", format!("Failed: {reason}")).warning()
    }

    /// A machine's step started, doing `doing`.
    pub(crate) fn step_started(op: &str, machine: &str, doing: &str) -> Note {
        Note::on_machine(machine, reasons::STEP_STARTED, format!("{op}: {doing}"))
    }

    /// A machine's step finished, leaving it `done`.
    pub(crate) fn step_completed(op: &str, machine: &str, done: &str) -> Note {
        Note::on_machine(machine, reasons::STEP_COMPLETED, format!("{op}: {done}"))
    }

    /// A `kind` object that cannot be read, `why`, and what the controller does about it
    /// (`skipped`). Recorded on that object with `Recorder::record_on` (`regarding` is not
    /// looked at there).
    pub(crate) fn unreadable(kind: &str, why: &str, skipped: &str) -> Note {
        Note::on_operation(
            reasons::UNREADABLE,
            "Skip",
            format!("Cannot read this {kind} ({why}); {skipped}"),
        )
        .warning()
    }

    /// A machine's step failed with `error`: on the machine, then on the operation.
    pub(crate) fn step_failed(op: &str, machine: &str, error: &str) -> [Note; 2] {
        [
            Note::on_machine(machine, reasons::STEP_FAILED, format!("{op}: {error}")).warning(),
            Note::on_operation(
                reasons::MACHINE_FAILED,
                "Pause",
                format!(
                    "Machine {machine} failed: {error}. The operation is paused: nothing retries and nothing is rolled back; delete it and start again"
                ),
            )
            .warning(),
        ]
    }
}

/// What a slow machine's step says once it has taken two ordinary steps.
pub(crate) const SLOW_MESSAGE: &str =
    "still waiting for the machine to report Ready after the reboot";

/// What the notes of one operation need to know besides its status.
pub(crate) struct Context<'a> {
    pub(crate) operation: &'a str,
    pub(crate) kind: OperationKind,
    pub(crate) cluster: &'a str,
    /// The version or mode it goes to (empty when none).
    pub(crate) target: &'a str,
    pub(crate) plan: &'a MachineSteps,
}

impl Context<'_> {
    /// `Started`: what the operation does, to how many machines in how many steps.
    pub(crate) fn started(&self) -> Note {
        let target = match self.target {
            "" => String::new(),
            t => format!(" to {t}"),
        };
        let machines = self.plan.order().count();
        let work = match (self.kind, machines) {
            (OperationKind::Ichor, _) => "no machine steps".to_string(),
            (_, n) => format!("{n} machines in {} steps", self.plan.steps.len()),
        };
        let held = match self.plan.held.len() {
            0 => String::new(),
            n => format!(", {n} held and skipped"),
        };
        let passes = match self.kind {
            OperationKind::CaRotation => ", in 5 passes",
            _ => "",
        };
        Note::on_operation(
            reasons::STARTED,
            "Start",
            format!(
                "Started the {} operation on cluster {}{target}: {work}{held}{passes}",
                self.kind.as_str(),
                self.cluster
            ),
        )
    }
}

/// The notes of a pass that changed an operation's status from `old` to `new`, in the order
/// the things they tell happened.
pub(crate) fn notes(
    ctx: &Context,
    old: &TalosOperationStatus,
    new: &TalosOperationStatus,
) -> Vec<Note> {
    let mut out = Vec::new();
    if old.started_at.is_none() && new.started_at.is_some() {
        out.push(ctx.started());
    }
    if old.phase == "Paused" && new.phase == "Running" {
        out.push(Note::on_operation(
            reasons::RESUMED,
            "Resume",
            "Resumed: the next step starts".into(),
        ));
    }
    out.extend(pass_notes(old, new));
    out.extend(machine_notes(ctx.operation, old, new));
    if old.phase != "Paused" && new.phase == "Paused" && new.failure_reason.is_none() {
        out.push(Note::on_operation(
            reasons::PAUSED,
            "Pause",
            "Paused (spec.paused): no further step starts until it is resumed".into(),
        ));
    }
    if old.phase != "Completed" && new.phase == "Completed" {
        out.push(completed(new));
    }
    out
}

/// The machines whose step started, finished or failed.
fn machine_notes(op: &str, old: &TalosOperationStatus, new: &TalosOperationStatus) -> Vec<Note> {
    let mut out = Vec::new();
    for m in &new.machines {
        let before = old
            .machines
            .iter()
            .find(|o| o.name == m.name)
            .map_or("", |o| o.phase.as_str());
        match (before, m.phase.as_str()) {
            ("Running", "Running") if m.message == SLOW_MESSAGE => {
                let was = old.machines.iter().find(|o| o.name == m.name);
                if was.is_some_and(|o| o.message != m.message) {
                    out.push(
                        Note::on_machine(
                            &m.name,
                            reasons::STEP_SLOW,
                            format!("{op}: {}", m.message),
                        )
                        .warning(),
                    );
                }
            }
            ("Running", "Running") => {}
            (_, "Running") => out.push(Note::step_started(op, &m.name, &m.message)),
            ("Running", "Completed") => out.push(Note::step_completed(op, &m.name, &m.message)),
            ("Running", "Failed") => out.extend(Note::step_failed(op, &m.name, &m.message)),
            _ => {}
        }
    }
    out
}

/// A CA rotation's next pass, or its wait for the credentials.
fn pass_notes(old: &TalosOperationStatus, new: &TalosOperationStatus) -> Option<Note> {
    let (Some(before), Some(now)) = (&old.ca_rotation, &new.ca_rotation) else {
        return None;
    };
    if before.pass == now.pass && before.stage == now.stage {
        return None;
    }
    let (reason, action, message) = if now.stage == "AwaitingCredentials" {
        (
            reasons::AWAITING_CREDENTIALS,
            "WaitForCredentials",
            format!(
                "Pass {} of {}: waiting for the new credentials to be picked up",
                now.pass, now.passes
            ),
        )
    } else {
        (
            reasons::PASS_STARTED,
            "Rotate",
            format!("Pass {} of {}: {}", now.pass, now.passes, now.stage),
        )
    };
    Some(Note::on_operation(reason, action, message))
}

/// `Completed`: how many machines, how many skipped, how long it took.
fn completed(st: &TalosOperationStatus) -> Note {
    let done = st
        .machines
        .iter()
        .filter(|m| m.phase == "Completed")
        .count();
    let skipped = st.machines.iter().filter(|m| m.phase == "Skipped").count();
    let took = match (
        st.started_at.as_deref().and_then(parse_time),
        st.finished_at.as_deref().and_then(parse_time),
    ) {
        (Some(a), Some(b)) => format!(" in {}", short_duration(b.duration_since(a))),
        _ => String::new(),
    };
    let skipped = match skipped {
        0 => String::new(),
        n => format!(", {n} skipped"),
    };
    Note::on_operation(
        reasons::COMPLETED,
        "Complete",
        format!("Completed: {done} machines done{skipped}{took}"),
    )
}

/// `1h2m`, `3m4s`, `5s`.
fn short_duration(d: jiff::SignedDuration) -> String {
    let s = d.as_secs().max(0);
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ichor_resources::{CaRotationStatus, MachineProgress};

    fn machine(name: &str, phase: &str, message: &str) -> MachineProgress {
        MachineProgress {
            name: name.into(),
            phase: phase.into(),
            message: message.into(),
            ..Default::default()
        }
    }

    fn status(phase: &str, machines: Vec<MachineProgress>) -> TalosOperationStatus {
        TalosOperationStatus {
            phase: phase.into(),
            machines,
            started_at: Some("2026-11-29T10:00:00Z".into()),
            ..Default::default()
        }
    }

    fn reasons_of(notes: &[Note]) -> Vec<(&str, Option<&str>)> {
        notes
            .iter()
            .map(|n| match &n.regarding {
                Regarding::Operation => (n.reason, None),
                Regarding::Machine(m) => (n.reason, Some(m.as_str())),
            })
            .collect()
    }

    #[test]
    fn transitions_make_notes() {
        let plan = MachineSteps::default();
        let ctx = Context {
            operation: "op",
            kind: OperationKind::Talos,
            cluster: "c1",
            target: "v1.9.3",
            plan: &plan,
        };
        let none = TalosOperationStatus::default();
        let started = status("Running", vec![machine("a", "Pending", "")]);
        assert_eq!(
            reasons_of(&notes(&ctx, &none, &started)),
            [("Started", None)]
        );
        let running = status("Running", vec![machine("a", "Running", "installing")]);
        let got = notes(&ctx, &started, &running);
        assert_eq!(reasons_of(&got), [("StepStarted", Some("a"))]);
        assert_eq!(got[0].message, "op: installing");
        assert!(
            notes(&ctx, &running, &running).is_empty(),
            "no change, no note"
        );
        let mut failed = status("Paused", vec![machine("a", "Failed", "exit 1")]);
        failed.failure_reason = Some("machine a failed: exit 1".into());
        let got = notes(&ctx, &running, &failed);
        assert_eq!(
            reasons_of(&got),
            [("StepFailed", Some("a")), ("MachineFailed", None)]
        );
        assert!(got.iter().all(|n| n.severity == Severity::Warning));
        let paused = status("Paused", vec![machine("a", "Completed", "done")]);
        assert_eq!(
            reasons_of(&notes(&ctx, &running, &paused)),
            [("StepCompleted", Some("a")), ("Paused", None)]
        );
        let resumed = status("Running", vec![machine("a", "Completed", "done")]);
        assert_eq!(
            reasons_of(&notes(&ctx, &paused, &resumed)),
            [("Resumed", None)]
        );
        let mut done = resumed.clone();
        done.phase = "Completed".into();
        done.finished_at = Some("2026-11-29T10:02:03Z".into());
        let got = notes(&ctx, &resumed, &done);
        assert_eq!(got[0].message, "Completed: 1 machines done in 2m3s");
    }

    #[test]
    fn ca_passes_make_notes() {
        let ca = |pass: i32, stage: &str| {
            let mut st = status("Running", Vec::new());
            st.ca_rotation = Some(CaRotationStatus {
                stage: stage.into(),
                pass,
                passes: 5,
            });
            st
        };
        let plan = MachineSteps::default();
        let ctx = Context {
            operation: "op",
            kind: OperationKind::CaRotation,
            cluster: "c1",
            target: "",
            plan: &plan,
        };
        let got = notes(&ctx, &ca(1, "Accepting"), &ca(2, "Issuing"));
        assert_eq!(got[0].message, "Pass 2 of 5: Issuing");
        let got = notes(&ctx, &ca(3, "Issuing"), &ca(3, "AwaitingCredentials"));
        assert_eq!(got[0].reason, "AwaitingCredentials");
    }
}
