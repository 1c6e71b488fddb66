//! The one wrap as it was before the kinsoku rules (commit 06460c3), kept only as the baseline
//! the render benchmark measures the current wrap against.
#![allow(dead_code)]

use textwrap::core::Word;
use textwrap::{Options, WordSeparator, WordSplitter, WrapAlgorithm};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
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
