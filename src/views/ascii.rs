//! `--ascii`: one pass over the finished frame replaces every drawing character (borders, bars,
//! glyphs, arrows, the ellipsis) with ASCII, so no widget needs its own ASCII variant.

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
pub fn asciify(buf: &mut Buffer, area: Rect) {
    for y in area.y..area.y + area.height {
        for x in area.x..area.x + area.width {
            let cell = &mut buf[(x, y)];
            if let Some(a) = ascii_of(cell.symbol()) {
                cell.set_symbol(a);
            }
        }
    }
}
