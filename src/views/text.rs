//! Text that reaches the screen: untrusted cluster text made inert, display-width-aware
//! truncation and padding, and the one function that wraps text (Japanese takes two columns a
//! character).

pub use ichor_model::inert::{sanitize, truncate, width};
use textwrap::core::Word;
use textwrap::{Options, WordSeparator, WordSplitter, WrapAlgorithm};
use unicode_width::UnicodeWidthChar;

/// Whether `c` is East Asian Width "Ambiguous" (UAX #11, from ICU's property data) and laid out
/// one column wide: a terminal that draws ambiguous characters wide (Tera Term or PuTTY set to
/// Japanese, mintty under a ja locale, `xterm -cjk_width`) draws it over the next cell. Box
/// drawing, `·`, `…`, `→`, `○`, `é`, `α`, `Д`, `①`, `※`. (unicode-width's CJK width keeps
/// letters narrow, as those terminals do not: it cannot say this.) Combining marks, zero wide
/// everywhere, are not.
pub(crate) fn is_ambiguous(c: char) -> bool {
    use icu_properties::CodePointMapData;
    use icu_properties::props::EastAsianWidth;
    c.width() == Some(1)
        && CodePointMapData::<EastAsianWidth>::new().get(c) == EastAsianWidth::Ambiguous
}

/// Truncates then pads with spaces to exactly `w` columns.
pub(crate) fn fit(s: &str, w: usize) -> String {
    let t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    format!("{t}{}", " ".repeat(pad))
}

/// Pads on the left to `w` columns (numbers).
pub(crate) fn fit_right(s: &str, w: usize) -> String {
    let t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    format!("{}{t}", " ".repeat(pad))
}

/// Cuts `s` to at most `max` columns keeping both ends, with `…` between them: names that differ
/// only at the end (`prod-eu-talos-8xk2m`, `prod-eu-talos-q4w7z`) stay told apart.
pub(crate) fn truncate_middle(s: &str, max: usize) -> String {
    if width(s) <= max || max < 3 {
        return truncate(s, max);
    }
    let tail_w = (max - 1) / 2;
    let head_w = max - 1 - tail_w;
    let mut head = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > head_w {
            break;
        }
        head.push(c);
        used += w;
    }
    let mut tail = Vec::new();
    let mut used = 0;
    for c in s.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > tail_w {
            break;
        }
        tail.push(c);
        used += w;
    }
    head.push('…');
    head.extend(tail.iter().rev());
    head
}

/// Wraps text to `w` columns by display width; each `\n` starts a paragraph. Runs of narrow
/// characters (words, commands, names) break only at spaces; a wide (CJK) character may start a
/// line anywhere, as Japanese text does, within the kinsoku rules (`break_allowed`): no line
/// starts with closing punctuation, a small kana or a prolonged sound mark, no line ends with an
/// opening bracket, and a short bracketed run stays on one line. A run wider than a line is cut
/// where it must be. Continuation lines keep the paragraph's indent while it takes less than half
/// the width.
pub fn wrap(s: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut lines = Vec::new();
    for para in s.split('\n') {
        let indent = &para[..para.len() - para.trim_start_matches(' ').len()];
        let indent = if width(indent) * 2 < w { indent } else { "" };
        let options = Options::new(w)
            .word_separator(WordSeparator::Custom(break_opportunities))
            .word_splitter(WordSplitter::NoHyphenation)
            .wrap_algorithm(WrapAlgorithm::FirstFit)
            .subsequent_indent(indent)
            .break_words(true);
        lines.extend(
            textwrap::wrap(para, options)
                .into_iter()
                .map(|l| l.trim_end().to_string()),
        );
    }
    lines
}

/// The widest bracketed run (brackets included) kept on one line: `（実行中）`, `（kubectl edit）`.
const KEEP_BRACKETED: usize = 16;

/// Where a line may break, as words: a line may start before each word but the first. Leading
/// spaces are a word of their own, so a paragraph's indent stays on its first line.
fn break_opportunities(line: &str) -> Box<dyn Iterator<Item = Word<'_>> + '_> {
    let starts = line_starts(line);
    let mut words = Vec::with_capacity(starts.len() + 1);
    let mut start = 0;
    for i in starts {
        words.push(Word::from(&line[start..i]));
        start = i;
    }
    if start < line.len() {
        words.push(Word::from(&line[start..]));
    }
    Box::new(words.into_iter())
}

