//! Errors as gRPC statuses and back.

use super::basics::{params_from_proto, params_to_proto};
use super::proto;
use ichor_model::{ApiError, Code, Reason};
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

/// The domain of every `google.rpc.ErrorInfo` this API sends: the reasons are ichor's.
pub const ERROR_DOMAIN: &str = "ichor.maesh.dev";

/// The `google.rpc.ErrorInfo` of an error with a reason: the reason code, the domain, and the
/// parameters as its metadata (the gRPC richer error model).
pub fn error_info(e: &ApiError) -> Option<tonic_types::pb::ErrorInfo> {
    let reason = e.reason?;
    Some(tonic_types::pb::ErrorInfo {
        reason: reason.as_str().to_string(),
        domain: ERROR_DOMAIN.to_string(),
        metadata: params_to_proto(&e.params),
    })
}

/// An error as a gRPC status: the code, the English message, and a `google.rpc.Status` in the
/// details whose `ErrorInfo` carries the reason and its parameters.
pub fn status_from_error(e: &ApiError) -> tonic::Status {
    use tonic_types::{ErrorDetails, StatusExt as _};
    let code = code_to_grpc(e.code);
    match error_info(e) {
        Some(info) => tonic::Status::with_error_details(
            code,
            e.message.clone(),
            ErrorDetails::with_error_info(info.reason, info.domain, info.metadata),
        ),
        None => tonic::Status::new(code, e.message.clone()),
    }
}

/// The reason and parameters of an ErrorInfo of ichor's domain (a reason this build does not
/// know gives no reason; its parameters are kept).
fn apply_info(
    e: &mut ApiError,
    reason: &str,
    domain: &str,
    metadata: std::collections::HashMap<String, String>,
) {
    if domain == ERROR_DOMAIN || domain.is_empty() {
        e.reason = Reason::parse(reason);
        e.params = params_from_proto(metadata);
    }
}

/// A gRPC status as an error: the reason from the `google.rpc.ErrorInfo` in its details, or,
/// for servers of 0.1 (kept for one release), from a bare `ErrorDetail`. Details that are absent
/// or neither give no reason.
pub fn error_from_status(s: &tonic::Status) -> ApiError {
    use tonic_types::StatusExt as _;
    let mut e = ApiError::new(code_from_grpc(s.code()), s.message());
    if s.details().is_empty() {
        return e;
    }
    if let Some(info) = s.get_details_error_info() {
        apply_info(&mut e, &info.reason, &info.domain, info.metadata);
    } else if let Ok(d) = proto::ErrorDetail::decode(s.details()) {
        e.reason = Reason::parse(&d.reason);
        e.params = params_from_proto(d.params);
    }
    e
}

/// The Connect protocol's name of a code.
pub fn code_to_connect(c: Code) -> &'static str {
    match c {
        Code::InvalidArgument => "invalid_argument",
        Code::NotFound => "not_found",
        Code::AlreadyExists => "already_exists",
        Code::PermissionDenied => "permission_denied",
        Code::Unauthenticated => "unauthenticated",
        Code::FailedPrecondition => "failed_precondition",
        Code::Aborted => "aborted",
        Code::Unavailable => "unavailable",
        Code::DeadlineExceeded => "deadline_exceeded",
        Code::ResourceExhausted => "resource_exhausted",
        Code::Internal => "internal",
        Code::Unimplemented => "unimplemented",
    }
}

/// The HTTP status of a Connect error (the protocol's table).
pub fn connect_http_status(c: Code) -> u16 {
    match c {
        Code::InvalidArgument | Code::FailedPrecondition => 400,
        Code::Unauthenticated => 401,
        Code::PermissionDenied => 403,
        Code::NotFound => 404,
        Code::AlreadyExists | Code::Aborted => 409,
        Code::ResourceExhausted => 429,
        Code::Internal => 500,
        Code::Unimplemented => 501,
        Code::Unavailable => 503,
        Code::DeadlineExceeded => 504,
    }
}

