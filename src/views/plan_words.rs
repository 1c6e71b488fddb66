//! The plan in words, written once for the Review and the CLI's plan (ADR 0068, Decision 5: "the
//! CLI (planText) and the UI build their confirmation from it"): why Start is not offered, what
//! the start does to how many machines, the spec write, what else to know (a CA rotation's
//! passes, a cluster shut down, credentials and the secrets bundle, clusters that share the
//! change), the machines that already run the target, the machines held, skipped or not
//! approved, and the steps in order. The Review draws these lines in their tones, wrapped to its
//! width; the CLI prints them as they are.

use crate::i18n::Texts;
use crate::text::sanitize;
use crate::words::{date_time_in, error_text, role_word, runs_target_text};
use fluent_bundle::FluentValue;
use ichor_model::{ApiError, HeldMachine, OperationEffect, OperationKind, Plan};
use jiff::tz::TimeZone;

/// How a line of the plan is said: the Review's colours; the CLI prints every tone alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// What the start does, and the heading of the steps.
    Strong,
    /// That Start is not offered.
    Alarm,
    /// Why not.
    Refused,
    /// What to know before starting.
    Warn,
    /// A cluster that was shut down.
    Urgent,
    /// Machines not touched.
    Quiet,
}

/// One line of the plan: a lead (a mark or an indent) and the text after it. When `hangs`, the
/// text wraps under itself after the lead; otherwise lead and text wrap as one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Said {
    pub tone: Tone,
    pub lead: String,
    pub text: String,
    pub hangs: bool,
}

impl Said {
    fn new(tone: Tone, text: String) -> Said {
        Said {
            tone,
            lead: String::new(),
            text,
            hangs: false,
        }
    }

    fn hanging(tone: Tone, lead: &str, text: String) -> Said {
        Said {
            tone,
            lead: lead.to_string(),
            text,
            hangs: true,
        }
    }

    /// The line as text: its lead, then its text.
    pub fn line(&self) -> String {
        format!("{}{}", self.lead, self.text)
    }
}

/// The ids of what a kind's start does to the machines: in a few words (the form's list of
/// kinds), and as the Review and the CLI say it.
pub(crate) fn effect_ids(kind: OperationKind) -> (&'static str, &'static str) {
    match OperationEffect::of(kind) {
        OperationEffect::Reboot => ("effect-reboot", "review-effect-reboot"),
        OperationEffect::RestartComponents => ("effect-restart", "review-effect-restart"),
        OperationEffect::Stop => ("effect-stop", "review-effect-stop"),
        OperationEffect::None => ("effect-none", "review-effect-none"),
        OperationEffect::CaRotation => ("effect-ca-rotation", "review-effect-ca-rotation"),
    }
}

/// Why the plan may not be started, if it may not: the refusal, or that the caller may not.
pub fn refusal(plan: &Plan) -> Option<ApiError> {
    plan.blocked
        .as_ref()
        .or(plan.denied.as_ref())
        .map(|r| ApiError::from_refusal(r.clone()))
}

/// The plan in lines, in the person's language; times in `tz`.
pub fn summary(t: &Texts, plan: &Plan, tz: &TimeZone) -> Vec<Said> {
    let mut out = Vec::new();
    blocked(t, plan, &mut out);
    effect(t, plan, &mut out);
    notes(t, plan, tz, &mut out);
    aside(t, plan, &mut out);
    steps(t, plan, &mut out);
    out
}

/// Why Start is not offered, first, and a blank line after it.
fn blocked(t: &Texts, plan: &Plan, out: &mut Vec<Said>) {
    let Some(e) = refusal(plan) else {
        return;
    };
    let id = if plan.blocked.is_some() {
        "review-blocked"
    } else {
        "review-denied"
    };
    out.push(Said::new(Tone::Alarm, format!("✗ {}", t.t(id))));
    out.push(Said::new(Tone::Refused, error_text(t, &e)));
    // Every reason at once, so one fix does not only reveal the next.
    let also = plan
        .also_blocked
        .iter()
        .chain(plan.denied.iter().filter(|_| plan.blocked.is_some()));
    for r in also {
        let e = ApiError::from_refusal(r.clone());
        out.push(Said::new(Tone::Refused, error_text(t, &e)));
    }
    out.push(Said::new(Tone::Plain, String::new()));
}

/// What the start does, to how many machines, from which version to which, and the spec field
/// it writes first.
fn effect(t: &Texts, plan: &Plan, out: &mut Vec<Said>) {
    out.push(Said::new(Tone::Strong, t.t(effect_ids(plan.kind).1)));
    let count = t.tn(
        "review-count",
        &[
            ("machines", plan.machine_count().into()),
            ("steps", plan.steps.len().into()),
        ],
    );
    let change = (!plan.target.is_empty())
        .then(|| format!("{} → {}", sanitize(&plan.current), sanitize(&plan.target)));
    let line = match (plan.kind.touches_machines(), change) {
        (true, Some(c)) => Some(format!("{count} · {c}")),
        (true, None) => Some(count),
        (false, change) => change,
    };
    out.extend(line.map(|l| Said::new(Tone::Plain, l)));
    let write = match (&plan.spec_change, plan.target.is_empty()) {
        (Some(c), _) => Some(t.tr(
            "review-spec-write",
            &[
                ("field", &sanitize(&c.field)),
                ("from", &sanitize(&c.from)),
                ("to", &sanitize(&c.to)),
                ("kind", &sanitize(&c.resource_kind)),
                ("name", &sanitize(&c.resource_name)),
            ],
        )),
        (None, false) => Some(t.tr(
            "review-no-spec-write",
            &[("target", &sanitize(&plan.target))],
        )),
        (None, true) => None,
    };
    out.extend(write.map(|w| Said::new(Tone::Plain, w)));
}

