//! The Japanese is typeset as `locales/ja/common.ftl` says, on every Japanese screen the
//! snapshots hold (`tests/snapshots/*_ja_*.snap`) and in every Japanese message: kinsoku (no
//! line starts with closing punctuation, a small kana or `ー`, none ends with an opening
//! bracket), one half-width space between Japanese and Latin text, and one term for each thing.

use crate::common::fluent;

use fluent_bundle::{FluentArgs, FluentValue};
use fluent_syntax::ast;
use ichor_views::i18n::{Lang, Texts, sources};

/// What no line may start with: closing brackets and punctuation, middle dots, the prolonged
/// sound mark, small kana, iteration marks, exclamation and question marks, the ellipsis.
const NO_LINE_START: &str =
    "。、，．）」』】〕〉》］｝・ー！？：；ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ々ゝゞヽヾ";

/// What no line may end with: opening brackets.
const NO_LINE_END: &str = "（「『【〔〈《［｛";

/// One term for each thing: the words chosen, and the variants that must not appear beside
/// them in the Japanese (the header of `locales/ja/common.ftl` lists the choices).
const TERMS: &[(&str, &[&str])] = &[
    ("CA 入れ替え", &["ローテーション", "rotation"]),
    ("コントロールプレーン", &["CP", "control"]),
    ("計画", &["プラン"]),
    ("プロキシ", &["PROXY", "proxy "]),
    ("管理元", &["GitOps", "GITOPS"]),
    ("一時停止", &["停止待ち", "停止したまま"]),
    ("失敗で停止", &["失敗で一時停止", "失敗によって一時停止"]),
    ("レビュー", &["確認：", "確認へ"]),
];

/// Kana and kanji: the characters the spacing rule is about (not Japanese punctuation, which
/// carries its own space).
fn is_japanese(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{3096}' | '\u{30A1}'..='\u{30FA}' | 'ー' | '々' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}')
}

fn is_latin(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// The rows of a snapshot of a TestBackend, as they read: the text between the quotes, without
/// the note of the cells that wide characters hide.
fn rows(snap: &str) -> Vec<String> {
    snap.lines()
        .filter(|l| l.starts_with('"'))
        .map(|l| {
            let end = l
                .rfind("\" Hidden by multi-width symbols: ")
                .unwrap_or(l.len() - 1);
            l[1..end].to_string()
        })
        .collect()
}

/// The runs of text in a row: what lies between borders and between gaps of two or more
/// spaces (a column of a table, a line of a dialog, a wrapped line).
fn segments(row: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in row.split(|c: char| "│┌┐└┘├┤─|+".contains(c)) {
        for seg in part.split("  ") {
            let seg = seg.trim();
            if !seg.is_empty() {
                out.push(seg);
            }
        }
    }
    out
}

/// Every rule that a piece of Japanese text breaks, said.
fn spacing_and_terms(text: &str) -> Vec<String> {
    let mut broken = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for pair in chars.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if (is_japanese(a) && is_latin(b)) || (is_latin(a) && is_japanese(b)) {
            broken.push(format!("no space between {a:?} and {b:?} in {text:?}"));
        }
    }
    for (chosen, variants) in TERMS {
        // The chosen term taken out first: `一時停止待ち` holds `停止待ち`.
        let rest = text.replace(chosen, "〓");
        for v in *variants {
            if contains_word(&rest, v) {
                broken.push(format!("{v:?} where the term is {chosen:?}, in {text:?}"));
            }
        }
    }
    broken
}

/// Whether `text` holds `word`, not as part of a longer Latin word (`CP` is not in `cp1`).
fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        let latin_edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-');
        let glued_before =
            word.starts_with(|c: char| c.is_ascii_alphanumeric()) && latin_edge(before);
        let glued_after = word.ends_with(|c: char| c.is_ascii_alphanumeric()) && latin_edge(after);
        !glued_before && !glued_after
    })
}

