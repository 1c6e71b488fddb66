//! SetOperationPaused and DeleteOperation, bound to what the person confirmed: the operation is
//! read fresh, compared with the confirmation (uid, generation, finished or not, paused or not),
//! and written with the uid and the resourceVersion of that read as preconditions, so an object
//! replaced under the same name, or changed since, is never touched. A conflict reads again and
//! re-checks.

use super::access::Caller;
use super::conflicts::Conflicts;
use super::missing::op_not_found;
use super::record;
use super::tolerant::Unreadable;
use super::validate::{self, NameOf};
use super::{OperationService, convert};
use ichor_model::{ApiError, Code, Confirmed, HistoryAction, HistoryOutcome, Operation, Reason};
use ichor_resources::{TalosOperation, names};
use kube::api::{Api, DeleteParams, Patch, Preconditions};
use serde_json::json;

/// How the operation differs from what the person confirmed, if it does.
fn changed_since(op: &Operation, c: &Confirmed) -> Option<&'static str> {
    if op.uid != c.uid {
        Some("replaced")
    } else if op.phase.is_finished() != c.finished {
        Some(if c.finished { "unfinished" } else { "finished" })
    } else if op.paused != c.paused {
        Some(if c.paused { "resumed" } else { "paused" })
    } else if op.generation != c.generation {
        Some("spec")
    } else {
        None
    }
}

/// Refuses a write whose operation is not the one, or not in the state, the person confirmed.
pub(crate) fn check_confirmed(op: &Operation, c: Option<&Confirmed>) -> Result<(), ApiError> {
    let Some(change) = c.and_then(|c| changed_since(op, c)) else {
        return Ok(());
    };
    let paused = if op.paused { "true" } else { "false" };
    Err(ApiError::said(
        Code::FailedPrecondition,
        Reason::ChangedSinceConfirmed,
        &[
            ("operation", &op.name),
            ("change", change),
            ("phase", op.phase.as_str()),
            ("paused", paused),
        ],
    ))
}

impl OperationService {
    async fn read_for_write(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<(TalosOperation, Operation), ApiError> {
        let current = match self
            .get_tolerant::<TalosOperation>(caller, namespace, name, "reading the operation")
            .await?
        {
            Some(Ok(op)) => op,
            Some(Err(u)) => return Err(unreadable_refusal(&u)),
            None => {
                return Err(op_not_found(
                    namespace,
                    name,
                    ApiError::new(Code::NotFound, "not found"),
                ));
            }
        };
        let op = convert::operation(&current);
        Ok((current, op))
    }

    /// SetOperationPaused: pause or resume, recording who and when. Resuming an operation that
    /// a failed machine paused is refused: the controller would ignore it.
    pub async fn set_operation_paused(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
        paused: bool,
        confirmed: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        validate::namespace(namespace)?;
        validate::name(NameOf::Operation, name)?;
        validate::confirmed(confirmed)?;
        let api: Api<TalosOperation> = self.api(caller, Some(namespace));
        let what = if paused {
            "pausing the operation"
        } else {
            "resuming the operation"
        };
        let mut conflicts = Conflicts::new();
        while conflicts.another() {
            let (current, op) = self.read_for_write(caller, namespace, name).await?;
            check_confirmed(&op, confirmed)?;
            refuse_pause(&op, paused)?;
            if op.paused == paused {
                return Ok(op);
            }
            // Who asked, in the same request as the pause: one cannot land without the other.
            let action = match paused {
                true => HistoryAction::Pause,
                false => HistoryAction::Resume,
            };
            let entry = record::entry(action, &self.access.actor(caller), HistoryOutcome::Applied);
            let patch = json!({
                "metadata": {
                    "uid": current.metadata.uid,
                    "resourceVersion": current.metadata.resource_version,
                    "annotations": {
                        names::HISTORY: record::history_with(&current, entry.clone()),
                    }
                },
                "spec": {"paused": paused}
            });
            match self
                .access
                .call(
                    what,
                    api.patch(name, &crate::manager::patch(), &Patch::Merge(&patch)),
                )
                .await
            {
                Ok(o) => {
                    self.record_event(caller, &record::Subject::of(&o), &entry)
                        .await;
                    return Ok(convert::operation(&o));
                }
                // Changed (or replaced) between the read and the write: read it again.
                Err(e) => conflicts
                    .absorb(e)
                    .map_err(|e| op_not_found(namespace, name, e))?,
            }
        }
        Err(conflicts.exhausted(what))
    }

    /// DeleteOperation. A running operation stops after its current machine; nothing is rolled
    /// back.
    pub async fn delete_operation(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
        confirmed: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        validate::namespace(namespace)?;
        validate::name(NameOf::Operation, name)?;
        validate::confirmed(confirmed)?;
        let api: Api<TalosOperation> = self.api(caller, Some(namespace));
        let entry = record::entry(
            HistoryAction::Delete,
            &self.access.actor(caller),
            HistoryOutcome::Asked,
        );
        let mut conflicts = Conflicts::new();
        while conflicts.another() {
            let (current, op) = self.read_for_write(caller, namespace, name).await?;
            check_confirmed(&op, confirmed)?;
            let dp = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: current.metadata.uid.clone(),
                    resource_version: current.metadata.resource_version.clone(),
                }),
                ..Default::default()
            };
            match self
                .access
                .call("deleting the operation", api.delete(name, &dp))
                .await
            {
                Ok(_) => {
                    self.record_event(caller, &record::Subject::of(&current), &entry)
                        .await;
                    return Ok(());
                }
                Err(e) => conflicts
                    .absorb(e)
                    .map_err(|e| op_not_found(namespace, name, e))?,
            }
        }
        Err(conflicts.exhausted("deleting the operation"))
    }
}

/// A write to an operation that cannot be read: refused, since what it would change is unknown.
fn unreadable_refusal(u: &Unreadable) -> ApiError {
    let name = u.name();
    ApiError::said(
        Code::FailedPrecondition,
        Reason::OperationUnreadable,
        &[("operation", &name), ("detail", &u.why)],
    )
}

/// The refusals of a pause or resume that do not depend on the confirmation.
fn refuse_pause(op: &Operation, paused: bool) -> Result<(), ApiError> {
    let name = op.name.as_str();
    if op.phase.is_finished() {
        return Err(ApiError::said(
            Code::FailedPrecondition,
            Reason::OperationFinished,
            &[("operation", name), ("phase", op.phase.as_str())],
        ));
    }
    if !paused && op.paused_by_failure() {
        let machine = op
            .failed_machine()
            .map(|m| m.name.clone())
            .unwrap_or_default();
        let reason = op.failure_reason.clone().unwrap_or_default();
        return Err(ApiError::said(
            Code::FailedPrecondition,
            Reason::ResumeAfterFailure,
            &[
                ("operation", name),
                ("machine", &machine),
                ("reason", &reason),
            ],
        ));
    }
    Ok(())
}
