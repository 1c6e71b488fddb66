//! How long, in words: the time in the current phase, a running machine's time against the
//! pace so far, the slow machines (with their last Warning), the estimate of the end, the
//! cluster's stale bundle backup; and when any of these next changes on screen by itself, so
//! the clock wakes the dashboard only then.

use super::style::Ctx;
use super::text::sanitize;
use super::widgets::lines::Lines;
use super::words::{date_time, duration_text, next_duration_change};
use crate::i18n::Texts;
use ichor_app::state::State;
use ichor_model::{
    Cluster, Estimate, MachineTime, Operation, OperationEvent, PaceBasis, PhaseSince, Timing,
};
use jiff::{SignedDuration, Timestamp};
use ratatui::style::{Color, Modifier, Style};

/// The most slow machines named on a page (the rest are counted).
const SLOW_NAMED: usize = 2;

/// The time the page's clocks stop at: now while its data is fresh, else the time of its data
/// (stale or gone: nothing counts on).
pub(crate) fn as_of(state: &State) -> Timestamp {
    state.data_time().unwrap_or(state.now)
}

/// The state's words with its time: "Running for 3m" (ticking), "Paused since 12:03".
pub(crate) fn state_with_time(state: &State, t: &Texts, said: String, timing: &Timing) -> String {
    state_with_time_at(t, as_of(state), &state.tz, said, timing)
}

/// [`state_with_time`] as of `now`, clock times in `tz` (the CLI's).
pub fn state_with_time_at(
    t: &Texts,
    now: Timestamp,
    tz: &jiff::tz::TimeZone,
    said: String,
    timing: &Timing,
) -> String {
    let clock = |at: Timestamp| at.to_zoned(tz.clone()).strftime("%H:%M").to_string();
    match timing.phase {
        Some(PhaseSince::Running(since) | PhaseSince::Pausing(since)) => t.tr(
            "state-for",
            &[
                ("state", &said),
                ("time", &duration_text(t, now.duration_since(since))),
            ],
        ),
        Some(
            PhaseSince::Paused(since)
            | PhaseSince::WaitingForLock(since)
            | PhaseSince::Pending(since),
        ) => t.tr("state-since", &[("state", &said), ("time", &clock(since))]),
        None => said,
    }
}

/// A span of an estimate of a minute or more: minutes rounded up, hours and minutes past the
/// hour; `None` under a minute (said in words of its own).
pub(crate) fn estimate_span(t: &Texts, d: SignedDuration) -> Option<String> {
    let s = d.as_secs().max(0);
    if s < 60 {
        return None;
    }
    let minutes = (s + 59) / 60;
    let n = |v: i64| fluent_bundle::FluentValue::from(v);
    Some(match minutes {
        m if m < 60 => t.tn("dur-minutes", &[("n", n(m))]),
        m => t.tn("dur-hours-minutes", &[("h", n(m / 60)), ("m", n(m % 60))]),
    })
}

/// The estimate as the page, `op get` and `-w` say it; `None` when there is nothing to estimate
/// or a failure says why nothing more runs.
pub fn estimate_text(t: &Texts, e: &Estimate) -> Option<String> {
    let left = |d: SignedDuration| match estimate_span(t, d) {
        Some(span) => t.tr("estimate-then-about", &[("span", &span)]),
        None => t.t("estimate-then-under-minute"),
    };
    match e {
        Estimate::None => None,
        Estimate::NoPaceYet => Some(t.t("estimate-none-yet")),
        Estimate::Halted {
            machines_left: 0,
            failed: false,
        } => Some(t.t("estimate-halted-none-left")),
        // A failed machine's stop is the failure's to say, what is left included.
        Estimate::Halted { failed: true, .. } => None,
        Estimate::Halted { machines_left, .. } => {
            Some(t.tn("estimate-halted", &[("n", (*machines_left).into())]))
        }
        Estimate::About { left: d, basis, .. } => {
            let at_pace = pace_basis(t, *basis);
            Some(match estimate_span(t, *d) {
                Some(span) => t.tr("estimate-about", &[("span", &span), ("basis", &at_pace)]),
                None => t.tr("estimate-under-minute", &[("basis", &at_pace)]),
            })
        }
        Estimate::AfterSlow {
            machine,
            slow_for,
            more,
            then,
            basis,
            ..
        } => Some(t.tr(
            "estimate-after-slow",
            &[
                ("machine", &sanitize(machine)),
                ("span", &duration_text(t, *slow_for)),
                ("more", &slow_more(t, *more)),
                ("then", &left(*then)),
                ("basis", &pace_basis(t, *basis)),
            ],
        )),
    }
}