/// Every rule a Japanese screen breaks, row by row.
fn screen_faults(snap: &str) -> Vec<String> {
    let mut faults = Vec::new();
    for (y, row) in rows(snap).iter().enumerate() {
        for seg in segments(row) {
            if let Some(first) = seg.chars().next()
                && NO_LINE_START.contains(first)
            {
                faults.push(format!("row {y} starts a line with {first:?}: {seg:?}"));
            }
            if let Some(last) = seg.chars().next_back()
                && NO_LINE_END.contains(last)
            {
                faults.push(format!("row {y} ends a line with {last:?}: {seg:?}"));
            }
        }
        faults.extend(
            spacing_and_terms(row)
                .into_iter()
                .map(|f| format!("row {y}: {f}")),
        );
    }
    faults
}

#[test]
fn every_japanese_snapshot_is_typeset_by_the_rules() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut checked = 0;
    let mut faults = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the snapshots") {
        let path = entry.expect("a snapshot").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".snap") || !name.contains("_ja_") {
            continue;
        }
        let snap = std::fs::read_to_string(&path).unwrap();
        checked += 1;
        faults.extend(
            screen_faults(&snap)
                .into_iter()
                .map(|f| format!("{name}: {f}")),
        );
    }
    assert!(checked >= 100, "only {checked} Japanese snapshots found");
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// Every Japanese message, each variable filled with a Latin value (a name, a version), as the
/// screens fill most of them.
fn rendered_ja_messages() -> Vec<(String, String)> {
    let texts = Texts::new(Lang::Ja);
    let mut out = Vec::new();
    for (_, src) in sources(Lang::Ja) {
        let res = fluent_syntax::parser::parse(*src).expect("ja parses");
        for entry in res.body {
            let ast::Entry::Message(m) = entry else {
                continue;
            };
            let vars = m.value.as_ref().map(fluent::variables).unwrap_or_default();
            let mut args = FluentArgs::new();
            for var in vars {
                // An age, a span, a pace and a bound are durations in Japanese words
                // ("4 分"), a role and the estimate's parts Japanese words; the rest are Latin.
                let value = match var.as_str() {
                    "age" | "span" | "pace" | "bound" => "4 分",
                    "role" => "ワーカー",
                    "basis" => "今のペースで",
                    "then" => "残り約 4 分",
                    "more" => "、ほかに 1 台も遅延中",
                    _ => "x1",
                };
                args.set(var, FluentValue::from(value));
            }
            if let Ok(s) = texts.format_strict(m.id.name, &args) {
                out.push((m.id.name.to_string(), s));
            }
        }
    }
    out
}

#[test]
fn every_japanese_message_is_spaced_and_worded_by_the_rules() {
    let messages = rendered_ja_messages();
    assert!(messages.len() > 200, "{} messages", messages.len());
    let mut faults = Vec::new();
    for (id, text) in &messages {
        faults.extend(
            spacing_and_terms(text)
                .into_iter()
                .map(|f| format!("{id}: {f}")),
        );
        // No space beside Japanese punctuation: it carries its own.
        for p in [
            "、 ", "。 ", "： ", "） ", "」 ", " （", " 「", " 、", " 。",
        ] {
            if text.contains(p) {
                faults.push(format!(
                    "{id}: a space beside Japanese punctuation ({p:?}) in {text:?}"
                ));
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_checks_catch_what_they_are_for() {
    let snap = "---\nsource: x\n---\n\"│ 。で始まる行                │\"\n\"│ 終わる行（ │ ok │\"\n\"│ CA ローテーション と API接続 │\"\n";
    let faults = screen_faults(snap);
    assert_eq!(faults.len(), 4, "{faults:#?}");
    assert!(screen_faults("\"│ prod-eu-cp1 コントロールプレーン （実行中） │\"").is_empty());
    assert!(contains_word("CP 3", "CP") && !contains_word("prod-eu-cp1 CPU", "CP"));
}
