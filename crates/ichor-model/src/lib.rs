//! The domain types the dashboard speaks: operations, plans, clusters and one error type.
//! No proto or kube types appear here.

mod client;
mod delta;
mod error;
pub mod error_text;
mod events;
mod history;
pub mod inert;
mod kind;
mod list;
mod pace;
mod progress;
mod reach;
mod report;
mod running;
mod shown;
mod version;
mod watch;

pub use client::{OperationClient, RetryEvent, no_manifest, read_only_refusal};
pub use delta::PageDelta;
pub use error::{ApiError, Code, Reason, Refusal};
pub use events::{
    EventsWanted, MAX_EVENT_MESSAGE, MAX_EVENTS, MAX_EVENTS_ALL, OperationEvent, OperationEvents,
};
pub use history::{
    HistoryAction, HistoryEntry, HistoryOutcome, MAX_ACTOR, MAX_HISTORY,
    appended as history_appended, last_pause_or_resume,
};
pub use list::{
    DEFAULT_PAGE_SIZE, ListQuery, ListRow, MAX_FILTER_CHARS, MAX_PAGE_SIZE, OperationPage, Order,
    Progress, SortBy, View, list_order,
};
pub use pace::{
    Estimate, MAX_ESTIMATE, MachineTime, PaceBasis, PhaseSince, PriorPaces, Roles, SlowRule, Timing,
};
pub use progress::{AWAITING_CREDENTIALS, Advance, RotationPass};
pub use reach::{ApiServer, Fallback, ServerVersion};
pub use report::{DELETE_REQUESTED, Report, ReportMachine, Totals};
pub use running::{Component, RunningApart};
pub use shown::{StateOf, StateWord, kind_matches, lock_holder};

pub use version::{Version, check_jump, skew_refusal};
pub use watch::{HEARTBEAT, SILENCE_LIMIT, Updates, WatchRequest, WatchUpdate};

use jiff::Timestamp;
use std::collections::BTreeMap;

pub use kind::{CA_PASS_STAGES, CA_PASSES, OperationKind, ca_pass_of_stage};

/// The condition of an operation that waits for the cluster lock another one holds.
pub(crate) const LOCK_HELD_CONDITION: &str = "ClusterLockHeld";
/// How the controller's lock condition names the holder.
const LOCK_HELD_PREFIX: &str = "cluster lock held by ";

/// What an operation does to each machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperationEffect {
    Reboot,
    RestartComponents,
    Stop,
    None,
    CaRotation,
}

impl OperationEffect {
    /// The effect of a kind (docs/design.md, "OperationService").
    pub fn of(kind: OperationKind) -> OperationEffect {
        match kind {
            OperationKind::Talos => OperationEffect::Reboot,
            OperationKind::Kubernetes | OperationKind::Cni => OperationEffect::RestartComponents,
            OperationKind::Ichor => OperationEffect::None,
            OperationKind::Shutdown => OperationEffect::Stop,
            OperationKind::CaRotation => OperationEffect::CaRotation,
        }
    }
}

/// An operation's phase as the controller reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Phase {
    /// No status yet (the controller has not seen the operation).
    #[default]
    Unknown,
    Pending,
    Running,
    Paused,
    Completed,
    Failed,
    /// A value this build does not know, kept as it is.
    Other(String),
}

impl Phase {
    pub fn parse(s: &str) -> Phase {
        match s {
            "" => Phase::Unknown,
            "Pending" => Phase::Pending,
            "Running" => Phase::Running,
            "Paused" => Phase::Paused,
            "Completed" => Phase::Completed,
            "Failed" => Phase::Failed,
            other => Phase::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Phase::Unknown => "",
            Phase::Pending => "Pending",
            Phase::Running => "Running",
            Phase::Paused => "Paused",
            Phase::Completed => "Completed",
            Phase::Failed => "Failed",
            Phase::Other(s) => s,
        }
    }

    /// Completed or Failed: the controller will not touch it again.
    pub fn is_finished(&self) -> bool {
        matches!(self, Phase::Completed | Phase::Failed)
    }
}

/// A machine's phase within an operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MachinePhase {
    Pending,
    Running,
    Completed,
    Failed,
    Skipped,
    Other(String),
}

impl MachinePhase {
    pub fn parse(s: &str) -> MachinePhase {
        match s {
            "Pending" => MachinePhase::Pending,
            "Running" => MachinePhase::Running,
            "Completed" => MachinePhase::Completed,
            "Failed" => MachinePhase::Failed,
            "Skipped" => MachinePhase::Skipped,
            other => MachinePhase::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            MachinePhase::Pending => "Pending",
            MachinePhase::Running => "Running",
            MachinePhase::Completed => "Completed",
            MachinePhase::Failed => "Failed",
            MachinePhase::Skipped => "Skipped",
            MachinePhase::Other(s) => s,
        }
    }
}

