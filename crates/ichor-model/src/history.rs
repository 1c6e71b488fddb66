//! Who did what to an operation: every write made through OperationService (a start, a pause, a
//! resume, the kube-proxy confirmation) is kept on the operation itself as an entry naming the
//! person the service acted as, the time and the outcome (the annotation
//! `ichor.maesh.dev/history`, the last [`MAX_HISTORY`]), written in the same request as the
//! write; every one of them, a delete asked for too, is also an Event naming the person (a
//! delete request has no body to carry an entry: its Event is its record). It is cluster data: whoever may edit the operation may write anything there, so it is
//! read tolerantly (ichor-resources decodes it) and what is kept is bounded and made inert.

use crate::inert::{sanitize, truncate};
use jiff::Timestamp;

/// The most entries kept on an operation: the oldest go first.
pub const MAX_HISTORY: usize = 50;
/// The widest actor kept (Kubernetes user names are not bounded; a person's name fits).
pub const MAX_ACTOR: usize = 256;
/// The widest action or outcome word kept when this build does not know it.
const MAX_WORD: usize = 64;

/// What was done.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HistoryAction {
    Start,
    Pause,
    Resume,
    /// A delete was asked for (recorded as an Event; an entry of this action is read if a
    /// peer wrote one).
    Delete,
    /// The kube-proxy switch confirmed (the cluster's confirmation annotation set for the
    /// start's spec write, and removed again).
    ConfirmKubeProxySwitch,
    /// A word this build does not know, made inert and cut.
    Other(String),
}

impl HistoryAction {
    pub fn parse(s: &str) -> HistoryAction {
        match s {
            "start" => HistoryAction::Start,
            "pause" => HistoryAction::Pause,
            "resume" => HistoryAction::Resume,
            "delete" => HistoryAction::Delete,
            "confirm-kube-proxy-switch" => HistoryAction::ConfirmKubeProxySwitch,
            other => HistoryAction::Other(truncate(&sanitize(other), MAX_WORD)),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            HistoryAction::Start => "start",
            HistoryAction::Pause => "pause",
            HistoryAction::Resume => "resume",
            HistoryAction::Delete => "delete",
            HistoryAction::ConfirmKubeProxySwitch => "confirm-kube-proxy-switch",
            HistoryAction::Other(s) => s,
        }
    }
}

/// What came of it, as far as the write's own answer says.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HistoryOutcome {
    /// The operation was created (a start).
    Created,
    /// The write landed with the entry (a pause or resume asked: the controller acts on it
    /// next; the kube-proxy confirmation given).
    Applied,
    /// A delete was asked for.
    Asked,
    Other(String),
}

impl HistoryOutcome {
    pub fn parse(s: &str) -> HistoryOutcome {
        match s {
            "created" => HistoryOutcome::Created,
            "applied" => HistoryOutcome::Applied,
            "asked" => HistoryOutcome::Asked,
            other => HistoryOutcome::Other(truncate(&sanitize(other), MAX_WORD)),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            HistoryOutcome::Created => "created",
            HistoryOutcome::Applied => "applied",
            HistoryOutcome::Asked => "asked",
            HistoryOutcome::Other(s) => s,
        }
    }
}

/// One thing done to an operation, by whom and when.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HistoryEntry {
    pub action: HistoryAction,
    /// The person the service acted as (inert, at most [`MAX_ACTOR`] columns).
    pub actor: String,
    /// `None`: the entry's time could not be read.
    pub at: Option<Timestamp>,
    pub outcome: HistoryOutcome,
}

impl HistoryEntry {
    /// An entry as read from the cluster: the actor made inert and cut.
    pub fn read(action: &str, actor: &str, at: Option<Timestamp>, outcome: &str) -> HistoryEntry {
        HistoryEntry {
            action: HistoryAction::parse(action),
            actor: truncate(&sanitize(actor), MAX_ACTOR),
            at,
            outcome: HistoryOutcome::parse(outcome),
        }
    }

    /// A pause or a resume asked for.
    pub fn is_pause_or_resume(&self) -> bool {
        matches!(self.action, HistoryAction::Pause | HistoryAction::Resume)
    }
}

/// `entries` with a new one at the end, the oldest dropped past [`MAX_HISTORY`].
pub fn appended(entries: &[HistoryEntry], entry: HistoryEntry) -> Vec<HistoryEntry> {
    let keep = MAX_HISTORY.saturating_sub(1);
    let skip = entries.len().saturating_sub(keep);
    entries
        .iter()
        .skip(skip)
        .cloned()
        .chain(std::iter::once(entry))
        .collect()
}

/// The last pause or resume asked for, if the history holds one.
pub fn last_pause_or_resume(entries: &[HistoryEntry]) -> Option<&HistoryEntry> {
    entries.iter().rev().find(|e| e.is_pause_or_resume())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(action: &str, n: i64) -> HistoryEntry {
        HistoryEntry::read(action, &format!("p{n}"), None, "applied")
    }

    #[test]
    fn the_history_keeps_the_last_fifty() {
        let mut h: Vec<HistoryEntry> = Vec::new();
        for n in 0..60 {
            h = appended(&h, entry("pause", n));
        }
        assert_eq!(h.len(), MAX_HISTORY);
        assert_eq!(h.first().map(|e| e.actor.as_str()), Some("p10"));
        assert_eq!(h.last().map(|e| e.actor.as_str()), Some("p59"));
    }

    #[test]
    fn what_the_cluster_wrote_is_made_inert_and_cut() {
        let e = HistoryEntry::read(
            "\u{1b}]52;c;x\u{7}",
            &"a\u{202e}b".repeat(200),
            None,
            "ok\n",
        );
        assert!(!e.action.as_str().chars().any(crate::inert::is_dangerous));
        assert!(e.actor.chars().all(|c| !crate::inert::is_dangerous(c)));
        assert!(crate::inert::width(&e.actor) <= MAX_ACTOR);
        assert_eq!(e.outcome, HistoryOutcome::Other("ok ".into()));
    }

    #[test]
    fn the_last_pause_or_resume_is_found_past_other_entries() {
        let h = vec![entry("start", 0), entry("pause", 1), entry("delete", 2)];
        assert_eq!(
            last_pause_or_resume(&h).map(|e| e.actor.as_str()),
            Some("p1")
        );
        assert_eq!(last_pause_or_resume(&h[..1]), None);
    }
}
