//! The one error the dashboard sees from any backend, and the reasons a call is refused: codes
//! it says in every language, with their parameters.

use std::collections::BTreeMap;
use std::fmt;

/// gRPC-style error codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    InvalidArgument,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    Unauthenticated,
    FailedPrecondition,
    Aborted,
    Unavailable,
    DeadlineExceeded,
    /// The server refused a call as too large, or ran out of something: not worth repeating as
    /// it is.
    ResourceExhausted,
    Internal,
    Unimplemented,
}

impl Code {
    /// Faults worth retrying: the server may answer later.
    pub fn is_transient(self) -> bool {
        matches!(self, Code::Unavailable | Code::DeadlineExceeded)
    }
}

macro_rules! reasons {
    ($($variant:ident => $code:literal, $id:literal,)*) => {
        /// Why a call was refused: a code the dashboard says in every language, with parameters.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Reason { $($variant,)* }

        impl Reason {
            /// Every reason, for the locale coverage test.
            pub const ALL: &'static [Reason] = &[$(Reason::$variant,)*];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self { $(Reason::$variant => $code,)* }
            }

            /// The id of its message in `locales/*/errors.ftl`: the dashboard's words for it in
            /// every language, and the English the service sends with it.
            pub fn message_id(self) -> &'static str {
                match self { $(Reason::$variant => $id,)* }
            }

            /// Parses a wire name.
            pub fn parse(s: &str) -> Option<Reason> {
                match s { $($code => Some(Reason::$variant),)* _ => None }
            }
        }
    };
}

// Each reason: its wire name, and the id of its message (locales/*/errors.ftl).
reasons! {
    UnfinishedOperation => "UNFINISHED_OPERATION", "error-unfinished-operation",
    TrackedByGitops => "TRACKED_BY_GITOPS", "error-tracked-by-gitops",
    Downgrade => "DOWNGRADE", "error-downgrade",
    UnsupportedJump => "UNSUPPORTED_JUMP", "error-unsupported-jump",
    NoMachines => "NO_MACHINES", "error-no-machines",
    InvalidVersion => "INVALID_VERSION", "error-invalid-version",
    InvalidKubeProxyMode => "INVALID_KUBE_PROXY_MODE", "error-invalid-kube-proxy-mode",
    TargetNotTaken => "TARGET_NOT_TAKEN", "error-target-not-taken",
    TargetRequired => "TARGET_REQUIRED", "error-target-required",
    InvalidMaxUnavailable => "INVALID_MAX_UNAVAILABLE", "error-invalid-max-unavailable",
    MaxUnavailableOverWorkers => "MAX_UNAVAILABLE_OVER_WORKERS", "error-max-unavailable-over-workers",
    InvalidNamespace => "INVALID_NAMESPACE", "error-invalid-namespace",
    InvalidName => "INVALID_NAME", "error-invalid-name",
    InvalidKind => "INVALID_KIND", "error-invalid-kind",
    InvalidRequestId => "INVALID_REQUEST_ID", "error-invalid-request-id",
    InvalidFingerprint => "INVALID_FINGERPRINT", "error-invalid-fingerprint",
    InvalidConfirmation => "INVALID_CONFIRMATION", "error-invalid-confirmation",
    OperationUnreadable => "OPERATION_UNREADABLE", "error-operation-unreadable",
    ClusterUnreadable => "CLUSTER_UNREADABLE", "error-cluster-unreadable",
    MachineUnreadable => "MACHINE_UNREADABLE", "error-machine-unreadable",
    ClusterRequired => "CLUSTER_REQUIRED", "error-cluster-required",
    ClusterNotFound => "CLUSTER_NOT_FOUND", "error-cluster-not-found",
    InstallationNotFound => "INSTALLATION_NOT_FOUND", "error-installation-not-found",
    NoClusters => "NO_CLUSTERS", "error-no-clusters",
    OperationNotFound => "OPERATION_NOT_FOUND", "error-operation-not-found",
    ResumeAfterFailure => "RESUME_AFTER_FAILURE", "error-resume-after-failure",
    OperationFinished => "OPERATION_FINISHED", "error-operation-finished",
    SpecWrittenCreateFailed => "SPEC_WRITTEN_CREATE_FAILED", "error-spec-written-create-failed",
    AnnotationNotRemoved => "ANNOTATION_NOT_REMOVED", "error-annotation-not-removed",
    ReadOnly => "READ_ONLY", "error-read-only",
    PermissionDenied => "PERMISSION_DENIED", "error-permission-denied",
    Unauthenticated => "UNAUTHENTICATED", "error-unauthenticated",
    Unavailable => "UNAVAILABLE", "error-unavailable",
    Conflict => "CONFLICT", "error-conflict",
    ChangedSinceConfirmed => "CHANGED_SINCE_CONFIRMED", "error-changed-since-confirmed",
    PlanChanged => "PLAN_CHANGED", "error-plan-changed",
    StartInProgress => "START_IN_PROGRESS", "error-start-in-progress",
    StartSettling => "START_SETTLING", "error-start-settling",
    StartOutcomeUnknown => "START_OUTCOME_UNKNOWN", "error-start-outcome-unknown",
    ClaimUnreadable => "CLAIM_UNREADABLE", "error-claim-unreadable",
    RequestIdReused => "REQUEST_ID_REUSED", "error-request-id-reused",
    ConfirmationRemoved => "CONFIRMATION_REMOVED", "error-confirmation-removed",
    TaskFailed => "TASK_FAILED", "error-task-failed",
    InstallationBusy => "INSTALLATION_BUSY", "error-installation-busy",
    NotPermitted => "NOT_PERMITTED", "error-not-permitted",
    WriteNotApplied => "WRITE_NOT_APPLIED", "error-write-not-applied",
    WriteOutcomeUnknown => "WRITE_OUTCOME_UNKNOWN", "error-write-outcome-unknown",
    OperationReplaced => "OPERATION_REPLACED", "error-operation-replaced",
    WriteTargetGone => "WRITE_TARGET_GONE", "error-write-target-gone",
    WriteAbandoned => "WRITE_ABANDONED", "error-write-abandoned",
    VersionSkew => "VERSION_SKEW", "error-version-skew",
    LimitReached => "LIMIT_REACHED", "error-limit-reached",
    DeadlinePassed => "DEADLINE_PASSED", "error-deadline-passed",
    ShuttingDown => "SHUTTING_DOWN", "error-shutting-down",
    InvalidQuery => "INVALID_QUERY", "error-invalid-query",
    Invalid => "INVALID", "error-invalid",
    Internal => "INTERNAL", "error-internal",
}

