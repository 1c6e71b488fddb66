//! Finalizers and graceful deletion, as kube-apiserver does them: a delete of an object with
//! finalizers sets `metadata.deletionTimestamp` (and `deletionGracePeriodSeconds: 0`) and
//! keeps it, a MODIFIED change; each finalizer's owner removes its entry, and the update that
//! removes the last one deletes the object, a DELETED change. While it is being deleted no
//! finalizer may be added, and a second delete changes nothing.

use super::ApiState;
use super::auth::Identity;
use super::responses::Failure;
use super::routing::Target;
use super::store::now_rfc3339;
use super::structural::Cause;
use super::validation::invalid_causes;
use serde_json::{Value, json};

/// The finalizers an object names.
fn finalizers(obj: &Value) -> Vec<&str> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Whether an object names any finalizer.
pub(crate) fn has_finalizers(obj: &Value) -> bool {
    !finalizers(obj).is_empty()
}

/// Whether a delete has been asked for and finalizers hold it.
pub(crate) fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// 422 if an update adds a finalizer to an object being deleted.
pub(crate) fn check_no_new_finalizers(
    t: &Target,
    name: &str,
    old: &Value,
    new: &Value,
) -> Result<(), Failure> {
    if !is_deleting(old) {
        return Ok(());
    }
    let before = finalizers(old);
    let added: Vec<&str> = finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    let cause = Cause {
        reason: "FieldValueForbidden",
        field: "metadata.finalizers".into(),
        message: format!(
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {added:?}"
        ),
    };
    Err(invalid_causes(t, name, &[cause]))
}

impl ApiState {
    /// A delete that finalizers hold: the object marked as being deleted (stored unless a dry
    /// run), or as it is when it already was. `None` when nothing holds it.
    pub(crate) fn hold_delete(
        &mut self,
        t: &Target,
        name: &str,
        obj: &Value,
        who: &Identity,
        dry_run: bool,
    ) -> Option<Value> {
        if finalizers(obj).is_empty() {
            return None;
        }
        if is_deleting(obj) {
            return Some(obj.clone());
        }
        let mut marked = obj.clone();
        if let Some(meta) = marked.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        if dry_run {
            return Some(marked);
        }
        Some(self.commit("delete", t, name, marked, who))
    }
}
