//! An operation's outcome said once: when one shown completes, fails or awaits credentials, the
//! runtime rings the bell (and, where the terminal takes it, a desktop notification). Never for
//! the first state seen of an operation, never twice for one change.

use crate::action::Effect;
use crate::state::{Outcome, State};
use ichor_model::{Operation, Phase};

/// At most this many operations are remembered; past it the memory starts again (their next
/// state is then a first one, said never).
const MAX_SEEN: usize = 20_000;

fn outcome(op: &Operation) -> Option<Outcome> {
    if op.unreadable.is_some() {
        return None;
    }
    match op.phase {
        Phase::Completed => Some(Outcome::Completed),
        Phase::Failed => Some(Outcome::Failed),
        _ if op.paused_by_failure() => Some(Outcome::Failed),
        _ if op
            .ca_rotation
            .as_ref()
            .is_some_and(|c| c.awaits_credentials()) =>
        {
            Some(Outcome::AwaitsCredentials)
        }
        _ => None,
    }
}

/// Looks at the operations just shown: each whose outcome changed since it was last seen is
/// said.
pub(super) fn look<'a>(
    state: &mut State,
    ops: impl IntoIterator<Item = &'a Operation>,
) -> Vec<Effect> {
    let n = &mut state.notifications;
    if !n.on {
        return Vec::new();
    }
    if n.seen.len() > MAX_SEEN {
        n.seen.clear();
    }
    let mut effects = Vec::new();
    for op in ops {
        let now = outcome(op);
        let before = n.seen.insert(op.uid.clone(), now);
        if let (Some(before), Some(outcome)) = (before, now)
            && before != Some(outcome)
        {
            effects.push(Effect::Notify {
                outcome,
                name: op.name.clone(),
                cluster: op.cluster.clone(),
            });
        }
    }
    effects
}