/// What else to know: a CA rotation's passes, a cluster shut down, the credentials and the
/// secrets bundle, and clusters that share the change.
fn notes(t: &Texts, plan: &Plan, tz: &TimeZone, out: &mut Vec<Said>) {
    let name = sanitize(&plan.cluster);
    if plan.kind == OperationKind::CaRotation {
        for id in ["ca-note-passes", "ca-note-kubelet"] {
            out.push(Said::hanging(Tone::Plain, "• ", t.t(id)));
        }
    }
    if let Some(r) = &plan.shut_down {
        let unknown = || t.t("unknown");
        let time = r
            .finished_at
            .map(|at| date_time_in(tz, at))
            .unwrap_or_else(unknown);
        let user = r.actor.as_deref().map(sanitize).unwrap_or_else(unknown);
        let said = t.tr(
            "review-shut-down",
            &[
                ("cluster", &name),
                ("time", &time),
                ("user", &user),
                ("operation", &sanitize(&r.operation)),
            ],
        );
        out.push(Said::hanging(Tone::Urgent, "⚠ ", said));
    }
    if plan.stray_confirmation {
        let said = t.tr("review-stray-confirmation", &[("cluster", &name)]);
        out.push(Said::hanging(Tone::Warn, "", said));
    }
    if plan.credentials_stop_working {
        let note = t.tr("ca-note-credentials", &[("name", &name)]);
        out.push(Said::hanging(Tone::Warn, "• ", note));
    }
    if plan.replaces_secrets_bundle {
        let note = t.tr("ca-note-bundle", &[("name", &name)]);
        out.push(Said::hanging(Tone::Warn, "• ", note));
    }
    if !plan.shared_with.is_empty() {
        let names: Vec<String> = plan.shared_with.iter().map(|c| sanitize(c)).collect();
        let shared = t.tn(
            "review-shared",
            &[
                ("n", plan.shared_with.len().into()),
                ("clusters", names.join(&t.t("list-separator")).into()),
            ],
        );
        out.push(Said::new(Tone::Warn, shared));
    }
}

/// Held machines, each named with why.
fn held(held: &[HeldMachine], out: &mut Vec<Said>) {
    for h in held {
        let line = format!("  – {}: {}", sanitize(&h.name), sanitize(&h.reason));
        out.push(Said::new(Tone::Warn, line));
    }
}

/// The machines besides the plain steps: those that already run the target, held and skipped,
/// held but handled anyway (and why), and not approved (not touched), each named.
fn aside(t: &Texts, plan: &Plan, out: &mut Vec<Said>) {
    let n = |v: usize| FluentValue::from(v);
    out.extend(runs_target_text(t, plan).map(|s| Said::new(Tone::Warn, s)));
    if !plan.held.is_empty() {
        let said = t.tn("review-held", &[("n", n(plan.held.len()))]);
        out.push(Said::new(Tone::Warn, said));
        held(&plan.held, out);
    }
    if !plan.held_not_skipped.is_empty() {
        let said = t.tn(
            "review-held-not-skipped",
            &[
                ("n", n(plan.held_not_skipped.len())),
                ("kind", plan.kind.as_str().into()),
            ],
        );
        out.push(Said::new(Tone::Warn, said));
        held(&plan.held_not_skipped, out);
    }
    if !plan.unapproved.is_empty() {
        let said = t.tn("review-unapproved", &[("n", n(plan.unapproved.len()))]);
        out.push(Said::new(Tone::Quiet, said));
        for m in &plan.unapproved {
            let role = role_word(t, &m.role);
            let said = t.tr(
                "review-step",
                &[("machines", &sanitize(&m.name)), ("role", &role)],
            );
            out.push(Said::new(Tone::Quiet, format!("  – {said}")));
        }
    }
}

/// The steps in order, numbered; a step with many machines (a shutdown's workers) wraps under
/// its text.
fn steps(t: &Texts, plan: &Plan, out: &mut Vec<Said>) {
    if plan.steps.is_empty() {
        return;
    }
    out.push(Said::new(Tone::Strong, t.t("review-steps")));
    let width = plan.steps.len().to_string().len();
    for (i, step) in plan.steps.iter().enumerate() {
        let names: Vec<String> = step.iter().map(|m| sanitize(&m.name)).collect();
        let role = step
            .first()
            .map(|m| role_word(t, &m.role))
            .unwrap_or_default();
        let text = t.tr(
            "review-step",
            &[("machines", &names.join(", ")), ("role", &role)],
        );
        let lead = format!(" {:>width$}. ", i + 1);
        out.push(Said::hanging(Tone::Plain, &lead, text));
    }
}
