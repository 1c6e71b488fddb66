//! A request id names one request. The service records what each id was sent for (namespace,
//! cluster, kind, target, caller) once a start begins writing for it (its claim), and the
//! operation a start creates carries the same (its namespace, `spec.cluster`, `spec.kind`, the
//! target and actor annotations): the same id sent for anything else is refused, never answered
//! with the other request's operation. A start refused before it wrote anything binds nothing:
//! the id is free for the request it was meant for (the admin's after a viewer's, the corrected
//! one after a refused one).

use super::super::convert;
use ichor_model::{ApiError, Code, Reason};
use ichor_resources::{TalosOperation, names};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// How many request ids a process remembers (the oldest are forgotten first); an operation
/// carries its own binding for as long as it exists.
const REMEMBERED: usize = 4096;

/// What a request id was sent for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Binding {
    pub(crate) namespace: String,
    /// The cluster as the request named it (`None`: the namespace's only one).
    pub(crate) cluster: Option<String>,
    pub(crate) kind: String,
    pub(crate) target: String,
    pub(crate) actor: String,
}

impl Binding {
    /// Whether `op`, found carrying the request id, is this request's operation.
    pub(crate) fn made(&self, op: &TalosOperation, cluster: &str) -> bool {
        let ann = |k: &str| {
            op.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(k))
                .map(String::as_str)
                .unwrap_or_default()
        };
        op.metadata.namespace.as_deref() == Some(self.namespace.as_str())
            && op.spec.cluster == cluster
            && self.cluster.as_deref().is_none_or(|c| c == cluster)
            && op.spec.kind == self.kind
            && ann(convert::TARGET) == self.target
            && ann(names::ACTOR) == self.actor
    }
}

/// The request ids this process has seen, bounded.
#[derive(Default)]
pub(crate) struct RequestLog {
    seen: Mutex<(HashMap<String, Binding>, VecDeque<String>)>,
}

impl RequestLog {
    /// Refuses `id` when it is bound to something else; binds nothing.
    pub(super) fn check(&self, id: &str, binding: &Binding) -> Result<(), ApiError> {
        let guard = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        match guard.0.get(id) {
            Some(b) if b != binding => Err(reused(id)),
            _ => Ok(()),
        }
    }

    /// Records `id` for `binding`, or refuses it when it was sent for something else.
    pub(super) fn bind(&self, id: &str, binding: &Binding) -> Result<(), ApiError> {
        let mut guard = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let (bound, order) = &mut *guard;
        match bound.get(id) {
            Some(b) if b == binding => Ok(()),
            Some(_) => Err(reused(id)),
            None => {
                if order.len() >= REMEMBERED
                    && let Some(oldest) = order.pop_front()
                {
                    bound.remove(&oldest);
                }
                bound.insert(id.to_string(), binding.clone());
                order.push_back(id.to_string());
                Ok(())
            }
        }
    }
}

/// REQUEST_ID_REUSED: the id names another request. What that request was is not said: the
/// caller may not be the one who sent it.
pub(super) fn reused(id: &str) -> ApiError {
    ApiError::said(
        Code::InvalidArgument,
        Reason::RequestIdReused,
        &[("request_id", id)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(cluster: &str) -> Binding {
        Binding {
            namespace: "default".into(),
            cluster: Some(cluster.into()),
            kind: "talos".into(),
            target: "v1.9.3".into(),
            actor: "alice".into(),
        }
    }

    #[test]
    fn a_check_binds_nothing() {
        let log = RequestLog::default();
        assert!(log.check("r-1", &binding("c1")).is_ok());
        assert!(
            log.check("r-1", &binding("c2")).is_ok(),
            "nothing was bound"
        );
        log.bind("r-1", &binding("c1")).unwrap();
        assert!(log.check("r-1", &binding("c1")).is_ok());
        let e = log.check("r-1", &binding("c2")).unwrap_err();
        assert_eq!(e.reason, Some(Reason::RequestIdReused));
    }

    #[test]
    fn an_id_is_bound_to_its_first_request_and_the_log_is_bounded() {
        let log = RequestLog::default();
        assert!(log.bind("r-1", &binding("c1")).is_ok());
        assert!(log.bind("r-1", &binding("c1")).is_ok(), "a repeat");
        let e = log.bind("r-1", &binding("c2")).unwrap_err();
        assert_eq!(e.reason, Some(Reason::RequestIdReused));
        assert_eq!(e.code, Code::InvalidArgument);
        for i in 0..REMEMBERED {
            log.bind(&format!("x-{i}"), &binding("c1")).unwrap();
        }
        assert!(log.bind("r-1", &binding("c2")).is_ok(), "forgotten");
        let guard = log.seen.lock().unwrap();
        assert!(guard.0.len() <= REMEMBERED && guard.1.len() <= REMEMBERED);
    }
}