/// One machine's progress in an operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineProgress {
    pub name: String,
    pub phase: MachinePhase,
    pub message: String,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
}

/// Where a CA rotation is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaRotation {
    pub stage: String,
    pub pass: i32,
    pub passes: i32,
}

/// A status condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    /// When the status last changed (`lastTransitionTime`), when the cluster says.
    pub last_transition_time: Option<Timestamp>,
}

/// A TalosOperation with its status as the controller reports it (nothing derived).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Operation {
    pub namespace: String,
    pub name: String,
    /// `metadata.uid`: tells this operation apart from a later one of the same name.
    pub uid: String,
    /// `metadata.generation`: changes with the spec (a pause or resume), not with the status.
    pub generation: i64,
    /// The request id of the start that created it (`ichor.maesh.dev/request-id`).
    pub request_id: Option<String>,
    pub cluster: String,
    /// `None` when `spec.kind` holds a value this build does not know (`kind_raw` has it).
    pub kind: Option<OperationKind>,
    pub kind_raw: String,
    pub max_unavailable: i32,
    /// `spec.paused`: the request to pause.
    pub paused: bool,
    pub phase: Phase,
    pub failure_reason: Option<String>,
    pub machines: Vec<MachineProgress>,
    pub ca_rotation: Option<CaRotation>,
    pub conditions: Vec<Condition>,
    pub created_at: Option<Timestamp>,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    /// Who started it (`ichor.maesh.dev/actor`).
    pub actor: Option<String>,
    /// Who last asked for a pause or a resume, and when they asked (the last such entry of
    /// [`Operation::history`]; for an operation paused before the history was kept, the older
    /// `paused-by`/`paused-at` annotations).
    pub paused_by: Option<String>,
    pub paused_at: Option<Timestamp>,
    /// Who did what to it through OperationService, oldest first (at most [`MAX_HISTORY`];
    /// empty in a summary).
    pub history: Vec<HistoryEntry>,
    /// The value before and the target, as recorded when it was started through the service.
    pub current: Option<String>,
    pub target: Option<String>,
    /// The object could not be read as a TalosOperation: why (short, inert). Only the metadata
    /// and what could be read of the spec are filled in; nothing can be written to it from here.
    pub unreadable: Option<String>,
    /// `metadata.resourceVersion`: changes with every change, status included.
    pub resource_version: String,
    /// In a summary (a list row), the machines counted; `machines` is then empty.
    pub summary: Option<Progress>,
    /// A delete was asked for (`metadata.deletionTimestamp`) and finalizers hold it: the
    /// finalizers it waits for. `None`: not being deleted.
    pub deleting: Option<Vec<String>>,
}

impl Operation {
    /// What a person confirms when asked about this operation as it is now.
    pub fn confirmed(&self) -> Confirmed {
        Confirmed {
            uid: self.uid.clone(),
            generation: self.generation,
            finished: self.phase.is_finished(),
            paused: self.paused,
        }
    }

    /// A paused operation whose pause a failed machine caused: resuming it does nothing.
    pub fn paused_by_failure(&self) -> bool {
        self.phase == Phase::Paused && self.failure_reason.is_some()
    }

    /// Who holds the cluster lock this operation waits for, when it waits: the `ClusterLockHeld`
    /// condition, whose message names the holder ("cluster lock held by NAME", ADR 0068); a
    /// message in another form is the holder's description as it is.
    pub fn lock_holder(&self) -> Option<&str> {
        shown::lock_holder(&self.conditions)
    }

    /// What the STATE column says of it.
    pub fn shown_state(&self) -> StateWord {
        StateWord::of(StateOf {
            phase: &self.phase,
            paused: self.paused,
            failed: self.failure_reason.is_some(),
            conditions: &self.conditions,
            deleting: self.deleting.is_some(),
            unreadable: self.unreadable.is_some(),
        })
    }

    /// The `ClusterLockHeld` condition, when the operation waits for the cluster lock.
    pub fn lock_condition(&self) -> Option<&Condition> {
        self.conditions
            .iter()
            .find(|c| c.type_ == LOCK_HELD_CONDITION && c.status == "True")
    }

    /// A pause or resume was asked for and the controller has not acted on it yet.
    pub fn settling(&self) -> bool {
        let pausing =
            self.paused && !matches!(self.phase, Phase::Paused) && !self.phase.is_finished();
        let resuming = !self.paused && self.phase == Phase::Paused && self.failure_reason.is_none();
        pausing || resuming
    }