/// Where the estimate's pace comes from, in words.
fn pace_basis(t: &Texts, b: PaceBasis) -> String {
    match b {
        PaceBasis::SoFar => t.t("pace-basis-so-far"),
        PaceBasis::PriorRuns(n) => t.tn("pace-basis-prior", &[("n", n.into())]),
    }
}

/// "and 2 more slow machines", when there are more.
fn slow_more(t: &Texts, more: usize) -> String {
    match more {
        0 => String::new(),
        n => t.tn("estimate-slow-more", &[("n", n.into())]),
    }
}

/// The estimate as a list row says it ("~12m", "<1m", "⚠ slow"); nothing before there is a
/// pace or while nothing runs.
pub(crate) fn estimate_short(t: &Texts, e: &Estimate) -> Option<String> {
    match e {
        Estimate::About { left, .. } => Some(match estimate_span(t, *left) {
            Some(span) => t.tr("estimate-short", &[("time", &span)]),
            None => t.t("estimate-short-under-minute"),
        }),
        // At least the rest after the slow machine, whose end nothing can say.
        Estimate::AfterSlow { then, .. } => {
            let at_least = (*then).max(SignedDuration::from_secs(60));
            let span = estimate_span(t, at_least).unwrap_or_default();
            Some(t.tr("estimate-short-slow", &[("span", &span)]))
        }
        _ => None,
    }
}

/// When the estimate's words next change by themselves: while a step under way has time left
/// at the pace, the time left goes down a second a second; while one is past its pace, it goes
/// up a second a second; a slow machine's time is said as a duration.
fn next_estimate_change(now: Timestamp, e: &Estimate) -> Option<Timestamp> {
    let (left, running) = match e {
        Estimate::About {
            growing: true,
            left,
            ..
        } => {
            // Minutes are rounded up: the words change as the time left passes a whole minute.
            let l = left.as_secs().max(0);
            let after = match l {
                0..60 => 60 - l,
                _ if l % 60 == 0 => 1,
                _ => 60 - l % 60 + 1,
            };
            return Some(now + SignedDuration::from_secs(after));
        }
        Estimate::About {
            left, running_left, ..
        } => (left.as_secs(), running_left.as_secs()),
        Estimate::AfterSlow { since, .. } => return Some(next_duration_change(*since, now)),
        _ => return None,
    };
    let after = match left {
        l if l > 60 => l - 60 * ((l + 59) / 60 - 1),
        60 => 1,
        _ => return None,
    };
    (after <= running).then(|| now + SignedDuration::from_secs(after))
}

/// When what this operation's page says of its times next changes by themselves: its running
/// time, a machine's, the estimate, or a machine turning slow.
pub fn next_change(state: &State, op: &Operation) -> Option<Timestamp> {
    let timing = state.pace.timing(op, as_of(state));
    let now = as_of(state);
    let running = match timing.phase {
        Some(PhaseSince::Running(since) | PhaseSince::Pausing(since)) => {
            Some(next_duration_change(since, now))
        }
        _ => None,
    };
    let machines = timing
        .running
        .iter()
        .map(|m| next_duration_change(m.since, now));
    [running, next_list_change_of(now, &timing)]
        .into_iter()
        .flatten()
        .chain(machines)
        .filter(|t| *t > now)
        .min()
}

