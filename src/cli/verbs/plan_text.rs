//! The plan as the question before a start prints it: built from PlanOperation's fields with
//! the Review's own words (ADR 0068, Decision 5: "the CLI (planText) and the UI build their
//! confirmation from it"): why it is blocked, what it does to how many machines, the spec write,
//! a CA rotation's passes, credentials and bundle export, the machines that already run the
//! target, the machines held, skipped or not approved, and the steps in order.

use ichor_model::inert::sanitize;
use ichor_model::{ApiError, HeldMachine, OperationEffect, OperationKind, Plan};
use ichor_views::i18n::Texts;

fn effect_id(kind: OperationKind) -> &'static str {
    match OperationEffect::of(kind) {
        OperationEffect::Reboot => "review-effect-reboot",
        OperationEffect::RestartComponents => "review-effect-restart",
        OperationEffect::Stop => "review-effect-stop",
        OperationEffect::None => "review-effect-none",
        OperationEffect::CaRotation => "review-effect-ca-rotation",
    }
}

/// The role of a machine in words.
pub(crate) fn role_word(t: &Texts, role: &str) -> String {
    match role {
        "controlplane" | "worker" => t.t(&format!("role-{role}")),
        other => sanitize(other),
    }
}

/// Why the plan may not be started, if it may not: the refusal, in words.
pub(crate) fn refusal(plan: &Plan) -> Option<ApiError> {
    plan.blocked
        .as_ref()
        .or(plan.denied.as_ref())
        .map(|r| ApiError::from_refusal(r.clone()))
}

/// The plan in lines, in the person's language.
pub(crate) fn lines(t: &Texts, plan: &Plan, tz: &jiff::tz::TimeZone) -> Vec<String> {
    let mut out = Vec::new();
    let kind = t.t(&format!("kind-{}", plan.kind.as_str()));
    let cluster = sanitize(&plan.cluster);
    out.push(t.tr("cli-plan-title", &[("kind", &kind), ("cluster", &cluster)]));
    if let Some(e) = refusal(plan) {
        let id = if plan.blocked.is_some() {
            "review-blocked"
        } else {
            "review-denied"
        };
        out.push(format!("✗ {}", t.t(id)));
        out.push(format!("  {}", ichor_views::words::error_text(t, &e)));
    }
    effect(t, plan, &mut out);
    notes(t, plan, tz, &mut out);
    aside(t, plan, &mut out);
    steps(t, plan, &mut out);
    out
}

fn effect(t: &Texts, plan: &Plan, out: &mut Vec<String>) {
    out.push(t.t(effect_id(plan.kind)));
    let count = t.tn(
        "review-count",
        &[
            ("machines", plan.machine_count().into()),
            ("steps", plan.steps.len().into()),
        ],
    );
    let change = (!plan.target.is_empty())
        .then(|| format!("{} → {}", sanitize(&plan.current), sanitize(&plan.target)));
    match (plan.kind.touches_machines(), change) {
        (true, Some(c)) => out.push(format!("{count} · {c}")),
        (true, None) => out.push(count),
        (false, Some(c)) => out.push(c),
        (false, None) => {}
    }
    match (&plan.spec_change, plan.target.is_empty()) {
        (Some(c), _) => out.push(t.tr(
            "review-spec-write",
            &[
                ("field", &sanitize(&c.field)),
                ("from", &sanitize(&c.from)),
                ("to", &sanitize(&c.to)),
                ("kind", &sanitize(&c.resource_kind)),
                ("name", &sanitize(&c.resource_name)),
            ],
        )),
        (None, false) => out.push(t.tr(
            "review-no-spec-write",
            &[("target", &sanitize(&plan.target))],
        )),
        (None, true) => {}
    }
}

fn notes(t: &Texts, plan: &Plan, tz: &jiff::tz::TimeZone, out: &mut Vec<String>) {
    let name = sanitize(&plan.cluster);
    if plan.kind == OperationKind::CaRotation {
        for id in ["ca-note-passes", "ca-note-kubelet"] {
            out.push(format!("• {}", t.t(id)));
        }
    }
    if let Some(r) = &plan.shut_down {
        let unknown = || t.t("unknown");
        let time = r
            .finished_at
            .map(|at| {
                at.to_zoned(tz.clone())
                    .strftime("%Y-%m-%d %H:%M")
                    .to_string()
            })
            .unwrap_or_else(unknown);
        let user = r.actor.as_deref().map(sanitize).unwrap_or_else(unknown);
        out.push(format!(
            "⚠ {}",
            t.tr(
                "review-shut-down",
                &[
                    ("cluster", &name),
                    ("time", &time),
                    ("user", &user),
                    ("operation", &sanitize(&r.operation)),
                ],
            )
        ));
    }
    if plan.stray_confirmation {
        out.push(t.tr("review-stray-confirmation", &[("cluster", &name)]));
    }
    if plan.credentials_stop_working {
        out.push(format!(
            "• {}",
            t.tr("ca-note-credentials", &[("name", &name)])
        ));
    }
    if plan.replaces_secrets_bundle {
        out.push(format!("• {}", t.tr("ca-note-bundle", &[("name", &name)])));
    }
    if !plan.shared_with.is_empty() {
        let names: Vec<String> = plan.shared_with.iter().map(|c| sanitize(c)).collect();
        out.push(t.tn(
            "review-shared",
            &[
                ("n", plan.shared_with.len().into()),
                ("clusters", names.join(", ").into()),
            ],
        ));
    }
}

fn held_lines(held: &[HeldMachine], out: &mut Vec<String>) {
    for h in held {
        out.push(format!(
            "  – {}: {}",
            sanitize(&h.name),
            sanitize(&h.reason)
        ));
    }
}

fn aside(t: &Texts, plan: &Plan, out: &mut Vec<String>) {
    // The machines that already run the target, in the Review's words.
    out.extend(ichor_views::words::runs_target_text(t, plan));
    if !plan.held.is_empty() {
        out.push(t.tn("review-held", &[("n", plan.held.len().into())]));
        held_lines(&plan.held, out);
    }
    if !plan.held_not_skipped.is_empty() {
        out.push(t.tn(
            "review-held-not-skipped",
            &[
                ("n", plan.held_not_skipped.len().into()),
                ("kind", plan.kind.as_str().into()),
            ],
        ));
        held_lines(&plan.held_not_skipped, out);
    }
    if !plan.unapproved.is_empty() {
        out.push(t.tn("review-unapproved", &[("n", plan.unapproved.len().into())]));
        for m in &plan.unapproved {
            let role = role_word(t, &m.role);
            let said = t.tr(
                "review-step",
                &[("machines", &sanitize(&m.name)), ("role", &role)],
            );
            out.push(format!("  – {said}"));
        }
    }
}

fn steps(t: &Texts, plan: &Plan, out: &mut Vec<String>) {
    if plan.steps.is_empty() {
        return;
    }
    out.push(t.t("review-steps"));
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
        out.push(format!(" {:>width$}. {text}", i + 1));
    }
}