/// The byte offsets where a line may start: after spaces, and around each wide character, where
/// the kinsoku rules allow it and not inside a short bracketed run.
fn line_starts(line: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    // The last character that is not a space, whether it was wide, and whether spaces follow it.
    let mut prev: Option<char> = None;
    let mut prev_wide = false;
    let mut after_space = false;
    for (i, c) in line.char_indices() {
        if c == ' ' {
            after_space = true;
            continue;
        }
        let wide = c.width().unwrap_or(0) > 1;
        if i > 0 && (after_space || wide || prev_wide) && break_allowed(prev, c) {
            starts.push(i);
        }
        prev = Some(c);
        prev_wide = wide;
        after_space = false;
    }
    for (open, close) in short_bracketed_runs(line) {
        starts.retain(|&i| i <= open || i > close);
    }
    starts
}

/// Whether a line may end after `before` (the last character that is not a space) and start
/// with `after`. The kinsoku classes are UAX #14's: no line starts with a closing bracket or
/// punctuation (CL, CP: `）」』】〕、。，．`), a non-starter (NS: `・：ゝ々`), a small kana or
/// the prolonged sound mark (CJ: `ぁっゃァッャー`, resolved to NS as UAX #14 says by default),
/// an exclamation or question mark (EX: `！？`) or an ellipsis (IN: `…`); none ends with an
/// opening bracket (OP: `（「『【〔`).
fn break_allowed(before: Option<char>, after: char) -> bool {
    use unicode_linebreak::{BreakClass as B, break_property};
    let starts_ok = !matches!(
        break_property(u32::from(after)),
        B::ClosePunctuation
            | B::CloseParenthesis
            | B::NonStarter
            | B::ConditionalJapaneseStarter
            | B::Exclamation
            | B::Inseparable
    );
    let ends_ok = before.is_none_or(|b| break_property(u32::from(b)) != B::OpenPunctuation);
    starts_ok && ends_ok
}

