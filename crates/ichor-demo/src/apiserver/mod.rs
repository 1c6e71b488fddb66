//! An in-memory Kubernetes API for the ichor resources. `kube::Client` talks to it through
//! `Client::new(service, namespace)`, so every test runs the real request building, query
//! parameters and response decoding; `ichor-tui demo-cluster` serves it over HTTP for kubectl.
//!
//! By concern: `routing` turns a request into a verb on a target, authenticated by `authn`
//! (bearer tokens, impersonation, the reviews) and authorised by the RBAC rules of [`auth`];
//! `store` carries the verb out on the objects after `validation` (the CRD schemas) and
//! `admission` (the ValidatingAdmissionPolicy); `responses` shapes the answers; `discovery`
//! and `table` serve what kubectl reads; `watch` streams changes from each resource's history
//! (every stored change goes through `ApiState::put_object` and `take_object`); `events`
//! converts Events for `events.k8s.io`; `faults` and `write_log` are for tests, [`requests`]
//! (what each client costs) for tests and benchmarks; [`server`] serves it all over HTTP.

mod admission;
pub mod auth;
mod authn;
mod cluster;
mod crds;
mod discovery;
mod events;
mod faults;
mod field_validation;
mod fields;
mod finalizers;
mod kinds;
mod managed;
mod openapi;
mod paging;
mod patch;
mod pods;
mod portforward;
mod protobuf;
pub mod rbac;
pub mod requests;
mod responses;
mod routing;
mod schemas;
mod selector;
pub mod server;
mod snapshot;
mod store;
mod structural;
mod table;
mod validation;
mod watch;
mod write_log;

#[cfg(feature = "faults")]
pub use faults::{Fault, FaultRule};
pub use watch::HistorySize;
#[cfg(feature = "faults")]
pub use write_log::WriteRecord;

use self::auth::AuthConfig;
use self::faults::Faults;
use self::responses::{Body, Reply, full, with_status};
use self::store::Key;
use self::write_log::WriteLog;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

/// Everything behind the lock: the objects and their counters, the users and rules, and the
/// tests' instruments.
#[derive(Default)]
struct ApiState {
    /// Shared, so a list takes its items under the lock and is encoded after it is let go.
    objects: BTreeMap<Key, Arc<Value>>,
    resource_version: u64,
    uid: u64,
    auth: AuthConfig,
    faults: Faults,
    write_log: WriteLog,
    /// Requests served (every verb, refused ones included).
    requests: u64,
    /// Authenticated requests by user (after impersonation), verb and resource: what each
    /// client costs.
    requests_by: requests::Requests,
    /// The impersonations allowed, each once.
    impersonations: Impersonations,
    /// Requests received and not yet answered, or (a late fault's) not yet carried out.
    in_hand: usize,
    forwards: portforward::Forwards,
    watches: watch::Hub,
    /// The write under way's `fieldValidation` directive and the warnings it has for its
    /// response (the lock is held for the whole request).
    field_validation: field_validation::FieldValidation,
    warnings: Vec<String>,
}

/// The impersonations the API allowed, each once (at most [`Impersonations::MAX`]).
#[derive(Default)]
struct Impersonations(std::collections::BTreeSet<auth::Impersonation>);

impl Impersonations {
    const MAX: usize = 1024;

    fn see(&mut self, i: auth::Impersonation) {
        if self.0.len() < Impersonations::MAX {
            self.0.insert(i);
        }
    }
}

/// The embedded API: cheap to clone, every clone sees the same objects.
#[derive(Clone)]
pub struct EmbeddedApi {
    state: Arc<Mutex<ApiState>>,
}

impl Default for EmbeddedApi {
    /// The demo cluster's users and rules, and no objects.
    fn default() -> Self {
        EmbeddedApi::new(AuthConfig::demo())
    }
}

