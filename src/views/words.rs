//! The words several screens share: kinds, states and phases (with their glyphs and colours),
//! roles, durations and clock times, and what a failed call says.

use super::style::Theme;
use super::text::{sanitize, width};
use crate::i18n::Texts;
use ichor_app::state::{State, WriteAction};
use ichor_model::{ApiError, Code, MachinePhase, Operation, OperationKind, Phase, StateWord};
use jiff::{SignedDuration, Timestamp};
use ratatui::style::{Color, Modifier, Style};

/// The words for a kind.
pub fn kind_text(t: &Texts, kind: Option<OperationKind>, raw: &str) -> String {
    match kind {
        Some(k) => t.t(&format!("kind-{}", k.as_str())),
        None => sanitize(raw),
    }
}

/// The short words for a kind (narrow lists).
pub fn kind_short(t: &Texts, kind: Option<OperationKind>, raw: &str) -> String {
    match kind {
        Some(k) => t.t(&format!("kind-short-{}", k.as_str())),
        None => sanitize(raw),
    }
}

/// What the colour of a word says. The dashboard draws it (through its theme: no colour under
/// NO_COLOR, where the glyph and the bold still say it); the commands print the words alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tone {
    pub hue: Hue,
    pub bold: bool,
}

/// The colours the words are drawn in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hue {
    #[default]
    Plain,
    Dim,
    Red,
    Yellow,
    Cyan,
    Green,
}

impl Tone {
    pub(crate) fn of(hue: Hue) -> Tone {
        Tone { hue, bold: false }
    }

    pub(crate) fn bold(self) -> Tone {
        Tone { bold: true, ..self }
    }

    /// The style the dashboard draws it in.
    pub(crate) fn style(self, theme: &Theme) -> Style {
        let style = match self.hue {
            Hue::Plain => theme.fg(Color::Reset),
            Hue::Dim => theme.dim(),
            Hue::Red => theme.fg(Color::Red),
            Hue::Yellow => theme.fg(Color::Yellow),
            Hue::Cyan => theme.fg(Color::Cyan),
            Hue::Green => theme.fg(Color::Green),
        };
        match self.bold {
            true => style.add_modifier(Modifier::BOLD),
            false => style,
        }
    }
}

/// A state or a phase as both faces say it: the glyph the dashboard draws before the word,
/// the word, and its colour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Said {
    pub glyph: &'static str,
    pub word: String,
    pub tone: Tone,
}

impl Said {
    /// The glyph and the word ("▶ Running"), as the dashboard draws them.
    pub fn with_glyph(&self) -> String {
        format!("{} {}", self.glyph, self.word)
    }
}

/// An operation's state: a pause caused by a failure, a pause asked for and not taken yet,
/// the lock waited for and a delete that finalizers hold are told apart. The word is the
/// model's ([`StateWord`]: the list's filter matches it); the glyph and the colour are ours.
pub fn state_said(t: &Texts, op: &Operation) -> Said {
    if let Some(finalizers) = &op.deleting {
        // A delete that finalizers hold: neither gone nor an error.
        let waiting: Vec<String> = finalizers.iter().map(|f| sanitize(f)).collect();
        let word = match waiting.as_slice() {
            [] => t.t("state-deleting"),
            _ => t.tr(
                "state-deleting-waiting",
                &[("finalizers", &waiting.join(", "))],
            ),
        };
        return Said {
            glyph: "…",
            word,
            tone: Tone::of(Hue::Yellow),
        };
    }
    let shown = op.shown_state();
    let (glyph, hue) = match shown {
        StateWord::Unreadable => ("⚠", Hue::Red),
        StateWord::PausedFailed | StateWord::Failed => ("✗", Hue::Red),
        StateWord::Deleting | StateWord::WaitingLock => ("…", Hue::Yellow),
        StateWord::Pausing | StateWord::Paused => ("‖", Hue::Yellow),
        StateWord::New | StateWord::Pending => ("○", Hue::Plain),
        StateWord::Running => ("▶", Hue::Cyan),
        StateWord::Completed => ("✓", Hue::Green),
        StateWord::Other => ("?", Hue::Plain),
    };
    let word = match (&op.phase, shown) {
        (Phase::Other(s), StateWord::Other) => sanitize(s),
        _ => t.t(shown.id()),
    };
    let mut tone = Tone::of(hue);
    if matches!(op.phase, Phase::Failed) || op.paused_by_failure() {
        tone = tone.bold();
    }
    Said { glyph, word, tone }
}

/// The words of an operation's state alone ("Paused: failed"), as the commands print them.
pub fn state_word(t: &Texts, op: &Operation) -> String {
    state_said(t, op).word
}