/// The bracketed runs (an opening bracket to its closing one) at most `KEEP_BRACKETED` columns
/// wide, as the byte offsets of their two brackets.
fn short_bracketed_runs(line: &str) -> Vec<(usize, usize)> {
    use unicode_linebreak::{BreakClass as B, break_property};
    let mut runs = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (i, c) in line.char_indices() {
        match break_property(u32::from(c)) {
            B::OpenPunctuation => open.push(i),
            B::ClosePunctuation | B::CloseParenthesis => {
                if let Some(o) = open.pop()
                    && width(&line[o..i + c.len_utf8()]) <= KEEP_BRACKETED
                {
                    runs.push((o, i));
                }
            }
            _ => {}
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_removes_every_escape() {
        let evil = "a\u{1b}[31mred\u{1b}]0;title\u{7}\u{90}dcs\u{9c}\u{8}\r\nz\u{202E}abc\u{2066}";
        let clean = sanitize(evil);
        assert!(
            !clean.chars().any(ichor_model::inert::is_dangerous),
            "{clean:?}"
        );
        assert!(clean.starts_with('a') && clean.contains("red") && clean.contains('z'));
        assert_eq!(sanitize("plain 日本語"), "plain 日本語");
    }

    #[test]
    fn truncation_is_by_display_width() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("日本語です", 5), "日本…");
        assert_eq!(
            width(&truncate("日本語です", 6)),
            5,
            "a wide char that does not fit is left out"
        );
        assert_eq!(fit("日本", 6), "日本  ");
        assert_eq!(fit_right("7", 3), "  7");
        assert_eq!(truncate("x", 0), "");
    }

    #[test]
    fn names_are_cut_in_the_middle() {
        assert_eq!(truncate_middle("prod-eu-talos-8xk2m", 13), "prod-e…-8xk2m");
        assert_eq!(
            truncate_middle("prod-eu-talos-8xk2m", 19),
            "prod-eu-talos-8xk2m"
        );
        assert_eq!(truncate_middle("本番クラスター", 9), "本番…ター");
        assert_eq!(width(&truncate_middle("本番クラスター", 8)), 7);
        assert_eq!(truncate_middle("abcdef", 2), "a…");
    }

    /// Every line of `lines` fits in `w` columns.
    fn fits(lines: &[String], w: usize) {
        for l in lines {
            assert!(width(l) <= w, "{l:?} is wider than {w}");
        }
    }

    #[test]
    fn latin_breaks_at_spaces() {
        assert_eq!(wrap("the quick brown fox", 10), ["the quick", "brown fox"]);
        assert_eq!(wrap("the quick brown fox", 80), ["the quick brown fox"]);
        assert_eq!(
            wrap("run ichor cluster bundle-export prod-eu now", 16),
            ["run ichor", "cluster", "bundle-export", "prod-eu now"],
            "a command's words are never split at a hyphen"
        );
        assert_eq!(wrap("two\nparagraphs", 20), ["two", "paragraphs"]);
        assert_eq!(wrap("", 10), [""]);
    }

    #[test]
    fn cjk_breaks_anywhere_by_display_width() {
        let lines = wrap("各マシンのコンポーネントを 1 ステップずつ", 20);
        assert_eq!(lines, ["各マシンのコンポーネ", "ントを 1 ステップず", "つ"]);
        fits(&lines, 20);
        // An odd width: a wide character never hangs over the edge.
        let lines = wrap("日本語の文章を折り返す", 7);
        assert_eq!(lines, ["日本語", "の文章", "を折り", "返す"]);
        fits(&lines, 7);
    }

    #[test]
    fn mixed_text_breaks_at_spaces_and_around_wide_characters() {
        assert_eq!(
            wrap("古くなります。ichor cluster bundle-export", 20),
            ["古くなります。ichor", "cluster", "bundle-export"]
        );
        assert_eq!(
            wrap("マシン prod-eu-w07 が失敗しました", 16),
            ["マシン", "prod-eu-w07 が失", "敗しました"]
        );
    }

    #[test]
    fn no_line_starts_with_closing_punctuation_a_small_kana_or_a_long_vowel_mark() {
        // 。 would start the second line: お goes down with it.
        assert_eq!(
            wrap("あいうえお。かきくけこ", 10),
            ["あいうえ", "お。かきく", "けこ"]
        );
        assert_eq!(
            wrap("あいうえ、おかきくけ", 8),
            ["あいう", "え、おか", "きくけ"]
        );
        assert_eq!(
            wrap("いちょうとサーバー", 4),
            ["い", "ちょ", "うと", "サー", "バー"]
        );
        assert_eq!(wrap("あいうえっと", 8), ["あいう", "えっと"]);
        assert_eq!(wrap("はい！いいえ？", 4), ["は", "い！", "いい", "え？"]);
        assert_eq!(wrap("あい・うえ", 4), ["あ", "い・", "うえ"]);
        assert_eq!(wrap("読み込み中…", 10), ["読み込み", "中…"]);
    }

    #[test]
    fn no_line_ends_with_an_opening_bracket() {
        assert_eq!(wrap("あいう「えお」", 8), ["あいう", "「えお」"]);
        assert_eq!(
            wrap("prod-eu-w01 (ワーカー)", 14),
            ["prod-eu-w01", "(ワーカー)"]
        );
    }

    #[test]
    fn a_short_bracketed_run_stays_on_one_line() {
        assert_eq!(
            wrap("状態は（実行中）です", 12),
            ["状態は", "（実行中）で", "す"]
        );
        assert_eq!(
            wrap("削除してください（kubectl edit）。", 20),
            ["削除してください", "（kubectl edit）。"]
        );
        // A longer one breaks as any text does, within the rules.
        let long = "注意（これはとても長い括弧書きで、一行には収まりません）。";
        let lines = wrap(long, 20);
        assert!(lines.len() > 1, "{lines:?}");
        for l in &lines {
            let first = l.chars().next().unwrap();
            assert!(!"。、）".contains(first), "{lines:?}");
            assert!(!l.ends_with('（'), "{lines:?}");
        }
        fits(&lines, 20);
    }

    #[test]
    fn a_word_longer_than_the_width_is_cut_where_it_must_be() {
        assert_eq!(
            wrap("averyveryverylongword", 8),
            ["averyver", "yverylon", "gword"]
        );
        assert_eq!(
            wrap("ab averyverylongword", 8),
            ["ab", "averyver", "ylongwor", "d"]
        );
        assert_eq!(wrap("x", 0), ["x"], "a zero width is taken as one column");
    }

    #[test]
    fn continuation_lines_keep_the_indent() {
        assert_eq!(
            wrap("  indented text that wraps", 14),
            ["  indented", "  text that", "  wraps"]
        );
        // An indent of half the width or more is not repeated.
        assert_eq!(wrap("      abc def", 10), ["      abc", "def"]);
    }
}