/// The error type of the embedded API's tower Service.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl EmbeddedApi {
    /// An empty API with the given users and rules.
    fn new(auth: AuthConfig) -> EmbeddedApi {
        let mut state = ApiState {
            auth,
            ..ApiState::default()
        };
        state.ensure_system_namespaces();
        state.ensure_crds();
        EmbeddedApi {
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ApiState> {
        // A poisoned lock means a test panicked mid-request; the data is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many requests it has served (for measures of what a client costs the API server).
    /// A watch counts once, when it starts; [`EmbeddedApi::watch_count`] counts the open ones.
    pub fn request_count(&self) -> u64 {
        self.lock().requests
    }

    /// How many requests it has received and not yet answered, or (a late fault's) not yet
    /// carried out: a test waits for none before it asserts that nothing more was written.
    pub fn requests_in_hand(&self) -> usize {
        self.lock().in_hand
    }

    /// A kube client that authenticates with `token` (see [`auth::users`]).
    pub fn client(&self, token: &str) -> kube::Client {
        kube::Client::new(
            BearerService {
                api: self.clone(),
                header: Some(format!("Bearer {token}")),
            },
            "default",
        )
    }

    /// A kube client with no credentials of its own: each request carries whatever
    /// `Authorization` its caller gave it (for `serve --auth passthrough`), or none.
    pub fn bare_client(&self) -> kube::Client {
        kube::Client::new(
            BearerService {
                api: self.clone(),
                header: None,
            },
            "default",
        )
    }

    /// Serves one request with its body read; a reset fault is an I/O error.
    pub(crate) async fn serve(
        &self,
        req: http::Request<Bytes>,
    ) -> Result<http::Response<Body>, BoxError> {
        self.lock().requests += 1;
        let _in_hand = InHand::new(self);
        if let Some(faulted) = self.inject_fault(&req).await {
            return faulted.map(|resp| resp.map(|b| b.map_err(|e| match e {}).boxed_unsync()));
        }
        // A read from a version not reached yet waits a little for it (see `watch::fresh`).
        let query = routing::Query::parse(req.uri().query());
        if let Some(rv) = watch::required(req.method(), &query)
            && rv > self.lock().resource_version
        {
            self.wait_until_fresh(rv).await;
        }
        Ok(match self.answer(&req) {
            Ok((code, Reply::List(list))) => encode_list(code, list).await,
            answer => respond(answer),
        })
    }
}

/// A list's response, encoded on a thread of its own when it is large (10,000 objects take
/// ~70 ms to encode): the runtime's threads stay free for the writes that arrive meanwhile.
async fn encode_list(code: u16, list: responses::ListOut) -> http::Response<Body> {
    const ON_A_THREAD_FROM: usize = 256;
    let large = list.items.len() >= ON_A_THREAD_FROM;
    let encode = move || serde_json::to_vec(&list).map_err(|e| e.to_string());
    let bytes = match large {
        true => tokio::task::spawn_blocking(encode)
            .await
            .unwrap_or_else(|e| Err(e.to_string())),
        false => encode(),
    };
    list_response(code, bytes)
}

fn list_response(code: u16, bytes: Result<Vec<u8>, String>) -> http::Response<Body> {
    match bytes {
        Ok(bytes) => with_status(code, full(Bytes::from(bytes))),
        Err(e) => {
            let (code, body) =
                responses::fail(500, "InternalError", format!("encoding the list: {e}"));
            failed(code, &body)
        }
    }
}

/// The HTTP response to an answer (a watch's a stream) or to its failure.
fn respond(answer: Result<(u16, Reply), responses::Failure>) -> http::Response<Body> {
    let (code, bytes) = match answer {
        Err((code, body)) => return failed(code, &body),
        Ok((code, Reply::Json(body))) => (code, serde_json::to_vec(&body).unwrap_or_default()),
        Ok((code, Reply::List(list))) => {
            return list_response(code, serde_json::to_vec(&list).map_err(|e| e.to_string()));
        }
        Ok((code, Reply::Warned(warnings, reply))) => {
            let mut resp = with_status(
                code,
                full(Bytes::from(serde_json::to_vec(&reply).unwrap_or_default())),
            );
            for w in warnings {
                let text = format!("299 - {}", serde_json::Value::String(w));
                if let Ok(v) = http::HeaderValue::from_str(&text) {
                    resp.headers_mut().append(http::header::WARNING, v);
                }
            }
            return resp;
        }
        Ok((code, Reply::Text(text))) => {
            let mut resp = with_status(code, full(Bytes::from_static(text.as_bytes())));
            resp.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            return resp;
        }
        Ok((code, Reply::Watch(w))) => return with_status(code, watch::body(*w)),
    };
    with_status(code, full(Bytes::from(bytes)))
}

/// A failure's response: its Status, and `Retry-After` when the Status says when to ask again
/// (as kube-apiserver's `ErrorNegotiated` sets it).
fn failed(code: u16, status: &Value) -> http::Response<Body> {
    let bytes = serde_json::to_vec(status).unwrap_or_default();
    let mut resp = with_status(code, full(Bytes::from(bytes)));
    let retry = status
        .pointer("/details/retryAfterSeconds")
        .and_then(Value::as_u64)
        .filter(|s| *s > 0);
    if let Some(secs) = retry {
        resp.headers_mut()
            .insert(http::header::RETRY_AFTER, http::HeaderValue::from(secs));
    }
    resp
}

/// A request in hand: counted in [`EmbeddedApi::requests_in_hand`] until dropped, however its
/// handling ends (answered, reset, or its caller gone).
pub(crate) struct InHand(EmbeddedApi);

impl InHand {
    pub(crate) fn new(api: &EmbeddedApi) -> InHand {
        api.lock().in_hand += 1;
        InHand(api.clone())
    }
}

impl Drop for InHand {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.in_hand = st.in_hand.saturating_sub(1);
    }
}

/// The embedded API as a tower Service with a fixed bearer token, for `kube::Client::new`.
#[derive(Clone)]
struct BearerService {
    api: EmbeddedApi,
    /// The `Authorization` a request without one is given.
    header: Option<String>,
}

/// A response body of the in-process client: a whole answer, or a stream from the in-memory
/// connection that carries an upgrade.
type ClientBody = http_body_util::combinators::UnsyncBoxBody<Bytes, BoxError>;

impl tower::Service<http::Request<kube::client::Body>> for BearerService {
    type Response = http::Response<ClientBody>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<kube::client::Body>) -> Self::Future {
        let api = self.api.clone();
        let header = self.header.clone();
        Box::pin(async move {
            let (mut parts, body) = req.into_parts();
            if let Some(header) = header
                && !parts.headers.contains_key(http::header::AUTHORIZATION)
            {
                parts.headers.insert(
                    http::header::AUTHORIZATION,
                    http::HeaderValue::from_str(&header)?,
                );
            }
            let bytes = body.collect().await?.to_bytes();
            let req = http::Request::from_parts(parts, bytes);
            if req.headers().contains_key(http::header::UPGRADE) {
                return upgrade_in_memory(api, req).await;
            }
            api.serve(req).await
        })
    }
}

