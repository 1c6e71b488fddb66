//! The change history of each resource, as kube-apiserver's watch cache keeps one: the newest
//! changes in a ring (1,000 by default), each with the object as JSON and what label and field
//! selectors read of it. A watch that names a resourceVersion is served the changes after it;
//! one older than the oldest change kept is too old (410 Gone).

use crate::apiserver::fields::Fields;
use crate::apiserver::selector::Labels;
use bytes::Bytes;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use tokio::sync::watch;

/// How many changes of one resource are kept unless told otherwise.
pub(crate) const DEFAULT_LIMIT: usize = 1000;

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    /// The watch event type.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

/// What selectors read of one version of an object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Selectable {
    pub(crate) labels: Labels,
    pub(crate) fields: Fields,
}

impl Selectable {
    /// Bytes held, roughly (for the measures).
    fn heap_bytes(&self) -> usize {
        let labels: usize = self
            .labels
            .iter()
            .map(|(k, v)| k.len() + v.len() + 48)
            .sum();
        let fields: usize = self.fields.iter().map(|(_, v)| v.len() + 40).sum();
        labels + fields
    }
}

/// One change of one object.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) rv: u64,
    pub(crate) kind: ChangeType,
    pub(crate) namespace: String,
    /// The object after the change as JSON (a deleted one as it last was, under the delete's
    /// resourceVersion).
    pub(crate) object: Bytes,
    pub(crate) now: Selectable,
    /// What selectors read of the version before it, when that differs from `now` (a
    /// modification that moved the object across a selector).
    pub(crate) before: Option<Selectable>,
    /// The object's name (with `namespace`, which object changed).
    pub(crate) name: String,
    /// The object as it was before a modification or a deletion, as JSON: what a list from
    /// an older snapshot (a continue token, `resourceVersionMatch=Exact`) shows. Shared with
    /// the previous change of the object when the ring still holds it (`prior_shared`).
    pub(crate) prior: Option<Bytes>,
    pub(crate) prior_shared: bool,
}

impl Change {
    /// Bytes held, roughly: the JSON, the selectable fields, the entry itself.
    fn heap_bytes(&self) -> usize {
        self.object.len()
            + if self.prior_shared {
                0
            } else {
                self.prior.as_ref().map_or(0, Bytes::len)
            }
            + self.namespace.len()
            + self.name.len()
            + self.now.heap_bytes()
            + self.before.as_ref().map_or(0, Selectable::heap_bytes)
            + std::mem::size_of::<Change>()
            + 16
    }
}

/// The changes of one resource.
struct Ring {
    changes: VecDeque<Arc<Change>>,
    /// The newest resourceVersion whose change is no longer kept (0: none dropped).
    dropped_up_to: u64,
    /// Told the newest resourceVersion recorded: wakes the resource's watches.
    wake: watch::Sender<u64>,
}

impl Ring {
    fn new() -> Ring {
        Ring {
            changes: VecDeque::new(),
            dropped_up_to: 0,
            wake: watch::channel(0).0,
        }
    }

    fn trim(&mut self, limit: usize) {
        while self.changes.len() > limit {
            if let Some(c) = self.changes.pop_front() {
                self.dropped_up_to = c.rv;
            }
        }
    }
}

/// A watch from a version whose changes are no longer all kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TooOld {
    /// The oldest version a watch can start from.
    pub(crate) oldest: u64,
}

/// The histories of every resource (by plural).
pub(crate) struct History {
    rings: BTreeMap<String, Ring>,
    limit: usize,
    /// Nothing at or before this version is kept, for any resource.
    compacted: u64,
}

impl Default for History {
    fn default() -> Self {
        History {
            rings: BTreeMap::new(),
            limit: DEFAULT_LIMIT,
            compacted: 0,
        }
    }
}

/// How much a history holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistorySize {
    /// Changes kept, over every resource.
    pub entries: usize,
    /// Their bytes, roughly: each object's JSON, its labels and fields, the entry.
    pub bytes: usize,
}

impl History {
    fn ring(&mut self, plural: &str) -> &mut Ring {
        self.rings
            .entry(plural.to_string())
            .or_insert_with(Ring::new)
    }

    /// Records a change of `plural` and wakes its watches; the oldest change goes when more
    /// than the limit are kept.
    pub(crate) fn record(&mut self, plural: &str, change: Change) {
        let limit = self.limit;
        let rv = change.rv;
        let ring = self.ring(plural);
        ring.changes.push_back(Arc::new(change));
        ring.trim(limit);
        ring.wake.send_replace(rv);
    }

