//! The list table every screen uses: ratatui's `Table`, with columns as wide as what they show
//! (the rows on screen and the header), growing with the terminal and giving way by priority
//! when they do not fit (`columns::fit_widths`); never narrower than their content while space
//! is free. The rows given are the rows on screen (a list lays out only those); `Window` says
//! which they are and counts the rest ("+N more").

use crate::i18n::Texts;
use crate::style::Theme;
use crate::text::{truncate, truncate_middle, width};
use crate::widgets::columns::{Measure, fit_widths};
use crate::widgets::progress::bar;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{
    Cell as TableCell, HighlightSpacing, Row as TableRow, StatefulWidget, Table, TableState, Widget,
};

/// The bar of a progress column: this wide when there is room, never narrower than `MIN`; in
/// a column narrower than that, the count alone (the bar gives way before a name is cut).
const BAR_WIDTH: usize = 16;
const BAR_MIN: usize = 4;

/// A column: its header and how it gives way.
#[derive(Clone, Debug)]
pub(crate) struct Column {
    header: String,
    short_header: Option<String>,
    min: usize,
    shrink: u8,
    hide: u8,
    fill: bool,
    right: bool,
    whole: bool,
    yields: Option<u8>,
}

impl Column {
    pub(crate) fn new(header: impl Into<String>) -> Column {
        Column {
            header: header.into(),
            short_header: None,
            min: 0,
            shrink: 0,
            hide: 0,
            fill: false,
            right: false,
            whole: false,
            yields: None,
        }
    }

    /// Shown only where no column that narrows `level`th or later (see [`Column::shrink`])
    /// is narrower for it: hidden rather than cut a name.
    pub(crate) fn yields_to(mut self, level: u8) -> Column {
        self.yields = Some(level);
        self
    }

    /// The header of the column when it shows its cells' short forms.
    pub(crate) fn short_header(mut self, header: impl Into<String>) -> Column {
        self.short_header = Some(header.into());
        self
    }

    /// The narrowest the column is drawn (cut with `…`) before it is hidden.
    pub(crate) fn min(mut self, min: usize) -> Column {
        self.min = min;
        self
    }

    /// Shown whole or not at all (a state, an age, a version: cut, they say nothing).
    pub(crate) fn whole(mut self) -> Column {
        self.whole = true;
        self
    }

    /// When the columns do not fit, they narrow in this order (lowest first), each down to its
    /// minimum or its cells' short forms.
    pub(crate) fn shrink(mut self, order: u8) -> Column {
        self.shrink = order;
        self
    }

    /// When even the minimums do not fit, columns are hidden in this order (lowest first).
    pub(crate) fn hide(mut self, order: u8) -> Column {
        self.hide = order;
        self
    }

    /// The column takes the room left over.
    pub(crate) fn fill(mut self) -> Column {
        self.fill = true;
        self
    }

    /// Right-aligned (numbers, ages).
    pub(crate) fn right(mut self) -> Column {
        self.right = true;
        self
    }
}

#[derive(Clone, Debug)]
enum Content {
    /// Text, with a shorter form for a narrow column; a name is cut in the middle.
    Text {
        full: String,
        short: Option<String>,
        name: bool,
    },
    /// A progress bar and a count, the bar as wide as the column allows.
    Bar { fraction: f64, count: String },
}

/// One cell of a row.
#[derive(Clone, Debug)]
pub(crate) struct Cell {
    content: Content,
    style: Style,
    spans: bool,
}

impl Cell {
    pub(crate) fn new(text: impl Into<String>) -> Cell {
        Cell {
            content: Content::Text {
                full: text.into(),
                short: None,
                name: false,
            },
            style: Style::default(),
            spans: false,
        }
    }

    /// The words shown instead when the column is narrower than its full forms.
    pub(crate) fn short(mut self, text: impl Into<String>) -> Cell {
        if let Content::Text { short, .. } = &mut self.content {
            *short = Some(text.into());
        }
        self
    }

    /// A name: cut in the middle when it does not fit, as names differ at their ends.
    pub(crate) fn name(text: impl Into<String>) -> Cell {
        let mut cell = Cell::new(text);
        if let Content::Text { name, .. } = &mut cell.content {
            *name = true;
        }
        cell
    }

    /// A progress bar (`fraction` of it filled) and the count beside it.
    pub(crate) fn bar(fraction: f64, count: impl Into<String>) -> Cell {
        Cell {
            content: Content::Bar {
                fraction,
                count: count.into(),
            },
            style: Style::default(),
            spans: false,
        }
    }

    pub(crate) fn style(mut self, style: Style) -> Cell {
        self.style = style;
        self
    }

    /// The cell takes its column and every column after it; its width makes no column wider.
    pub(crate) fn spanning(mut self) -> Cell {
        self.spans = true;
        self
    }
}

/// One row: its cells and the style of the whole row.
#[derive(Clone, Debug, Default)]
pub(crate) struct Row {
    cells: Vec<Cell>,
    style: Style,
}

impl Row {
    pub(crate) fn new(cells: Vec<Cell>) -> Row {
        Row {
            cells,
            style: Style::default(),
        }
    }

