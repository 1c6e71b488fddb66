//! Untrusted text made inert, and cut to a width: cluster text on its way to a screen, a log
//! line or an error message. Display widths, not character counts (Japanese takes two columns a
//! character).

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Whether a character must not reach the terminal as it is: C0 and C1 controls, DEL, and the
/// bidirectional overrides, embeddings, isolates and marks that can reorder what a person reads.
pub fn is_dangerous(c: char) -> bool {
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
