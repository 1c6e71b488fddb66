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
    ($($variant:ident => $code:literal,)*) => {
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

            /// Parses a wire name.
            pub fn parse(s: &str) -> Option<Reason> {
                match s { $($code => Some(Reason::$variant),)* _ => None }
            }
        }
    };
}

reasons! {
    UnfinishedOperation => "UNFINISHED_OPERATION",
    TrackedByGitops => "TRACKED_BY_GITOPS",
    Downgrade => "DOWNGRADE",
    UnsupportedJump => "UNSUPPORTED_JUMP",
    NoMachines => "NO_MACHINES",
    InvalidVersion => "INVALID_VERSION",
    InvalidKubeProxyMode => "INVALID_KUBE_PROXY_MODE",
    TargetNotTaken => "TARGET_NOT_TAKEN",
    TargetRequired => "TARGET_REQUIRED",
    InvalidMaxUnavailable => "INVALID_MAX_UNAVAILABLE",
    MaxUnavailableOverWorkers => "MAX_UNAVAILABLE_OVER_WORKERS",
    InvalidNamespace => "INVALID_NAMESPACE",
    InvalidName => "INVALID_NAME",
    InvalidKind => "INVALID_KIND",
    InvalidRequestId => "INVALID_REQUEST_ID",
    InvalidFingerprint => "INVALID_FINGERPRINT",
    InvalidConfirmation => "INVALID_CONFIRMATION",
    OperationUnreadable => "OPERATION_UNREADABLE",
    ClusterUnreadable => "CLUSTER_UNREADABLE",
    MachineUnreadable => "MACHINE_UNREADABLE",
    ClusterRequired => "CLUSTER_REQUIRED",
    ClusterNotFound => "CLUSTER_NOT_FOUND",
    NoClusters => "NO_CLUSTERS",
    OperationNotFound => "OPERATION_NOT_FOUND",
    ResumeAfterFailure => "RESUME_AFTER_FAILURE",
    OperationFinished => "OPERATION_FINISHED",
    SpecWrittenCreateFailed => "SPEC_WRITTEN_CREATE_FAILED",
    AnnotationNotRemoved => "ANNOTATION_NOT_REMOVED",
    ReadOnly => "READ_ONLY",
    PermissionDenied => "PERMISSION_DENIED",
    Unauthenticated => "UNAUTHENTICATED",
    Unavailable => "UNAVAILABLE",
    Conflict => "CONFLICT",
    ChangedSinceConfirmed => "CHANGED_SINCE_CONFIRMED",
    PlanChanged => "PLAN_CHANGED",
    StartInProgress => "START_IN_PROGRESS",
    StartSettling => "START_SETTLING",
    StartOutcomeUnknown => "START_OUTCOME_UNKNOWN",
    ClaimUnreadable => "CLAIM_UNREADABLE",
    RequestIdReused => "REQUEST_ID_REUSED",
    ConfirmationRemoved => "CONFIRMATION_REMOVED",
    TaskFailed => "TASK_FAILED",
    InstallationBusy => "INSTALLATION_BUSY",
    NotPermitted => "NOT_PERMITTED",
    WriteNotApplied => "WRITE_NOT_APPLIED",
    WriteOutcomeUnknown => "WRITE_OUTCOME_UNKNOWN",
    OperationReplaced => "OPERATION_REPLACED",
    WriteAbandoned => "WRITE_ABANDONED",
    VersionSkew => "VERSION_SKEW",
    Invalid => "INVALID",
    Internal => "INTERNAL",
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

impl Refusal {
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
