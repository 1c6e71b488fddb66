//! Text that reaches the screen: untrusted cluster text made inert, display-width-aware
//! truncation and padding, and the one function that wraps text (Japanese takes two columns a
//! character).

pub use crate::text::{sanitize, truncate, width};
use textwrap::core::Word;
use textwrap::{Options, WordSeparator, WordSplitter, WrapAlgorithm};
use unicode_width::UnicodeWidthChar;

/// Truncates then pads with spaces to exactly `w` columns.
pub fn fit(s: &str, w: usize) -> String {
    let t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    format!("{t}{}", " ".repeat(pad))
}

/// Pads on the left to `w` columns (numbers).
pub fn fit_right(s: &str, w: usize) -> String {
    let t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    format!("{}{t}", " ".repeat(pad))
}

/// Cuts `s` to at most `max` columns keeping both ends, with `…` between them: names that differ
/// only at the end (`prod-eu-talos-8xk2m`, `prod-eu-talos-q4w7z`) stay told apart.
pub fn truncate_middle(s: &str, max: usize) -> String {
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
/// line anywhere, as Japanese text does; a run wider than a line is cut where it must be.
/// Continuation lines keep the paragraph's indent while it takes less than half the width.
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

/// Where a line may break: after each word (a run of narrow characters with the spaces that
/// follow it) and around each wide character. Leading spaces are a word of their own, so a
/// paragraph's indent stays on its first line. (Kinsoku rules would go here.)
fn break_opportunities(line: &str) -> Box<dyn Iterator<Item = Word<'_>> + '_> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut after_space = false;
    let mut after_wide = false;
    for (i, c) in line.char_indices() {
        if c == ' ' {
            after_space = true;
            continue;
        }
        let wide = c.width().unwrap_or(0) > 1;
        if i > start && (after_space || wide || after_wide) {
            words.push(Word::from(&line[start..i]));
            start = i;
        }
        after_space = false;
        after_wide = wide;
    }
    if start < line.len() {
        words.push(Word::from(&line[start..]));
    }
    Box::new(words.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_removes_every_escape() {
        let evil = "a\u{1b}[31mred\u{1b}]0;title\u{7}\u{90}dcs\u{9c}\u{8}\r\nz\u{202E}abc\u{2066}";
        let clean = sanitize(evil);
        assert!(!clean.chars().any(crate::text::is_dangerous), "{clean:?}");
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