/// The code of a Connect error name; `None` for a name this build does not know.
pub fn code_from_connect(name: &str) -> Option<Code> {
    Some(match name {
        "invalid_argument" | "out_of_range" => Code::InvalidArgument,
        "not_found" => Code::NotFound,
        "already_exists" => Code::AlreadyExists,
        "permission_denied" => Code::PermissionDenied,
        "unauthenticated" => Code::Unauthenticated,
        "failed_precondition" => Code::FailedPrecondition,
        "aborted" => Code::Aborted,
        "unavailable" | "canceled" => Code::Unavailable,
        "deadline_exceeded" => Code::DeadlineExceeded,
        "resource_exhausted" => Code::ResourceExhausted,
        "unimplemented" => Code::Unimplemented,
        "internal" | "unknown" | "data_loss" => Code::Internal,
        _ => return None,
    })
}

/// The code of an HTTP status that carries no Connect error body (a proxy's answer), as the
/// Connect protocol maps it.
fn code_from_http(status: u16) -> Code {
    match status {
        400 => Code::Internal,
        401 => Code::Unauthenticated,
        403 => Code::PermissionDenied,
        404 => Code::Unimplemented,
        429 | 502..=504 => Code::Unavailable,
        _ => Code::Internal,
    }
}

/// A Connect error as JSON: `{"code", "message", "details": [{"type", "value"}]}` with the
/// ErrorInfo, base64 (standard alphabet, no padding, as connect-go writes it).
pub fn connect_error_body(e: &ApiError) -> Vec<u8> {
    use base64::Engine as _;
    let mut body = serde_json::json!({
        "code": code_to_connect(e.code),
        "message": e.message,
    });
    if let (Some(info), serde_json::Value::Object(m)) = (error_info(e), &mut body) {
        let value = base64::engine::general_purpose::STANDARD_NO_PAD.encode(info.encode_to_vec());
        m.insert(
            "details".into(),
            serde_json::json!([{"type": "google.rpc.ErrorInfo", "value": value}]),
        );
    }
    serde_json::to_vec(&body).unwrap_or_default()
}

/// A Connect error from its HTTP status and body. A body that is not a Connect error (a proxy's
/// page) gives the status's code and a short, inert excerpt.
pub fn error_from_connect(status: u16, body: &[u8]) -> ApiError {
    use base64::Engine as _;
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let code = parsed
        .as_ref()
        .and_then(|v| v.get("code"))
        .and_then(|c| c.as_str())
        .and_then(code_from_connect);
    let Some(code) = code else {
        let excerpt = ichor_model::inert::truncate(
            &ichor_model::inert::sanitize(&String::from_utf8_lossy(&body[..body.len().min(400)])),
            120,
        );
        return ApiError::new(code_from_http(status), format!("HTTP {status}: {excerpt}"));
    };
    let message = parsed
        .as_ref()
        .and_then(|v| v.get("message"))
        .and_then(|m| m.as_str())
        .unwrap_or("");
    let mut e = ApiError::new(code, ichor_model::inert::truncate(message, 2000));
    let details = parsed
        .as_ref()
        .and_then(|v| v.get("details"))
        .and_then(|d| d.as_array())
        .cloned()
        .unwrap_or_default();
    for d in details {
        let kind = d.get("type").and_then(|t| t.as_str()).unwrap_or("");
        let value = d.get("value").and_then(|t| t.as_str()).unwrap_or("");
        let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(value.trim_end_matches('='))
            .unwrap_or_default();
        match kind {
            "google.rpc.ErrorInfo" => {
                if let Ok(info) = tonic_types::pb::ErrorInfo::decode(bytes.as_slice()) {
                    apply_info(&mut e, &info.reason, &info.domain, info.metadata);
                }
            }
            "ichor.v1alpha1.ErrorDetail" => {
                if let Ok(d) = proto::ErrorDetail::decode(bytes.as_slice()) {
                    e.reason = Reason::parse(&d.reason);
                    e.params = params_from_proto(d.params);
                }
            }
            _ => {}
        }
    }
    e
}
