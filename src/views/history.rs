//! Who did what to an operation, in words: each entry of its history ("17:41 pause asked by
//! bob@example.com") for the page, `operation get` and the report. The entries are cluster data
//! (the model made them inert and bounded); they are sanitised again where they are said.

use super::text::sanitize;
use crate::i18n::Texts;
use ichor_model::{HistoryAction, HistoryEntry, HistoryOutcome};
use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The most entries the page shows (the read-all view and the report show every one).
pub const ON_PAGE: usize = 2;

/// What an entry says, without its time: "pause asked by bob@example.com".
pub fn entry_words(t: &Texts, e: &HistoryEntry) -> String {
    let user = sanitize(&e.actor);
    let id = match &e.action {
        HistoryAction::Start => "history-start",
        HistoryAction::Pause => "history-pause",
        HistoryAction::Resume => "history-resume",
        HistoryAction::Delete => "history-delete",
        HistoryAction::ConfirmKubeProxySwitch => "history-confirm-kube-proxy",
        HistoryAction::Other(a) => {
            return t.tr(
                "history-other",
                &[("action", &sanitize(a)), ("user", &user)],
            );
        }
    };
    let said = t.tr(id, &[("user", &user)]);
    match &e.outcome {
        HistoryOutcome::Other(o) => t.tr(
            "history-outcome",
            &[("said", &said), ("outcome", &sanitize(o))],
        ),
        _ => said,
    }
}

/// An entry with its time: "17:41 pause asked by bob@example.com" (`clock` says the time).
pub fn entry_at(t: &Texts, e: &HistoryEntry, clock: impl Fn(Timestamp) -> String) -> String {
    let when = e.at.map(clock).unwrap_or_else(|| t.t("history-no-time"));
    t.tr(
        "history-entry",
        &[("time", &when), ("said", &entry_words(t, e))],
    )
}

/// The entries of `history` a page shows beside "Started by": every one but the start, the
/// last `max`; and how many earlier ones are left out.
pub fn shown(history: &[HistoryEntry], max: usize) -> (Vec<&HistoryEntry>, usize) {
    let rest: Vec<&HistoryEntry> = history
        .iter()
        .filter(|e| e.action != HistoryAction::Start)
        .collect();
    let skip = rest.len().saturating_sub(max);
    (rest[skip..].to_vec(), skip)
}

/// A clock time in `tz` ("17:41"), or the date too when not `today`'s.
pub fn clock_in(tz: &TimeZone, today: Timestamp) -> impl Fn(Timestamp) -> String + '_ {
    let day = today.to_zoned(tz.clone()).date();
    move |at: Timestamp| {
        let z = at.to_zoned(tz.clone());
        match z.date() == day {
            true => z.strftime("%H:%M").to_string(),
            false => z.strftime("%Y-%m-%d %H:%M").to_string(),
        }
    }
}
