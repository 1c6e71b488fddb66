//! The history annotation (`ichor.maesh.dev/history`): a JSON list of `{action, actor, at,
//! outcome}`, oldest first, the last [`MAX_HISTORY`]. Decoded as the cluster data it is: a
//! value over [`MAX_HISTORY_BYTES`] or not a list reads as no history, an entry that is not an
//! object of strings is left out, and what is kept is made inert and bounded
//! ([`HistoryEntry::read`]).

use crate::{format_time, parse_time};
use ichor_model::{HistoryEntry, MAX_HISTORY};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest annotation value read: 50 entries of the widest actor fit several times over.
pub const MAX_HISTORY_BYTES: usize = 64 * 1024;

/// One entry as it is written.
#[derive(Serialize, Deserialize)]
struct Written<'a> {
    action: &'a str,
    actor: &'a str,
    at: String,
    outcome: &'a str,
}

/// The entries of an annotation's value, oldest first; nothing when it cannot be read.
pub fn decode(value: &str) -> Vec<HistoryEntry> {
    if value.len() > MAX_HISTORY_BYTES {
        return Vec::new();
    }
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(value) else {
        return Vec::new();
    };
    let skip = items.len().saturating_sub(MAX_HISTORY);
    items.iter().skip(skip).filter_map(entry).collect()
}

fn entry(v: &Value) -> Option<HistoryEntry> {
    let o = v.as_object()?;
    let text = |k: &str| o.get(k).and_then(Value::as_str);
    let action = text("action")?;
    let at = text("at").and_then(parse_time);
    Some(HistoryEntry::read(
        action,
        text("actor").unwrap_or(""),
        at,
        text("outcome").unwrap_or(""),
    ))
}

/// The annotation's value for `entries` (the last [`MAX_HISTORY`]).
pub fn encode(entries: &[HistoryEntry]) -> String {
    let skip = entries.len().saturating_sub(MAX_HISTORY);
    let written: Vec<Written<'_>> = entries
        .iter()
        .skip(skip)
        .map(|e| Written {
            action: e.action.as_str(),
            actor: &e.actor,
            at: e.at.map(format_time).unwrap_or_default(),
            outcome: e.outcome.as_str(),
        })
        .collect();
    serde_json::to_string(&written).unwrap_or_else(|_| "[]".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ichor_model::{HistoryAction, HistoryOutcome};

    #[test]
    fn an_entry_written_reads_back_the_same() {
        let at = parse_time("2026-12-04T10:00:00.000Z");
        let e = HistoryEntry::read("pause", "alice@example.com", at, "applied");
        let back = decode(&encode(std::slice::from_ref(&e)));
        assert_eq!(back, vec![e]);
        assert_eq!(back[0].action, HistoryAction::Pause);
        assert_eq!(back[0].outcome, HistoryOutcome::Applied);
    }

    #[test]
    fn a_hostile_value_reads_as_what_can_be_kept() {
        assert!(decode("not json").is_empty());
        assert!(decode(r#"{"action":"pause"}"#).is_empty());
        assert!(decode(&format!("[{}]", "1,".repeat(MAX_HISTORY_BYTES))).is_empty());
        let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(decode(&nested).is_empty());
        let mixed =
            r#"[1, {"action": 2}, {"action":"resume","actor":"bob\u001b[2J","at":"yesterday"}]"#;
        let read = decode(mixed);
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].actor, "bob\u{FFFD}[2J");
        assert_eq!(read[0].at, None);
        let many: Vec<String> = (0..80)
            .map(|i| format!(r#"{{"action":"pause","actor":"p{i}","at":"","outcome":"applied"}}"#))
            .collect();
        let read = decode(&format!("[{}]", many.join(",")));
        assert_eq!(read.len(), MAX_HISTORY);
        assert_eq!(read[0].actor, "p30");
    }
}
