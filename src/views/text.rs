//! Text that reaches the screen: untrusted cluster text made inert, and display-width-aware
//! truncation and padding (Japanese takes two columns a character).

pub use crate::text::{sanitize, truncate, width};

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
}
