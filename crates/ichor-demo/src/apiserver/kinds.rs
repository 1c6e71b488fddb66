//! The kinds the embedded API serves: the four ichor kinds and the Leases of the start claim.

use ichor_resources::{GROUP, VERSION};

/// One kind the embedded API serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResourceType {
    /// The API group and version it is served under.
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) plural: &'static str,
    pub(crate) singular: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) has_status: bool,
    pub(crate) short_names: &'static [&'static str],
}

/// The four ichor kinds.
pub(crate) const RESOURCES: [ResourceType; 4] = [
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "talosclusters",
        singular: "taloscluster",
        kind: "TalosCluster",
        has_status: true,
        short_names: &["tc"],
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "machines",
        singular: "machine",
        kind: "Machine",
        has_status: false,
        short_names: &[],
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "ichorinstallations",
        singular: "ichorinstallation",
        kind: "IchorInstallation",
        has_status: false,
        short_names: &[],
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "talosoperations",
        singular: "talosoperation",
        kind: "TalosOperation",
        has_status: true,
        short_names: &["top"],
    },
];

/// `coordination.k8s.io/v1` Leases: the start claim of OperationService (one per cluster).
pub(crate) const LEASES: ResourceType = ResourceType {
    group: "coordination.k8s.io",
    version: "v1",
    plural: "leases",
    singular: "lease",
    kind: "Lease",
    has_status: false,
    short_names: &[],
};

/// The resource type of a plural name in a group and version.
pub(crate) fn resource(group: &str, version: &str, plural: &str) -> Option<ResourceType> {
    RESOURCES
        .iter()
        .copied()
        .chain([LEASES])
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

impl ResourceType {
    /// `group/version`, as `apiVersion` names it.
    pub(crate) fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }
}
