//! How columns share a row's width: each as wide as its content while they all fit, the rest to
//! the fill column; when they do not, they narrow and then hide in the order each was given.

/// What fitting needs to know of a column, measured over the header and the rows on screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Measure {
    /// Wide enough for every full form.
    pub(crate) natural: usize,
    /// The narrowest it is drawn before it is hidden (at most `natural`).
    pub(crate) floor: usize,
    /// Narrower than `natural`, it shows short forms that need only `floor`.
    pub(crate) has_short: bool,
    pub(crate) shrink: u8,
    pub(crate) hide: u8,
    pub(crate) fill: bool,
}

/// The width of each column in `avail` columns, with `spacing` between shown columns; 0 for a
/// hidden column. Every column gets its natural width when they all fit, and the fill column the
/// rest; otherwise columns narrow in their shrink order, and if even their floors do not fit,
/// columns are hidden in their hide order. A column is narrower than its natural width only when
/// the row is full.
pub(crate) fn fit_widths(cols: &[Measure], avail: usize, spacing: usize) -> Vec<usize> {
    let mut shown = vec![true; cols.len()];
    let total = |w: &[usize], shown: &[bool]| {
        let n = shown.iter().filter(|s| **s).count();
        let sum: usize = w
            .iter()
            .zip(shown)
            .filter(|(_, s)| **s)
            .map(|(w, _)| w)
            .sum();
        sum + spacing * n.saturating_sub(1)
    };
    let floors: Vec<usize> = cols.iter().map(|c| c.floor.min(c.natural)).collect();
    let mut by_hide: Vec<usize> = (0..cols.len()).collect();
    by_hide.sort_by_key(|&i| cols[i].hide);
    for &i in &by_hide {
        if total(&floors, &shown) <= avail || shown.iter().filter(|s| **s).count() <= 1 {
            break;
        }
        shown[i] = false;
    }
    // A column hidden early that fits beside the ones kept comes back.
    for &i in by_hide.iter().rev() {
        if !shown[i] {
            shown[i] = true;
            if total(&floors, &shown) > avail {
                shown[i] = false;
            }
        }
    }
    let mut w: Vec<usize> = cols.iter().map(|c| c.natural).collect();
    let mut by_shrink: Vec<usize> = (0..cols.len()).filter(|&i| shown[i]).collect();
    by_shrink.sort_by_key(|&i| cols[i].shrink);
    for &i in &by_shrink {
        let over = total(&w, &shown).saturating_sub(avail);
        if over == 0 {
            break;
        }
        w[i] = if cols[i].has_short {
            floors[i]
        } else {
            floors[i].max(w[i] - over.min(w[i]))
        };
    }
    // The last column left, wider than the screen: cut.
    let over = total(&w, &shown).saturating_sub(avail);
    if let Some(&last) = by_shrink.last() {
        w[last] = w[last].saturating_sub(over);
    }
    // What a jump to short forms freed goes back to the columns that narrowed, then the rest
    // to the fill column.
    let mut slack = avail.saturating_sub(total(&w, &shown));
    for &i in by_shrink.iter().rev() {
        if !cols[i].has_short && w[i] < cols[i].natural {
            let add = slack.min(cols[i].natural - w[i]);
            w[i] += add;
            slack -= add;
        }
    }
    if let Some(f) = (0..cols.len()).find(|&i| shown[i] && cols[i].fill) {
        w[f] += slack;
    }
    w.iter()
        .zip(&shown)
        .map(|(w, s)| if *s { *w } else { 0 })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(natural: usize, floor: usize, shrink: u8, hide: u8) -> Measure {
        Measure {
            natural,
            floor,
            has_short: false,
            shrink,
            hide,
            fill: false,
        }
    }

    #[test]
    fn every_column_is_natural_when_they_fit_and_the_fill_column_takes_the_rest() {
        let mut cols = vec![col(10, 4, 0, 0), col(6, 6, 1, 1), col(8, 3, 2, 2)];
        cols[2].fill = true;
        assert_eq!(fit_widths(&cols, 26, 1), [10, 6, 8]);
        assert_eq!(fit_widths(&cols, 40, 1), [10, 6, 22]);
    }

    #[test]
    fn columns_narrow_in_their_order_down_to_their_floor() {
        let cols = vec![col(10, 4, 1, 0), col(6, 6, 2, 1), col(8, 3, 0, 2)];
        // 26 needed, 22 there: the first to shrink gives 4.
        assert_eq!(fit_widths(&cols, 22, 1), [10, 6, 4]);
        // 26 needed, 17 there: it gives 5 (to its floor), the next the other 4.
        assert_eq!(fit_widths(&cols, 17, 1), [6, 6, 3]);
    }

    #[test]
    fn short_forms_jump_and_what_they_free_goes_back() {
        let mut cols = vec![col(10, 4, 0, 0), col(18, 10, 1, 1), col(8, 8, 2, 2)];
        cols[1].has_short = true;
        // 38 needed, 35 there: the first gives 3; nothing else narrows.
        assert_eq!(fit_widths(&cols, 35, 1), [7, 18, 8]);
        // 38 needed, 30 there: the first gives 6, the short forms free 8, 6 of them come back.
        assert_eq!(fit_widths(&cols, 30, 1), [10, 10, 8]);
    }

    #[test]
    fn when_even_the_floors_do_not_fit_columns_are_hidden_in_their_order() {
        let cols = vec![col(10, 8, 0, 2), col(6, 6, 1, 0), col(8, 8, 2, 1)];
        // Floors 8+6+8+2 = 24 > 20: the one hidden first goes; 10 and 8 then fit in 19.
        assert_eq!(fit_widths(&cols, 20, 1), [10, 0, 8]);
        assert_eq!(fit_widths(&cols, 12, 1), [10, 0, 0]);
        // The last column left is cut to the screen.
        assert_eq!(fit_widths(&cols, 5, 1), [5, 0, 0]);
        assert_eq!(fit_widths(&cols, 0, 1), [0, 0, 0]);
    }

    #[test]
    fn nothing_is_cut_or_hidden_while_space_is_free() {
        let mut cols = vec![
            col(24, 12, 3, 6),
            col(18, 10, 2, 5),
            col(10, 8, 5, 2),
            col(16, 16, 7, 7),
            col(22, 10, 1, 0),
            col(17, 8, 0, 1),
        ];
        cols[1].has_short = true;
        for fill in [None, Some(5), Some(3)] {
            if let Some(f) = fill {
                cols[f].fill = true;
            }
            for avail in 0..160 {
                let w = fit_widths(&cols, avail, 1);
                let shown = w.iter().filter(|w| **w > 0).count();
                let used = w.iter().sum::<usize>() + shown.saturating_sub(1);
                assert!(used <= avail, "{avail}: {w:?}");
                let free = avail - used;
                for (cw, c) in w.iter().zip(&cols) {
                    if *cw > 0 && *cw < c.natural && !c.has_short {
                        assert_eq!(free, 0, "{avail}: {w:?} cuts a column with room free");
                    }
                    if *cw == 0 && avail > 0 {
                        assert!(c.floor + 1 > free, "{avail}: {w:?} hides one that fits");
                    }
                }
            }
        }
    }
}
