//! How far an operation is, said the same way for a list row (a summary) and a page (the full
//! status): one function, so the two never disagree.
//!
//! A CA rotation walks every machine once per pass, and the controller sets every machine back
//! to Pending when a pass begins: counted per pass, a rotation would read "4/4" at the end of
//! pass 1 and "0/4" a moment later. Its progress is therefore counted in machine passes over the
//! whole rotation ("4/20": pass 1 done, pass 2 not begun), which reads the same on both sides of
//! that moment.

use super::{CaRotation, Operation, Phase, Progress};
use crate::kind::{CA_PASSES, ca_pass_of_stage};

/// A CA rotation's pass, as "Pass n of N: Stage" says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RotationPass {
    /// 1-based.
    pub pass: i32,
    pub passes: i32,
    /// As the controller wrote it (`Accepting`, `Issuing`, `AwaitingCredentials`, `Dropping`),
    /// empty when the status names none.
    pub stage: String,
}

/// The stage in which the controller has handed the new credentials over and waits for them to
/// be fetched (ADR 0091).
pub const AWAITING_CREDENTIALS: &str = "AwaitingCredentials";

impl CaRotation {
    /// The rotation waits for the operator to fetch the new credentials.
    pub fn awaits_credentials(&self) -> bool {
        self.stage == AWAITING_CREDENTIALS
    }

    /// The pass, from the status's counts; when it carries none, the pass its stage names (as
    /// the ADR's caStageProgress does) out of the rotation's 5. `None` before anything is known
    /// (no counts, no stage this build knows): never "Pass 0 of 0".
    pub fn pass_view(&self) -> Option<RotationPass> {
        let pass = match self.pass {
            p if p > 0 => p,
            _ => ca_pass_of_stage(&self.stage)?,
        };
        let passes = match self.passes {
            n if n > 0 => n,
            _ => CA_PASSES,
        };
        Some(RotationPass {
            pass,
            passes,
            stage: self.stage.clone(),
        })
    }
}

/// How far an operation is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advance {
    /// Machines done, over the machines it handles (not skipped); for a CA rotation, machine
    /// passes done over every machine's passes.
    pub done: usize,
    pub total: usize,
    /// A CA rotation's pass, when known.
    pub rotation: Option<RotationPass>,
    /// The machines done in this pass, over those of the pass (for every kind: its machines).
    pub(crate) pass_done: usize,
    pub(crate) pass_total: usize,
}

impl Advance {
    /// The part of the work done, 0 to 1.
    pub(crate) fn fraction(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        (self.done as f64 / self.total as f64).clamp(0.0, 1.0)
    }
}

impl Operation {
    /// The machines counted: the summary a list row carries, or the machine list of a page.
    fn counted(&self) -> Progress {
        match &self.summary {
            Some(p) => p.clone(),
            None => Progress::of(&self.machines),
        }
    }

    /// How far the operation is, the same from a summary as from the full status.
    pub fn advance(&self) -> Advance {
        let p = self.counted();
        let (pass_done, pass_total) = (p.done.min(p.total), p.total);
        let rotation = self.ca_rotation.as_ref().and_then(CaRotation::pass_view);
        let completed = self.phase == Phase::Completed;
        let (done, total) = match &rotation {
            Some(r) => {
                let passes = usize::try_from(r.passes).unwrap_or(0);
                let before = usize::try_from(r.pass - 1).unwrap_or(0).min(passes);
                let total = pass_total * passes;
                let done = if completed {
                    total
                } else {
                    (before * pass_total + pass_done).min(total)
                };
                (done, total)
            }
            None => (pass_done, pass_total),
        };
        Advance {
            done,
            total,
            rotation,
            pass_done,
            pass_total,
        }
    }

    /// A CA rotation that has handed the new credentials over (it awaits them, drops the old
    /// CA, or completed): the old credentials of its cluster stop working from here on.
    pub fn credentials_handed_over(&self) -> bool {
        if self.kind != Some(super::OperationKind::CaRotation) {
            return false;
        }
        let Some(ca) = &self.ca_rotation else {
            return self.phase == Phase::Completed;
        };
        // The hand-off follows the last issuing pass; every pass after it drops the old CA.
        let dropping = ca
            .pass_view()
            .zip(ca_pass_of_stage(AWAITING_CREDENTIALS))
            .is_some_and(|(r, handover)| r.pass > handover);
        self.phase == Phase::Completed || ca.awaits_credentials() || dropping
    }

