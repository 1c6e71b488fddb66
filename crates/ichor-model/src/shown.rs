//! The words a list row shows of an operation, as message ids: its state ("✗ Paused: failed")
//! and its kind ("Talos upgrade"), and the filter's match against them. The server filters
//! without knowing the language on screen, so a row matches the words of every shipped
//! language: `/failed` finds the row that reads "Paused: failed", `/失敗` the same row read in
//! Japanese.

use super::{Condition, OperationKind, Phase};
use std::collections::HashMap;
use std::sync::LazyLock;

/// What the STATE column says of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateWord {
    /// The object cannot be read.
    Unreadable,
    /// A delete that finalizers hold.
    Deleting,
    /// Paused because a machine failed.
    PausedFailed,
    /// Waits for the cluster lock another operation holds.
    WaitingLock,
    /// A pause was asked for; the controller has not acted on it yet.
    Pausing,
    New,
    Pending,
    Running,
    Paused,
    Completed,
    Failed,
    /// A phase this version does not know: the row shows it as it is.
    Other,
}

/// What decides an operation's [`StateWord`].
pub struct StateOf<'a> {
    pub phase: &'a Phase,
    pub paused: bool,
    /// It records a failure reason.
    pub failed: bool,
    pub conditions: &'a [Condition],
    pub deleting: bool,
    pub unreadable: bool,
}

impl StateWord {
    /// The message id of its word.
    pub fn id(self) -> &'static str {
        match self {
            StateWord::Unreadable => "state-unreadable",
            StateWord::Deleting => "state-deleting",
            StateWord::PausedFailed => "state-paused-failed",
            StateWord::WaitingLock => "state-waiting-lock",
            StateWord::Pausing => "state-pausing",
            StateWord::New => "phase-new",
            StateWord::Pending => "phase-pending",
            StateWord::Running => "phase-running",
            StateWord::Paused => "phase-paused",
            StateWord::Completed => "phase-completed",
            StateWord::Failed => "phase-failed",
            StateWord::Other => "phase-other",
        }
    }

    /// The state an operation's parts say. A pause caused by a failure and a pause asked for
    /// but not yet taken are told apart.
    pub fn of(s: StateOf<'_>) -> StateWord {
        if s.unreadable {
            return StateWord::Unreadable;
        }
        if s.deleting {
            return StateWord::Deleting;
        }
        if *s.phase == Phase::Paused && s.failed {
            return StateWord::PausedFailed;
        }
        match s.phase {
            Phase::Pending | Phase::Unknown if lock_holder(s.conditions).is_some() => {
                StateWord::WaitingLock
            }
            Phase::Running | Phase::Pending | Phase::Unknown if s.paused => StateWord::Pausing,
            Phase::Unknown => StateWord::New,
            Phase::Pending => StateWord::Pending,
            Phase::Running => StateWord::Running,
            Phase::Paused => StateWord::Paused,
            Phase::Completed => StateWord::Completed,
            Phase::Failed => StateWord::Failed,
            Phase::Other(_) => StateWord::Other,
        }
    }

    /// Whether its word, in any shipped language, contains `needle_lower` (lower case). A
    /// phase this version does not know is shown as it is, and matched so elsewhere.
    pub fn matches(self, needle_lower: &str) -> bool {
        self != StateWord::Other && said_as(self.id(), needle_lower)
    }
}

/// Whether the kind's words (long and short, in any shipped language) contain `needle_lower`.
pub fn kind_matches(kind: OperationKind, needle_lower: &str) -> bool {
    said_as(&format!("kind-{}", kind.as_str()), needle_lower)
        || said_as(&format!("kind-short-{}", kind.as_str()), needle_lower)
}

/// Who holds the cluster lock an operation with `conditions` waits for, when it waits: the
/// `ClusterLockHeld` condition, whose message names the holder ("cluster lock held by NAME",
/// ADR 0068); a message in another form is the holder's description as it is.
pub fn lock_holder(conditions: &[Condition]) -> Option<&str> {
    let c = conditions
        .iter()
        .find(|c| c.type_ == super::LOCK_HELD_CONDITION && c.status == "True")?;
    Some(
        c.message
            .strip_prefix(super::LOCK_HELD_PREFIX)
            .unwrap_or(&c.message),
    )
}

/// The words of the state and kind messages in every shipped language, lower case, made once.
static WORDS: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let states = [
        StateWord::Unreadable,
        StateWord::Deleting,
        StateWord::PausedFailed,
        StateWord::WaitingLock,
        StateWord::Pausing,
        StateWord::New,
        StateWord::Pending,
        StateWord::Running,
        StateWord::Paused,
        StateWord::Completed,
        StateWord::Failed,
    ]
    .map(|s| s.id().to_string());
    let kinds = OperationKind::ALL.iter().flat_map(|k| {
        [
            format!("kind-{}", k.as_str()),
            format!("kind-short-{}", k.as_str()),
        ]
    });
    states
        .into_iter()
        .chain(kinds)
        .map(|id| {
            let words = ichor_i18n::in_every_language(&id)
                .map(|w| w.to_lowercase())
                .collect();
            (id, words)
        })
        .collect()
});

fn said_as(id: &str, needle_lower: &str) -> bool {
    WORDS
        .get(id)
        .is_some_and(|words| words.iter().any(|w| w.contains(needle_lower)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(phase: Phase, paused: bool, failed: bool) -> StateWord {
        StateWord::of(StateOf {
            phase: &phase,
            paused,
            failed,
            conditions: &[],
            deleting: false,
            unreadable: false,
        })
    }

    #[test]
    fn the_state_words_match_in_either_language() {
        let failed_pause = state(Phase::Paused, true, true);
        assert_eq!(failed_pause, StateWord::PausedFailed);
        for needle in ["failed", "paused: f", "失敗"] {
            assert!(failed_pause.matches(needle), "{needle}");
        }
        assert!(!state(Phase::Running, false, false).matches("failed"));
        assert!(state(Phase::Running, true, false).matches("pausing"));
        assert!(!StateWord::Other.matches("unknown"), "shown as it is");
        assert!(kind_matches(OperationKind::Cni, "kube-proxy switch"));
        assert!(kind_matches(OperationKind::Talos, "upgrade"));
        assert!(!kind_matches(OperationKind::Shutdown, "upgrade"));
    }
}