/// When what this operation's list row says of its times next changes by themselves: a
/// machine turning slow, or the estimate (the row shows neither time in a phase nor a
/// machine's).
pub fn next_list_change(state: &State, op: &Operation) -> Option<Timestamp> {
    next_list_change_of(state.now, &state.pace.timing(op, state.now))
}

fn next_list_change_of(now: Timestamp, timing: &Timing) -> Option<Timestamp> {
    [
        timing.next_slow_at(),
        next_estimate_change(now, &timing.estimate),
    ]
    .into_iter()
    .flatten()
    .filter(|t| *t > now)
    .min()
}

/// A running machine's time: "40s of ~4s" once its role has a pace.
pub(crate) fn machine_time(state: &State, t: &Texts, m: &MachineTime) -> String {
    machine_time_at(t, as_of(state), m)
}

/// [`machine_time`] as of `now`.
pub fn machine_time_at(t: &Texts, now: Timestamp, m: &MachineTime) -> String {
    let took = duration_text(t, now.duration_since(m.since));
    match m.pace {
        Some(p) => t.tr(
            "machine-time-pace",
            &[("time", &took), ("pace", &duration_text(t, p))],
        ),
        None => took,
    }
}

/// How wide a running machine's time against its role's pace is said ("3m of ~3m"), for the
/// paces so far of `op`: its time column keeps this width while it runs, so a machine that
/// finishes redraws its own cells, not the table.
pub(crate) fn paced_time_width(state: &State, t: &Texts, op: &Operation) -> usize {
    let none = ichor_model::Roles::default();
    let roles = state
        .pace
        .roles(&op.namespace, &op.cluster)
        .unwrap_or(&none);
    op.role_paces(roles)
        .into_iter()
        .map(|p| {
            let p = duration_text(t, p);
            let said = t.tr("machine-time-pace", &[("time", &p), ("pace", &p)]);
            ichor_model::inert::width(&said)
        })
        .max()
        .unwrap_or(0)
}

/// The newest Warning event of `machine`, among the page's events (newest first).
pub(crate) fn last_warning<'a>(
    events: &'a [OperationEvent],
    machine: &str,
) -> Option<&'a OperationEvent> {
    events
        .iter()
        .find(|e| e.warning && e.object_kind == "Machine" && e.object_name == machine)
}

/// What is said of one slow machine: how long against its bound, and its last Warning.
pub struct SlowSaid {
    pub slow: String,
    pub last_warning: Option<String>,
}

/// The slow machines (the first `named`), each as [`SlowSaid`], clock times in `tz`; and how
/// many more are slow.
pub fn slow_said(
    t: &Texts,
    tz: &jiff::tz::TimeZone,
    timing: &Timing,
    events: &[OperationEvent],
    named: usize,
) -> (Vec<SlowSaid>, usize) {
    let clock = |at: Timestamp| at.to_zoned(tz.clone()).strftime("%H:%M").to_string();
    let slow: Vec<&MachineTime> = timing.running.iter().filter(|m| m.slow).collect();
    let said = slow
        .iter()
        .take(named)
        .map(|m| SlowSaid {
            slow: t.tr(
                "machine-slow",
                &[
                    ("machine", &sanitize(&m.name)),
                    ("span", &duration_text(t, m.in_step)),
                    (
                        "pace",
                        &m.pace.map(|p| duration_text(t, p)).unwrap_or_default(),
                    ),
                    (
                        "bound",
                        &m.bound.map(|b| duration_text(t, b)).unwrap_or_default(),
                    ),
                ],
            ),
            last_warning: last_warning(events, &m.name).map(|e| {
                t.tr(
                    "last-warning",
                    &[
                        ("time", &e.at().map(clock).unwrap_or_default()),
                        ("reason", &sanitize(&e.reason)),
                        ("message", &sanitize(&e.message)),
                    ],
                )
            }),
        })
        .collect();
    (said, slow.len().saturating_sub(named))
}

