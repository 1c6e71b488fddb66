//! How the service reaches Kubernetes: as the caller for every read and write, and as itself
//! only for the tracking check. A caller with an identity is acted as either by impersonation
//! (the service's own credentials, with the caller's user, groups, uid and extras as
//! `Impersonate-*` headers: `serve`'s default, ADR 0058) or with the caller's own bearer token
//! (`serve --auth passthrough`: the service's own credentials are never sent with it).

use http::HeaderValue;
use ichor_model::{ApiError, Code, Reason};
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

/// The route recorded for the service run inside the dashboard with the user's kubeconfig.
pub const ROUTE_IN_PROCESS: &str = "in-process";

/// The route recorded for a caller of ichor-ui (`serve`): through the tunnel or to the server.
pub const ROUTE_ICHOR_UI: &str = "ichor-ui";

/// kube-apiserver's default request timeout (`--request-timeout`): a write it was sent may
/// still land this long after it was sent. What follows from it: how long a start whose create
/// got no answer is settled ([`KubeAccess::settle_window`]), how long a start claim can stand
/// (`CLAIM_SECONDS`), and how long a caller that lost a start's answer looks for it
/// ([`crate::START_OUTCOME_KNOWN_WITHIN`]).
pub const APISERVER_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Who is calling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    /// `None`: the in-process dashboard, acting with the user's own kubeconfig credentials.
    pub identity: Option<Identity>,
}

/// A verified user (from a TokenReview, or in passthrough a SelfSubjectReview made with their
/// own token).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub user: String,
    pub groups: Vec<String>,
    /// The uid the review named: impersonated as `Impersonate-Uid`.
    pub uid: Option<String>,
    /// The extras the review named, key → values: each impersonated as
    /// `Impersonate-Extra-KEY`.
    pub extra: BTreeMap<String, Vec<String>>,
    /// How the service acts as them.
    pub acting: Acting,
}

/// How the service acts as a caller with an identity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Acting {
    /// The service's own credentials, impersonating the identity.
    #[default]
    Impersonating,
    /// The caller's own bearer token, and nothing of the service's.
    OwnToken(BearerToken),
}

/// A caller's bearer token: never in a log line or an error (its Debug says only that it is
/// there).
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

impl BearerToken {
    pub fn new(token: &str) -> BearerToken {
        BearerToken(token.to_string())
    }

    fn header(&self) -> Option<HeaderValue> {
        let mut v = HeaderValue::from_str(&format!("Bearer {}", self.0)).ok()?;
        v.set_sensitive(true);
        Some(v)
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(withheld)")
    }
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
                ..Identity::default()
            }),
        }
    }
}

/// The service's clients.
#[derive(Clone)]
pub struct KubeAccess {
    base: kube::Client,
    /// A client to the same API with no credentials of its own, for callers acting with their
    /// own token ([`Acting::OwnToken`]); `None` unless [`KubeAccess::passing_tokens_through`].
    bare: Option<kube::Client>,
    /// The actor recorded for what a caller without an identity starts, pauses or resumes:
    /// in-process, the person the kubeconfig's credentials are (a SelfSubjectReview's answer,
    /// [`KubeAccess::acting_for`]), or the program's name when Kubernetes does not say.
    in_process_actor: String,
    /// The route recorded beside the actor of such a caller ([`ROUTE_IN_PROCESS`] unless set).
    in_process_route: &'static str,
    /// The deadline of one Kubernetes request.
    pub request_timeout: Duration,
    /// How long a write the API server got may still land after it was sent: the API server's
    /// own request timeout ([`APISERVER_REQUEST_TIMEOUT`] unless it runs with another). A start
    /// whose create got no answer is settled for this long.
    pub settle_window: Duration,
}

impl KubeAccess {
    /// `base` is the service's own client (the user's kubeconfig in-process, the server's
    /// identity for `serve`).
    pub fn new(base: kube::Client, in_process_actor: &str) -> KubeAccess {
        KubeAccess {
            base,
            bare: None,
            in_process_actor: in_process_actor.to_string(),
            in_process_route: ROUTE_IN_PROCESS,
            request_timeout: Duration::from_secs(20),
            settle_window: APISERVER_REQUEST_TIMEOUT,
        }
    }