/// An upgrade request (a port-forward) from the in-process client: sent over an in-memory
/// HTTP/1.1 connection to the server's own connection handler, so that the response carries
/// a real upgrade (`hyper::upgrade::on`) as from a socket. The connection lives as long as
/// the upgraded stream.
async fn upgrade_in_memory(
    api: EmbeddedApi,
    req: http::Request<Bytes>,
) -> Result<http::Response<ClientBody>, BoxError> {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(server::serve_connection(
        api,
        hyper_util::rt::TokioIo::new(server_io),
        false,
    ));
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(client_io)).await?;
    tokio::spawn(async move {
        if let Err(e) = conn.with_upgrades().await {
            tracing::debug!(error = %e, "in-memory upgrade connection ended");
        }
    });
    let (mut parts, body) = req.into_parts();
    if !parts.headers.contains_key(http::header::HOST) {
        parts.headers.insert(
            http::header::HOST,
            http::HeaderValue::from_static("ichor-demo"),
        );
    }
    let resp = sender
        .send_request(http::Request::from_parts(parts, Full::new(body)))
        .await?;
    Ok(resp.map(|b| b.map_err(|e| -> BoxError { Box::new(e) }).boxed_unsync()))
}

impl EmbeddedApi {
    /// What the roles of `deploy/base/rbac.yaml` granted `serve`'s identity, which of those grants
    /// its requests used, and what nothing allowed it (see [`rbac`]).
    pub fn deployed_role_usage(&self) -> rbac::RoleUsage {
        self.lock().auth.deployed_usage()
    }

    /// The impersonations the API allowed so far, each once: who (by their own token) acted
    /// as whom, with which groups, uid and extras.
    pub fn impersonations(&self) -> Vec<auth::Impersonation> {
        self.lock().impersonations.0.iter().cloned().collect()
    }

    /// serve's identity gets the passthrough component's ClusterRole instead of the base's
    /// (`deploy/components/passthrough`: nothing to review or impersonate), as a cluster
    /// installed with `kubectl apply -k deploy/overlays/passthrough` grants it.
    pub fn deploy_passthrough(&self) {
        self.lock().auth.deploy_passthrough();
    }

    /// For `serve --allow-anonymous`: its identity, which calls without a token act as, may
    /// do what the demo's operators may (see `AuthConfig::grant_anonymous_callers`).
    pub fn grant_anonymous_callers_to_the_server(&self) {
        self.lock().auth.grant_anonymous_callers();
    }

    /// Adds a viewer for the benchmarks (`ICHOR_DEMO_USERS`): a token of the viewers' group.
    pub(crate) fn add_bench_viewer(&self, token: &str, user: &str) {
        self.lock().auth.add_token(token, user, &["ichor:viewers"]);
    }
}

/// Users and rules added at run time, for tests of authentication. With the `faults` feature
/// only.
#[cfg(feature = "faults")]
impl EmbeddedApi {
    /// Adds a bearer token.
    pub fn add_token(&self, token: &str, user: &str, groups: &[&str]) {
        self.lock().auth.add_token(token, user, groups);
    }

    /// Adds a bearer token whose reviews also name a uid and extras.
    pub fn add_token_with(
        &self,
        token: &str,
        (user, groups): (&str, &[&str]),
        uid: Option<&str>,
        extra: BTreeMap<String, Vec<String>>,
    ) {
        self.lock()
            .auth
            .add_token_with(token, user, groups, uid, extra);
    }

    /// Revokes a bearer token: from now on the API refuses it and a TokenReview rejects it.
    pub fn remove_token(&self, token: &str) {
        self.lock().auth.remove_token(token);
    }

    /// Adds an RBAC rule.
    pub fn add_rule(&self, rule: auth::Rule) {
        self.lock().auth.add_rule(rule);
    }

    /// Removes every RBAC rule of `subject`.
    pub fn remove_rules_of(&self, subject: &auth::Subject) {
        self.lock().auth.remove_rules_of(subject);
    }
}