    /// The failed machine, if any.
    pub fn failed_machine(&self) -> Option<&MachineProgress> {
        self.machines
            .iter()
            .find(|m| m.phase == MachinePhase::Failed)
    }
}

/// What a pause, resume or delete was confirmed against: the operation (its uid), its spec (the
/// generation) and the state the question was asked about. The service refuses the write when
/// any of these differ from what the cluster holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confirmed {
    pub uid: String,
    pub generation: i64,
    /// The operation was Completed or Failed when asked.
    pub finished: bool,
    /// `spec.paused` when asked.
    pub paused: bool,
}

/// What the caller may do in a namespace, as Kubernetes RBAC answers (SelfSubjectAccessReview).
/// The dashboard offers only what is allowed; the API server still decides every write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Permissions {
    /// Create TalosOperations (and take the start claim).
    pub start: bool,
    /// Patch TalosOperations: pause and resume.
    pub pause: bool,
    /// Delete TalosOperations.
    pub delete: bool,
    /// Update TalosClusters: starts that change the cluster's spec.
    pub edit_clusters: bool,
    /// Update IchorInstallations: ichor upgrades.
    pub edit_installation: bool,
}

/// A machine as a step of a plan shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanMachine {
    pub name: String,
    pub role: String,
    /// The machine already reports the target version (Talos and Kubernetes upgrades). The
    /// plan does not leave it out: it is in the steps, in the executor's order, and the
    /// executor takes the target from the spec when its turn comes (ADR 0068, Decision 2).
    pub runs_target: bool,
}

/// A machine that the operation skips, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldMachine {
    pub name: String,
    pub reason: String,
}

/// The spec change a start makes (or, for a tracked cluster, the change to merge in Git).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecChange {
    /// `TalosCluster` or `IchorInstallation`.
    pub resource_kind: String,
    pub resource_name: String,
    /// e.g. `spec.talosVersion`.
    pub field: String,
    pub from: String,
    pub to: String,
}

/// What would happen, computed without writing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub namespace: String,
    pub cluster: String,
    pub kind: OperationKind,
    pub effect: OperationEffect,
    pub max_unavailable: i32,
    /// The machines in the order they will be handled, a step at a time.
    pub steps: Vec<Vec<PlanMachine>>,
    pub held: Vec<HeldMachine>,
    /// Current and target value (versions with the leading v; a kube-proxy mode); empty for
    /// shutdown and CA rotation.
    pub current: String,
    pub target: String,
    /// The spec write a start makes; `None` when the spec already names the target or the kind
    /// writes no spec.
    pub spec_change: Option<SpecChange>,
    /// Why a start would be refused, if it would: the first reason a person should hear.
    pub blocked: Option<Refusal>,
    /// The other reasons it would be refused, in order, so a Review says them all at once
    /// instead of one fix at a time.
    pub also_blocked: Vec<Refusal>,
    /// CA rotation: the stages, and that the secrets bundle is replaced.
    pub stages: Vec<String>,
    pub replaces_secrets_bundle: bool,
    /// An ichor upgrade: the other clusters of the namespace, which the same installation
    /// serves and which the upgrade therefore changes too.
    pub shared_with: Vec<String>,
    /// Why the caller may not start this (RBAC), if they may not; `None` when they may or it
    /// is not known.
    pub denied: Option<Refusal>,
    /// What the plan was computed from, as one opaque value: a Start carries it back, and the
    /// service refuses the start if the plan it computes then differs.
    pub fingerprint: String,
    /// CA rotation: the operator's credentials for the cluster stop working during the
    /// rotation (ADR 0091); the new ones are fetched with `ichor cluster bundle-export`.
    pub credentials_stop_working: bool,
    /// Held machines this kind does not skip (shutdown, CA rotation): they are in the steps.
    pub held_not_skipped: Vec<HeldMachine>,
    /// The cluster's machines that are not approved: not touched.
    pub unapproved: Vec<PlanMachine>,
    /// The cluster was shut down and nothing was started on it since.
    pub shut_down: Option<ShutdownRecord>,
    /// The cluster carries a kube-proxy confirmation annotation an earlier start left: this
    /// start removes it.
    pub stray_confirmation: bool,
}

impl Plan {
    /// How many machines the operation touches.
    pub fn machine_count(&self) -> usize {
        self.steps.iter().map(Vec::len).sum()
    }
}

/// A warning that came with a successful call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub reason: Reason,
    pub params: BTreeMap<String, String>,
    pub message: String,
}

