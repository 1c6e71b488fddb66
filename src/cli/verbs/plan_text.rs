//! The plan as the question before a start prints it: its title, then the plan in the Review's
//! own words, line for line (`ichor_views::plan_words`, written once for both: ADR 0068,
//! Decision 5, "the CLI (planText) and the UI build their confirmation from it").

use ichor_model::Plan;
use ichor_model::inert::sanitize;
use ichor_views::i18n::Texts;
pub(crate) use ichor_views::plan_words::refusal;

/// The plan in lines, in the person's language.
pub(crate) fn lines(t: &Texts, plan: &Plan, tz: &jiff::tz::TimeZone) -> Vec<String> {
    let kind = t.t(&format!("kind-{}", plan.kind.as_str()));
    let cluster = sanitize(&plan.cluster);
    let title = t.tr("cli-plan-title", &[("kind", &kind), ("cluster", &cluster)]);
    std::iter::once(title)
        .chain(
            ichor_views::plan_words::summary(t, plan, tz)
                .iter()
                .map(|s| s.line()),
        )
        .collect()
}