    pub(crate) fn style(mut self, style: Style) -> Row {
        self.style = style;
        self
    }
}

/// A table of the rows on screen, with a header row.
pub(crate) struct ListTable<'a> {
    columns: Vec<Column>,
    rows: Vec<Row>,
    selected: Option<usize>,
    marker: bool,
    theme: &'a Theme,
}

impl<'a> ListTable<'a> {
    pub(crate) fn new(columns: Vec<Column>, rows: Vec<Row>, theme: &'a Theme) -> ListTable<'a> {
        ListTable {
            columns,
            rows,
            selected: None,
            marker: false,
            theme,
        }
    }

    /// A list: a marker column, and the selected row (an index into the rows given) marked
    /// with `>`, bold and reversed.
    pub(crate) fn selected(mut self, row: Option<usize>) -> ListTable<'a> {
        self.marker = true;
        self.selected = row;
        self
    }

    /// The widest count of each progress column.
    fn count_widths(&self) -> Vec<usize> {
        let mut out = vec![0; self.columns.len()];
        for (i, cell) in self.cells() {
            if let Content::Bar { count, .. } = &cell.content {
                out[i] = out[i].max(width(count));
            }
        }
        out
    }

    /// The cells of the rows on screen, column by column (up to a spanning cell).
    fn cells(&self) -> impl Iterator<Item = (usize, &Cell)> {
        self.rows.iter().flat_map(|row| {
            row.cells
                .iter()
                .take(self.columns.len())
                .take_while(|c| !c.spans)
                .enumerate()
        })
    }

    /// The columns' widths: a column that yields only where no column it yields to is
    /// narrower for it (each such column keeps the width, up to its natural one, it has
    /// without the yielding ones).
    fn fit_yielding(&self, measures: &[Measure], avail: usize) -> Vec<usize> {
        let with = fit_widths(measures, avail, 1);
        let yields: Vec<Option<u8>> = self.columns.iter().map(|c| c.yields).collect();
        let Some(level) = yields.iter().flatten().min().copied() else {
            return with;
        };
        let kept: Vec<Measure> = (0..measures.len())
            .filter(|&i| yields[i].is_none())
            .map(|i| measures[i])
            .collect();
        let mut fitted = fit_widths(&kept, avail, 1).into_iter();
        let without: Vec<usize> = yields
            .iter()
            .map(|y| match y {
                Some(_) => 0,
                None => fitted.next().unwrap_or(0),
            })
            .collect();
        let costs = (0..measures.len()).any(|i| {
            let n = measures[i].natural;
            yields[i].is_none() && measures[i].shrink >= level && with[i].min(n) < without[i].min(n)
        });
        if costs { without } else { with }
    }

    /// Each column's natural width and floor, over its header and the rows on screen. A column
    /// with short forms shows them all together: its floor fits each short form, and each full
    /// form that has none.
    fn measure(&self, counts: &[usize]) -> Vec<Measure> {
        let mut m: Vec<Measure> = self
            .columns
            .iter()
            .map(|c| Measure {
                natural: width(&c.header).max(c.min),
                floor: c.short_header.as_deref().map_or(0, width).max(c.min),
                has_short: c.short_header.is_some(),
                shrink: c.shrink,
                hide: c.hide,
                fill: c.fill,
            })
            .collect();
        for (i, cell) in self.cells() {
            if let Content::Text { short: Some(_), .. } = &cell.content {
                m[i].has_short = true;
            }
        }
        for (i, cell) in self.cells() {
            let (natural, floor) = match &cell.content {
                Content::Text { full, short, .. } => match short {
                    Some(s) => (width(full), width(s)),
                    None if m[i].has_short => (width(full), width(full)),
                    None => (width(full), 0),
                },
                // The count alone, under its whole header.
                Content::Bar { .. } => (
                    BAR_WIDTH + 1 + counts[i],
                    counts[i].max(width(&self.columns[i].header)),
                ),
            };
            m[i].natural = m[i].natural.max(natural);
            m[i].floor = m[i].floor.max(floor);
        }
        for (c, col) in m.iter_mut().zip(&self.columns) {
            // A column that shows short forms under its full header is never narrower than
            // the header: cut, `マシン` would read `マ…`.
            if c.has_short && col.short_header.is_none() {
                c.floor = c.floor.max(width(&col.header));
            }
            c.floor = if col.whole {
                c.natural
            } else {
                c.floor.min(c.natural)
            };
        }
        m
    }
}

impl Cell {
    /// The cell's text in `w` columns; `short`: the column shows short forms.
    fn text(&self, w: usize, short: bool, count_w: usize) -> String {
        match &self.content {
            Content::Text {
                full,
                short: s,
                name,
            } => match s {
                Some(s) if short => truncate(s, w),
                _ if *name => truncate_middle(full, w),
                _ => truncate(full, w),
            },
            Content::Bar { fraction, count } => {
                let bar_w = w.saturating_sub(count_w + 1);
                if bar_w < BAR_MIN {
                    return truncate(&format!("{count:>w$}"), w);
                }
                let pad = count_w.saturating_sub(width(count));
                truncate(
                    &format!("{} {}{count}", bar(*fraction, bar_w), " ".repeat(pad)),
                    w,
                )
            }
        }
    }
}

