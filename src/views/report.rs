//! A run's report as Markdown, in the person's language, to paste into a change ticket: what
//! the operation was, who started it and when, the plan's order, each machine's start, end,
//! time and result, the warnings, the failure and what to do, what the machines run at the
//! end, who did what when (the timeline), and the totals. Every text from the cluster has its
//! control characters removed and is escaped for Markdown ([`cell`]): no link, image, HTML,
//! emphasis or code span of it survives, and no `|` of it breaks a table; the report itself
//! holds no control character but its line ends.

use super::text::sanitize;
use super::words::kind_text;
use crate::i18n::Texts;
use ichor_model::{MachinePhase, Report, ReportMachine};
use jiff::SignedDuration;
use jiff::tz::TimeZone;

/// Cluster text for a Markdown table cell or line: inert, and escaped so that it reads as the
/// text it is wherever it is pasted (CommonMark and GitHub's Markdown): every character that
/// starts a link, an image, an HTML tag, an entity, emphasis or a code span is backslash-escaped,
/// `|` too (GitHub tables), and the starts of the autolinks GitHub makes of bare text (`://`,
/// `www.`, `@`) are broken by an escape, which the rendered text does not show.
pub fn cell(s: &str) -> String {
    let clean = sanitize(s);
    let mut out = String::with_capacity(clean.len() + 8);
    let mut chars = clean.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '<' | '>' | '!' | '|' | '~' | '&'
            | '@' | '#' => {
                out.push('\\');
                out.push(c);
            }
            ':' if chars.peek() == Some(&'/') => out.push_str(":\\"),
            '.' if out.ends_with("www") || out.ends_with("WWW") => out.push_str("\\."),
            c => out.push(c),
        }
    }
    out
}

/// A moment as the report says it: date, time and the zone's offset.
fn when(t: Option<jiff::Timestamp>, tz: &TimeZone) -> String {
    t.map(|t| {
        t.to_zoned(tz.clone())
            .strftime("%Y-%m-%d %H:%M:%S %:z")
            .to_string()
    })
    .unwrap_or_else(|| "—".into())
}

/// A span to the second in the person's language: "1h 2m 3s", "4m 5s", "6s" ("4 分 5 秒").
pub fn span(t: &Texts, d: Option<SignedDuration>) -> String {
    let Some(d) = d else {
        return "—".into();
    };
    let s = d.as_secs().max(0);
    let n = |v: i64| fluent_bundle::FluentValue::from(v);
    let part = |id: &str, v: i64| t.tn(id, &[("n", n(v))]);
    let parts = match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, s) => vec![part("dur-seconds", s)],
        (0, m, s) => vec![part("dur-minutes", m), part("dur-seconds", s)],
        (h, m, s) => vec![
            part("dur-hours", h),
            part("dur-minutes", m),
            part("dur-seconds", s),
        ],
    };
    parts.join(" ")
}

/// A machine's result in words.
fn result(t: &Texts, m: &ReportMachine) -> String {
    match &m.phase {
        MachinePhase::Other(s) => cell(s),
        p => t.t(&format!("mphase-{}", p.as_str().to_lowercase())),
    }
}

