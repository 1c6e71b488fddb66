//! The operation kinds and the CA rotation's passes: one vocabulary for the dashboard, the
//! service and the CRD types (ichor-resources re-exports these), with no kube in it.

use crate::progress::AWAITING_CREDENTIALS;

/// The operation kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OperationKind {
    Talos,
    Kubernetes,
    Ichor,
    Cni,
    Shutdown,
    CaRotation,
}

impl OperationKind {
    /// Every kind, in the order the dashboard offers them.
    pub const ALL: [OperationKind; 6] = [
        OperationKind::Talos,
        OperationKind::Kubernetes,
        OperationKind::Ichor,
        OperationKind::Cni,
        OperationKind::Shutdown,
        OperationKind::CaRotation,
    ];

    /// The `spec.kind` value.
    pub fn as_str(self) -> &'static str {
        match self {
            OperationKind::Talos => "talos",
            OperationKind::Kubernetes => "kubernetes",
            OperationKind::Ichor => "ichor",
            OperationKind::Cni => "cni",
            OperationKind::Shutdown => "shutdown",
            OperationKind::CaRotation => "ca-rotation",
        }
    }

    /// Parses a `spec.kind` value.
    pub fn parse(s: &str) -> Option<OperationKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether held machines are skipped (rollouts) or included (shutdown, CA rotation).
    pub fn skips_held(self) -> bool {
        matches!(
            self,
            OperationKind::Talos | OperationKind::Kubernetes | OperationKind::Cni
        )
    }

    /// Whether the kind takes a target (a version or a kube-proxy mode).
    pub fn takes_target(self) -> bool {
        !matches!(self, OperationKind::Shutdown | OperationKind::CaRotation)
    }

    /// Whether the kind takes max unavailable: the rollouts, which handle workers in groups of it.
    pub fn takes_max_unavailable(self) -> bool {
        matches!(
            self,
            OperationKind::Talos | OperationKind::Kubernetes | OperationKind::Cni
        )
    }

    /// Whether the kind walks machines at all (ichor touches none).
    pub fn touches_machines(self) -> bool {
        self != OperationKind::Ichor
    }
}

/// The number of passes a CA rotation makes over the machines' configuration.
pub const CA_PASSES: i32 = 5;

/// The stage of each CA rotation pass (1-based pass `n` is `CA_PASS_STAGES[n - 1]`), and whether
/// the pass changes the Kubernetes CA (which restarts the kubelet on each machine).
pub const CA_PASS_STAGES: [(&str, bool); 5] = [
    ("Accepting", true),
    ("Issuing", false),
    ("Issuing", true),
    ("Dropping", false),
    ("Dropping", true),
];

/// The pass a stage names when a status carries no pass counts (the ADR's caStageProgress): the
/// first pass of the stage, and for `AwaitingCredentials`, which comes between the issuing and
/// the dropping passes, the pass it follows. `None` for a stage this build does not know.
pub fn ca_pass_of_stage(stage: &str) -> Option<i32> {
    let pass = if stage == AWAITING_CREDENTIALS {
        CA_PASS_STAGES.iter().rposition(|(s, _)| *s == "Issuing")
    } else {
        CA_PASS_STAGES.iter().position(|(s, _)| *s == stage)
    };
    pass.and_then(|i| i32::try_from(i + 1).ok())
}