impl Widget for ListTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let marker_w: usize = if self.marker { 2 } else { 0 };
        let counts = self.count_widths();
        let measures = self.measure(&counts);
        let avail = usize::from(area.width).saturating_sub(marker_w);
        let widths = self.fit_yielding(&measures, avail);
        let shown: Vec<usize> = (0..self.columns.len()).filter(|&i| widths[i] > 0).collect();
        let short = |i: usize| widths[i] < measures[i].natural && measures[i].has_short;
        let line = |i: usize, text: String| {
            let l = Line::from(text);
            if self.columns[i].right {
                l.right_aligned()
            } else {
                l
            }
        };
        let header = TableRow::new(shown.iter().map(|&i| {
            let c = &self.columns[i];
            let h = match &c.short_header {
                Some(s) if short(i) => s,
                _ => &c.header,
            };
            TableCell::from(line(i, truncate(h, widths[i])))
        }))
        .style(self.theme.bold());
        let rows = self.rows.iter().map(|row| {
            let mut cells = Vec::new();
            for (k, &i) in shown.iter().enumerate() {
                let Some(cell) = row.cells.get(i) else { break };
                if cell.spans {
                    let rest = &shown[k..];
                    let w = rest.iter().map(|&j| widths[j]).sum::<usize>() + rest.len() - 1;
                    let span = u16::try_from(rest.len()).unwrap_or(u16::MAX);
                    let text = cell.text(w, false, 0);
                    cells.push(TableCell::from(text).style(cell.style).column_span(span));
                    break;
                }
                let text = cell.text(widths[i], short(i), counts[i]);
                cells.push(TableCell::from(line(i, text)).style(cell.style));
            }
            TableRow::new(cells).style(row.style)
        });
        let constraints = shown.iter().map(|&i| {
            if self.columns[i].fill {
                Constraint::Fill(1)
            } else {
                Constraint::Length(u16::try_from(widths[i]).unwrap_or(u16::MAX))
            }
        });
        let table = Table::new(rows, constraints)
            .header(header)
            .column_spacing(1)
            .highlight_symbol("> ")
            .highlight_spacing(if self.marker {
                HighlightSpacing::Always
            } else {
                HighlightSpacing::Never
            })
            .row_highlight_style(self.theme.selected());
        let mut state = TableState::default().with_selected(self.selected);
        StatefulWidget::render(table, area, buf, &mut state);
    }
}

/// Which rows of a list are on screen: `rows` from `offset`, of `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) offset: usize,
    pub(crate) rows: usize,
    pub(crate) total: usize,
    /// Rows after the last one held that the server has and has not sent yet.
    pub(crate) unloaded: usize,
    /// The rows are lines of text (the marker counts lines, not items).
    pub(crate) text: bool,
}

impl Window {
    /// The window that starts at `offset` (at most the last full page).
    pub(crate) fn new(total: usize, offset: usize, rows: usize) -> Window {
        Window {
            offset: offset.min(total.saturating_sub(rows)),
            rows,
            total,
            unloaded: 0,
            text: false,
        }
    }

    /// The same window over lines of text.
    pub(crate) fn of_text(self) -> Window {
        Window { text: true, ..self }
    }

    /// The same window over a list of which `n` more rows are on the server.
    pub(crate) fn with_unloaded(self, n: usize) -> Window {
        Window {
            unloaded: n,
            ..self
        }
    }

    /// The indices of the rows on screen.
    pub(crate) fn range(&self) -> std::ops::Range<usize> {
        self.offset.min(self.total)..(self.offset + self.rows).min(self.total)
    }

    /// How many rows are hidden above and below.
    pub(crate) fn hidden(&self) -> (usize, usize) {
        let r = self.range();
        (r.start, self.total - r.end + self.unloaded)
    }

    /// " ↑ 3 above · +12 more ", for the list's bottom border, when rows are hidden.
    pub(crate) fn marker(&self, t: &Texts) -> Option<Line<'static>> {
        let (above, below) = self.hidden();
        let mut parts = Vec::new();
        let (up, down) = match self.text {
            true => ("lines-above", "lines-more"),
            false => ("list-above", "list-more"),
        };
        if above > 0 {
            parts.push(t.tn(up, &[("n", above.into())]));
        }
        if below > 0 {
            parts.push(t.tn(down, &[("n", below.into())]));
        }
        (!parts.is_empty()).then(|| Line::from(format!(" {} ", parts.join(" · "))).right_aligned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_counts_what_is_hidden() {
        let w = Window::new(100, 10, 20);
        assert_eq!(w.range(), 10..30);
        assert_eq!(w.hidden(), (10, 70));
        assert_eq!(Window::new(5, 3, 20).hidden(), (0, 0));
        assert_eq!(Window::new(30, 25, 20).range(), 10..30);
    }
}
