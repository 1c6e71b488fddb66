//! A list row as the watch stores keep it: the summary a list page shows, in less memory than
//! an [`Operation`] (616 bytes inline, and a heap string for each text). The strings that
//! repeat from row to row (namespace, cluster, kind, actor, versions) are held once and shared;
//! the rest are boxed `str`s; what few rows carry (a failure, conditions, a pause, a delete
//! under way, why the object could not be read, an unfinished operation's machines) sits
//! behind one pointer that most rows leave empty. Measured with heaptrack on the dashboard at 10,000 operations: the boxed
//! `Operation`s alone were 6 MB.

use ichor_model::{
    CaRotation, Condition, MachineProgress, Operation, OperationKind, Phase, Progress,
};
use jiff::Timestamp;
use std::collections::HashSet;
use std::sync::Arc;

/// Strings that repeat across rows, each held once.
#[derive(Default)]
pub(crate) struct Interner(HashSet<Arc<str>>);

impl Interner {
    fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.0.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.0.insert(a.clone());
        a
    }

    fn opt(&mut self, s: Option<String>) -> Option<Arc<str>> {
        s.map(|s| self.get(&s))
    }

    /// How many strings are held.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Forgets the strings no row holds any more.
    pub(crate) fn prune(&mut self) {
        self.0.retain(|a| Arc::strong_count(a) > 1);
    }
}

/// The machines counted (see [`Progress`]).
struct Counted {
    done: u32,
    total: u32,
    current: Option<Box<str>>,
    failed: Option<Box<str>>,
}

/// What few rows carry.
struct Rare {
    request_id: Option<Box<str>>,
    failure_reason: Option<Box<str>>,
    ca_rotation: Option<CaRotation>,
    conditions: Vec<Condition>,
    paused_by: Option<Box<str>>,
    paused_at: Option<Timestamp>,
    unreadable: Option<Box<str>>,
    deleting: Option<Vec<String>>,
    /// An unfinished operation's machines, their phases and times (see
    /// [`Operation::summarized`]).
    machines: Vec<MachineProgress>,
}

impl Rare {
    fn is_empty(&self) -> bool {
        self.request_id.is_none()
            && self.failure_reason.is_none()
            && self.ca_rotation.is_none()
            && self.conditions.is_empty()
            && self.paused_by.is_none()
            && self.paused_at.is_none()
            && self.unreadable.is_none()
            && self.deleting.is_none()
            && self.machines.is_empty()
    }
}

/// One operation as a list row, made from its summary and made back into it whole.
pub(crate) struct Row {
    namespace: Arc<str>,
    name: Arc<str>,
    uid: Box<str>,
    resource_version: Box<str>,
    cluster: Arc<str>,
    kind_raw: Arc<str>,
    kind: Option<OperationKind>,
    phase: Phase,
    paused: bool,
    max_unavailable: i32,
    generation: i64,
    actor: Option<Arc<str>>,
    current: Option<Arc<str>>,
    target: Option<Arc<str>>,
    created_at: Option<Timestamp>,
    started_at: Option<Timestamp>,
    finished_at: Option<Timestamp>,
    summary: Option<Counted>,
    rare: Option<Box<Rare>>,
}

fn boxed(s: Option<String>) -> Option<Box<str>> {
    s.map(String::into_boxed_str)
}

/// A count kept in 32 bits; past that (a list of four billion machines cannot be an object
/// Kubernetes holds) the largest.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Row {
    /// The row of `op`, its machines counted (see [`Operation::summarized`]).
    pub(crate) fn of(op: Operation, strings: &mut Interner) -> Row {
        let op = op.summarized();
        let rare = Rare {
            request_id: boxed(op.request_id),
            failure_reason: boxed(op.failure_reason),
            ca_rotation: op.ca_rotation,
            conditions: op.conditions,
            paused_by: boxed(op.paused_by),
            paused_at: op.paused_at,
            unreadable: boxed(op.unreadable),
            deleting: op.deleting,
            machines: op.machines,
        };
        Row {
            namespace: strings.get(&op.namespace),
            name: Arc::from(op.name),
            uid: op.uid.into_boxed_str(),
            resource_version: op.resource_version.into_boxed_str(),
            cluster: strings.get(&op.cluster),
            kind_raw: strings.get(&op.kind_raw),
            kind: op.kind,
            phase: op.phase,
            paused: op.paused,
            max_unavailable: op.max_unavailable,
            generation: op.generation,
            actor: strings.opt(op.actor),
            current: strings.opt(op.current),
            target: strings.opt(op.target),
            created_at: op.created_at,
            started_at: op.started_at,
            finished_at: op.finished_at,
            summary: op.summary.map(|p| Counted {
                done: count(p.done),
                total: count(p.total),
                current: boxed(p.current),
                failed: boxed(p.failed),
            }),
            rare: (!rare.is_empty()).then(|| Box::new(rare)),
        }
    }

    /// What the STATE column says of it (as [`Operation::shown_state`]).
    pub(crate) fn shown_state(&self) -> ichor_model::StateWord {
        let rare = self.rare.as_deref();
        ichor_model::StateWord::of(ichor_model::StateOf {
            phase: &self.phase,
            paused: self.paused,
            failed: rare.is_some_and(|r| r.failure_reason.is_some()),
            conditions: rare.map(|r| r.conditions.as_slice()).unwrap_or_default(),
            deleting: rare.is_some_and(|r| r.deleting.is_some()),
            unreadable: rare.is_some_and(|r| r.unreadable.is_some()),
        })
    }

    /// The namespace and name, shared with the row.
    pub(crate) fn key(&self) -> (Arc<str>, Arc<str>) {
        (self.namespace.clone(), self.name.clone())
    }

    /// The summary this row was made from.
    pub(crate) fn summary(&self) -> Operation {
        let text = |s: &Option<Box<str>>| s.as_deref().map(str::to_string);
        let shared = |s: &Option<Arc<str>>| s.as_deref().map(str::to_string);
        let rare = self.rare.as_deref();
        Operation {
            namespace: self.namespace.to_string(),
            name: self.name.to_string(),
            uid: self.uid.to_string(),
            generation: self.generation,
            request_id: rare.and_then(|r| text(&r.request_id)),
            cluster: self.cluster.to_string(),
            kind: self.kind,
            kind_raw: self.kind_raw.to_string(),
            max_unavailable: self.max_unavailable,
            paused: self.paused,
            phase: self.phase.clone(),
            failure_reason: rare.and_then(|r| text(&r.failure_reason)),
            machines: rare.map(|r| r.machines.clone()).unwrap_or_default(),
            ca_rotation: rare.and_then(|r| r.ca_rotation.clone()),
            conditions: rare.map(|r| r.conditions.clone()).unwrap_or_default(),
            created_at: self.created_at,
            started_at: self.started_at,
            finished_at: self.finished_at,
            actor: shared(&self.actor),
            paused_by: rare.and_then(|r| text(&r.paused_by)),
            paused_at: rare.and_then(|r| r.paused_at),
            history: Vec::new(),
            current: shared(&self.current),
            target: shared(&self.target),
            unreadable: rare.and_then(|r| text(&r.unreadable)),
            resource_version: self.resource_version.to_string(),
            summary: self.summary.as_ref().map(|c| Progress {
                done: c.done as usize,
                total: c.total as usize,
                current: text(&c.current),
                failed: text(&c.failed),
            }),
            deleting: rare.and_then(|r| r.deleting.clone()),
        }
    }
}

ichor_model::impl_list_row!(Row);

#[cfg(test)]
mod tests;
