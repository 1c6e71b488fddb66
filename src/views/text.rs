//! Text that reaches the screen: untrusted cluster text made inert, and display-width-aware
//! truncation and padding (Japanese takes two columns a character).

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Whether a character must not reach the terminal as it is: C0 and C1 controls, DEL, and the
/// bidirectional overrides, embeddings, isolates and marks that can reorder what a person reads.
fn is_dangerous(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Makes cluster text inert: line breaks and tabs become spaces, every other control or bidi
/// character becomes U+FFFD, so no byte of it can act as an escape sequence.
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(is_dangerous) {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            c if is_dangerous(c) => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// The display width of a string.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Cuts `s` to at most `max` columns, ending in `…` when something was cut; never splits a
/// character.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_removes_every_escape() {
        let evil = "a\u{1b}[31mred\u{1b}]0;title\u{7}\u{90}dcs\u{9c}\u{8}\r\nz\u{202E}abc\u{2066}";
        let clean = sanitize(evil);
        assert!(!clean.chars().any(is_dangerous), "{clean:?}");
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
}