/// The slow machines on a page, each with how long against its bound and its last Warning.
pub(crate) fn slow_notes(
    state: &State,
    ctx: &Ctx<'_>,
    timing: &Timing,
    events: &[OperationEvent],
    lines: &mut Lines,
) {
    let t = ctx.texts;
    let style = ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD);
    let (said, more) = slow_said(t, &state.tz, timing, events, SLOW_NAMED);
    for s in said {
        lines.hanging("⚠ ", &s.slow, style);
        if let Some(w) = s.last_warning {
            lines.hanging("  ", &w, ctx.theme.fg(Color::Yellow));
        }
    }
    if more > 0 {
        lines.hanging(
            "  ",
            &t.tn("machine-slow-more", &[("n", more.into())]),
            style,
        );
    }
}

/// The cluster's secrets bundle backup is stale (BundleBackupStale): since when, what the
/// cluster says, and what to run.
pub(crate) fn stale_bundle(state: &State, ctx: &Ctx<'_>, c: &Cluster, lines: &mut Lines) {
    let t = ctx.texts;
    let Some(b) = &c.bundle_backup_stale else {
        return;
    };
    let when = b
        .since
        .map(|at| date_time(state, at))
        .unwrap_or_else(|| t.t("unknown"));
    let said = t.tr(
        "bundle-stale",
        &[
            ("time", &when),
            ("message", &sanitize(&b.message)),
            ("name", &sanitize(&c.name)),
        ],
    );
    lines.hanging(
        "⚠ ",
        &said,
        Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
    );
}

/// The notices of the report key and of a production question answered without the name.
pub(crate) fn notice_text(n: &ichor_app::state::Notice, ctx: &Ctx<'_>) -> (String, Style) {
    use ichor_app::state::Notice;
    let t = ctx.texts;
    let cut = |s: &str| super::text::truncate(&sanitize(s), 200);
    match n {
        Notice::ReportSaved(name, path) => (
            t.tr(
                "report-saved",
                &[("name", &sanitize(name)), ("path", &cut(path))],
            ),
            ctx.theme.fg(Color::Green),
        ),
        Notice::ReportFailed(name, why) => (
            t.tr(
                "report-failed",
                &[("name", &sanitize(name)), ("why", &cut(why))],
            ),
            ctx.theme.alarm(),
        ),
        Notice::NameNotTyped(cluster) => (
            t.tr("name-not-typed", &[("cluster", &sanitize(cluster))]),
            ctx.theme.fg(Color::Yellow),
        ),
        _ => (String::new(), Style::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_changes_when_its_minute_does_while_a_step_runs() {
        let now: Timestamp = "2026-11-29T10:00:00Z".parse().unwrap();
        let about = |left, running| Estimate::About {
            left: SignedDuration::from_secs(left),
            running_left: SignedDuration::from_secs(running),
            growing: false,
            basis: PaceBasis::SoFar,
        };
        let s = SignedDuration::from_secs;
        // 12m 30s left reads "13m" until 12m, 30 s from now.
        assert_eq!(
            next_estimate_change(now, &about(750, 100)),
            Some(now + s(30))
        );
        assert_eq!(
            next_estimate_change(now, &about(720, 100)),
            Some(now + s(60))
        );
        assert_eq!(next_estimate_change(now, &about(60, 10)), Some(now + s(1)));
        assert_eq!(
            next_estimate_change(now, &about(59, 10)),
            None,
            "under a minute"
        );
        assert_eq!(
            next_estimate_change(now, &about(750, 10)),
            None,
            "the step is past its pace"
        );
        assert_eq!(next_estimate_change(now, &Estimate::NoPaceYet), None);
        let t = Texts::new(crate::i18n::Lang::En);
        assert_eq!(estimate_span(&t, s(750)).as_deref(), Some("13m"));
        assert_eq!(estimate_span(&t, s(3600 + 61)).as_deref(), Some("1h 2m"));
        assert_eq!(estimate_span(&t, s(59)), None);
        let about = |left| estimate_text(&t, &about(left, 0)).unwrap();
        assert_eq!(about(59), "under a minute left at the pace so far");
        assert_eq!(about(61), "about 2m left at the pace so far");
    }
}
