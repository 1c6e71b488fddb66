//! Both locales have the same message ids with the same variables, and every id the code uses
//! exists in both.

use fluent_syntax::ast;
use ichor_tui::app::keymap;
use ichor_tui::app::state::Screen;
use ichor_tui::cluster::resources::CA_STAGES;
use ichor_tui::i18n::{Lang, Texts, sources};
use ichor_tui::model::{OperationKind, Reason};
use std::collections::{BTreeMap, BTreeSet};

fn vars_in_pattern(p: &ast::Pattern<&str>, out: &mut BTreeSet<String>) {
    for el in &p.elements {
        if let ast::PatternElement::Placeable { expression } = el {
            vars_in_expr(expression, out);
        }
    }
}

fn vars_in_expr(e: &ast::Expression<&str>, out: &mut BTreeSet<String>) {
    match e {
        ast::Expression::Select { selector, variants } => {
            vars_in_inline(selector, out);
            for v in variants {
                vars_in_pattern(&v.value, out);
            }
        }
        ast::Expression::Inline(i) => vars_in_inline(i, out),
    }
}

fn vars_in_inline(i: &ast::InlineExpression<&str>, out: &mut BTreeSet<String>) {
    match i {
        ast::InlineExpression::VariableReference { id } => {
            out.insert(id.name.to_string());
        }
        ast::InlineExpression::Placeable { expression } => vars_in_expr(expression, out),
        _ => {}
    }
}

/// id → variables, for one language.
fn messages(lang: Lang) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (file, src) in sources(lang) {
        let res = fluent_syntax::parser::parse(*src)
            .unwrap_or_else(|(_, errs)| panic!("{lang:?}/{file}: {errs:?}"));
        for entry in res.body {
            if let ast::Entry::Message(m) = entry {
                let mut vars = BTreeSet::new();
                if let Some(v) = &m.value {
                    vars_in_pattern(v, &mut vars);
                }
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
        ids.insert(format!(
            "error-{}",
            r.as_str().to_lowercase().replace('_', "-")
        ));
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
