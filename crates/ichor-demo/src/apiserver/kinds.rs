//! The kinds the embedded API serves: the four ichor kinds, the Leases of the start claim and
//! the core Events the controller records; read only, the core kinds that reach ichor-ui
//! (Services, Endpoints, Pods) with the EndpointSlices of `discovery.k8s.io`, and the same
//! Events as `events.k8s.io/v1` shows them; and, read only, the ichor kinds' own
//! CustomResourceDefinitions (`crds`).

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
    /// Served for get and list only: the demo's own data, written around the API.
    pub(crate) read_only: bool,
    /// Objects live in a namespace (false: cluster-scoped, as Namespaces and Nodes).
    pub(crate) namespaced: bool,
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
        read_only: false,
        namespaced: true,
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "machines",
        singular: "machine",
        kind: "Machine",
        has_status: true,
        short_names: &[],
        read_only: false,
        namespaced: true,
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "ichorinstallations",
        singular: "ichorinstallation",
        kind: "IchorInstallation",
        has_status: false,
        short_names: &[],
        read_only: false,
        namespaced: true,
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "talosoperations",
        singular: "talosoperation",
        kind: "TalosOperation",
        has_status: true,
        short_names: &["top"],
        read_only: false,
        namespaced: true,
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
    read_only: false,
    namespaced: true,
};

/// Core (`v1`) Events: what the controller records about operations and machines.
pub(crate) const EVENTS: ResourceType = ResourceType {
    group: "",
    version: "v1",
    plural: "events",
    singular: "event",
    kind: "Event",
    has_status: false,
    short_names: &["ev"],
    read_only: false,
    namespaced: true,
};

/// `events.k8s.io/v1` Events: the core Events, stored once and shown converted (`regarding`,
/// `note`, `series`); read only here.
pub(crate) const EVENTS_V1: ResourceType = ResourceType {
    group: "events.k8s.io",
    version: "v1",
    plural: "events",
    singular: "event",
    kind: "Event",
    has_status: false,
    short_names: &["ev"],
    read_only: true,
    namespaced: true,
};

/// A read-only core (`v1`) or `discovery.k8s.io/v1` kind.
const fn read_only(
    group: &'static str,
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    short_names: &'static [&'static str],
) -> ResourceType {
    ResourceType {
        group,
        version: "v1",
        plural,
        singular,
        kind,
        has_status: false,
        short_names,
        read_only: true,
        namespaced: true,
    }
}

/// The core kinds served, read only: what a client needs to find ichor-ui and its pod.
pub(crate) const CORE: [ResourceType; 3] = [
    read_only("", "services", "service", "Service", &["svc"]),
    read_only("", "endpoints", "endpoints", "Endpoints", &["ep"]),
    read_only("", "pods", "pod", "Pod", &["po"]),
];

/// `discovery.k8s.io/v1` EndpointSlices, read only.
pub(crate) const ENDPOINT_SLICES: ResourceType = read_only(
    "discovery.k8s.io",
    "endpointslices",
    "endpointslice",
    "EndpointSlice",
    &[],
);

/// A read-only, cluster-scoped core kind.
const fn cluster_scoped(
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    short_names: &'static [&'static str],
) -> ResourceType {
    ResourceType {
        namespaced: false,
        ..read_only("", plural, singular, kind, short_names)
    }
}

/// Core Namespaces: the four every cluster has and each namespace that holds the demo's
/// objects; a create in any other is 404, as kube-apiserver's NamespaceLifecycle answers.
pub(crate) const NAMESPACES: ResourceType =
    cluster_scoped("namespaces", "namespace", "Namespace", &["ns"]);

/// Core Nodes: none (the demo's machines are ichor Machines), served as an empty list so that
/// clients that show nodes (kdash) find the resource.
pub(crate) const NODES: ResourceType = cluster_scoped("nodes", "node", "Node", &["no"]);

/// `apiextensions.k8s.io/v1` CustomResourceDefinitions, cluster-scoped, read only.
pub(crate) const CRDS: ResourceType = ResourceType {
    group: "apiextensions.k8s.io",
    version: "v1",
    plural: "customresourcedefinitions",
    singular: "customresourcedefinition",
    kind: "CustomResourceDefinition",
    has_status: true,
    short_names: &["crd", "crds"],
    read_only: true,
    namespaced: false,
};

/// The resource type of a plural name in a group and version.
pub(crate) fn resource(group: &str, version: &str, plural: &str) -> Option<ResourceType> {
    RESOURCES
        .iter()
        .copied()
        .chain([
            LEASES,
            ENDPOINT_SLICES,
            EVENTS,
            EVENTS_V1,
            NAMESPACES,
            NODES,
            CRDS,
        ])
        .chain(CORE)
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

impl ResourceType {
    /// `group/version`, as `apiVersion` names it (`v1` alone for the core group).
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            return self.version.to_string();
        }
        format!("{}/{}", self.group, self.version)
    }

    /// `plural.group`, as messages name the kind (`plural` alone for the core group).
    pub(crate) fn qualified(&self) -> String {
        if self.group.is_empty() {
            return self.plural.to_string();
        }
        format!("{}.{}", self.plural, self.group)
    }
}