/// The glyph, the word and the colour of an operation's state, as the dashboard draws them.
pub(crate) fn phase_view(t: &Texts, theme: &Theme, op: &Operation) -> (String, Style) {
    let said = state_said(t, op);
    (said.with_glyph(), said.tone.style(theme))
}

/// A machine's phase as both faces say it.
pub fn machine_phase_said(t: &Texts, phase: &MachinePhase) -> Said {
    let (glyph, id, hue) = match phase {
        MachinePhase::Pending => ("○", "mphase-pending", Hue::Plain),
        MachinePhase::Running => ("▶", "mphase-running", Hue::Cyan),
        MachinePhase::Completed => ("✓", "mphase-completed", Hue::Green),
        MachinePhase::Failed => ("✗", "mphase-failed", Hue::Red),
        MachinePhase::Skipped => ("–", "mphase-skipped", Hue::Dim),
        MachinePhase::Other(_) => ("?", "phase-other", Hue::Plain),
    };
    let word = match phase {
        MachinePhase::Other(s) => sanitize(s),
        _ => t.t(id),
    };
    let mut tone = Tone::of(hue);
    if *phase == MachinePhase::Failed {
        tone = tone.bold();
    }
    Said { glyph, word, tone }
}

/// The words of a machine's phase alone ("Done"), as the commands print them.
pub fn machine_phase_word(t: &Texts, phase: &MachinePhase) -> String {
    machine_phase_said(t, phase).word
}

/// The glyph, word and colour of a machine's phase.
pub(crate) fn machine_phase_view(
    t: &Texts,
    theme: &Theme,
    phase: &MachinePhase,
) -> (String, Style) {
    let said = machine_phase_said(t, phase);
    (said.with_glyph(), said.tone.style(theme))
}

/// The widest a machine's phase is said (its glyph and word): a column of phases that keeps this
/// width stays put as phases change, so a change redraws one cell, not the table.
pub(crate) fn widest_machine_phase(t: &Texts) -> usize {
    let slow = width(&format!("⚠ {}", t.t("mphase-slow")));
    [
        MachinePhase::Pending,
        MachinePhase::Running,
        MachinePhase::Completed,
        MachinePhase::Failed,
        MachinePhase::Skipped,
    ]
    .iter()
    .map(|p| width(&machine_phase_view(t, &Theme::default(), p).0))
    .chain([slow])
    .max()
    .unwrap_or(0)
}

/// The widest word for a known role (a column of roles keeps it, whether or not the roles are
/// known yet).
pub(crate) fn widest_role(t: &Texts) -> usize {
    ["controlplane", "worker"]
        .iter()
        .map(|r| width(&role_word(t, r)))
        .max()
        .unwrap_or(0)
}

/// The word for a machine's role; a role nobody knows is cluster text, made inert.
pub(crate) fn role_word(t: &Texts, role: &str) -> String {
    match role {
        "controlplane" => t.t("role-controlplane"),
        "worker" => t.t("role-worker"),
        other => sanitize(other),
    }
}

/// The part of a message id that names a write: `pending-{}`, `confirm-{}-title`…
pub(crate) fn action_id(a: WriteAction) -> &'static str {
    match a {
        WriteAction::Pause => "pause",
        WriteAction::Resume => "resume",
        WriteAction::Delete => "delete",
    }
}

/// "6/14" (a CA rotation: machine passes, "6/20"), or a dash before the controller has
/// counted the machines.
pub fn machine_count(op: &Operation) -> String {
    match op.advance() {
        a if a.total == 0 => "—".to_string(),
        a => format!("{}/{}", a.done, a.total),
    }
}

/// A duration as people read it: seconds in the first minute, then minutes, hours, days.
pub fn duration_text(t: &Texts, d: SignedDuration) -> String {
    let s = d.as_secs().max(0);
    let n = |v: i64| fluent_bundle::FluentValue::from(v);
    if s < 60 {
        t.tn("dur-seconds", &[("n", n(s))])
    } else if s < 3600 {
        t.tn("dur-minutes", &[("n", n(s / 60))])
    } else if s < 86_400 {
        t.tn("dur-hours", &[("n", n(s / 3600))])
    } else {
        t.tn("dur-days", &[("n", n(s / 86_400))])
    }
}

/// The time from `from` to `to` (or now: the time of the data, while it may be out of date,
/// so nothing counts on as if live), or nothing when it has not started.
pub(crate) fn elapsed(
    state: &State,
    t: &Texts,
    from: Option<Timestamp>,
    to: Option<Timestamp>,
) -> String {
    let until = to.or(state.data_time()).unwrap_or(state.now);
    match from {
        Some(f) => duration_text(t, until.duration_since(f)),
        None => String::new(),
    }
}