    /// Callers acting with their own token ([`Acting::OwnToken`]) reach the API through `bare`,
    /// a client to the same API server that sends no credentials of its own (no token, no
    /// client certificate).
    pub fn passing_tokens_through(mut self, bare: kube::Client) -> KubeAccess {
        self.bare = Some(bare);
        self
    }

    /// The client that acts as the caller.
    pub(crate) fn as_caller(&self, caller: &Caller) -> kube::Client {
        match &caller.identity {
            None => self.base.clone(),
            Some(id) => match &id.acting {
                Acting::Impersonating => impersonating(&self.base, id),
                Acting::OwnToken(token) => self.with_own_token(token),
            },
        }
    }

    /// A client that sends `token` as the caller's own credentials and nothing of the
    /// service's (through the client [`KubeAccess::passing_tokens_through`] gave; without one,
    /// every request fails).
    pub fn with_own_token(&self, token: &BearerToken) -> kube::Client {
        with_token(self.bare.as_ref(), token, &self.base)
    }

    /// The service's own client: only for the tracking check, which returns nothing.
    pub fn own(&self) -> kube::Client {
        self.base.clone()
    }

    /// Records `person` as the actor of what a caller without an identity does (in-process:
    /// who the kubeconfig's credentials are).
    pub fn acting_for(mut self, person: &str) -> KubeAccess {
        self.in_process_actor =
            ichor_model::inert::truncate(&ichor_model::inert::sanitize(person), 253);
        self
    }

    /// The route recorded for a caller without an identity (serve's own, say).
    pub fn on_route(mut self, route: &'static str) -> KubeAccess {
        self.in_process_route = route;
        self
    }

    /// The actor recorded on what the caller starts, pauses or resumes.
    pub(crate) fn actor(&self, caller: &Caller) -> String {
        match &caller.identity {
            Some(id) => id.user.clone(),
            None => self.in_process_actor.clone(),
        }
    }

    /// The route the caller's writes came by, recorded beside the actor.
    pub(crate) fn route(&self, caller: &Caller) -> &'static str {
        match &caller.identity {
            Some(_) => ROUTE_ICHOR_UI,
            None => self.in_process_route,
        }
    }

    /// Runs one Kubernetes call under the request deadline, mapping its error.
    pub async fn call<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, ApiError> {
        self.call_answered(what, fut).await.map_err(|(e, _)| e)
    }

    /// Like [`KubeAccess::call`], and for an error, whether the API server answered that the
    /// request was not carried out: any answer but 500 and 504 (which say the outcome is not
    /// known) is one. No answer (refused, reset, our deadline) is not: a write may still land.
    pub(crate) async fn call_answered<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, (ApiError, bool)> {
        match tokio::time::timeout(self.request_timeout, fut).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                let answered = matches!(&e, kube::Error::Api(s) if !matches!(s.code, 500 | 504));
                Err((map_kube_error(what, e), answered))
            }
            Err(_) => Err((
                ApiError::refused(
                    Code::DeadlineExceeded,
                    Reason::Unavailable,
                    &[("what", what)],
                    format!(
                        "{what}: the Kubernetes API did not answer within {:.1} s",
                        self.request_timeout.as_secs_f64()
                    ),
                ),
                false,
            )),
        }
    }
}

/// A client whose every request carries the caller's impersonation headers: the user, the
/// groups (a service account's are the API server's to add: none are sent for one), the uid
/// and the extras. An identity that cannot be a header value impersonates nobody: the request
/// then fails authorisation rather than running as the server.
fn impersonating(base: &kube::Client, id: &Identity) -> kube::Client {
    let inner = base.clone();
    let headers = impersonation_headers(id);
    let svc = tower::service_fn(move |mut req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        for (name, value) in &headers {
            req.headers_mut().append(name.clone(), value.clone());
        }
        async move { inner.send(req).await }
    });
    kube::Client::new(svc, base.default_namespace().to_string())
}

/// Whether `user` is a service account's user name (`system:serviceaccount:NS:NAME`): one
/// impersonated without groups (the API server adds a service account's own).
pub fn is_service_account(user: &str) -> bool {
    user.strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
        .is_some_and(|(ns, name)| !ns.is_empty() && !name.is_empty())
}

