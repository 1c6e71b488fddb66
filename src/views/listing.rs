//! The operations list, defined once for both faces: its columns (the header, and how each
//! gives way when a terminal is too narrow for all of them whole) and each row's cells (the
//! words of the state, kind, target, progress, estimate and age, from `words` and `pace`).
//!
//! The dashboard's Operations screen draws them (`src/views/operations.rs`: a glyph and a
//! colour beside the words, a bar beside the count, short forms where a column narrows);
//! `operation list` prints them as text, each cell whole and in full (`src/cli/verbs/show.rs`),
//! and `-o wide` adds the columns marked [`ListColumn::wide_only`], as kubectl's does.
//!
//! How the columns give way (lowest first; `columns::fit_widths` does it): the progress bar
//! narrows (down to the count alone), then the kind and the target take their short words,
//! then the actor, the cluster, the namespace and last the name are cut (the name in the
//! middle: operations differ at the end of their names). The state, the estimate and the age
//! are shown whole or not at all; the estimate is hidden rather than cut the cluster or the
//! name. Only when even that does not fit are columns hidden: the actor first, then the
//! estimate, …, the name and the state last (k9s keeps NAME at every width).

use crate::i18n::Texts;
use crate::text::{sanitize, width};
use crate::words::{
    Hue, Said, Tone, duration_text, kind_short, kind_text, machine_count, state_said,
};
use ichor_model::{MachinePhase, Operation, SortBy, Timing};
use jiff::Timestamp;

/// A column of the operations list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListColumn {
    /// With `-A`.
    Namespace,
    Name,
    Kind,
    /// Where it goes, as its start recorded it ("v1.9.2 → v1.9.3").
    Target,
    Cluster,
    /// Its state; a running operation with a slow machine says Slow.
    State,
    /// Machines done over machines ("6/14"); on the dashboard with a bar.
    Progress,
    /// The estimate at the pace so far, where a row has one.
    Left,
    Age,
    /// Who started it; an unreadable object's row says why here.
    Actor,
    /// The machines under way, else the failed machine (`-o wide` only).
    Machine,
}

/// How a column gives way on a narrow terminal (see the module's docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Give {
    /// The narrowest it is cut to before it is hidden.
    pub min: usize,
    /// Never narrower than its header.
    pub min_header: bool,
    /// When the columns do not fit, they narrow in this order (lowest first).
    pub shrink: u8,
    /// When even their narrowest does not fit, they are hidden in this order (lowest first).
    pub hide: u8,
    /// Shown whole or not at all.
    pub whole: bool,
    /// Right-aligned (an estimate, an age).
    pub right: bool,
    /// Takes the room left over.
    pub fill: bool,
    /// Hidden rather than make a column that narrows this late or later (a name) narrower.
    pub yields_to: Option<u8>,
}

impl Give {
    /// Narrowed `shrink`th and hidden `hide`th (lowest first), cut to nothing.
    const fn at(shrink: u8, hide: u8) -> Give {
        Give {
            min: 0,
            min_header: false,
            shrink,
            hide,
            whole: false,
            right: false,
            fill: false,
            yields_to: None,
        }
    }

    const fn yields_to(self, level: u8) -> Give {
        Give {
            yields_to: Some(level),
            ..self
        }
    }

    const fn min(self, min: usize) -> Give {
        Give { min, ..self }
    }

    const fn min_header(self) -> Give {
        Give {
            min_header: true,
            ..self
        }
    }

    const fn whole(self) -> Give {
        Give {
            whole: true,
            ..self
        }
    }

    const fn right(self) -> Give {
        Give {
            right: true,
            ..self
        }
    }

    const fn fill(self) -> Give {
        Give { fill: true, ..self }
    }
}

impl ListColumn {
    /// The message id of its header.
    pub fn header_id(self) -> &'static str {
        match self {
            ListColumn::Namespace => "col-namespace",
            ListColumn::Name => "col-name",
            ListColumn::Kind => "col-kind",
            ListColumn::Target => "col-target",
            ListColumn::Cluster => "col-cluster",
            ListColumn::State => "col-state",
            ListColumn::Progress => "col-progress",
            ListColumn::Left => "col-left",
            ListColumn::Age => "col-age",
            ListColumn::Actor => "col-actor",
            ListColumn::Machine => "col-machine",
        }
    }

    /// The order the list can be sorted by this column in, if any.
    pub fn sorts(self) -> Option<SortBy> {
        match self {
            ListColumn::Name => Some(SortBy::Name),
            ListColumn::State => Some(SortBy::State),
            ListColumn::Age => Some(SortBy::Age),
            _ => None,
        }
    }

    /// Only in `operation list -o wide`.
    pub fn wide_only(self) -> bool {
        self == ListColumn::Machine
    }

    /// How it gives way: narrowed in the first number's order, hidden in the second's.
    pub fn give(self) -> Give {
        match self {
            ListColumn::Progress => Give::at(0, 2),
            ListColumn::Kind => Give::at(1, 6),
            // Never narrower than its header: when no row on screen records a target, it
            // stays (empty) rather than give way before the name.
            ListColumn::Target => Give::at(2, 4).min_header(),
            ListColumn::Actor => Give::at(3, 0).min(8).fill(),
            ListColumn::Machine => Give::at(4, 1).min(8),
            ListColumn::Cluster => Give::at(5, 5).min(8),
            ListColumn::Namespace => Give::at(6, 4).min(8),
            ListColumn::Name => Give::at(7, 8).min(12),
            ListColumn::State => Give::at(8, 7).whole(),
            // Beside the progress, the kind, the target and the actor, not before the
            // cluster, the namespace or the name are cut.
            ListColumn::Left => Give::at(9, 1).whole().right().yields_to(5),
            ListColumn::Age => Give::at(10, 3).whole().right(),
        }
    }
}

