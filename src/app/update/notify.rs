//! An operation's outcome said once: when one shown completes, fails, awaits credentials or
//! turns slow, the runtime rings the bell (and, where the terminal takes it, a desktop
//! notification). Never for the first state seen of an operation, never twice for one change.
//! Slowness comes with time, not with data: the operations shown are looked at again when the
//! clock wakes the dashboard for the moment a machine turns slow.

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
    if !state.notifications.on {
        return Vec::new();
    }
    let ops: Vec<&Operation> = ops.into_iter().collect();
    let slow: Vec<bool> = ops
        .iter()
        .map(|op| op.unreadable.is_none() && state.pace.timing(op, state.now).slow())
        .collect();
    let n = &mut state.notifications;
    if n.seen.len() > MAX_SEEN {
        n.seen.clear();
    }
    if n.slow.len() > MAX_SEEN {
        n.slow.clear();
    }
    let mut effects = Vec::new();
    for (op, slow) in ops.iter().zip(slow) {
        let before = n.slow.insert(op.uid.clone(), slow);
        if before == Some(false) && slow {
            effects.push(Effect::Notify {
                outcome: Outcome::Slow,
                name: op.name.clone(),
                cluster: op.cluster.clone(),
            });
        }
    }
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

/// Looks at the operations on screen as time passes (a machine turns slow by itself).
pub(super) fn look_shown(state: &mut State) -> Vec<Effect> {
    let shown = super::pace::shown(state);
    look(state, &shown)
}
