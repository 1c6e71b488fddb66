//! What the machines report they run, beside what the cluster's spec names: a spec changed by a
//! start names the target at once, while the machines reach it one by one (or stop at a failed
//! one), so the spec alone would say an upgrade is done when it is not.

use crate::{Cluster, ClusterMachine};

/// The machines that report a version other than the spec's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningApart {
    /// How many machines report another version.
    pub apart: usize,
    /// How many machines report a version at all.
    pub reporting: usize,
    /// The other versions they report, sorted, each once.
    pub versions: Vec<String>,
}

/// Which version a machine reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Talos,
    Kubernetes,
}

impl Component {
    fn of(self, m: &ClusterMachine) -> Option<&str> {
        match self {
            Component::Talos => m.talos_version.as_deref(),
            Component::Kubernetes => m.kubernetes_version.as_deref(),
        }
    }
}

impl Cluster {
    /// The machines that run another `component` version than the spec names; `None` when every
    /// machine that reports one runs the spec's (or none reports).
    pub fn running_apart(&self, component: Component) -> Option<RunningApart> {
        let spec = match component {
            Component::Talos => &self.talos_version,
            Component::Kubernetes => &self.kubernetes_version,
        };
        let reported: Vec<&str> = self
            .machines
            .iter()
            .filter_map(|m| component.of(m))
            .collect();
        let mut versions: Vec<String> = reported
            .iter()
            .filter(|v| *v != spec)
            .map(|v| v.to_string())
            .collect();
        let apart = versions.len();
        versions.sort();
        versions.dedup();
        (apart > 0).then_some(RunningApart {
            apart,
            reporting: reported.len(),
            versions,
        })
    }

    /// The names of the machines that report running `version` of `component`.
    pub fn running(&self, component: Component, version: &str) -> Vec<String> {
        self.machines
            .iter()
            .filter(|m| component.of(m) == Some(version))
            .map(|m| m.name.clone())
            .collect()
    }
}