/// When the text of `duration_text(now - since)` next changes.
pub(crate) fn next_duration_change(since: Timestamp, now: Timestamp) -> Timestamp {
    let s = now.duration_since(since).as_secs().max(0);
    let unit = if s < 60 {
        1
    } else if s < 3600 {
        60
    } else if s < 86_400 {
        3600
    } else {
        86_400
    };
    since + SignedDuration::from_secs((s / unit + 1) * unit)
}

/// A date and time as YYYY-MM-DD HH:MM in the user's time zone.
pub(crate) fn date_time(state: &State, t: Timestamp) -> String {
    date_time_in(&state.tz, t)
}

/// A date and time in `tz`, as the dashboard and the CLI write them ("2026-11-09 12:30").
pub(crate) fn date_time_in(tz: &jiff::tz::TimeZone, t: Timestamp) -> String {
    t.to_zoned(tz.clone())
        .strftime("%Y-%m-%d %H:%M")
        .to_string()
}

/// When and by whom a cluster was shut down, in words ("2026-11-09 12:30 by bob (name)").
pub(crate) fn shutdown_text(
    state: &State,
    t: &Texts,
    r: &ichor_model::ShutdownRecord,
) -> [String; 3] {
    let when = r
        .finished_at
        .map(|at| date_time(state, at))
        .unwrap_or_else(|| t.t("unknown"));
    let who = r
        .actor
        .as_deref()
        .map(sanitize)
        .unwrap_or_else(|| t.t("unknown"));
    [when, who, sanitize(&r.operation)]
}

/// A clock time as HH:MM in the user's time zone.
pub(crate) fn hhmm(state: &State, t: Timestamp) -> String {
    t.to_zoned(state.tz.clone()).strftime("%H:%M").to_string()
}

/// A moment as a clock time in UTC ("15:42:10 UTC"): said where no time zone is at hand, so
/// that it cannot be read as local time.
pub(crate) fn utc_clock(t: Timestamp) -> String {
    t.strftime("%H:%M:%S UTC").to_string()
}

/// What a failed call says, in the user's language, from its reason code.
pub fn error_text(t: &Texts, e: &ApiError) -> String {
    let mut clean: Vec<(String, String)> = e
        .params
        .iter()
        .map(|(k, v)| match (k.as_str(), v.parse::<Timestamp>()) {
            ("until", Ok(at)) => (k.clone(), utc_clock(at)),
            _ => (k.clone(), sanitize(v)),
        })
        .collect();
    // Every error has a detail to show, even one built without the parameter: never a bare
    // `{$detail}` on screen.
    if e.param("detail").is_none() {
        clean.push(("detail".into(), sanitize(&e.message)));
    }
    let args: Vec<(&str, &str)> = clean
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if let Some(reason) = e.reason {
        let id = reason.message_id();
        // A refusal whose parameters do not fill its message is said by its code instead.
        if (t.has(id) || t.lang() == crate::i18n::Lang::En)
            && let Some(s) = t.tr_whole(id, &args)
        {
            return s;
        }
    }
    let detail = sanitize(e.param("detail").unwrap_or(&e.message));
    let id = match e.code {
        Code::PermissionDenied => "code-permission-denied",
        Code::NotFound => "code-not-found",
        Code::Unauthenticated => "code-unauthenticated",
        Code::Unavailable | Code::DeadlineExceeded => "code-unavailable",
        Code::InvalidArgument => "code-invalid-argument",
        Code::FailedPrecondition => "code-failed-precondition",
        _ => "code-other",
    };
    t.tr(id, &[("detail", &detail)])
}

/// A screen's load error as the screen says it: `None` when the banner says it instead
/// (Kubernetes refused the dashboard's own credentials: the banner says why and what to run).
pub(crate) fn screen_error<'a>(state: &State, e: Option<&'a ApiError>) -> Option<&'a ApiError> {
    e.filter(|_| state.credentials_refused().is_none())
}

/// The machines of a plan's steps that already report its target, named, and what the plan
/// and the executor do with them (ADR 0068: the plan lists them in the executor's order; the
/// executor takes the target from the spec when a machine's turn comes); `None` when no machine
/// does. The Review and the CLI's plan text say it in the same words.
pub fn runs_target_text(t: &Texts, plan: &ichor_model::Plan) -> Option<String> {
    let at: Vec<String> = plan
        .steps
        .iter()
        .flatten()
        .filter(|m| m.runs_target)
        .map(|m| sanitize(&m.name))
        .collect();
    if at.is_empty() {
        return None;
    }
    let total = plan.steps.iter().map(Vec::len).sum::<usize>();
    Some(t.tr(
        "review-runs-target",
        &[
            ("n", &at.len().to_string()),
            ("total", &total.to_string()),
            ("target", &sanitize(&plan.target)),
            ("machines", &at.join(", ")),
        ],
    ))
}