/// Characters of an extra's key that a header name cannot carry: all but RFC 7230's `tchar`
/// (and `%`, which escapes), as kube-apiserver unescapes `Impersonate-Extra-` keys.
const NOT_IN_HEADER_NAME: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'*')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// The `Impersonate-*` headers that act as `id`; when a part of it cannot be a header (a
/// name, group, uid or extra with a control character), `system:anonymous` alone: the
/// requests then fail authorisation, never running as less than the caller was told to be.
pub(crate) fn impersonation_headers(id: &Identity) -> Vec<(http::HeaderName, HeaderValue)> {
    let user = |name: HeaderValue| (http::HeaderName::from_static("impersonate-user"), name);
    all_carried(id).unwrap_or_else(|| vec![user(HeaderValue::from_static("system:anonymous"))])
}

fn all_carried(id: &Identity) -> Option<Vec<(http::HeaderName, HeaderValue)>> {
    use http::HeaderName;
    let value = |s: &str| HeaderValue::from_str(s).ok();
    let mut out = vec![(
        HeaderName::from_static("impersonate-user"),
        value(&id.user)?,
    )];
    if !is_service_account(&id.user) {
        for g in id
            .groups
            .iter()
            .filter(|g| g.as_str() != "system:authenticated")
        {
            out.push((HeaderName::from_static("impersonate-group"), value(g)?));
        }
    }
    if let Some(uid) = id.uid.as_deref().filter(|u| !u.is_empty()) {
        out.push((HeaderName::from_static("impersonate-uid"), value(uid)?));
    }
    for (key, values) in &id.extra {
        let escaped = percent_encoding::utf8_percent_encode(key, NOT_IN_HEADER_NAME);
        let name = HeaderName::try_from(format!("impersonate-extra-{escaped}")).ok()?;
        for v in values {
            out.push((name.clone(), value(v)?));
        }
    }
    Some(out)
}

/// A client that sends `token` as the caller's own credentials through `bare`. Without a bare
/// client (the service was not set up to pass tokens through) every request fails: it is
/// never sent with the service's own credentials instead.
fn with_token(
    bare: Option<&kube::Client>,
    token: &BearerToken,
    base: &kube::Client,
) -> kube::Client {
    let namespace = base.default_namespace().to_string();
    let (Some(bare), Some(header)) = (bare.cloned(), token.header()) else {
        let svc = tower::service_fn(|_: http::Request<kube::client::Body>| async {
            Err::<http::Response<kube::client::Body>, _>(std::io::Error::other(
                "the server is not set up to send callers' own tokens (serve --auth passthrough)",
            ))
        });
        return kube::Client::new(svc, namespace);
    };
    let svc = tower::service_fn(move |mut req: http::Request<kube::client::Body>| {
        let bare = bare.clone();
        req.headers_mut()
            .insert(http::header::AUTHORIZATION, header.clone());
        async move { bare.send(req).await }
    });
    kube::Client::new(svc, namespace)
}

/// The most characters of the API server's words (or a library's) an error keeps: they may
/// quote the request, or the object.
pub(crate) const MAX_DETAIL: usize = 200;

/// Text from outside for an error: one line, inert, at most [`MAX_DETAIL`] characters.
fn bounded(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    ichor_model::inert::truncate(&ichor_model::inert::sanitize(&one_line), MAX_DETAIL)
}

fn with_detail(code: Code, reason: Reason, what: &str, detail: &str) -> ApiError {
    let detail = bounded(detail);
    let mut err = ApiError::new(code, format!("{what}: {detail}"));
    err.reason = Some(reason);
    err.params.insert("what".into(), what.to_string());
    err.params.insert("detail".into(), detail);
    err
}

