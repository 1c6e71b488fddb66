//! The field manager every write of the service names (the `fieldManager` of a create, an
//! update and a patch), so the objects' `metadata.managedFields` say that ichor-tui wrote
//! them, the same on the in-process path and through `serve`, and not the Kubernetes client
//! library's User-Agent. A delete names no manager (Kubernetes takes none).

use kube::api::{PatchParams, PostParams};

/// The manager's name, as `kubectl get --show-managed-fields` shows it.
pub const FIELD_MANAGER: &str = "ichor-tui";

/// A create or an update by [`FIELD_MANAGER`] (a dry run when `dry_run`).
pub(crate) fn post(dry_run: bool) -> PostParams {
    PostParams {
        dry_run,
        field_manager: Some(FIELD_MANAGER.to_string()),
    }
}

/// A patch by [`FIELD_MANAGER`].
pub(crate) fn patch() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    }
}
