//! Errors as a person reads them at the edges (stderr at start, the log): one line, each cause
//! said once, input quoted once and bounded.

use crate::inert::{sanitize, truncate};

/// The most columns an error line takes.
pub(crate) const MAX_LINE: usize = 600;

/// The most columns a piece of quoted input takes.
pub(crate) const MAX_QUOTED: usize = 64;

/// `e` and its causes as one line: `context: cause: cause`. A cause whose text the line
/// already says is dropped (many libraries print their source inside their own message, and
/// anyhow's `{:#}` would say it again), line breaks become spaces, control characters are made
/// inert, and the line is cut at [`MAX_LINE`] columns.
pub fn one_line(e: &anyhow::Error) -> String {
    chain_line(e.chain().map(ToString::to_string))
}

/// [`one_line`] over the texts of a chain, outermost first.
pub fn chain_line(chain: impl IntoIterator<Item = String>) -> String {
    let mut said: Vec<String> = Vec::new();
    for text in chain {
        let text = flatten(&text);
        if text.is_empty() || said.iter().any(|s| s.contains(&text)) {
            continue;
        }
        said.push(text);
    }
    truncate(&said.join(": "), MAX_LINE)
}

/// Text on one line: every line trimmed and joined with a space, controls made inert.
fn flatten(s: &str) -> String {
    let joined = s
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    sanitize(&joined)
}

/// Input as an error quotes it: in double quotes, once, inert and at most [`MAX_QUOTED`]
/// columns.
pub fn quoted(s: &str) -> String {
    format!("\"{}\"", truncate(&flatten(s), MAX_QUOTED))
}

/// The 1-based line and column (in characters) of byte `offset` in `text`. An offset past the
/// end, or inside a character, counts as the end of what precedes it.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_line_already_says_is_dropped() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let text = io.to_string();
        // A library error that prints its source in its own message, under a context.
        #[derive(Debug)]
        struct Lib(std::io::Error);
        impl std::fmt::Display for Lib {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "failed to read: {}", self.0)
            }
        }
        impl std::error::Error for Lib {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = anyhow::Error::new(Lib(io)).context("reading kubeconfig /k");
        assert_eq!(
            format!("{e:#}"),
            format!("reading kubeconfig /k: failed to read: {text}: {text}"),
            "what anyhow alone says"
        );
        assert_eq!(
            one_line(&e),
            format!("reading kubeconfig /k: failed to read: {text}")
        );
    }

    #[test]
    fn lines_and_controls_are_flattened_and_the_line_is_bounded() {
        assert_eq!(
            chain_line(["a\n  b\n".to_string(), "c\x1b[2J".to_string()]),
            "a b: c\u{FFFD}[2J"
        );
        let long = chain_line(["x".repeat(10_000)]);
        assert_eq!(crate::inert::width(&long), MAX_LINE);
        assert!(long.ends_with('…'));
        assert_eq!(quoted("nope"), "\"nope\"");
        assert_eq!(
            crate::inert::width(&quoted(&"n".repeat(1000))),
            MAX_QUOTED + 2
        );
    }

    #[test]
    fn offsets_become_lines_and_columns() {
        let t = "a = 1\nbé = x\n";
        assert_eq!(line_column(t, 0), (1, 1));
        assert_eq!(line_column(t, 6), (2, 1));
        // After "bé = " (é is two bytes): the sixth character of line 2.
        assert_eq!(line_column(t, 12), (2, 6));
        assert_eq!(line_column(t, 8), (2, 2), "inside é: é's own column");
        assert_eq!(line_column(t, 1000), (3, 1));
    }
}
