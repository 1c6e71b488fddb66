//! How the service reaches Kubernetes: as the caller (impersonated when the call carries an
//! identity) for every read and write, and as itself only for the tracking check.

use crate::model::{ApiError, Code, Reason};
use http::HeaderValue;
use std::future::Future;
use std::time::Duration;

/// Who is calling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    /// `None`: the in-process dashboard, acting with the user's own kubeconfig credentials.
    pub identity: Option<Identity>,
}

/// A verified user (from a TokenReview).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub user: String,
    pub groups: Vec<String>,
}

impl Caller {
    /// The in-process caller.
    pub fn in_process() -> Caller {
        Caller { identity: None }
    }

    /// A caller that the service acts as through impersonation.
    pub fn user(user: &str, groups: &[&str]) -> Caller {
        Caller {
            identity: Some(Identity {
                user: user.to_string(),
                groups: groups.iter().map(|g| g.to_string()).collect(),
            }),
        }
    }
}

/// The service's clients.
#[derive(Clone)]
pub struct KubeAccess {
    base: kube::Client,
    /// The actor recorded for in-process starts.
    in_process_actor: String,
    /// The deadline of one Kubernetes request.
    pub request_timeout: Duration,
}

impl KubeAccess {
    /// `base` is the service's own client (the user's kubeconfig in-process, the server's
    /// identity for `serve`).
    pub fn new(base: kube::Client, in_process_actor: &str) -> KubeAccess {
        KubeAccess {
            base,
            in_process_actor: in_process_actor.to_string(),
            request_timeout: Duration::from_secs(20),
        }
    }

    /// The client that acts as the caller.
    pub fn as_caller(&self, caller: &Caller) -> kube::Client {
        match &caller.identity {
            None => self.base.clone(),
            Some(id) => impersonating(&self.base, id),
        }
    }

    /// The service's own client: only for the tracking check, which returns nothing.
    pub fn own(&self) -> kube::Client {
        self.base.clone()
    }

    /// The actor recorded on what the caller starts.
    pub fn actor(&self, caller: &Caller) -> String {
        match &caller.identity {
            Some(id) => id.user.clone(),
            None => self.in_process_actor.clone(),
        }
    }

    /// Runs one Kubernetes call under the request deadline, mapping its error.
    pub async fn call<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, ApiError> {
        match tokio::time::timeout(self.request_timeout, fut).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(map_kube_error(what, e)),
            Err(_) => Err(ApiError::refused(
                Code::DeadlineExceeded,
                Reason::Unavailable,
                &[("what", what)],
                format!(
                    "{what}: the Kubernetes API did not answer within {} s",
                    self.request_timeout.as_secs()
                ),
            )),
        }
    }
}

/// A client whose every request carries the caller's impersonation headers.
fn impersonating(base: &kube::Client, id: &Identity) -> kube::Client {
    let inner = base.clone();
    let user = HeaderValue::from_str(&id.user).ok();
    let groups: Vec<HeaderValue> = id
        .groups
        .iter()
        .filter(|g| g.as_str() != "system:authenticated")
        .filter_map(|g| HeaderValue::from_str(g).ok())
        .collect();
    let svc = tower::service_fn(move |mut req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        let headers = req.headers_mut();
        // An identity that cannot be a header value impersonates nobody: the request then
        // fails authorisation rather than running as the server.
        headers.insert(
            "impersonate-user",
            user.clone()
                .unwrap_or_else(|| HeaderValue::from_static("system:anonymous")),
        );
        for g in &groups {
            headers.append("impersonate-group", g.clone());
        }
        async move { inner.send(req).await }
    });
    kube::Client::new(svc, base.default_namespace().to_string())
}

/// Maps a kube error to the one error type, keeping the apiserver's words.
pub fn map_kube_error(what: &str, e: kube::Error) -> ApiError {
    match e {
        kube::Error::Api(s) => {
            let (code, reason) = match (s.code, s.reason.as_str()) {
                (404, _) => (Code::NotFound, None),
                (403, _) => (Code::PermissionDenied, Some(Reason::PermissionDenied)),
                (401, _) => (Code::Unauthenticated, Some(Reason::Unauthenticated)),
                (409, "AlreadyExists") => (Code::AlreadyExists, None),
                (409, _) => (Code::Aborted, Some(Reason::Conflict)),
                (400 | 415 | 422, _) => (Code::InvalidArgument, Some(Reason::Invalid)),
                (429 | 500 | 502 | 503 | 504, _) => (Code::Unavailable, Some(Reason::Unavailable)),
                _ => (Code::Internal, Some(Reason::Internal)),
            };
            let mut err = ApiError::new(code, format!("{what}: {}", s.message));
            err.reason = reason;
            err.params.insert("what".into(), what.to_string());
            err.params.insert("detail".into(), s.message.clone());
            err
        }
        kube::Error::SerdeError(e) => {
            ApiError::new(Code::Internal, format!("{what}: decoding the answer: {e}"))
        }
        other => {
            // No answer at all: refused, reset, closed, timed out. Worth retrying.
            let mut err = ApiError::new(Code::Unavailable, format!("{what}: {other}"));
            err.reason = Some(Reason::Unavailable);
            err.params.insert("what".into(), what.to_string());
            err.params.insert("detail".into(), other.to_string());
            err
        }
    }
}
