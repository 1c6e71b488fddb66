//! Lines of text drawn one to a row, each cut to the width with `…`, and each line's style
//! over its whole row (a coloured line reads as one band, with or without colour).

use crate::text::{truncate, wrap};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// Lines being put together for an area `width` columns wide.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    pub(crate) width: usize,
    /// Where wrapped text breaks (a margin inside the width, or the width).
    pub(crate) wrap_width: usize,
    /// Lines too long for the width are wrapped, not cut (a text read whole).
    whole: bool,
    lines: Vec<Line<'static>>,
}

impl Lines {
    pub(crate) fn new(width: usize) -> Lines {
        Lines {
            width,
            wrap_width: width,
            whole: false,
            lines: Vec::new(),
        }
    }

    /// Nothing is cut: a line too long for the width goes on under itself.
    pub(crate) fn whole(mut self) -> Lines {
        self.whole = true;
        self
    }

    /// Wrapped text keeps `margin` columns free on the right.
    pub(crate) fn margin(mut self, margin: usize) -> Lines {
        self.wrap_width = self.width.saturating_sub(margin);
        self
    }

    /// One line, cut to the width (wrapped, when the lines are read whole).
    pub(crate) fn push(&mut self, text: impl AsRef<str>, style: Style) {
        let text = text.as_ref();
        if self.whole && crate::text::width(text) > self.width {
            for l in wrap(text, self.width) {
                self.lines
                    .push(Line::styled(truncate(&l, self.width), style));
            }
            return;
        }
        self.lines
            .push(Line::styled(truncate(text, self.width), style));
    }

    /// Text wrapped to the wrap width.
    pub(crate) fn wrapped(&mut self, text: &str, style: Style) {
        self.wrapped_max(text, style, usize::MAX);
    }

    /// Text wrapped to the wrap width, at most `max` lines of it.
    pub(crate) fn wrapped_max(&mut self, text: &str, style: Style, max: usize) {
        for l in wrap(text, self.wrap_width).into_iter().take(max) {
            self.push(l, style);
        }
    }

    /// Keeps at most `rows` lines: when there are more, the first `rows - 1` and then
    /// `marker(hidden)`, which says how many are not shown and where to read them. Whether
    /// anything was cut.
    pub(crate) fn cut_to(
        &mut self,
        rows: usize,
        marker: impl Fn(usize) -> String,
        style: Style,
    ) -> bool {
        if self.lines.len() <= rows || rows == 0 {
            return false;
        }
        let hidden = self.lines.len() - (rows - 1);
        self.lines.truncate(rows - 1);
        self.push(marker(hidden), style);
        true
    }

    /// `mark` and the text wrapped after it, its further lines under the text (a point of a
    /// list, a glyph before a sentence).
    pub(crate) fn hanging(&mut self, mark: &str, text: &str, style: Style) {
        let indent = crate::text::width(mark);
        let pad = " ".repeat(indent);
        for (i, l) in wrap(text, self.wrap_width.saturating_sub(indent))
            .into_iter()
            .enumerate()
        {
            let lead = if i == 0 { mark } else { pad.as_str() };
            self.push(format!("{lead}{l}"), style);
        }
    }

    /// The lines of `other` after these.
    pub(crate) fn append(&mut self, other: &Lines) {
        self.lines.extend(other.lines.iter().cloned());
    }

    pub(crate) fn blank(&mut self) {
        self.lines.push(Line::default());
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The lines that hold `needle` (case folded where folding keeps the text's length).
    pub(crate) fn holding(&self, needle: &str) -> Vec<usize> {
        if needle.is_empty() {
            return Vec::new();
        }
        (0..self.lines.len())
            .filter(|&i| !found_in(&line_text(&self.lines[i]), needle).is_empty())
            .collect()
    }

    /// Marks every place that holds `needle` (reversed; on the line `current`, bold and
    /// underlined too), keeping each line's own style around them.
    pub(crate) fn highlight(&mut self, needle: &str, current: Option<usize>) {
        for (i, line) in self.lines.iter_mut().enumerate() {
            let text = line_text(line);
            let found = found_in(&text, needle);
            if found.is_empty() {
                continue;
            }
            let base = line.spans.first().map_or(line.style, |s| s.style);
            let mut mark = base.add_modifier(Modifier::REVERSED);
            if current == Some(i) {
                mark = mark.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
            }
            let mut spans = Vec::new();
            let mut from = 0;
            for (start, end) in found {
                spans.push(Span::styled(text[from..start].to_string(), base));
                spans.push(Span::styled(text[start..end].to_string(), mark));
                from = end;
            }
            spans.push(Span::styled(text[from..].to_string(), base));
            *line = Line::from(spans).style(line.style);
        }
    }

    /// Draws the lines from the top of `area`; returns the rows used.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer) -> u16 {
        self.draw_from(area, buf, 0)
    }

    /// Draws the lines from line `first` on, from the top of `area`; returns the rows used.
    pub(crate) fn draw_from(&self, area: Rect, buf: &mut Buffer, first: usize) -> u16 {
        let mut rows = area.rows();
        let mut used = 0;
        for line in self.lines.iter().skip(first) {
            let Some(row) = rows.next() else { break };
            line.render(row, buf);
            used += 1;
        }
        used
    }
}

/// A line's text, its spans joined.
fn line_text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// The byte ranges of `text` that hold `needle`, without overlap: case folded when folding
/// keeps every byte where it was (else as typed).
fn found_in(text: &str, needle: &str) -> Vec<(usize, usize)> {
    if needle.is_empty() {
        return Vec::new();
    }
    let (hay, pin) = (text.to_lowercase(), needle.to_lowercase());
    let (hay, pin) = if hay.len() == text.len() && pin.len() == needle.len() {
        (hay, pin)
    } else {
        (text.to_string(), needle.to_string())
    };
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = hay.get(from..).and_then(|h| h.find(&pin)) {
        let start = from + at;
        let end = start + pin.len();
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            break;
        }
        found.push((start, end));
        from = end;
    }
    found
}

/// `area` less one column on the left: where text in a body starts.
pub(crate) fn indented(area: Rect) -> Rect {
    let [_, rest] = Layout::horizontal([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    rest
}

/// A message in a body (loading, an error in place of the data): one column in from the left,
/// wrapped a column short of the right.
pub(crate) fn message(text: &str, style: Style, area: Rect, buf: &mut Buffer) {
    let mut lines = Lines::new(usize::from(area.width)).margin(2);
    lines.wrapped(text, style);
    lines.draw(indented(area), buf);
}