/// The report as Markdown.
pub fn markdown(t: &Texts, r: &Report, tz: &TimeZone) -> String {
    let op = &r.operation;
    let mut out = Vec::new();
    let kind = kind_text(t, op.kind, &op.kind_raw);
    out.push(format!(
        "# {}",
        t.tr(
            "report-title",
            &[
                ("kind", &kind),
                ("cluster", &cell(&op.cluster)),
                ("name", &cell(&op.name))
            ]
        )
    ));
    out.push(String::new());
    facts(t, r, tz, &mut out);
    if r.walks_machines() {
        order(t, r, &mut out);
        machines(t, r, tz, &mut out);
    }
    timeline(t, r, tz, &mut out);
    warnings(t, r, tz, &mut out);
    failure(t, r, &mut out);
    at_the_end(t, r, &mut out);
    totals(t, r, &mut out);
    out.push(t.tr("report-made", &[("time", &when(Some(r.at), tz))]));
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn facts(t: &Texts, r: &Report, tz: &TimeZone, out: &mut Vec<String>) {
    let op = &r.operation;
    let text = |s: Option<&str>| s.map(cell).unwrap_or_else(|| t.t("unknown"));
    let change = match (&op.current, &op.target) {
        (Some(c), Some(g)) => format!("{} → {}", cell(c), cell(g)),
        (None, Some(g)) => format!("→ {}", cell(g)),
        _ => "—".into(),
    };
    let rows = [
        (t.t("field-name"), cell(&op.name)),
        (t.t("field-namespace"), cell(&op.namespace)),
        (t.t("field-kind"), kind_text(t, op.kind, &op.kind_raw)),
        (t.t("field-cluster"), cell(&op.cluster)),
        (t.t("field-target"), change),
        (t.t("field-started-by"), text(op.actor.as_deref())),
        (t.t("report-created"), when(op.created_at, tz)),
        (t.t("report-started"), when(op.started_at, tz)),
        (t.t("report-finished"), when(op.finished_at, tz)),
        (t.t("field-state"), state(t, r)),
        (
            t.t("report-max-unavailable"),
            op.max_unavailable.to_string(),
        ),
    ];
    out.push("| | |".into());
    out.push("| --- | --- |".into());
    for (k, v) in rows {
        out.push(format!("| {k} | {v} |"));
    }
    out.push(String::new());
}

/// The operation's state, as `operation get` says it.
fn state(t: &Texts, r: &Report) -> String {
    let op = &r.operation;
    let id = match &op.phase {
        _ if op.paused_by_failure() => "state-paused-failed",
        ichor_model::Phase::Other(s) => return cell(s),
        p if p.as_str().is_empty() => "phase-new",
        p => return t.t(&format!("phase-{}", p.as_str().to_lowercase())),
    };
    t.t(id)
}

/// The plan's order: each step and its machines.
fn order(t: &Texts, r: &Report, out: &mut Vec<String>) {
    out.push(format!("## {}", t.t("report-order")));
    out.push(String::new());
    let steps = r.machines.iter().map(|m| m.step).max().unwrap_or(0);
    for step in 1..=steps {
        let names: Vec<String> = r
            .machines
            .iter()
            .filter(|m| m.step == step)
            .map(|m| match &m.role {
                Some(role) => t.tr(
                    "report-order-machine",
                    &[
                        ("machine", &cell(&m.name)),
                        ("role", &super::words::role_word(t, role)),
                    ],
                ),
                None => cell(&m.name),
            })
            .collect();
        out.push(format!("{step}. {}", names.join(", ")));
    }
    let skipped: Vec<String> = r
        .machines
        .iter()
        .filter(|m| m.phase == MachinePhase::Skipped)
        .map(|m| cell(&m.name))
        .collect();
    if !skipped.is_empty() {
        let sep = t.t("list-separator");
        out.push(t.tr("report-skipped", &[("machines", &skipped.join(&sep))]));
    }
    out.push(String::new());
}

fn machines(t: &Texts, r: &Report, tz: &TimeZone, out: &mut Vec<String>) {
    out.push(format!("## {}", t.t("report-machines")));
    out.push(String::new());
    let head = [
        "#".to_string(),
        t.t("col-machine"),
        t.t("col-role"),
        t.t("report-col-step"),
        t.t("report-col-started"),
        t.t("report-col-finished"),
        t.t("col-elapsed"),
        t.t("report-col-result"),
        t.t("col-message"),
    ];
    out.push(format!("| {} |", head.join(" | ")));
    out.push(format!("|{}", " --- |".repeat(head.len())));
    for (i, m) in r.machines.iter().enumerate() {
        let role = m.role.as_deref().map(|r| super::words::role_word(t, r));
        let step = match m.step {
            0 => "—".to_string(),
            n => n.to_string(),
        };
        out.push(format!(
            "| {} | {} | {} | {step} | {} | {} | {} | {} | {} |",
            i + 1,
            cell(&m.name),
            role.unwrap_or_else(|| "—".into()),
            when(m.started_at, tz),
            when(m.finished_at, tz),
            span(t, m.took),
            result(t, m),
            cell(&m.message),
        ));
    }
    out.push(String::new());
}

/// Who did what, when, beside what the controller recorded: the history's entries (a start,
/// each pause and resume asked, a delete asked, the kube-proxy confirmation) with the run's
/// start, its end and a failed machine's failure, oldest first.
fn timeline(t: &Texts, r: &Report, tz: &TimeZone, out: &mut Vec<String>) {
    let op = &r.operation;
    let mut said: Vec<(Option<jiff::Timestamp>, String)> = op
        .history
        .iter()
        .map(|e| (e.at, cell(&super::history::entry_words(t, e))))
        .collect();
    // A delete request carries no entry: OperationService's Event is its record.
    said.extend(r.deletes.iter().map(|e| (e.at(), cell(&e.message))));
    if let Some(at) = op.started_at {
        said.push((Some(at), t.t("report-timeline-started")));
    }
    if let Some(m) = op.failed_machine() {
        let failed = t.tr(
            "report-timeline-machine-failed",
            &[("machine", &cell(&m.name))],
        );
        said.push((m.finished_at, failed));
    }
    let end = match op.phase {
        ichor_model::Phase::Completed => Some("report-timeline-completed"),
        ichor_model::Phase::Failed => Some("report-timeline-failed"),
        _ => None,
    };
    if let (Some(id), Some(at)) = (end, op.finished_at) {
        said.push((Some(at), t.t(id)));
    }
    // Stable: entries of the same second keep the order they were made in.
    said.sort_by_key(|(at, _)| *at);
    out.push(format!("## {}", t.t("report-timeline")));
    out.push(String::new());
    if said.is_empty() {
        out.push(t.t("report-timeline-empty"));
    }
    for (at, what) in said {
        out.push(format!("- {} · {what}", when(at, tz)));
    }
    out.push(String::new());
}

fn warnings(t: &Texts, r: &Report, tz: &TimeZone, out: &mut Vec<String>) {
    out.push(format!("## {}", t.t("report-warnings")));
    out.push(String::new());
    if let Some(e) = &r.events_error {
        let why = super::words::error_text(t, e);
        out.push(t.tr("report-events-unread", &[("why", &cell(&why))]));
    } else if r.warnings.is_empty() {
        out.push(t.t("report-no-warnings"));
    }
    for e in &r.warnings {
        let times = match e.count {
            0 | 1 => String::new(),
            n => format!(" (×{n})"),
        };
        out.push(format!(
            "- {} · {} {} · {}: {}{times}",
            when(e.at(), tz),
            cell(&e.object_kind),
            cell(&e.object_name),
            cell(&e.reason),
            cell(&e.message),
        ));
    }
    out.push(String::new());
}

/// The failure, and what to do: nothing retries and nothing is rolled back.
fn failure(t: &Texts, r: &Report, out: &mut Vec<String>) {
    let op = &r.operation;
    let failed = op.phase == ichor_model::Phase::Failed || op.paused_by_failure();
    if !failed {
        return;
    }
    out.push(format!("## {}", t.t("report-failure")));
    out.push(String::new());
    match op.failed_machine() {
        Some(m) if !m.message.trim().is_empty() => out.push(t.tr(
            "failure-machine-said",
            &[("machine", &cell(&m.name)), ("message", &cell(&m.message))],
        )),
        Some(m) => out.push(t.tr("failure-machine", &[("machine", &cell(&m.name))])),
        None => out.push(match &op.failure_reason {
            Some(reason) => t.tr("failure-operation", &[("reason", &cell(reason))]),
            None => t.t("failure-operation-no-reason"),
        }),
    }
    if let (Some(reason), Some(_)) = (&op.failure_reason, op.failed_machine()) {
        out.push(String::new());
        out.push(t.tr("failure-reason", &[("reason", &cell(reason))]));
    }
    out.push(String::new());
    out.push(t.tr("cli-failure-advice", &[("name", &cell(&op.name))]));
    out.push(String::new());
}

/// What the machines report they run when the report was made.
fn at_the_end(t: &Texts, r: &Report, out: &mut Vec<String>) {
    out.push(format!("## {}", t.t("report-at-end")));
    out.push(String::new());
    if !r.cluster_read {
        out.push(t.t("report-cluster-unread"));
        out.push(String::new());
        return;
    }
    out.push(format!(
        "| {} | {} | {} |",
        t.t("col-machine"),
        t.t("col-talos"),
        t.t("col-kubernetes")
    ));
    out.push("| --- | --- | --- |".into());
    let v = |s: &Option<String>| s.as_deref().map(cell).unwrap_or_else(|| "—".into());
    for m in &r.machines {
        out.push(format!(
            "| {} | {} | {} |",
            cell(&m.name),
            v(&m.talos_version),
            v(&m.kubernetes_version)
        ));
    }
    out.push(String::new());
}

fn totals(t: &Texts, r: &Report, out: &mut Vec<String>) {
    let n = &r.totals;
    out.push(format!("## {}", t.t("report-totals")));
    out.push(String::new());
    let count = |v: usize| fluent_bundle::FluentValue::from(v);
    out.push(format!(
        "- {}",
        t.tn(
            "report-count",
            &[
                ("machines", count(n.machines)),
                ("done", count(n.completed)),
                ("failed", count(n.failed)),
                ("skipped", count(n.skipped)),
                ("left", count(n.left)),
            ],
        )
    ));
    let took = match n.ended {
        true => "report-took",
        false => "report-took-so-far",
    };
    out.push(format!("- {}", t.tr(took, &[("time", &span(t, n.took))])));
    for (role, pace) in &n.pace {
        let role = match role.as_str() {
            "" => t.t("unknown"),
            r => super::words::role_word(t, r),
        };
        out.push(format!(
            "- {}",
            t.tr(
                "report-pace",
                &[("role", &role), ("span", &span(t, Some(*pace)))]
            )
        ));
    }
    out.push(format!(
        "- {}",
        t.tn("report-warning-count", &[("n", count(n.warnings))])
    ));
    out.push(String::new());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_said_to_the_second_in_the_persons_language() {
        use jiff::SignedDuration as D;
        let en = Texts::new(crate::i18n::Lang::En);
        let ja = Texts::new(crate::i18n::Lang::Ja);
        assert_eq!(span(&en, None), "—");
        assert_eq!(span(&en, Some(D::from_secs(6))), "6s");
        assert_eq!(span(&en, Some(D::from_secs(245))), "4m 5s");
        assert_eq!(span(&en, Some(D::from_secs(3723))), "1h 2m 3s");
        assert_eq!(span(&ja, Some(D::from_secs(245))), "4 分 5 秒");
        let n = |v: usize| fluent_bundle::FluentValue::from(v);
        assert_eq!(en.tn("report-warning-count", &[("n", n(1))]), "1 warning");
        assert_eq!(en.tn("report-warning-count", &[("n", n(3))]), "3 warnings");
    }

    #[test]
    fn cluster_text_holds_no_live_markdown() {
        assert_eq!(cell("a|b\u{1b}[2J"), "a\\|b\u{fffd}\\[2J");
        assert_eq!(
            cell("![beacon](http://x.example/p.png)"),
            "\\!\\[beacon\\]\\(http:\\//x.example/p.png\\)"
        );
        assert_eq!(
            cell("<img src=x onerror=alert(1)>"),
            "\\<img src=x onerror=alert\\(1\\)\\>"
        );
        assert_eq!(cell("see www.example.com"), "see www\\.example.com");
        assert_eq!(
            cell("`code` *b* _i_ ~s~ &amp;"),
            "\\`code\\` \\*b\\* \\_i\\_ \\~s\\~ \\&amp;"
        );
        assert_eq!(cell("alice@example.com"), "alice\\@example.com");
        assert_eq!(
            cell("staging-w01 v1.9.3"),
            "staging-w01 v1.9.3",
            "plain words stay plain"
        );
    }
}