impl Warning {
    /// A warning said in its reason's own words (see [`ApiError::said`]).
    pub fn said(reason: Reason, params: &[(&str, &str)]) -> Warning {
        Warning {
            reason,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            message: error::english(reason, params),
        }
    }
}

/// The answer to a start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Created {
    pub operation: Operation,
    /// The operation already existed for this start's request id (a repeat, or an answer that
    /// was lost and found by reading): this call wrote nothing.
    pub found: bool,
    /// The spec write that was made, if one was.
    pub spec_written: Option<SpecChange>,
    pub warnings: Vec<Warning>,
}

/// A machine of a cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterMachine {
    pub name: String,
    pub role: String,
    pub order: Option<i64>,
    pub approved: bool,
    pub hold: Option<String>,
    /// The Machine object could not be read: why (short, inert).
    pub unreadable: Option<String>,
    /// The Talos and Kubernetes versions the machine reports it runs (`None`: not reported).
    pub talos_version: Option<String>,
    pub kubernetes_version: Option<String>,
}

/// Who syncs a spec from Git.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracking {
    /// `Argo CD` or `Flux`.
    pub tool: String,
    /// The Argo CD application or the Flux object (`Kustomization ns/name`).
    pub object: String,
}

/// An operation named by a cluster as its unfinished one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationRef {
    pub name: String,
    pub kind: String,
    pub phase: Phase,
}

/// A TalosCluster with what the clusters screen shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub namespace: String,
    pub name: String,
    pub talos_version: String,
    pub kubernetes_version: String,
    pub kube_proxy: String,
    pub ichor_version: Option<String>,
    /// In executor order.
    pub machines: Vec<ClusterMachine>,
    pub tracking: Option<Tracking>,
    pub active_operation: Option<OperationRef>,
    /// The TalosCluster object could not be read: why (short, inert). Only its name is known.
    pub unreadable: Option<String>,
    /// The last shutdown of the cluster that completed, if any.
    pub last_shutdown: Option<ShutdownRecord>,
    /// The kube-proxy confirmation annotation is on the cluster though no start is under way.
    pub stray_confirmation: bool,
    /// The cluster's `BundleBackupStale` condition, when it is True: the backup of the
    /// secrets bundle predates a CA rotation.
    pub bundle_backup_stale: Option<StaleBundle>,
}

/// The cluster's `BundleBackupStale` condition (True): its texts are the cluster's (untrusted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleBundle {
    pub reason: String,
    pub message: String,
    /// When it turned True, when the cluster says.
    pub since: Option<Timestamp>,
}

/// The type of the cluster condition that says the secrets bundle's backup is stale.
pub const BUNDLE_BACKUP_STALE: &str = "BundleBackupStale";

/// A shutdown that completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShutdownRecord {
    pub operation: String,
    /// Who started it.
    pub actor: Option<String>,
    pub finished_at: Option<Timestamp>,
    /// Nothing was started on the cluster since: its machines are presumably still stopped.
    pub still_down: bool,
}

/// What a start or a plan asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationRequest {
    pub namespace: String,
    /// `None`: the only cluster in the namespace.
    pub cluster: Option<String>,
    pub kind: OperationKind,
    /// A version for the upgrades, a kube-proxy mode for cni, nothing otherwise.
    pub target: Option<String>,
    /// `None`: 1.
    pub max_unavailable: Option<i32>,
    /// A start: the id that makes it idempotent (recorded on the operation); `None` in a plan.
    pub request_id: Option<String>,
    /// A start: the fingerprint of the plan the person reviewed; `None`: not bound to a Review.
    pub confirmed_plan: Option<String>,
}

impl OperationRequest {
    /// A request for `kind` on `cluster` in `namespace`, with no target and the defaults.
    pub fn new(namespace: &str, cluster: Option<&str>, kind: OperationKind) -> OperationRequest {
        OperationRequest {
            namespace: namespace.to_string(),
            cluster: cluster.map(str::to_string),
            kind,
            target: None,
            max_unavailable: None,
            request_id: None,
            confirmed_plan: None,
        }
    }
}

/// A new request id for a start: 128 random bits in hex.
pub fn new_request_id() -> String {
    format!("{:032x}", fastrand::u128(..))
}

/// Whether Kubernetes takes `s` as a namespace: a DNS-1123 label, at most 63 characters of
/// `a-z`, `0-9` and `-`, starting and ending with a letter or digit (the service checks the
/// same before it calls Kubernetes).
pub fn is_namespace_name(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-';
    let end = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    b.len() <= 63 && b.iter().all(inner) && b.first().is_some_and(end) && b.last().is_some_and(end)
}
