//! The spec write of a start, and the kube-proxy confirmation that goes with it and must never
//! outlive it; what the answers say when a start writes the spec and then fails.

use super::super::OperationService;
use super::super::access::Caller;
use super::super::conflicts::Conflicts;
use super::super::world::World;
use ichor_model::OperationKind;
use ichor_model::{ApiError, Code, Reason, SpecChange, Warning};
use ichor_resources::{IchorInstallation, TalosCluster, names};
use kube::api::Api;
use std::collections::BTreeMap;

impl OperationService {
    /// The spec write of a start, as the caller, on the object as it was read for the refusals:
    /// its resourceVersion goes with it, so a change since then is a conflict, not overwritten.
    pub(super) async fn write_spec(
        &self,
        caller: &Caller,
        ns: &str,
        kind: OperationKind,
        change: &SpecChange,
        world: &World,
        dry_run: bool,
    ) -> Result<(), ApiError> {
        let pp = crate::manager::post(dry_run);
        let dry = if dry_run { " (dry run)" } else { "" };
        if kind == OperationKind::Ichor {
            let api: Api<IchorInstallation> = self.api(caller, Some(ns));
            let mut inst = world
                .installation
                .clone()
                .ok_or_else(|| ApiError::new(Code::NotFound, "the ichor installation is gone"))?;
            inst.spec.version = change.to.clone();
            return self
                .access
                .call(
                    &format!("writing IchorInstallation spec.version{dry}"),
                    api.replace(&change.resource_name, &pp, &inst),
                )
                .await
                .map(drop);
        }
        let api: Api<TalosCluster> = self.api(caller, Some(ns));
        let mut c = world.cluster.clone();
        match kind {
            OperationKind::Talos => c.spec.talos_version = change.to.clone(),
            OperationKind::Kubernetes => c.spec.kubernetes_version = change.to.clone(),
            OperationKind::Cni => {
                c.spec.cni.kube_proxy = change.to.clone();
                // The user's confirmation, for this one write (ADR 0013, 0066).
                c.metadata
                    .annotations
                    .get_or_insert_with(BTreeMap::new)
                    .insert(
                        names::CONFIRM_KUBE_PROXY_SWITCH.to_string(),
                        "true".to_string(),
                    );
            }
            _ => return Ok(()),
        }
        self.access
            .call(
                &format!("writing TalosCluster {}{dry}", change.field),
                api.replace(&change.resource_name, &pp, &c),
            )
            .await
            .map(drop)
    }

    /// Removes the kube-proxy confirmation annotation, retried on a conflict.
    pub(super) async fn remove_confirmation(
        &self,
        caller: &Caller,
        ns: &str,
        cluster: &str,
    ) -> Result<(), ApiError> {
        let api: Api<TalosCluster> = self.api(caller, Some(ns));
        let what = "removing the kube-proxy confirmation annotation";
        let mut conflicts = Conflicts::new();
        while conflicts.another() {
            let mut c = self
                .access
                .call("reading the cluster", api.get(cluster))
                .await?;
            let Some(a) = c.metadata.annotations.as_mut() else {
                return Ok(());
            };
            if a.remove(names::CONFIRM_KUBE_PROXY_SWITCH).is_none() {
                return Ok(());
            }
            match self
                .access
                .call(what, api.replace(cluster, &crate::manager::post(false), &c))
                .await
            {
                Ok(_) => return Ok(()),
                Err(e) => conflicts.absorb(e)?,
            }
        }
        Err(conflicts.exhausted(what))
    }
}

/// The warning of a start whose confirmation annotation could not be removed.
pub(super) fn annotation_left(cluster: &str, e: &ApiError) -> Warning {
    Warning::said(
        Reason::AnnotationNotRemoved,
        &[
            ("annotation", names::CONFIRM_KUBE_PROXY_SWITCH),
            ("cluster", cluster),
            ("detail", &e.message),
        ],
    )
}

/// The warning of a start that took back a kube-proxy confirmation an earlier start left.
pub(super) fn confirmation_removed(cluster: &str) -> Warning {
    Warning::said(
        Reason::ConfirmationRemoved,
        &[
            ("annotation", names::CONFIRM_KUBE_PROXY_SWITCH),
            ("cluster", cluster),
        ],
    )
}

/// The spec was written and the create failed: say what was written, what is left (the
/// confirmation annotation: `Some(true)` still there, `Some(false)` removed), and that a rerun
/// finishes.
pub(super) fn half_failure(
    e: ApiError,
    change: &SpecChange,
    annotation_left: Option<bool>,
) -> ApiError {
    let annotation = match annotation_left {
        None => "none",
        Some(false) => "removed",
        Some(true) => "left",
    };
    // An answer, not a lost one: the outcome is known, and only the person starts again.
    ApiError::said(
        Code::Aborted,
        Reason::SpecWrittenCreateFailed,
        &[
            ("resource_kind", &change.resource_kind),
            ("resource_name", &change.resource_name),
            ("field", &change.field),
            ("current", &change.from),
            ("target", &change.to),
            ("detail", &e.message),
            ("annotation", annotation),
        ],
    )
}