/// The list's columns, in order: the namespace's with `-A`, the estimate's when a row has
/// one, and with `wide` the columns only `-o wide` has.
pub fn columns(all_namespaces: bool, estimates: bool, wide: bool) -> Vec<ListColumn> {
    use ListColumn::*;
    let every = [
        Namespace, Name, Kind, Target, Cluster, State, Progress, Left, Age, Actor, Machine,
    ];
    every
        .into_iter()
        .filter(|c| *c != Namespace || all_namespaces)
        .filter(|c| *c != Left || estimates)
        .filter(|c| !c.wide_only() || wide)
        .collect()
}

/// Whether a row of these has an estimate (then the list has its column).
pub fn any_estimate(t: &Texts, timings: &[&Timing]) -> bool {
    timings
        .iter()
        .any(|timing| crate::pace::estimate_short(t, &timing.estimate).is_some())
}

/// What a cell holds besides its words.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    Text,
    /// A name: cut in the middle where it does not fit.
    Name,
    /// A count the dashboard draws a bar beside, this much of it filled.
    Bar(f64),
    /// Words in the last column that take what room is left: they make no column wider (an
    /// unreadable object's reason, in the actor's column).
    Note,
}

/// One cell of a row: its words in full (empty: nothing to say), the shorter words a narrow
/// column shows, the glyph the dashboard draws before the words, and their colour.
#[derive(Clone, Debug, PartialEq)]
pub struct ListCell {
    pub text: String,
    pub short: Option<String>,
    pub glyph: Option<&'static str>,
    pub tone: Tone,
    pub content: Content,
}

impl ListCell {
    fn new(text: String) -> ListCell {
        ListCell {
            text,
            short: None,
            glyph: None,
            tone: Tone::default(),
            content: Content::Text,
        }
    }

    fn said(s: Said) -> ListCell {
        ListCell {
            glyph: Some(s.glyph),
            tone: s.tone,
            ..ListCell::new(s.word)
        }
    }

    fn short(self, short: String) -> ListCell {
        ListCell {
            short: Some(short),
            ..self
        }
    }

    fn tone(self, tone: Tone) -> ListCell {
        ListCell { tone, ..self }
    }

    /// The glyph and the words, as the dashboard draws them.
    pub fn with_glyph(&self) -> String {
        match self.glyph {
            Some(g) => format!("{g} {}", self.text),
            None => self.text.clone(),
        }
    }
}

/// One operation's row, as of `now` (its times from `timing`).
pub struct RowOf<'a> {
    pub op: &'a Operation,
    pub timing: &'a Timing,
    pub now: Timestamp,
}

/// The cell of `column` in `row`. An object that cannot be read: its kind and state say so,
/// and the actor's column why.
pub fn cell(t: &Texts, column: ListColumn, row: &RowOf<'_>) -> ListCell {
    let op = row.op;
    let unreadable = op.unreadable.as_deref();
    match column {
        ListColumn::Namespace => ListCell::new(sanitize(&op.namespace)),
        ListColumn::Name => ListCell {
            content: Content::Name,
            ..ListCell::new(sanitize(&op.name))
        },
        ListColumn::Cluster => ListCell::new(sanitize(&op.cluster)),
        ListColumn::Age => ListCell::new(
            op.created_at
                .map(|at| duration_text(t, row.now.duration_since(at)))
                .unwrap_or_default(),
        ),
        ListColumn::Kind if unreadable.is_some() => ListCell::new(t.t("kind-unreadable")),
        ListColumn::Kind => ListCell::new(kind_text(t, op.kind, &op.kind_raw)).short(kind_short(
            t,
            op.kind,
            &op.kind_raw,
        )),
        ListColumn::State if unreadable.is_some() => ListCell {
            glyph: Some("⚠"),
            ..ListCell::new(t.t("state-unreadable"))
        }
        .tone(Tone::of(Hue::Red).bold()),
        ListColumn::State if row.timing.slow() => ListCell {
            glyph: Some("⚠"),
            ..ListCell::new(t.t("state-slow"))
        }
        .tone(Tone::of(Hue::Yellow).bold()),
        ListColumn::State => ListCell::said(state_said(t, op)),
        ListColumn::Actor => match unreadable {
            Some(why) => ListCell {
                content: Content::Note,
                ..ListCell::new(sanitize(why))
            },
            None => ListCell::new(op.actor.as_deref().map(sanitize).unwrap_or_default()),
        },
        _ if unreadable.is_some() => ListCell::new(String::new()),
        ListColumn::Target => target(op),
        ListColumn::Progress => ListCell {
            content: Content::Bar(op.fraction()),
            ..ListCell::new(machine_count(op))
        },
        ListColumn::Left => {
            ListCell::new(crate::pace::estimate_short(t, &row.timing.estimate).unwrap_or_default())
                .tone(Tone::of(Hue::Dim))
        }
        ListColumn::Machine => ListCell::new(machines_under_way(op)),
    }
}

