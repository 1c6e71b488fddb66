//! Both locales have the same message ids with the same variables, every id the code uses
//! exists in both, and every message of both renders whole with its variables filled.

use crate::common::fluent;

use fluent_bundle::{FluentArgs, FluentValue};
use fluent_syntax::ast;
use ichor_app::keymap;
use ichor_app::state::Screen;
use ichor_model::{ApiError, Code, OperationKind, Reason};
use ichor_resources::CA_STAGES;
use ichor_views::i18n::{Lang, Texts, sources};
use std::collections::{BTreeMap, BTreeSet};

/// id → variables, for one language.
fn messages(lang: Lang) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (file, src) in sources(lang) {
        let res = fluent_syntax::parser::parse(*src)
            .unwrap_or_else(|(_, errs)| panic!("{lang:?}/{file}: {errs:?}"));
        for entry in res.body {
            if let ast::Entry::Message(m) = entry {
                let vars = m.value.as_ref().map(fluent::variables).unwrap_or_default();
                assert!(
                    out.insert(m.id.name.to_string(), vars).is_none(),
                    "{lang:?}: {} defined twice",
                    m.id.name
                );
            }
        }
    }
    out
}

#[test]
fn both_locales_have_the_same_ids_and_variables() {
    let en = messages(Lang::En);
    let ja = messages(Lang::Ja);
    let en_ids: BTreeSet<_> = en.keys().collect();
    let ja_ids: BTreeSet<_> = ja.keys().collect();
    assert_eq!(
        en_ids.difference(&ja_ids).collect::<Vec<_>>(),
        Vec::<&&String>::new(),
        "missing in ja"
    );
    assert_eq!(
        ja_ids.difference(&en_ids).collect::<Vec<_>>(),
        Vec::<&&String>::new(),
        "missing in en"
    );
    for (id, vars) in &en {
        assert_eq!(Some(vars), ja.get(id), "variables of {id}");
    }
}

/// The ids the code passes to `t`, `tr` and `tn` as literals, and the hint and reason ids that
/// live in tables.
fn ids_in_code() -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut stack = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src"
    ))];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for call in [
                ".t(\"",
                ".tr(\"",
                ".tn(\"",
                "Avail::No(\"",
                "Notice::Unavailable(\"",
            ] {
                for (i, _) in text.match_indices(call) {
                    let rest = &text[i + call.len()..];
                    if let Some(end) = rest.find('"') {
                        ids.insert(rest[..end].to_string());
                    }
                }
            }
            // Ids held in variables: any literal that looks like one of ours.
            for (i, _) in text.match_indices('"') {
                let rest = &text[i + 1..];
                if let Some(end) = rest.find('"') {
                    let lit = &rest[..end];
                    let prefixes = [
                        "why-", "key-", "footer-", "state-", "phase-", "mphase-", "role-", "col-",
                        "field-",
                    ];
                    if prefixes.iter().any(|p| lit.starts_with(p))
                        && lit.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    {
                        ids.insert(lit.to_string());
                    }
                }
            }
        }
    }
    for screen in [
        Screen::Operations,
        Screen::Operation,
        Screen::Clusters,
        Screen::Cluster,
    ] {
        for b in keymap::all(screen) {
            ids.insert(b.hint.to_string());
        }
    }
    for table in [keymap::FORM, keymap::REVIEW] {
        for b in table {
            ids.insert(b.hint.to_string());
        }
    }
    for k in OperationKind::ALL {
        ids.insert(format!("kind-{}", k.as_str()));
        ids.insert(format!("kind-short-{}", k.as_str()));
    }
    for r in Reason::ALL {
        ids.insert(r.message_id().to_string());
    }
    for a in ["pause", "resume", "delete"] {
        for f in [
            "pending-{}",
            "abandoned-{}",
            "done-{}",
            "confirm-{}-title",
            "confirm-{}-body",
            "confirm-{}-prompt",
        ] {
            ids.insert(f.replace("{}", a));
        }
    }
    for s in CA_STAGES {
        ids.insert(format!("ca-stage-{}", s.to_lowercase()));
    }
    ids.retain(|id| !id.contains('{'));
    ids
}

#[test]
fn every_id_the_code_uses_exists_in_both() {
    let ids = ids_in_code();
    assert!(ids.len() > 100, "the scan found the ids: {}", ids.len());
    for lang in [Lang::En, Lang::Ja] {
        let texts = Texts::new(lang);
        let missing: Vec<_> = ids.iter().filter(|id| !texts.has(id)).collect();
        assert!(missing.is_empty(), "{lang:?} lacks {missing:?}");
    }
}

