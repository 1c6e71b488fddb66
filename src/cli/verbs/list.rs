//! `operation list`: the dashboard's list as text (its columns and cells are defined once, in
//! `ichor_views::listing`), each cell whole, in the person's language; `-o wide` adds the
//! columns only it has; `-o json|yaml|name|jsonpath` as kubectl prints them.
//!
//! `--watch`, as `kubectl get --watch`: the table once, then a row for each operation whose row
//! changes (its time cells, the age and the estimate, tick without a change and print nothing),
//! in the first table's columns; an operation deleted is printed once more as Gone. The rows
//! come pushed where the backend streams, else from a read every 2 s; a machine turning slow is
//! a change of its operation's row at the moment it turns. It watches the newest
//! [`ichor_model::MAX_PAGE_SIZE`] operations (the list's one page) until it is stopped.

use super::args::Output;
use super::feed::{Feed, Seen, Watched};
use super::show::{NAME_PREFIX, operation_json, print_value};
use super::{Exit, Io};
use ichor_model::inert::sanitize;
use ichor_model::{ListQuery, Operation, OperationClient, Roles, Timing, View};
use ichor_views::listing::{self, ListColumn, RowOf};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// How a list's table is laid out, and whether it is watched.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Table {
    /// The NAMESPACE column.
    pub(super) all_namespaces: bool,
    /// No header line (`--no-headers`).
    pub(super) no_headers: bool,
    /// `--watch`.
    pub(super) watch: bool,
}

/// The roles of the machines of each cluster an unfinished operation is on, read once each
/// (the pace, the slow machines and the estimate are read by them, as on the dashboard).
#[derive(Default)]
struct Paces(BTreeMap<(String, String), Roles>);

impl Paces {
    /// Reads the roles of the clusters of `ops` not read yet (a cluster that cannot be read
    /// has none, and is not asked again).
    async fn learn(&mut self, client: &dyn OperationClient, ops: &[Operation]) {
        for op in ops.iter().filter(|o| !o.phase.is_finished()) {
            let key = (op.namespace.clone(), op.cluster.clone());
            if let std::collections::btree_map::Entry::Vacant(slot) = self.0.entry(key) {
                slot.insert(super::follow::read_roles(client, op).await);
            }
        }
    }

    fn timing(&self, op: &Operation, rule: ichor_model::SlowRule, now: jiff::Timestamp) -> Timing {
        let none = Roles::default();
        let key = (op.namespace.clone(), op.cluster.clone());
        op.timing(self.0.get(&key).unwrap_or(&none), rule, now)
    }
}

/// `operation list` (`namespace`: `None` for every namespace).
pub(super) async fn run(
    client: &dyn OperationClient,
    io: &mut Io<'_>,
    namespace: Option<&str>,
    layout: Table,
    output: &Output,
) -> Exit {
    let ops = match client.list_operations(namespace).await {
        Ok(ops) => ops,
        Err(e) => return io.fail(&e),
    };
    let mut paces = Paces::default();
    let tabled = matches!(output, Output::Table | Output::Wide);
    if tabled {
        paces.learn(client, &ops).await;
    }
    if !layout.watch {
        return print(io, &ops, &paces, (layout, namespace), output);
    }
    let mut printed = Printed::default();
    if tabled {
        let now = (io.clock)();
        printed.columns = listing::columns(layout.all_namespaces, true, *output == Output::Wide);
        let rows = printed.rows(io, &paces, &ops, now);
        let widths = listing::column_widths(&rows, &[]);
        let lines = listing::text_table(&rows, &widths);
        for line in lines.iter().skip(usize::from(layout.no_headers)) {
            io.say(line);
        }
        printed.widths = widths;
    } else {
        for op in &ops {
            print_one(io, op, output);
        }
    }
    printed.remember(io, &paces, &ops, (io.clock)());
    watch(client, io, namespace, (&mut paces, &mut printed), output).await
}

/// The list printed once: as a table, or each operation as `-o` says.
fn print(
    io: &mut Io<'_>,
    ops: &[Operation],
    paces: &Paces,
    (layout, namespace): (Table, Option<&str>),
    output: &Output,
) -> Exit {
    if *output == Output::Name {
        for op in ops {
            io.say(&format!("{NAME_PREFIX}{}", sanitize(&op.name)));
        }
        return Exit::Done;
    }
    if !matches!(output, Output::Table | Output::Wide) {
        let items: Vec<Value> = ops.iter().map(|o| operation_json(o, false)).collect();
        return print_value(
            io,
            &json!({"kind": "OperationList", "items": items}),
            output,
        );
    }
    let t = io.texts;
    if ops.is_empty() {
        let line = match namespace {
            Some(ns) => t.tr("operations-empty", &[("ns", &sanitize(ns))]),
            None => t.t("operations-empty-all"),
        };
        io.warn(&line);
        return Exit::Done;
    }
    let now = (io.clock)();
    let timings: Vec<Timing> = ops.iter().map(|o| paces.timing(o, io.slow, now)).collect();
    let estimates = listing::any_estimate(t, &timings.iter().collect::<Vec<_>>());
    let columns = listing::columns(layout.all_namespaces, estimates, *output == Output::Wide);
    let lines = listing::text_table(&table_rows(io, paces, &columns, (ops, now)), &[]);
    for line in lines.iter().skip(usize::from(layout.no_headers)) {
        io.say(line);
    }
    Exit::Done
}

