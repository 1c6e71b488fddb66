//! What the API answers: Kubernetes `Status` failure bodies, the common failures, and JSON
//! responses.

use super::BoxError;
use super::routing::Target;
use super::watch::Watch;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::sync::Arc;

/// A response body: a whole answer, or a watch's stream of events.
pub(crate) type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, BoxError>;

/// A whole answer as a [`Body`].
pub(crate) fn full(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(|e| match e {}).boxed_unsync()
}

/// A refused request: the HTTP status and its `Status` body.
pub(crate) type Failure = (u16, Value);

/// What a request is answered with: a JSON value, JSON already encoded, or a watch.
pub(crate) enum Reply {
    Json(Value),
    /// A list, encoded once the store's lock is let go (its items are shared with the store).
    List(ListOut),
    /// A written object with the warnings for its `Warning` headers (unknown fields pruned).
    Warned(Vec<String>, Value),
    /// Plain text (the health endpoints).
    Text(&'static str),
    Watch(Box<Watch>),
}

/// A list response whose items are the store's own (shared, not copied): a list of 10,000
/// objects holds the store's lock for the time it takes to pick them, not to encode them.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListOut {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) metadata: Value,
    #[serde(serialize_with = "shared_items")]
    pub(crate) items: Vec<Arc<Value>>,
}

fn shared_items<S: serde::Serializer>(items: &[Arc<Value>], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(items.iter().map(|i| &**i))
}

/// A Kubernetes `Status` failure body.
pub(crate) fn status_body(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut v = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if let (Some(d), Value::Object(m)) = (details, &mut v) {
        m.insert("details".into(), d);
    }
    v
}

/// A failure with a `Status` body.
pub(crate) fn fail(code: u16, reason: &str, message: impl Into<String>) -> Failure {
    (code, status_body(code, reason, &message.into(), None))
}

/// A path that names nothing the API serves.
pub(crate) fn not_found() -> Failure {
    fail(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

/// A named object that is not stored.
pub(crate) fn object_not_found(t: &Target) -> Failure {
    let name = t.name();
    let details = json!({"name": name, "group": t.rt.group, "kind": t.rt.plural});
    let message = format!("{} {name:?} not found", t.qualified());
    (404, status_body(404, "NotFound", &message, Some(details)))
}

/// A write against a resourceVersion that is no longer the stored one.
pub(crate) fn conflict(t: &Target) -> Failure {
    fail(
        409,
        "Conflict",
        format!(
            "Operation cannot be fulfilled on {} {:?}: the object has been modified; please apply your changes to the latest version and try again",
            t.qualified(),
            t.name()
        ),
    )
}

/// A uid or resourceVersion precondition that the stored object does not meet.
pub(crate) fn precondition_failed(field: &str, want: &str, have: &str) -> Failure {
    fail(
        409,
        "Conflict",
        format!(
            "Precondition failed: {field} in precondition: {want}, {field} in object meta: {have}"
        ),
    )
}

/// A request body as JSON.
pub(crate) fn parse_body(body: &Bytes) -> Result<Value, Failure> {
    serde_json::from_slice(body).map_err(|e| {
        fail(
            400,
            "BadRequest",
            format!("the body of the request could not be decoded: {e}"),
        )
    })
}

pub(crate) fn json_response(code: u16, body: &Value) -> http::Response<Full<Bytes>> {
    raw_response(code, serde_json::to_vec(body).unwrap_or_default())
}

pub(crate) fn raw_response(code: u16, bytes: Vec<u8>) -> http::Response<Full<Bytes>> {
    with_status(code, Full::new(Bytes::from(bytes)))
}

/// A JSON response with `code` and `body`.
pub(crate) fn with_status<B>(code: u16, body: B) -> http::Response<B> {
    let mut resp = http::Response::new(body);
    *resp.status_mut() =
        http::StatusCode::from_u16(code).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}