#[test]
fn language_choice() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(Lang::choose(Some("ja"), env(&[])), Lang::Ja);
    assert_eq!(
        Lang::choose(None, env(&[("LANG", "ja_JP.UTF-8")])),
        Lang::Ja
    );
    assert_eq!(
        Lang::choose(None, env(&[("LC_ALL", "C"), ("LANG", "ja_JP.UTF-8")])),
        Lang::En,
        "LC_ALL wins"
    );
    assert_eq!(
        Lang::choose(None, env(&[("LC_MESSAGES", "ja_JP"), ("LANG", "en_US")])),
        Lang::Ja
    );
    assert_eq!(Lang::choose(None, env(&[])), Lang::En);
    assert_eq!(
        Lang::choose(None, env(&[("LANG", "de_DE.UTF-8")])),
        Lang::En
    );
}

/// The values worth trying for a variable: none for plain text, and for a selector each of its
/// variants' keys (a number for a plural category or a number key, the key itself otherwise).
type Tries = BTreeMap<String, Vec<FluentValue<'static>>>;

const PLURAL_CATEGORIES: [&str; 6] = ["zero", "one", "two", "few", "many", "other"];

fn tries_in_pattern(p: &ast::Pattern<&str>, out: &mut Tries) {
    for el in &p.elements {
        if let ast::PatternElement::Placeable { expression } = el {
            tries_in_expr(expression, out);
        }
    }
}

fn tries_in_expr(e: &ast::Expression<&str>, out: &mut Tries) {
    match e {
        ast::Expression::Select { selector, variants } => {
            tries_in_inline(selector, out);
            if let ast::InlineExpression::VariableReference { id } = selector {
                let values = out.entry(id.name.to_string()).or_default();
                for v in variants {
                    match &v.key {
                        ast::VariantKey::Identifier { name }
                            if PLURAL_CATEGORIES.iter().any(|c| c == name) =>
                        {
                            // Numbers that land in each category in en and ja.
                            values.extend([0, 1, 2, 5, 21].map(FluentValue::from));
                        }
                        ast::VariantKey::Identifier { name } => {
                            values.push(FluentValue::from(name.to_string()));
                        }
                        ast::VariantKey::NumberLiteral { value } => {
                            values.push(FluentValue::from(
                                value.parse::<f64>().expect("a number key"),
                            ));
                        }
                    }
                }
                // And a value no key names: the default variant.
                values.push(FluentValue::from("something-else"));
            }
            for v in variants {
                tries_in_pattern(&v.value, out);
            }
        }
        ast::Expression::Inline(i) => tries_in_inline(i, out),
    }
}

fn tries_in_inline(i: &ast::InlineExpression<&str>, out: &mut Tries) {
    match i {
        ast::InlineExpression::VariableReference { id } => {
            out.entry(id.name.to_string()).or_default();
        }
        ast::InlineExpression::Placeable { expression } => tries_in_expr(expression, out),
        ast::InlineExpression::FunctionReference { arguments, .. }
        | ast::InlineExpression::TermReference {
            arguments: Some(arguments),
            ..
        } => {
            for a in &arguments.positional {
                tries_in_inline(a, out);
            }
            for a in &arguments.named {
                tries_in_inline(&a.value, out);
            }
        }
        _ => {}
    }
}

/// Every message of every file of `lang`, with the values to try for its variables.
fn messages_with_tries(lang: Lang) -> Vec<(String, Tries)> {
    let mut out = Vec::new();
    for (file, src) in sources(lang) {
        let res = fluent_syntax::parser::parse(*src)
            .unwrap_or_else(|(_, errs)| panic!("{lang:?}/{file}: {errs:?}"));
        for entry in res.body {
            if let ast::Entry::Message(m) = entry {
                assert!(
                    m.attributes.is_empty(),
                    "{lang:?}/{file}: {} has attributes, which the code never reads",
                    m.id.name
                );
                let mut tries = Tries::new();
                if let Some(v) = &m.value {
                    tries_in_pattern(v, &mut tries);
                }
                out.push((m.id.name.to_string(), tries));
            }
        }
    }
    out
}

