//! Errors as gRPC statuses and back.

use super::basics::{params_from_proto, params_to_proto};
use super::proto;
use crate::model::{ApiError, Code, Reason};
use prost::Message as _;

/// The gRPC code of a domain code.
pub fn code_to_grpc(c: Code) -> tonic::Code {
    match c {
        Code::InvalidArgument => tonic::Code::InvalidArgument,
        Code::NotFound => tonic::Code::NotFound,
        Code::AlreadyExists => tonic::Code::AlreadyExists,
        Code::PermissionDenied => tonic::Code::PermissionDenied,
        Code::Unauthenticated => tonic::Code::Unauthenticated,
        Code::FailedPrecondition => tonic::Code::FailedPrecondition,
        Code::Aborted => tonic::Code::Aborted,
        Code::Unavailable => tonic::Code::Unavailable,
        Code::DeadlineExceeded => tonic::Code::DeadlineExceeded,
        Code::ResourceExhausted => tonic::Code::ResourceExhausted,
        Code::Internal => tonic::Code::Internal,
        Code::Unimplemented => tonic::Code::Unimplemented,
    }
}

/// The domain code of a gRPC code. Codes the domain lacks map to the nearest meaning: a call
/// cancelled may answer later (Unavailable, so it is retried). A request too large for the
/// server (OUT_OF_RANGE from tonic's message limit) is an invalid argument, and one that ran
/// into a limit (RESOURCE_EXHAUSTED, such as a metadata size) is not retried either: the same
/// request would meet the same limit.
pub fn code_from_grpc(c: tonic::Code) -> Code {
    match c {
        tonic::Code::InvalidArgument | tonic::Code::OutOfRange => Code::InvalidArgument,
        tonic::Code::ResourceExhausted => Code::ResourceExhausted,
        tonic::Code::NotFound => Code::NotFound,
        tonic::Code::AlreadyExists => Code::AlreadyExists,
        tonic::Code::PermissionDenied => Code::PermissionDenied,
        tonic::Code::Unauthenticated => Code::Unauthenticated,
        tonic::Code::FailedPrecondition => Code::FailedPrecondition,
        tonic::Code::Aborted => Code::Aborted,
        tonic::Code::Unavailable | tonic::Code::Cancelled => Code::Unavailable,
        tonic::Code::DeadlineExceeded => Code::DeadlineExceeded,
        tonic::Code::Unimplemented => Code::Unimplemented,
        tonic::Code::Ok | tonic::Code::Unknown | tonic::Code::Internal | tonic::Code::DataLoss => {
            Code::Internal
        }
    }
}

/// An error as a gRPC status: the code, the English message, and the reason with its
/// parameters encoded as [`proto::ErrorDetail`] in the details.
pub fn status_from_error(e: &ApiError) -> tonic::Status {
    let detail = proto::ErrorDetail {
        reason: e.reason.map(|r| r.as_str().to_string()).unwrap_or_default(),
        params: params_to_proto(&e.params),
    };
    tonic::Status::with_details(
        code_to_grpc(e.code),
        e.message.clone(),
        detail.encode_to_vec().into(),
    )
}

/// A gRPC status as an error. Details that are absent or not an [`proto::ErrorDetail`] give no
/// reason; a reason this build does not know gives none either (its parameters are kept).
pub fn error_from_status(s: &tonic::Status) -> ApiError {
    let mut e = ApiError::new(code_from_grpc(s.code()), s.message());
    if !s.details().is_empty()
        && let Ok(d) = proto::ErrorDetail::decode(s.details())
    {
        e.reason = Reason::parse(&d.reason);
        e.params = params_from_proto(d.params);
    }
    e
}