/// Where the operation goes, as its start recorded it: the value before and the target, or
/// only the target when the column is narrow; nothing when none was recorded.
fn target(op: &Operation) -> ListCell {
    match (&op.current, &op.target) {
        (Some(cur), Some(tgt)) => {
            ListCell::new(format!("{} → {}", sanitize(cur), sanitize(tgt))).short(sanitize(tgt))
        }
        (None, Some(tgt)) => ListCell::new(sanitize(tgt)),
        _ => ListCell::new(String::new()),
    }
}

/// Where the operation goes in words ("v1.9.2 → v1.9.3"), when its start recorded it.
pub fn target_words(op: &Operation) -> Option<String> {
    Some(target(op).text).filter(|s| !s.is_empty())
}

/// The machines under way, else the one that failed.
fn machines_under_way(op: &Operation) -> String {
    let named = |phase: MachinePhase| -> Vec<String> {
        op.machines
            .iter()
            .filter(|m| m.phase == phase)
            .map(|m| sanitize(&m.name))
            .collect()
    };
    let running = named(MachinePhase::Running);
    if !running.is_empty() {
        return running.join(",");
    }
    let failed = named(MachinePhase::Failed);
    match (
        failed.first(),
        op.summary.as_ref().and_then(|s| s.failed.as_ref()),
    ) {
        (Some(m), _) => m.clone(),
        (None, Some(m)) => sanitize(m),
        (None, None) => String::new(),
    }
}

/// The list as text: the header, then each row's cells in full (an empty cell as `-`, as
/// kubectl prints `<none>`: a column of words stays a column for `awk`).
pub fn text_rows(t: &Texts, columns: &[ListColumn], rows: &[RowOf<'_>]) -> Vec<Vec<String>> {
    let header = columns.iter().map(|c| t.t(c.header_id())).collect();
    let cells = rows.iter().map(|row| {
        columns
            .iter()
            .map(|c| match cell(t, *c, row).text {
                s if s.is_empty() => "-".to_string(),
                s => s,
            })
            .collect()
    });
    std::iter::once(header).chain(cells).collect()
}

/// Rows laid out in columns three spaces apart (kubectl's), by display width (Japanese is two
/// columns a character); the last column is not padded. `widths`: the least width of each
/// column (a watch's rows keep the columns of its first table).
pub fn text_table(rows: &[Vec<String>], widths: &[usize]) -> Vec<String> {
    let widths = column_widths(rows, widths);
    rows.iter()
        .map(|r| {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                line.push_str(cell);
                if c + 1 < r.len() {
                    let w = widths.get(c).copied().unwrap_or(0);
                    line.push_str(&" ".repeat(w.saturating_sub(width(cell)) + 3));
                }
            }
            line
        })
        .collect()
}

/// The width of each column of `rows`, at least `least`.
pub fn column_widths(rows: &[Vec<String>], least: &[usize]) -> Vec<usize> {
    let cols = rows
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(least.len());
    (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| width(s))
                .chain(least.get(c).copied())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ListColumn::*;

    #[test]
    fn the_columns_are_the_dashboards_and_wide_adds_its_own() {
        assert_eq!(
            columns(false, false, false),
            [Name, Kind, Target, Cluster, State, Progress, Age, Actor]
        );
        let every = columns(true, true, true);
        assert_eq!(every.first(), Some(&Namespace));
        assert_eq!(every.last(), Some(&Machine));
        assert!(every.contains(&Left));
        assert!(columns(true, true, false).iter().all(|c| !c.wide_only()));
    }

    #[test]
    fn a_text_table_aligns_by_display_width_and_says_nothing_as_a_dash() {
        let t = Texts::new(crate::i18n::Lang::Ja);
        let op = Operation {
            name: "op".into(),
            ..Operation::default()
        };
        let timing = op.timing(
            &Default::default(),
            Default::default(),
            Timestamp::UNIX_EPOCH,
        );
        let now = Timestamp::UNIX_EPOCH;
        let rows = text_rows(
            &t,
            &[Name, Target],
            &[RowOf {
                op: &op,
                timing: &timing,
                now,
            }],
        );
        assert_eq!(
            rows,
            [
                vec![t.t("col-name"), t.t("col-target")],
                vec!["op".into(), "-".into()]
            ]
        );
        // 名前 is four columns wide: the cells under it are padded to four, then three spaces.
        assert_eq!(text_table(&rows, &[]), ["名前   変更先", "op     -"]);
        assert_eq!(text_table(&rows[1..], &[6]), ["op       -"]);
    }
}
