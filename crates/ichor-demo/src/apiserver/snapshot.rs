//! Lists from a snapshot, as kube-apiserver serves a continue token and
//! `resourceVersionMatch=Exact`: the objects as they were at a resourceVersion, rebuilt from
//! the objects now by undoing, newest first, every change the history kept after it (an
//! addition removed, a modification or a deletion put back as it was before). When the
//! history no longer reaches back that far (more than its 1,000 changes, or compacted), the
//! snapshot is gone: 410 Expired, as etcd's compaction answers.

use super::ApiState;
use super::responses::{Failure, fail};
use super::routing::Target;
use super::selector::LabelSelector;
use super::watch::ChangeType;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a snapshot that is gone is answered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gone {
    /// A continue token older than the history.
    Continue,
    /// `resourceVersionMatch=Exact` at a version older than the history.
    Exact(u64),
}

impl Gone {
    pub(crate) fn failure(self) -> Failure {
        let message = match self {
            Gone::Continue => "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with an inconsistent list may not be what you want.".to_string(),
            Gone::Exact(rv) => format!("too old resource version: {rv}"),
        };
        fail(410, "Expired", message)
    }
}

fn name_of(v: &Value) -> (String, String) {
    let m = &v["metadata"];
    let s = |k: &str| m[k].as_str().unwrap_or("").to_string();
    (s("namespace"), s("name"))
}

impl ApiState {
    /// The objects of `t` that `selector` matches as they were at resourceVersion `rv`, in
    /// the store's order.
    pub(crate) fn list_at(
        &self,
        t: &Target,
        selector: &LabelSelector,
        rv: u64,
    ) -> Result<Vec<Arc<Value>>, ()> {
        let changes = self
            .watches
            .changes_since(t.rt.plural, rv)
            .map_err(|_| ())?;
        if changes.is_empty() {
            let now = self.list_items(t, selector);
            return Ok(now.into_iter().cloned().collect());
        }
        let everything = LabelSelector::default();
        let mut at: BTreeMap<(String, String), Arc<Value>> = self
            .list_items(t, &everything)
            .into_iter()
            .map(|v| (name_of(v), v.clone()))
            .collect();
        for c in changes.iter().rev() {
            if t.namespace.as_ref().is_some_and(|ns| *ns != c.namespace) {
                continue;
            }
            let parse = |b: &[u8]| serde_json::from_slice::<Value>(b).ok();
            match (c.kind, c.prior.as_deref().and_then(parse)) {
                (ChangeType::Added, _) | (_, None) => {
                    if let Some(obj) = parse(&c.object) {
                        at.remove(&name_of(&obj));
                    }
                }
                (_, Some(prior)) => {
                    at.insert(name_of(&prior), Arc::new(prior));
                }
            }
        }
        Ok(at.into_values().filter(|v| selector.matches(v)).collect())
    }
}
