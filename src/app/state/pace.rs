//! How long: the rule that says when a machine is slow, and the machines' roles its pace is
//! read by (the list's rows and the page read the same roles, so they say the same).

use crate::action::PriorKey;
use ichor_model::{Cluster, Operation, PriorPaces, Roles, SlowRule, Timing};
use jiff::Timestamp;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many clusters' roles are held; past it the memory starts again (and the
/// roles are asked again when a row needs them).
const MAX_CLUSTERS: usize = 1000;

/// The slow rule in force and the roles read so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pace {
    /// From the config's `[timing]` (default: twice the pace, at least 30 s over it).
    pub rule: SlowRule,
    /// The roles of each cluster's machines, by (namespace, cluster).
    pub(crate) roles: BTreeMap<(String, String), Roles>,
    /// When the roles were last asked for (the list asks at most once a minute).
    pub(crate) asked_at: Option<Timestamp>,
    /// The last completed runs of a kind on a cluster, read whole: a role's pace before one of
    /// its machines finished in the run shown.
    pub(crate) prior: BTreeMap<PriorKey, Vec<Operation>>,
    /// The runs asked for (once each while the dashboard runs).
    pub(crate) prior_asked: BTreeSet<PriorKey>,
}

impl Pace {
    /// The roles of `cluster`'s machines in `namespace`, as far as they were read.
    pub fn roles(&self, namespace: &str, cluster: &str) -> Option<&Roles> {
        self.roles
            .get(&(namespace.to_string(), cluster.to_string()))
    }

    /// `op`'s times as of `now`, with its cluster's roles (none while they are not read) and
    /// the paces of the last runs of its kind on its cluster, when they were read.
    pub fn timing(&self, op: &Operation, now: Timestamp) -> Timing {
        let none = Roles::default();
        let roles = self.roles(&op.namespace, &op.cluster).unwrap_or(&none);
        let prior = PriorKey::of(op)
            .and_then(|k| self.prior.get(&k))
            .map(|runs| PriorPaces::of(runs, roles, self.rule));
        op.timing_with(roles, self.rule, prior.as_ref(), now)
    }

    /// Keeps the roles of `cluster`; whether they differ from those held.
    pub(crate) fn learn(&mut self, cluster: &Cluster) -> bool {
        let key = (cluster.namespace.clone(), cluster.name.clone());
        let roles = Roles::of(cluster);
        if self.roles.get(&key) == Some(&roles) {
            return false;
        }
        if self.roles.len() >= MAX_CLUSTERS {
            self.roles.clear();
        }
        self.roles.insert(key, roles);
        true
    }
}