    /// The part of the work done, 0 to 1: a completed operation is whole.
    pub fn fraction(&self) -> f64 {
        if self.phase == Phase::Completed {
            return 1.0;
        }
        self.advance().fraction()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MachinePhase, MachineProgress, OperationKind};

    fn rotation(stage: &str, pass: i32, passes: i32, phases: &[MachinePhase]) -> Operation {
        Operation {
            kind: Some(OperationKind::CaRotation),
            phase: Phase::Running,
            ca_rotation: Some(CaRotation {
                stage: stage.into(),
                pass,
                passes,
            }),
            machines: phases
                .iter()
                .enumerate()
                .map(|(i, p)| MachineProgress {
                    name: format!("m{i}"),
                    phase: p.clone(),
                    message: String::new(),
                    started_at: None,
                    finished_at: None,
                })
                .collect(),
            ..Operation::default()
        }
    }

    use MachinePhase::{Completed as Done, Pending};

    #[test]
    fn a_pass_is_derived_from_the_stage_when_the_status_counts_none() {
        let view = |stage: &str, pass, passes| {
            rotation(stage, pass, passes, &[])
                .ca_rotation
                .unwrap()
                .pass_view()
                .map(|r| (r.pass, r.passes))
        };
        assert_eq!(view("Issuing", 3, 5), Some((3, 5)), "counts win");
        assert_eq!(view("Accepting", 0, 0), Some((1, 5)));
        assert_eq!(view("Issuing", 0, 0), Some((2, 5)));
        assert_eq!(view("AwaitingCredentials", 0, 0), Some((3, 5)));
        assert_eq!(view("Dropping", 0, 0), Some((4, 5)));
        assert_eq!(
            view("Dropping", 5, 0),
            Some((5, 5)),
            "a pass without passes"
        );
        assert_eq!(view("", 0, 0), None, "never Pass 0 of 0");
        assert_eq!(view("Unheard-of", 0, 0), None);
    }

    #[test]
    fn the_end_of_a_pass_and_the_start_of_the_next_read_the_same() {
        let end_of_1 = rotation("Accepting", 1, 5, &[Done, Done, Done, Done]);
        let start_of_2 = rotation("Issuing", 2, 5, &[Pending, Pending, Pending, Pending]);
        let a = end_of_1.advance();
        let b = start_of_2.advance();
        assert_eq!((a.done, a.total), (4, 20));
        assert_eq!((b.done, b.total), (a.done, a.total));
        assert_eq!(a.fraction(), 0.2);
        let waiting = rotation("AwaitingCredentials", 3, 5, &[Done, Done, Done, Done]);
        assert_eq!(waiting.advance().done, 12);
    }

    #[test]
    fn a_summary_and_the_full_status_advance_alike() {
        let full = rotation(
            "Issuing",
            3,
            5,
            &[Done, Done, MachinePhase::Running, Pending],
        );
        let summary = full.clone().summarized();
        // An unfinished operation's summary keeps its machines' phases and times.
        assert_eq!(summary.machines.len(), full.machines.len());
        assert_eq!(summary.advance(), full.advance());
        assert_eq!(full.advance().done, 10);
        let derived = rotation("Dropping", 0, 0, &[Done, Pending]);
        assert_eq!(derived.clone().summarized().advance(), derived.advance());
        assert_eq!((derived.advance().done, derived.advance().total), (7, 10));
    }

    #[test]
    fn the_credentials_are_handed_over_after_the_last_issuing_pass() {
        let at = |stage: &str, pass| rotation(stage, pass, 5, &[]).credentials_handed_over();
        assert!(!at("Accepting", 1));
        assert!(!at("Issuing", 3));
        assert!(at("AwaitingCredentials", 3));
        assert!(at("Dropping", 4));
        assert!(at("Dropping", 0), "from the stage alone");
        let mut done = rotation("Dropping", 5, 5, &[]);
        done.phase = Phase::Completed;
        assert!(done.credentials_handed_over());
        done.kind = Some(OperationKind::Talos);
        assert!(!done.credentials_handed_over());
    }

    #[test]
    fn other_kinds_count_their_machines() {
        let mut op = rotation("", 0, 0, &[Done, Pending, MachinePhase::Skipped]);
        op.ca_rotation = None;
        op.kind = Some(OperationKind::Talos);
        let a = op.advance();
        assert_eq!((a.done, a.total, a.rotation), (1, 2, None));
        op.phase = Phase::Completed;
        assert_eq!(op.fraction(), 1.0);
        assert_eq!(
            op.advance().done,
            1,
            "the machines as counted, not rounded up"
        );
        assert_eq!(Operation::default().advance().total, 0);
    }
}
