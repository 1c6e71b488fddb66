//! The refusals the reads share: an operation or a cluster that is not there (a NotFound from
//! Kubernetes becomes one naming it), and a cluster that exists but cannot be read.

use super::tolerant::Unreadable;
use ichor_model::{ApiError, Code, Reason};

pub(super) fn op_not_found(namespace: &str, name: &str, err: ApiError) -> ApiError {
    if err.code != Code::NotFound {
        return err;
    }
    operation_not_found(namespace, name)
}

/// OPERATION_NOT_FOUND, naming it.
pub(super) fn operation_not_found(namespace: &str, name: &str) -> ApiError {
    ApiError::said(
        Code::NotFound,
        Reason::OperationNotFound,
        &[("operation", name), ("namespace", namespace)],
    )
}

pub(super) fn cluster_not_found(namespace: &str, name: &str, err: ApiError) -> ApiError {
    if err.code != Code::NotFound {
        return err;
    }
    ApiError::said(
        Code::NotFound,
        Reason::ClusterNotFound,
        &[("cluster", name), ("namespace", namespace)],
    )
}

/// A cluster that exists but cannot be read: nothing can be planned or started on it.
pub(super) fn cluster_unreadable(u: &Unreadable) -> ApiError {
    let name = u.name();
    ApiError::said(
        Code::FailedPrecondition,
        Reason::ClusterUnreadable,
        &[("cluster", &name), ("detail", &u.why)],
    )
}