#[test]
fn every_message_renders_whole_with_its_variables_filled() {
    let mut failures = Vec::new();
    let mut rendered = 0;
    for lang in [Lang::En, Lang::Ja] {
        let texts = Texts::new(lang);
        for (id, tries) in messages_with_tries(lang) {
            // Every variable filled: a selector with a number when it selects by plural
            // category (2: "other"), text otherwise.
            let base: BTreeMap<&str, FluentValue<'static>> = tries
                .iter()
                .map(|(name, values)| {
                    let v = if values.iter().any(|v| matches!(v, FluentValue::Number(_))) {
                        FluentValue::from(2)
                    } else {
                        FluentValue::from(format!("<{name}>"))
                    };
                    (name.as_str(), v)
                })
                .collect();
            let mut cases = vec![base.clone()];
            for (name, values) in &tries {
                for v in values {
                    let mut case = base.clone();
                    case.insert(name.as_str(), v.clone());
                    cases.push(case);
                }
            }
            for case in cases {
                let mut args = FluentArgs::new();
                for (k, v) in &case {
                    args.set(*k, v.clone());
                }
                rendered += 1;
                match texts.format_strict(&id, &args) {
                    Ok(s) if s.contains("{$") || s.contains("{ $") => {
                        failures.push(format!("{lang:?} {id} {case:?}: left a variable: {s}"))
                    }
                    Ok(s) if s.trim().is_empty() && !id.ends_with("-empty") => {
                        failures.push(format!("{lang:?} {id} {case:?}: renders empty"))
                    }
                    Ok(_) => {}
                    Err(e) => failures.push(format!("{e} with {case:?}")),
                }
            }
        }
    }
    assert!(rendered > 300, "rendered {rendered} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the dashboard shows for `e` in `lang`.
fn shown(lang: Lang, e: &ApiError) -> String {
    ichor_views::words::error_text(&Texts::new(lang), e)
}

#[test]
fn an_error_never_shows_an_unfilled_variable() {
    for lang in [Lang::En, Lang::Ja] {
        for r in Reason::ALL {
            // No parameters at all: the code's words and the English message instead.
            let bare = ApiError::refused(Code::FailedPrecondition, *r, &[], "the English message");
            let s = shown(lang, &bare);
            assert!(!s.contains("{$"), "{lang:?} {r:?}: {s}");
        }
        let bare = ApiError::refused(
            Code::FailedPrecondition,
            Reason::UnfinishedOperation,
            &[("operation", "op-1")],
            "the English message",
        );
        assert!(
            shown(lang, &bare).ends_with("the English message"),
            "said by its code: {}",
            shown(lang, &bare)
        );
        let no_reason = ApiError::new(Code::Unauthenticated, "no words");
        assert!(shown(lang, &no_reason).contains("no words"));
    }
}

#[test]
fn a_refused_credential_says_which_flag_or_user_to_fix() {
    let refused = |params: &[(&str, &str)]| {
        ApiError::refused(
            Code::Unauthenticated,
            Reason::Unauthenticated,
            params,
            "the bearer token was not accepted",
        )
    };
    let detail = ("detail", "the bearer token was not accepted");
    assert_eq!(
        shown(Lang::En, &refused(&[detail, ("via", "token")])),
        "The server did not accept the bearer token (the bearer token was not accepted): check the one in --token-file or ICHOR_TOKEN."
    );
    assert_eq!(
        shown(Lang::En, &refused(&[detail, ("via", "no-token")])),
        "The server needs a bearer token (the bearer token was not accepted): give one with --token-file FILE or the ICHOR_TOKEN variable."
    );
    assert_eq!(
        shown(
            Lang::En,
            &refused(&[
                ("detail", "Unauthorized"),
                ("via", "kubeconfig"),
                ("user", "admin@prod")
            ])
        ),
        "Kubernetes did not accept the credentials of kubeconfig user admin@prod (Unauthorized): log in again, or choose another context with --context."
    );
    // The server's own refusal, as any client receives it (no `via`).
    assert_eq!(
        shown(Lang::En, &refused(&[detail])),
        "Not authenticated: the bearer token was not accepted"
    );
    let ja = shown(Lang::Ja, &refused(&[detail, ("via", "token")]));
    assert!(
        ja.contains("--token-file") && ja.contains("ICHOR_TOKEN"),
        "{ja}"
    );
}

/// A phase inside a Japanese refusal is said in Japanese (one shared term), never as the
/// service's English word.
#[test]
fn japanese_refusals_say_the_phase_in_japanese() {
    let refusal = |reason, phase| {
        ApiError::refused(
            Code::FailedPrecondition,
            reason,
            &[
                ("cluster", "staging"),
                ("operation", "op-1"),
                ("phase", phase),
            ],
            "the English message",
        )
    };
    for reason in [
        Reason::InstallationBusy,
        Reason::OperationReplaced,
        Reason::UnfinishedOperation,
    ] {
        for (phase, ja) in [
            ("Running", "実行中"),
            ("Paused", "一時停止中"),
            ("Pending", "待機中"),
        ] {
            let s = shown(Lang::Ja, &refusal(reason, phase));
            assert!(s.contains(&format!("（{ja}）")), "{reason:?} {phase}: {s}");
            assert!(!s.contains(phase), "{reason:?} {phase}: {s}");
        }
    }
}