/// Maps a kube error to the one error type, keeping the apiserver's words (bounded). Only a
/// request that got no answer (the connection, I/O, a timeout) is Unavailable and so retried;
/// one that could not even be built, or whose answer could not be read, is not.
pub(crate) fn map_kube_error(what: &str, e: kube::Error) -> ApiError {
    match e {
        kube::Error::Api(s) => {
            let (code, reason) = match (s.code, s.reason.as_str()) {
                (404, _) => (Code::NotFound, None),
                (403, _) => (Code::PermissionDenied, Some(Reason::PermissionDenied)),
                (401, _) => (Code::Unauthenticated, Some(Reason::Unauthenticated)),
                (409, "AlreadyExists") => (Code::AlreadyExists, None),
                (409, _) => (Code::Aborted, Some(Reason::Conflict)),
                // A continue token whose snapshot is compacted: the list moved on, as a
                // conflicting write's object did; read again from the start.
                (410, _) => (Code::Aborted, Some(Reason::Conflict)),
                (400 | 415 | 422, _) => (Code::InvalidArgument, Some(Reason::Invalid)),
                (413, _) => (Code::ResourceExhausted, Some(Reason::Invalid)),
                // The API server's own request timeout: the write may still complete.
                (504, _) => (Code::DeadlineExceeded, Some(Reason::Unavailable)),
                (429 | 500 | 502 | 503, _) => (Code::Unavailable, Some(Reason::Unavailable)),
                _ => (Code::Internal, Some(Reason::Internal)),
            };
            let mut err = with_detail(code, Reason::Internal, what, &s.message);
            err.reason = reason;
            err
        }
        // No answer at all: refused, reset, closed, timed out. Worth retrying.
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => {
            with_detail(Code::Unavailable, Reason::Unavailable, what, &e.to_string())
        }
        // The request could not be built from what was asked: asking again changes nothing.
        kube::Error::BuildRequest(_) | kube::Error::HttpError(_) => {
            with_detail(Code::InvalidArgument, Reason::Invalid, what, &e.to_string())
        }
        kube::Error::Auth(_) => with_detail(
            Code::Unauthenticated,
            Reason::Unauthenticated,
            what,
            &e.to_string(),
        ),
        kube::Error::SerdeError(e) => with_detail(
            Code::Internal,
            Reason::Internal,
            what,
            &format!("decoding the answer: {e}"),
        ),
        // The answer could not be read, or the client is set up wrong: not transient.
        other => with_detail(Code::Internal, Reason::Internal, what, &other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impersonation_carries_the_uid_and_the_extras_and_a_service_accounts_groups_are_the_apis() {
        let id = Identity {
            user: "alice".into(),
            groups: vec!["team".into(), "system:authenticated".into()],
            uid: Some("u-1".into()),
            extra: BTreeMap::from([(
                "authentication.kubernetes.io/pod-name".to_string(),
                vec!["ci-7".to_string()],
            )]),
            acting: Acting::Impersonating,
        };
        let said: Vec<(String, String)> = impersonation_headers(&id)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
            .collect();
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            said,
            [
                pair("impersonate-user", "alice"),
                pair("impersonate-group", "team"),
                pair("impersonate-uid", "u-1"),
                pair(
                    // A header name is lower case: kube-apiserver unescapes `%2f` as `%2F`.
                    "impersonate-extra-authentication.kubernetes.io%2fpod-name",
                    "ci-7"
                ),
            ]
        );
        let account = Identity {
            user: "system:serviceaccount:ci:deployer".into(),
            groups: vec!["system:serviceaccounts".into()],
            ..Identity::default()
        };
        let said = impersonation_headers(&account);
        assert_eq!(said.len(), 1, "no groups for a service account: {said:?}");
        let unsayable = Identity {
            extra: BTreeMap::from([("k".to_string(), vec!["two\nlines".to_string()])]),
            ..id
        };
        let said = impersonation_headers(&unsayable);
        assert_eq!(said.len(), 1);
        assert_eq!(said[0].1, "system:anonymous");
        assert_eq!(
            format!("{:?}", BearerToken::new("secret")),
            "BearerToken(withheld)"
        );
    }

    #[test]
    fn only_unanswered_requests_are_transient() {
        let build = kube::core::Request::new("/apis/ichor.maesh.dev/v1alpha1/talosoperations")
            .get("", &Default::default())
            .unwrap_err();
        let e = map_kube_error("reading the operation", kube::Error::BuildRequest(build));
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(!e.code.is_transient());
        let serde = serde_json::from_str::<u8>("\"x\"").unwrap_err();
        let e = map_kube_error("listing", kube::Error::SerdeError(serde));
        assert_eq!(e.code, Code::Internal);
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let e = map_kube_error("listing", kube::Error::Service(Box::new(io)));
        assert_eq!(e.code, Code::Unavailable);
        let e = map_kube_error("listing", kube::Error::LinesCodecMaxLineLengthExceeded);
        assert_eq!(e.code, Code::Internal);
        let status = kube::core::Status::failure(&"x\n".repeat(10_000), "Invalid").with_code(422);
        let e = map_kube_error("creating", kube::Error::Api(status.boxed()));
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(
            e.param("detail")
                .is_some_and(|d| d.chars().count() <= MAX_DETAIL)
        );
        assert!(!e.message.contains('\n'));
    }
}
