//! `--ascii`: one pass over the finished frame replaces every drawing character (borders, bars,
//! glyphs, arrows, the ellipsis) with ASCII, so no widget needs its own ASCII variant.
//!
//! `--ambiguous-width wide`: the same pass, then every other character of East Asian Width
//! "Ambiguous" left in the frame (cluster text: `é`, `①`, `※`, `Д`) becomes a one-column ASCII
//! stand-in, so a terminal that draws those two columns wide draws exactly the cells ratatui
//! laid out. Japanese text (East Asian Wide) stays as it is.

use crate::text::is_ambiguous;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// The ASCII stand-in for a drawing character, if it has one.
fn ascii_of(symbol: &str) -> Option<&'static str> {
    Some(match symbol {
        "─" | "━" | "═" | "–" | "—" | "░" => "-",
        "│" | "┃" | "║" => "|",
        "┌" | "┐" | "└" | "┘" | "├" | "┤" | "┬" | "┴" | "┼" | "╭" | "╮" | "╰" | "╯" => {
            "+"
        }
        "█" => "#",
        "…" => "~",
        "·" | "•" => "*",
        "▶" | "→" => ">",
        "←" => "<",
        "↑" => "^",
        "↓" => "v",
        "‖" => "=",
        "✓" => "+",
        "✗" => "x",
        "○" => "o",
        "⚠" => "!",
        "▏" => "_",
        "×" => "x",
        "“" | "”" => "\"",
        "‘" | "’" => "'",
        "\u{FFFD}" => "?",
        _ => return None,
    })
}

/// Replaces every drawing character in `area` of the finished frame with its ASCII stand-in.
pub(crate) fn asciify(buf: &mut Buffer, area: Rect) {
    for y in area.y..area.y + area.height {
        for x in area.x..area.x + area.width {
            let cell = &mut buf[(x, y)];
            if let Some(a) = ascii_of(cell.symbol()) {
                cell.set_symbol(a);
            }
        }
    }
}

/// The one-column stand-in for an ambiguous character that is not a drawing character: the
/// letter without its accent, the digit of a circled digit, else `?`.
fn stand_in(c: char) -> &'static str {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' | 'ǎ' | 'æ' | 'ª' => "a",
        'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' | 'Ā' | 'Æ' => "A",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' => "e",
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'ǐ' | 'ı' => "i",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ǒ' | 'œ' | 'º' | '°' => "o",
        'Ø' | 'Ö' | 'Ó' | 'Ò' => "O",
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ǔ' | 'ǖ' | 'ǘ' | 'ǚ' | 'ǜ' => "u",
        'ð' | 'đ' => "d",
        'Ð' | 'Đ' => "D",
        'þ' | 'ŧ' => "t",
        'Þ' | 'Ŧ' => "T",
        'ß' => "s",
        'ł' => "l",
        'ŋ' => "n",
        'ħ' => "h",
        '±' => "+",
        '÷' => "/",
        '¡' => "!",
        '¿' => "?",
        '´' => "'",
        '¨' => "\"",
        '¸' => ",",
        '¹' | '①' => "1",
        '²' | '②' => "2",
        '³' | '③' => "3",
        '④' => "4",
        '⑤' => "5",
        '⑥' => "6",
        '⑦' => "7",
        '⑧' => "8",
        '⑨' => "9",
        '※' | '★' | '☆' => "*",
        '●' | '◎' | '◯' => "o",
        '■' | '□' | '▪' => "#",
        '◆' | '◇' => "*",
        '▲' | '△' => "^",
        '▼' | '▽' => "v",
        '≦' | '≤' => "<",
        '≧' | '≥' => ">",
        '≠' => "#",
        '∞' => "8",
        _ => "?",
    }
}

/// Replaces every drawing character in `area` of the finished frame with its ASCII stand-in,
/// and every other ambiguous character with a one-column stand-in: nothing in the frame is
/// drawn wider by a terminal that draws ambiguous characters wide.
pub(crate) fn unambiguous(buf: &mut Buffer, area: Rect) {
    for y in area.y..area.y + area.height {
        for x in area.x..area.x + area.width {
            let cell = &mut buf[(x, y)];
            if let Some(a) = ascii_of(cell.symbol()) {
                cell.set_symbol(a);
            } else if let Some(c) = cell.symbol().chars().find(|c| is_ambiguous(*c)) {
                cell.set_symbol(stand_in(c));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_mode_leaves_nothing_ambiguous_and_japanese_as_it_is() {
        let area = Rect::new(0, 0, 24, 1);
        let mut buf = Buffer::empty(area);
        buf.set_string(0, 0, "│─▶○█░…é①※Д 実行中", ratatui::style::Style::default());
        unambiguous(&mut buf, area);
        let row: String = (0..12).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(row, "|->o#-~e1*? ");
        assert_eq!(buf[(12, 0)].symbol(), "実");
        for x in 0..24 {
            assert!(!buf[(x, 0)].symbol().chars().any(is_ambiguous), "{row:?}");
        }
        assert!(
            is_ambiguous('─') && is_ambiguous('é') && !is_ambiguous('実') && !is_ambiguous('a')
        );
    }
}