/// The header and the rows of `ops` as of `now`, in `columns`.
fn table_rows(
    io: &Io<'_>,
    paces: &Paces,
    columns: &[ListColumn],
    (ops, now): (&[Operation], jiff::Timestamp),
) -> Vec<Vec<String>> {
    let timings: Vec<Timing> = ops.iter().map(|o| paces.timing(o, io.slow, now)).collect();
    let rows: Vec<RowOf<'_>> = ops
        .iter()
        .zip(&timings)
        .map(|(op, timing)| RowOf { op, timing, now })
        .collect();
    listing::text_rows(io.texts, columns, &rows)
}

/// One operation as `-o` says, for a watch (kubectl prints each object on its own).
fn print_one(io: &mut Io<'_>, op: &Operation, output: &Output) {
    match output {
        Output::Name => io.say(&format!("{NAME_PREFIX}{}", sanitize(&op.name))),
        Output::Yaml => {
            io.say("---");
            let _ = print_value(io, &operation_json(op, false), output);
        }
        _ => {
            let _ = print_value(io, &operation_json(op, false), output);
        }
    }
}

/// What a watch printed last of each operation, by namespace and name.
#[derive(Default)]
struct Printed {
    /// The table's columns and their widths (empty unless it prints a table).
    columns: Vec<ListColumn>,
    widths: Vec<usize>,
    /// Each operation's row as printed, and the operation.
    last: BTreeMap<(String, String), (Vec<String>, Operation)>,
}

impl Printed {
    /// The header and the rows of `ops` as of `now`.
    fn rows(
        &self,
        io: &Io<'_>,
        paces: &Paces,
        ops: &[Operation],
        now: jiff::Timestamp,
    ) -> Vec<Vec<String>> {
        table_rows(io, paces, &self.columns, (ops, now))
    }

    /// Whether two rows differ in more than the times that tick by themselves.
    fn differ(&self, a: &[String], b: &[String]) -> bool {
        a.iter()
            .zip(b)
            .zip(&self.columns)
            .any(|((a, b), c)| a != b && !matches!(c, ListColumn::Age | ListColumn::Left))
    }

    /// Keeps the rows of `ops` as printed.
    fn remember(&mut self, io: &Io<'_>, paces: &Paces, ops: &[Operation], now: jiff::Timestamp) {
        let rows = self.rows(io, paces, ops, now);
        for (op, row) in ops.iter().zip(rows.into_iter().skip(1)) {
            let key = (op.namespace.clone(), op.name.clone());
            self.last.insert(key, (row, op.clone()));
        }
    }
}

/// Watches the list and prints a row for each change (see the module's docs).
async fn watch(
    client: &dyn OperationClient,
    io: &mut Io<'_>,
    namespace: Option<&str>,
    (paces, printed): (&mut Paces, &mut Printed),
    output: &Output,
) -> Exit {
    let query = ListQuery {
        view: View::Summary,
        ..ListQuery::everything(namespace)
    };
    let mut feed = Feed::open(client, Watched::List(query)).await;
    let mut held: Vec<Operation> = Vec::new();
    let mut wake = None;
    loop {
        // Whether the rows held are the whole list (an operation not among them is gone).
        let whole = match feed.next(client, io, false, wake).await {
            Ok(Seen::Page(page)) if !page.unchanged => {
                held = page.operations;
                paces.learn(client, &held).await;
                page.next_page_token.is_none()
            }
            Ok(_) => false,
            Err(e) => return io.fail(&e),
        };
        let now = (io.clock)();
        changed(io, paces, printed, &held, output, now);
        if whole {
            gone(io, printed, &held, output);
        }
        wake = held
            .iter()
            .filter_map(|op| paces.timing(op, io.slow, now).next_slow_at())
            .min();
    }
}

/// Prints the row of each operation of `ops` whose row changed since it was printed.
fn changed(
    io: &mut Io<'_>,
    paces: &Paces,
    printed: &mut Printed,
    ops: &[Operation],
    output: &Output,
    now: jiff::Timestamp,
) {
    let tabled = matches!(output, Output::Table | Output::Wide);
    let rows = printed.rows(io, paces, ops, now);
    for (op, row) in ops.iter().zip(rows.iter().skip(1)) {
        let key = (op.namespace.clone(), op.name.clone());
        let same = printed
            .last
            .get(&key)
            .is_some_and(|(before, last)| match tabled {
                true => !printed.differ(before, row),
                false => last.resource_version == op.resource_version,
            });
        if same {
            continue;
        }
        match tabled {
            true => {
                let lines = listing::text_table(std::slice::from_ref(row), &printed.widths);
                lines.iter().for_each(|l| io.say(l));
            }
            false => print_one(io, op, output),
        }
        printed.last.insert(key, (row.clone(), op.clone()));
    }
}

/// Prints once more, as Gone, each operation printed that is no longer listed.
fn gone(io: &mut Io<'_>, printed: &mut Printed, ops: &[Operation], output: &Output) {
    let listed: std::collections::BTreeSet<(&str, &str)> = ops
        .iter()
        .map(|o| (o.namespace.as_str(), o.name.as_str()))
        .collect();
    let gone: Vec<(String, String)> = printed
        .last
        .keys()
        .filter(|(ns, name)| !listed.contains(&(ns.as_str(), name.as_str())))
        .cloned()
        .collect();
    for key in gone {
        let Some((mut row, op)) = printed.last.remove(&key) else {
            continue;
        };
        if !matches!(output, Output::Table | Output::Wide) {
            print_one(io, &op, output);
            continue;
        }
        // The row as last printed, its state Gone.
        let state = printed.columns.iter().position(|c| *c == ListColumn::State);
        if let Some(cell) = state.and_then(|i| row.get_mut(i)) {
            *cell = io.texts.t("state-gone-unseen");
        }
        let lines = listing::text_table(&[row], &printed.widths);
        lines.iter().for_each(|l| io.say(l));
    }
}