    /// A receiver that changes with each change recorded for `plural`.
    /// The JSON of the newest change of an object that the ring of `plural` holds: the object
    /// as it is stored now.
    pub(crate) fn last_object(&self, plural: &str, namespace: &str, name: &str) -> Option<Bytes> {
        let ring = self.rings.get(plural)?;
        ring.changes
            .iter()
            .rev()
            .find(|c| c.name == name && c.namespace == namespace)
            .map(|c| c.object.clone())
    }

    pub(crate) fn subscribe(&mut self, plural: &str) -> watch::Receiver<u64> {
        self.ring(plural).wake.subscribe()
    }

    /// The oldest version a watch of `plural` can start from.
    fn oldest(&self, plural: &str) -> u64 {
        let dropped = self.rings.get(plural).map_or(0, |r| r.dropped_up_to);
        dropped.max(self.compacted)
    }

    /// The changes of `plural` after `rv`, oldest first; too old when some are no longer kept.
    pub(crate) fn since(&self, plural: &str, rv: u64) -> Result<Vec<Arc<Change>>, TooOld> {
        let oldest = self.oldest(plural);
        if rv < oldest {
            return Err(TooOld { oldest });
        }
        let Some(ring) = self.rings.get(plural) else {
            return Ok(Vec::new());
        };
        let start = ring.changes.partition_point(|c| c.rv <= rv);
        Ok(ring.changes.range(start..).cloned().collect())
    }

    /// Keeps at most `limit` changes of each resource (at least one).
    pub(crate) fn set_limit(&mut self, limit: usize) {
        self.limit = limit.max(1);
        for ring in self.rings.values_mut() {
            ring.trim(self.limit);
        }
    }

    /// Forgets every change up to `now`, as an etcd compaction does: a watch from an older
    /// version is too old.
    #[cfg(any(test, feature = "faults"))]
    pub(crate) fn compact(&mut self, now: u64) {
        self.compacted = self.compacted.max(now);
        for ring in self.rings.values_mut() {
            ring.changes.retain(|c| c.rv > now);
        }
    }

    /// What it holds.
    pub(crate) fn size(&self) -> HistorySize {
        let mut size = HistorySize::default();
        for ring in self.rings.values() {
            size.entries += ring.changes.len();
            size.bytes += ring.changes.iter().map(|c| c.heap_bytes()).sum::<usize>();
        }
        size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(rv: u64) -> Change {
        Change {
            rv,
            kind: ChangeType::Modified,
            namespace: "default".into(),
            object: Bytes::from_static(b"{}"),
            now: Selectable::default(),
            before: None,
            name: String::new(),
            prior: None,
            prior_shared: false,
        }
    }

    fn versions(r: Result<Vec<Arc<Change>>, TooOld>) -> Result<Vec<u64>, TooOld> {
        r.map(|cs| cs.iter().map(|c| c.rv).collect())
    }

    #[test]
    fn a_ring_keeps_the_newest_and_older_versions_are_too_old() {
        let mut h = History::default();
        h.set_limit(3);
        for rv in [2, 4, 5, 7, 9] {
            h.record("talosoperations", change(rv));
        }
        // 2 and 4 were dropped: from 4 on everything after is still kept.
        assert_eq!(versions(h.since("talosoperations", 4)), Ok(vec![5, 7, 9]));
        assert_eq!(versions(h.since("talosoperations", 6)), Ok(vec![7, 9]));
        assert_eq!(versions(h.since("talosoperations", 9)), Ok(vec![]));
        assert_eq!(versions(h.since("talosoperations", 20)), Ok(vec![]));
        assert_eq!(
            versions(h.since("talosoperations", 3)),
            Err(TooOld { oldest: 4 })
        );
        // Other resources keep their own.
        assert_eq!(versions(h.since("machines", 0)), Ok(vec![]));
        assert_eq!(h.size().entries, 3);
    }

    #[test]
    fn compaction_makes_every_older_version_too_old() {
        let mut h = History::default();
        for rv in 1..=5 {
            h.record("leases", change(rv));
        }
        h.compact(5);
        assert_eq!(versions(h.since("leases", 4)), Err(TooOld { oldest: 5 }));
        assert_eq!(versions(h.since("machines", 1)), Err(TooOld { oldest: 5 }));
        assert_eq!(versions(h.since("leases", 5)), Ok(vec![]));
        h.record("leases", change(6));
        assert_eq!(versions(h.since("leases", 5)), Ok(vec![6]));
        assert_eq!(h.size().entries, 1);
    }

    #[test]
    fn recording_wakes_the_resources_watches_only() {
        let mut h = History::default();
        let mut ops = h.subscribe("talosoperations");
        let mut machines = h.subscribe("machines");
        h.record("talosoperations", change(3));
        assert!(ops.has_changed().unwrap_or(false));
        assert_eq!(*ops.borrow_and_update(), 3);
        assert!(!machines.has_changed().unwrap_or(true));
        assert_eq!(*machines.borrow_and_update(), 0);
    }
}
