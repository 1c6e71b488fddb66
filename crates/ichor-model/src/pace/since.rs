//! Since when the operation is in its phase, each from the moment its words name: Running since
//! it started or was last resumed, Pausing since the pause was asked for (the history's entry),
//! Paused since the pause took effect, waiting for the lock since the condition said so.
//!
//! The controller records no time for a pause taking effect. A pause stops the next step from
//! starting; the step under way when it was asked runs to its end. So a pause took effect when
//! it was asked or when the last step under way then finished, whichever is later; a pause a
//! failed machine caused, when that machine failed.

use super::PhaseSince;
use crate::{HistoryAction, MachinePhase, Operation, Phase, last_pause_or_resume};
use jiff::Timestamp;

impl Operation {
    /// When the last pause was asked for, if the last pause or resume asked was a pause.
    fn pause_asked_at(&self) -> Option<Timestamp> {
        match last_pause_or_resume(&self.history) {
            Some(e) => (e.action == HistoryAction::Pause).then_some(e.at).flatten(),
            // Paused before the history was kept: the older annotations say who last paused or
            // resumed; `spec.paused` says which.
            None => self.paused_at.filter(|_| self.paused),
        }
    }

    /// When the last resume was asked for, if the last pause or resume asked was a resume.
    fn resume_asked_at(&self) -> Option<Timestamp> {
        match last_pause_or_resume(&self.history) {
            Some(e) => (e.action == HistoryAction::Resume)
                .then_some(e.at)
                .flatten(),
            None => self.paused_at.filter(|_| !self.paused),
        }
    }

    /// The latest time a machine finished its step.
    fn last_finish(&self) -> Option<Timestamp> {
        self.machines.iter().filter_map(|m| m.finished_at).max()
    }

    /// When the pause now in force took effect, as far as the status says.
    fn paused_since(&self) -> Option<Timestamp> {
        if self.paused_by_failure() {
            let failed = self
                .machines
                .iter()
                .filter(|m| m.phase == MachinePhase::Failed)
                .filter_map(|m| m.finished_at)
                .max();
            return failed.or_else(|| self.last_finish());
        }
        match (self.pause_asked_at(), self.last_finish()) {
            (Some(asked), Some(finished)) => Some(asked.max(finished)),
            (Some(asked), None) => Some(asked),
            // Paused by a hand edit (no entry): the last step's end is the latest it can be.
            (None, finished) => finished.or(self.started_at).or(self.created_at),
        }
    }

    /// The operation's phase and since when, as far as the status and the history say.
    pub(super) fn phase_since(&self) -> Option<PhaseSince> {
        if let Some(c) = self.lock_condition()
            && matches!(self.phase, Phase::Pending | Phase::Unknown)
        {
            return c.last_transition_time.map(PhaseSince::WaitingForLock);
        }
        match &self.phase {
            Phase::Running | Phase::Pending | Phase::Unknown if self.paused => {
                self.pause_asked_at().map(PhaseSince::Pausing)
            }
            Phase::Running => {
                let resumed = self
                    .resume_asked_at()
                    .filter(|r| self.started_at.is_none_or(|s| *r > s));
                resumed.or(self.started_at).map(PhaseSince::Running)
            }
            Phase::Paused => self.paused_since().map(PhaseSince::Paused),
            Phase::Pending | Phase::Unknown => self.created_at.map(PhaseSince::Pending),
            _ => None,
        }
    }
}