/// A refusal: the reason and its parameters, with the English sentence for logs and CLIs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub reason: Reason,
    pub params: BTreeMap<String, String>,
    pub message: String,
}

/// The one error the dashboard sees, from either backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub code: Code,
    pub reason: Option<Reason>,
    pub params: BTreeMap<String, String>,
    /// English, for logs; the dashboard says the reason in the user's language.
    pub message: String,
}

impl ApiError {
    pub fn new(code: Code, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason: None,
            params: BTreeMap::new(),
            message: message.into(),
        }
    }

    /// An argument that is not valid (INVALID_ARGUMENT, reason Invalid), naming what.
    pub fn invalid(what: &str, message: impl Into<String>) -> ApiError {
        ApiError::refused(
            Code::InvalidArgument,
            Reason::Invalid,
            &[("what", what)],
            message,
        )
    }

    /// A list query's argument that is not valid (INVALID_ARGUMENT, reason InvalidQuery):
    /// `what` names it, `params` fill its words (`error-invalid-query`).
    pub fn invalid_query(what: &str, params: &[(&str, &str)]) -> ApiError {
        let mut all = vec![("what", what)];
        all.extend_from_slice(params);
        ApiError::said(Code::InvalidArgument, Reason::InvalidQuery, &all)
    }

    /// A call whose deadline passed `during` (`read`, `write`, `authentication`, `stream`):
    /// DEADLINE_EXCEEDED, said as `error-deadline-passed`.
    pub fn deadline_passed(during: &str) -> ApiError {
        ApiError::said(
            Code::DeadlineExceeded,
            Reason::DeadlinePassed,
            &[("during", during)],
        )
    }

    /// The server is shutting down: UNAVAILABLE, said as `error-shutting-down`; `then` is what
    /// the caller does next (`call` again, or `subscribe` again).
    pub fn shutting_down(then: &str) -> ApiError {
        ApiError::said(Code::Unavailable, Reason::ShuttingDown, &[("then", then)])
    }

    /// An error with a reason code and parameters.
    pub fn refused(
        code: Code,
        reason: Reason,
        params: &[(&str, &str)],
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            code,
            reason: Some(reason),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            message: message.into(),
        }
    }

    /// An error with a reason code and parameters, said in the reason's own words: the English
    /// of its message (`reason.message_id()` in `locales/en/errors.ftl`), the dashboard's words.
    pub fn said(code: Code, reason: Reason, params: &[(&str, &str)]) -> ApiError {
        ApiError::refused(code, reason, params, english(reason, params))
    }

    /// A refusal as a FailedPrecondition error.
    pub fn from_refusal(r: Refusal) -> ApiError {
        ApiError {
            code: Code::FailedPrecondition,
            reason: Some(r.reason),
            params: r.params,
            message: r.message,
        }
    }

    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// The English of `reason` with `params`, from `locales/en`: one source for the service's
/// words and the dashboard's.
pub(crate) fn english(reason: Reason, params: &[(&str, &str)]) -> String {
    ichor_i18n::english(reason.message_id(), params)
}

impl Refusal {
    /// A refusal said in its reason's own words (see [`ApiError::said`]).
    pub fn said(reason: Reason, params: &[(&str, &str)]) -> Refusal {
        Refusal::new(reason, params, english(reason, params))
    }

    pub fn new(reason: Reason, params: &[(&str, &str)], message: impl Into<String>) -> Refusal {
        Refusal {
            reason,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            message: message.into(),
        }
    }
}
