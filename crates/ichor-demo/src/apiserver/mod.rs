//! An in-memory Kubernetes API for the ichor resources. `kube::Client` talks to it through
//! `Client::new(service, namespace)`, so every test runs the real request building, query
//! parameters and response decoding; `ichor-tui demo-cluster` serves it over HTTP for kubectl.

pub mod auth;
pub mod server;
pub mod store;
pub mod table;

use self::auth::{AuthConfig, Identity};
use self::store::{LabelSelector, ResourceType, parse_query, resource, status_body};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use ichor_resources::names;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

/// A write that was stored (dry runs and refused requests are never logged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRecord {
    /// `create`, `update`, `patch` or `delete`.
    pub verb: String,
    /// The resource plural, with `/status` for the status subresource.
    pub resource: String,
    pub namespace: String,
    pub name: String,
    /// The user the write was made as (after impersonation).
    pub user: String,
}

/// A fault to inject into the next requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 503 Service Unavailable with a Status body.
    Unavailable,
    /// The connection is reset: the request fails without a response.
    Reset,
    /// The response is delayed (the request is then handled normally).
    Delay(Duration),
    /// The request is carried out, then the connection is reset before the answer: the client
    /// cannot know whether it happened.
    ResetAfterApply,
}

/// Which requests a targeted fault meets: `None` matches anything; dry runs never match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultRule {
    /// `get`, `list`, `create`, `update`, `patch` or `delete`.
    pub verb: Option<String>,
    /// The resource plural (`/status` for the subresource).
    pub resource: Option<String>,
    /// Matching requests to let through before the fault applies.
    pub skip: usize,
}

impl FaultRule {
    /// Matches `verb` on `resource`.
    pub fn on(verb: &str, resource: &str) -> FaultRule {
        FaultRule {
            verb: Some(verb.to_string()),
            resource: Some(resource.to_string()),
            skip: 0,
        }
    }

    /// Lets `n` matching requests through first.
    pub fn after(mut self, n: usize) -> FaultRule {
        self.skip = n;
        self
    }

    fn matches(&self, verb: &str, resource: &str) -> bool {
        self.verb.as_deref().is_none_or(|v| v == verb)
            && self.resource.as_deref().is_none_or(|x| x == resource)
    }
}

/// The verb and resource (`plural` or `plural/status`) of a request, for fault rules; `None`
/// for dry runs and paths that name no resource.
fn request_kind(req: &http::Request<Bytes>) -> Option<(String, String)> {
    let query = parse_query(req.uri().query());
    if query.iter().any(|(k, v)| k == "dryRun" && v == "All") {
        return None;
    }
    let target = parse_path(req.uri().path().trim_end_matches('/')).ok()?;
    let verb = match (req.method().as_str(), target.name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", _) => "delete",
        _ => return None,
    };
    let resource = if target.status {
        format!("{}/status", target.rt.plural)
    } else {
        target.rt.plural.to_string()
    };
    Some((verb.to_string(), resource))
}

#[derive(Default)]
struct ApiState {
    targeted: Vec<(FaultRule, Fault)>,
    hooks: Vec<(FaultRule, Hook)>,
    objects: BTreeMap<(String, String, String), Value>,
    resource_version: u64,
    uid: u64,
    write_log: Vec<WriteRecord>,
    faults: VecDeque<Fault>,
    conflicts: u32,
    auth: AuthConfig,
}

/// Something a test does to the world just before a matching request is handled.
type Hook = Box<dyn FnOnce(&EmbeddedApi) + Send>;

/// The embedded API: cheap to clone, every clone sees the same objects.
#[derive(Clone)]
pub struct EmbeddedApi {
    state: Arc<Mutex<ApiState>>,
}

impl Default for EmbeddedApi {
    fn default() -> Self {
        EmbeddedApi::new(AuthConfig::demo())
    }
}

/// An answer from the handler.
enum Outcome {
    Respond(http::Response<Full<Bytes>>),
    Reset,
}

/// What a request asked for, once its path is understood.
struct Target {
    rt: ResourceType,
    namespace: Option<String>,
    name: Option<String>,
    status: bool,
}

type Failure = (u16, Value);

fn fail(code: u16, reason: &str, message: impl Into<String>) -> Failure {
    (code, status_body(code, reason, &message.into(), None))
}

fn qualified(rt: &ResourceType) -> String {
    format!("{}.{}", rt.plural, rt.group)
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

impl EmbeddedApi {
    /// An empty API with the given users and rules.
    pub fn new(auth: AuthConfig) -> EmbeddedApi {
        EmbeddedApi {
            state: Arc::new(Mutex::new(ApiState {
                auth,
                ..ApiState::default()
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ApiState> {
        // A poisoned lock means a test panicked mid-request; the data is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A kube client that authenticates with `token` (see [`auth::users`]).
    pub fn client(&self, token: &str) -> kube::Client {
        kube::Client::new(
            BearerService {
                api: self.clone(),
                header: format!("Bearer {token}"),
            },
            "default",
        )
    }

    /// Stores an object as it is, status included, bypassing the API (demo data and fixtures).
    /// Not logged. `obj` must serialise with apiVersion, kind and metadata.name/namespace.
    pub fn seed<K: serde::Serialize + kube::Resource<DynamicType = ()>>(
        &self,
        obj: &K,
    ) -> anyhow::Result<()> {
        let mut v = serde_json::to_value(obj)?;
        let plural = K::plural(&()).to_string();
        let ns = obj
            .meta()
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let name = obj
            .meta()
            .name
            .clone()
            .ok_or_else(|| anyhow::anyhow!("seeded object without a name"))?;
        let mut st = self.lock();
        st.resource_version += 1;
        st.uid += 1;
        let (rv, uid) = (st.resource_version, st.uid);
        let meta = v
            .as_object_mut()
            .and_then(|o| o.get_mut("metadata"))
            .and_then(Value::as_object_mut)
            .ok_or_else(|| anyhow::anyhow!("seeded object without metadata"))?;
        meta.insert("namespace".into(), json!(ns));
        meta.insert("resourceVersion".into(), json!(rv.to_string()));
        meta.insert(
            "uid".into(),
            json!(format!("00000000-0000-0000-0000-{uid:012}")),
        );
        meta.entry("creationTimestamp")
            .or_insert_with(|| json!(now_rfc3339()));
        meta.entry("generation").or_insert(json!(1));
        st.objects.insert((plural, ns, name), v);
        Ok(())
    }

    /// The stored writes, oldest first.
    pub fn write_log(&self) -> Vec<WriteRecord> {
        self.lock().write_log.clone()
    }

    /// The stored writes made by `user`.
    pub fn writes_by(&self, user: &str) -> Vec<WriteRecord> {
        self.write_log()
            .into_iter()
            .filter(|w| w.user == user)
            .collect()
    }

    /// Forgets the write log.
    pub fn clear_write_log(&self) {
        self.lock().write_log.clear();
    }

    /// The next `n` requests meet `fault`.
    pub fn fail_next(&self, n: usize, fault: Fault) {
        let mut st = self.lock();
        st.faults.extend(std::iter::repeat_n(fault, n));
    }

    /// The next request that `rule` matches (after its `skip`) meets `fault`, once.
    pub fn fail_when(&self, rule: FaultRule, fault: Fault) {
        self.lock().targeted.push((rule, fault));
    }

    /// Just before the next request that `rule` matches (after its `skip`) is handled, `hook`
    /// runs (once): a test changes the world between a service's read and its write.
    pub fn before(&self, rule: FaultRule, hook: impl FnOnce(&EmbeddedApi) + Send + 'static) {
        self.lock().hooks.push((rule, Box::new(hook)));
    }

    /// Changes a stored object as another writer would (resourceVersion bumped; generation
    /// bumped when the spec changed). Not logged. Returns whether the object exists.
    pub fn edit(
        &self,
        plural: &str,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> bool {
        let mut st = self.lock();
        st.resource_version += 1;
        let rv = st.resource_version;
        let key = (plural.to_string(), namespace.to_string(), name.to_string());
        let Some(obj) = st.objects.get_mut(&key) else {
            return false;
        };
        let spec = obj.get("spec").cloned();
        f(obj);
        let bump = obj.get("spec") != spec.as_ref();
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
            if bump {
                let g = meta.get("generation").and_then(Value::as_i64).unwrap_or(1);
                meta.insert("generation".into(), json!(g + 1));
            }
        }
        true
    }

    /// Removes a stored object as another writer would. Not logged.
    pub fn remove(&self, plural: &str, namespace: &str, name: &str) -> bool {
        let mut st = self.lock();
        st.resource_version += 1;
        st.objects
            .remove(&(plural.to_string(), namespace.to_string(), name.to_string()))
            .is_some()
    }

    /// The next `n` writes (create, update, patch; not dry runs) get 409 Conflict, as if
    /// someone wrote first.
    pub fn conflict_next_writes(&self, n: u32) {
        self.lock().conflicts += n;
    }

    /// Adds a bearer token (tests of authentication).
    pub fn add_token(&self, token: &str, user: &str, groups: &[&str]) {
        self.lock().auth.add_token(token, user, groups);
    }

    /// Adds an RBAC rule.
    pub fn add_rule(&self, rule: auth::Rule) {
        self.lock().auth.add_rule(rule);
    }

    /// A stored object as JSON (tests).
    pub fn object(&self, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        self.lock()
            .objects
            .get(&(plural.to_string(), namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// Handles one HTTP request (the body already read).
    async fn handle(&self, req: http::Request<Bytes>) -> Outcome {
        let (fault, hook) = {
            let mut st = self.lock();
            let hook = st.hook(&req);
            (
                st.faults.pop_front().or_else(|| st.targeted_fault(&req)),
                hook,
            )
        };
        if let Some(hook) = hook {
            hook(self);
        }
        match fault {
            Some(Fault::Unavailable) => {
                return Outcome::Respond(json_response(
                    503,
                    &status_body(
                        503,
                        "ServiceUnavailable",
                        "the server is currently unable to handle the request",
                        None,
                    ),
                ));
            }
            Some(Fault::Reset) => return Outcome::Reset,
            Some(Fault::Delay(d)) => tokio::time::sleep(d).await,
            Some(Fault::ResetAfterApply) => {
                let _applied = self.handle_sync(&req);
                return Outcome::Reset;
            }
            None => {}
        }
        Outcome::Respond(match self.handle_sync(&req) {
            Ok((code, Reply::Json(body))) | Err((code, body)) => json_response(code, &body),
            Ok((code, Reply::Raw(bytes))) => raw_response(code, bytes),
        })
    }

    fn handle_sync(&self, req: &http::Request<Bytes>) -> Result<(u16, Reply), Failure> {
        let path = req.uri().path().trim_end_matches('/').to_string();
        if let Some(doc) = server::discovery(&path) {
            return Ok((200, Reply::Json(doc)));
        }
        let mut st = self.lock();
        let who = authenticate(&st.auth, req)?;
        let query = parse_query(req.uri().query());
        let q = |k: &str| {
            query
                .iter()
                .find(|(qk, _)| qk == k)
                .map(|(_, v)| v.as_str())
        };
        let dry_run = q("dryRun") == Some("All");

        if path == "/apis/authentication.k8s.io/v1/tokenreviews"
            && req.method() == http::Method::POST
        {
            return token_review(&st.auth, &who, req.body()).map(|(c, v)| (c, Reply::Json(v)));
        }
        if path == "/apis/authentication.k8s.io/v1/selfsubjectreviews"
            && req.method() == http::Method::POST
        {
            // Who am I: any authenticated user may ask, as in Kubernetes 1.28+.
            let review = json!({
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "SelfSubjectReview",
                "metadata": {"creationTimestamp": null},
                "status": {"userInfo": {"username": who.user, "groups": who.groups}},
            });
            return Ok((201, Reply::Json(review)));
        }
        if path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
            && req.method() == http::Method::POST
        {
            return access_review(&st.auth, &who, req.body()).map(|(c, v)| (c, Reply::Json(v)));
        }
        let target = parse_path(&path)?;
        let method = req.method().clone();
        let verb = match (&method, target.name.is_some()) {
            (&http::Method::GET, true) => "get",
            (&http::Method::GET, false) if q("watch") == Some("true") => "watch",
            (&http::Method::GET, false) => "list",
            (&http::Method::POST, false) => "create",
            (&http::Method::PUT, true) => "update",
            (&http::Method::PATCH, true) => "patch",
            (&http::Method::DELETE, true) => "delete",
            _ => {
                return Err(fail(
                    405,
                    "MethodNotAllowed",
                    "the server does not allow this method on the requested resource",
                ));
            }
        };
        let rbac_resource = if target.status {
            format!("{}/status", target.rt.plural)
        } else {
            target.rt.plural.to_string()
        };
        if !st
            .auth
            .allowed(&who, verb, &rbac_resource, target.namespace.as_deref())
        {
            let what = match &target.name {
                Some(n) => format!("{} {n:?}", qualified(&target.rt)),
                None => qualified(&target.rt),
            };
            let scope = match &target.namespace {
                Some(ns) => format!("in the namespace {ns:?}"),
                None => "at the cluster scope".to_string(),
            };
            let sub = if target.status {
                " subresource \"status\""
            } else {
                ""
            };
            return Err(fail(
                403,
                "Forbidden",
                format!(
                    "{what} is forbidden: User {:?} cannot {verb} resource {:?}{sub} in API group {:?} {scope}",
                    who.user, target.rt.plural, target.rt.group
                ),
            ));
        }
        let result = match verb {
            "get" | "list" | "watch" => {
                let accept = req
                    .headers()
                    .get(::http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok());
                let table = table::wants_table(accept);
                let rv = st.resource_version.to_string();
                let now = jiff::Timestamp::now();
                if verb == "get" {
                    let obj = st.get(&target)?;
                    if !table {
                        return Ok((200, Reply::Json(obj)));
                    }
                    // kubectl's default output: the kind's columns, printed server-side.
                    return Ok((
                        200,
                        Reply::Json(table::table(&target.rt, &[&obj], &rv, now)),
                    ));
                }
                let selector = LabelSelector::parse(q("labelSelector").unwrap_or(""))
                    .map_err(|e| fail(400, "BadRequest", e))?;
                let items = st.list_items(&target, &selector);
                if table {
                    return Ok((200, Reply::Json(table::table(&target.rt, &items, &rv, now))));
                }
                // Serialised from the stored objects as they are: no copy of a large list.
                let list = ListOut {
                    api_version: target.rt.api_version(),
                    kind: format!("{}List", target.rt.kind),
                    metadata: json!({"resourceVersion": rv}),
                    items,
                };
                let bytes = serde_json::to_vec(&list)
                    .map_err(|e| fail(500, "InternalError", format!("encoding the list: {e}")))?;
                return Ok((200, Reply::Raw(bytes)));
            }
            "create" => {
                let body = parse_body(req.body())?;
                st.create(&target, body, &who, dry_run).map(|o| (201, o))
            }
            "update" => {
                let body = parse_body(req.body())?;
                st.update(&target, body, &who, dry_run, "update")
                    .map(|o| (200, o))
            }
            "patch" => {
                let ct = req
                    .headers()
                    .get(::http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                if !ct.starts_with("application/merge-patch+json") {
                    return Err(fail(
                        415,
                        "UnsupportedMediaType",
                        format!(
                            "the body of the request was in an unknown format - accepted media types include: application/merge-patch+json (got {ct:?})"
                        ),
                    ));
                }
                let patch = parse_body(req.body())?;
                let mut obj = st.get(&target)?;
                if let Some(rv) = patch
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    && obj
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        != Some(rv)
                {
                    return Err(conflict(&target));
                }
                json_patch::merge(&mut obj, &patch);
                st.update(&target, obj, &who, dry_run, "patch")
                    .map(|o| (200, o))
            }
            "delete" => {
                let options = if req.body().is_empty() {
                    Value::Null
                } else {
                    parse_body(req.body())?
                };
                let dry_run = dry_run
                    || options
                        .get("dryRun")
                        .and_then(Value::as_array)
                        .is_some_and(|a| a.iter().any(|v| v == "All"));
                let pre = options.get("preconditions").cloned().unwrap_or(Value::Null);
                st.delete(&target, &who, dry_run, &pre).map(|o| (200, o))
            }
            _ => Err(fail(405, "MethodNotAllowed", "unsupported")),
        };
        result.map(|(code, v)| (code, Reply::Json(v)))
    }
}

/// A response body: a JSON value, or JSON already encoded.
enum Reply {
    Json(Value),
    Raw(Vec<u8>),
}

/// A list response that borrows its items from the store.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ListOut<'a> {
    api_version: String,
    kind: String,
    metadata: Value,
    items: Vec<&'a Value>,
}

fn json_response(code: u16, body: &Value) -> http::Response<Full<Bytes>> {
    raw_response(code, serde_json::to_vec(body).unwrap_or_default())
}

fn raw_response(code: u16, bytes: Vec<u8>) -> http::Response<Full<Bytes>> {
    let mut resp = http::Response::new(Full::new(Bytes::from(bytes)));
    *resp.status_mut() =
        ::http::StatusCode::from_u16(code).unwrap_or(::http::StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut().insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("application/json"),
    );
    resp
}

fn parse_body(body: &Bytes) -> Result<Value, Failure> {
    serde_json::from_slice(body).map_err(|e| {
        fail(
            400,
            "BadRequest",
            format!("the body of the request could not be decoded: {e}"),
        )
    })
}

fn conflict(t: &Target) -> Failure {
    fail(
        409,
        "Conflict",
        format!(
            "Operation cannot be fulfilled on {} {:?}: the object has been modified; please apply your changes to the latest version and try again",
            qualified(&t.rt),
            t.name.clone().unwrap_or_default()
        ),
    )
}

fn precondition_failed(field: &str, want: &str, have: &str) -> Failure {
    fail(
        409,
        "Conflict",
        format!(
            "Precondition failed: {field} in precondition: {want}, {field} in object meta: {have}"
        ),
    )
}

/// A SelfSubjectAccessReview: may the requester do this? Answered from the RBAC rules.
fn access_review(auth: &AuthConfig, who: &Identity, body: &Bytes) -> Result<(u16, Value), Failure> {
    let mut review = parse_body(body)?;
    let attr = review
        .pointer("/spec/resourceAttributes")
        .cloned()
        .ok_or_else(|| {
            fail(
                422,
                "Invalid",
                "SelfSubjectAccessReview is invalid: spec.resourceAttributes: Required value",
            )
        })?;
    let field = |k: &str| attr.get(k).and_then(Value::as_str).unwrap_or("");
    let resource = match field("subresource") {
        "" => field("resource").to_string(),
        sub => format!("{}/{sub}", field("resource")),
    };
    let namespace = Some(field("namespace")).filter(|n| !n.is_empty());
    let allowed = auth.allowed(who, field("verb"), &resource, namespace);
    if let Value::Object(m) = &mut review {
        m.insert("status".into(), json!({"allowed": allowed}));
    }
    Ok((201, review))
}

/// Authenticates the bearer token, then applies impersonation headers if the user may.
fn authenticate(auth: &AuthConfig, req: &http::Request<Bytes>) -> Result<Identity, Failure> {
    let token = req
        .headers()
        .get(::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let who = token
        .and_then(|t| auth.authenticate(t))
        .cloned()
        .ok_or_else(|| fail(401, "Unauthorized", "Unauthorized"))?;
    let imp_user = req
        .headers()
        .get("impersonate-user")
        .and_then(|v| v.to_str().ok());
    let imp_groups: Vec<String> = req
        .headers()
        .get_all("impersonate-group")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    let Some(user) = imp_user else {
        if !imp_groups.is_empty() {
            return Err(fail(
                500,
                "InternalError",
                "requested impersonation of groups without a user",
            ));
        }
        return Ok(who);
    };
    let denied = |kind: &str, name: &str| {
        fail(
            403,
            "Forbidden",
            format!(
                "{kind} {name:?} is forbidden: User {:?} cannot impersonate resource {kind:?} in API group \"\" at the cluster scope",
                who.user
            ),
        )
    };
    if !auth.allowed(&who, "impersonate", "users", None) {
        return Err(denied("users", user));
    }
    for g in &imp_groups {
        if !auth.allowed(&who, "impersonate", "groups", None) {
            return Err(denied("groups", g));
        }
    }
    let mut groups = imp_groups;
    groups.push("system:authenticated".to_string());
    Ok(Identity {
        user: user.to_string(),
        groups,
    })
}

fn token_review(auth: &AuthConfig, who: &Identity, body: &Bytes) -> Result<(u16, Value), Failure> {
    if !auth.allowed(who, "create", "tokenreviews", None) {
        return Err(fail(
            403,
            "Forbidden",
            format!(
                "tokenreviews.authentication.k8s.io is forbidden: User {:?} cannot create resource \"tokenreviews\" in API group \"authentication.k8s.io\" at the cluster scope",
                who.user
            ),
        ));
    }
    let mut review = parse_body(body)?;
    let token = review
        .pointer("/spec/token")
        .and_then(Value::as_str)
        .unwrap_or("");
    let status = match auth.authenticate(token) {
        Some(id) => {
            json!({"authenticated": true, "user": {"username": id.user, "groups": id.groups}})
        }
        None => json!({"authenticated": false, "error": "invalid bearer token"}),
    };
    if let Value::Object(m) = &mut review {
        m.insert("status".into(), status);
    }
    Ok((201, review))
}

fn parse_path(path: &str) -> Result<Target, Failure> {
    let not_found = || {
        fail(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    };
    let rest = path.strip_prefix("/apis/").ok_or_else(not_found)?;
    let parts: Vec<&str> = rest.split('/').collect();
    let [group, version, parts @ ..] = parts.as_slice() else {
        return Err(not_found());
    };
    let (namespace, rest) = match parts {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some(ns.to_string()), rest),
        rest => (None, rest),
    };
    let (plural, name, status) = match rest {
        [plural] => (*plural, None, false),
        [plural, name] if namespace.is_some() => (*plural, Some(name.to_string()), false),
        [plural, name, "status"] if namespace.is_some() => (*plural, Some(name.to_string()), true),
        _ => return Err(not_found()),
    };
    let rt = resource(group, version, plural).ok_or_else(not_found)?;
    if status && !rt.has_status {
        return Err(not_found());
    }
    Ok(Target {
        rt,
        namespace,
        name,
        status,
    })
}

impl ApiState {
    /// The hook this request meets, if any (consumed).
    fn hook(&mut self, req: &http::Request<Bytes>) -> Option<Hook> {
        if self.hooks.is_empty() {
            return None;
        }
        let (verb, resource) = request_kind(req)?;
        let idx = self
            .hooks
            .iter()
            .position(|(r, _)| r.matches(&verb, &resource))?;
        let (rule, _) = &mut self.hooks[idx];
        if rule.skip > 0 {
            rule.skip -= 1;
            return None;
        }
        Some(self.hooks.remove(idx).1)
    }

    /// The targeted fault this request meets, if any (consumed).
    fn targeted_fault(&mut self, req: &http::Request<Bytes>) -> Option<Fault> {
        if self.targeted.is_empty() {
            return None;
        }
        let (verb, resource) = request_kind(req)?;
        let idx = self
            .targeted
            .iter()
            .position(|(r, _)| r.matches(&verb, &resource))?;
        let (rule, fault) = &mut self.targeted[idx];
        if rule.skip > 0 {
            rule.skip -= 1;
            return None;
        }
        let fault = *fault;
        self.targeted.remove(idx);
        Some(fault)
    }

    fn key(t: &Target, name: &str) -> (String, String, String) {
        (
            t.rt.plural.to_string(),
            t.namespace.clone().unwrap_or_default(),
            name.to_string(),
        )
    }

    fn get(&self, t: &Target) -> Result<Value, Failure> {
        let name = t.name.clone().unwrap_or_default();
        self.objects
            .get(&Self::key(t, &name))
            .cloned()
            .ok_or_else(|| {
                let mut f = fail(
                    404,
                    "NotFound",
                    format!("{} {name:?} not found", qualified(&t.rt)),
                );
                if let Value::Object(m) = &mut f.1 {
                    m.insert(
                        "details".into(),
                        json!({"name": name, "group": t.rt.group, "kind": t.rt.plural}),
                    );
                }
                f
            })
    }

    /// The objects a list answers, borrowed from the store.
    fn list_items(&self, t: &Target, selector: &LabelSelector) -> Vec<&Value> {
        self.objects
            .iter()
            .filter(|((p, ns, _), _)| {
                p == t.rt.plural && t.namespace.as_ref().is_none_or(|n| n == ns)
            })
            .map(|(_, v)| v)
            .filter(|v| selector.matches(v))
            .collect()
    }

    fn log(&mut self, verb: &str, t: &Target, name: &str, who: &Identity) {
        let resource = if t.status {
            format!("{}/status", t.rt.plural)
        } else {
            t.rt.plural.to_string()
        };
        self.write_log.push(WriteRecord {
            verb: verb.to_string(),
            resource,
            namespace: t.namespace.clone().unwrap_or_default(),
            name: name.to_string(),
            user: who.user.clone(),
        });
    }

    fn take_forced_conflict(&mut self, t: &Target, dry_run: bool) -> Result<(), Failure> {
        if self.conflicts > 0 && !dry_run {
            self.conflicts -= 1;
            return Err(conflict(t));
        }
        Ok(())
    }

    fn create(
        &mut self,
        t: &Target,
        mut obj: Value,
        who: &Identity,
        dry_run: bool,
    ) -> Result<Value, Failure> {
        let ns = t
            .namespace
            .clone()
            .ok_or_else(|| fail(405, "MethodNotAllowed", "create needs a namespace"))?;
        let meta = obj
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .ok_or_else(|| {
                fail(
                    422,
                    "Invalid",
                    format!("{} is invalid: metadata: Required value", t.rt.kind),
                )
            })?;
        if let Some(obj_ns) = meta.get("namespace").and_then(Value::as_str)
            && obj_ns != ns
        {
            return Err(fail(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let name = match (
            meta.get("name").and_then(Value::as_str),
            meta.get("generateName").and_then(Value::as_str),
        ) {
            (Some(n), _) if !n.is_empty() => n.to_string(),
            (_, Some(g)) if !g.is_empty() => {
                let suffix: String = (0..5)
                    .map(|_| {
                        let chars = b"bcdfghjklmnpqrstvwxz2456789";
                        chars[fastrand::usize(..chars.len())] as char
                    })
                    .collect();
                format!("{g}{suffix}")
            }
            _ => {
                return Err(fail(
                    422,
                    "Invalid",
                    format!(
                        "{} \"\" is invalid: metadata.name: Required value: name or generateName is required",
                        t.rt.kind
                    ),
                ));
            }
        };
        validate_name(t, &name)?;
        let key = Self::key(t, &name);
        if self.objects.contains_key(&key) {
            return Err(fail(
                409,
                "AlreadyExists",
                format!("{} {name:?} already exists", qualified(&t.rt)),
            ));
        }
        self.take_forced_conflict(t, dry_run)?;
        meta.insert("name".into(), json!(name));
        meta.insert("namespace".into(), json!(ns));
        meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
        meta.insert("generation".into(), json!(1));
        meta.remove("resourceVersion");
        if t.rt.has_status
            && let Value::Object(o) = &mut obj
        {
            o.remove("status");
        }
        validate(t, &name, &obj)?;
        if dry_run {
            return Ok(obj);
        }
        self.resource_version += 1;
        self.uid += 1;
        let (rv, uid) = (self.resource_version, self.uid);
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
            meta.insert(
                "uid".into(),
                json!(format!("00000000-0000-0000-0000-{uid:012}")),
            );
        }
        self.objects.insert(key, obj.clone());
        self.log("create", t, &name, who);
        Ok(obj)
    }

    fn update(
        &mut self,
        t: &Target,
        mut obj: Value,
        who: &Identity,
        dry_run: bool,
        verb: &str,
    ) -> Result<Value, Failure> {
        let name = t.name.clone().unwrap_or_default();
        let old = self.get(t)?;
        let body_name = obj.pointer("/metadata/name").and_then(Value::as_str);
        if body_name.is_some_and(|n| n != name) {
            return Err(fail(
                400,
                "BadRequest",
                "the name of the object does not match the name on the URL",
            ));
        }
        let old_rv = old
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str);
        match obj
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
        {
            None | Some("") => {
                return Err(fail(
                    422,
                    "Invalid",
                    format!(
                        "{} {name:?} is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
                        t.rt.kind
                    ),
                ));
            }
            Some(rv) if Some(rv) != old_rv => return Err(conflict(t)),
            Some(_) => {}
        }
        // A uid in the body is a precondition: the object must be that one, not another of the
        // same name.
        let old_uid = old
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(uid) = obj.pointer("/metadata/uid").and_then(Value::as_str)
            && !uid.is_empty()
            && uid != old_uid
        {
            return Err(precondition_failed("UID", uid, old_uid));
        }
        self.take_forced_conflict(t, dry_run)?;
        // The status subresource and the main resource each keep the other's part.
        if t.rt.has_status {
            if t.status {
                let status = obj.get("status").cloned();
                obj = old.clone();
                if let Value::Object(o) = &mut obj {
                    match status {
                        Some(s) => o.insert("status".into(), s),
                        None => o.remove("status"),
                    };
                }
            } else if let Value::Object(o) = &mut obj {
                match old.get("status") {
                    Some(s) => o.insert("status".into(), s.clone()),
                    None => o.remove("status"),
                };
            }
        }
        // Server-owned metadata stays as it was.
        if let (Some(meta), Some(old_meta)) = (
            obj.get_mut("metadata").and_then(Value::as_object_mut),
            old.get("metadata").and_then(Value::as_object),
        ) {
            for k in [
                "uid",
                "creationTimestamp",
                "namespace",
                "name",
                "generation",
            ] {
                match old_meta.get(k) {
                    Some(v) => meta.insert(k.into(), v.clone()),
                    None => meta.remove(k),
                };
            }
        }
        validate(t, &name, &obj)?;
        admit(t, &name, &old, &obj)?;
        if old.get("spec") != obj.get("spec") {
            let generation = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("generation".into(), json!(generation + 1));
            }
        }
        if dry_run {
            return Ok(obj);
        }
        self.resource_version += 1;
        let rv = self.resource_version;
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
        }
        self.objects.insert(Self::key(t, &name), obj.clone());
        self.log(verb, t, &name, who);
        Ok(obj)
    }

    fn delete(
        &mut self,
        t: &Target,
        who: &Identity,
        dry_run: bool,
        preconditions: &Value,
    ) -> Result<Value, Failure> {
        let name = t.name.clone().unwrap_or_default();
        let obj = self.get(t)?;
        for (field, pointer) in [
            ("UID", "/metadata/uid"),
            ("ResourceVersion", "/metadata/resourceVersion"),
        ] {
            let key = if field == "UID" {
                "uid"
            } else {
                "resourceVersion"
            };
            if let Some(want) = preconditions.get(key).and_then(Value::as_str) {
                let have = obj.pointer(pointer).and_then(Value::as_str).unwrap_or("");
                if want != have {
                    return Err(precondition_failed(field, want, have));
                }
            }
        }
        if !dry_run {
            self.objects.remove(&Self::key(t, &name));
            self.resource_version += 1;
            self.log("delete", t, &name, who);
        }
        Ok(obj)
    }
}

fn invalid(t: &Target, name: &str, field: &str, detail: String) -> Failure {
    fail(
        422,
        "Invalid",
        format!(
            "{}.{} {name:?} is invalid: {field}: {detail}",
            t.rt.kind, t.rt.group
        ),
    )
}

fn validate_name(t: &Target, name: &str) -> Result<(), Failure> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(invalid(
            t,
            name,
            "metadata.name",
            format!(
                "Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
            ),
        ))
    }
}

fn one_of(
    t: &Target,
    name: &str,
    obj: &Value,
    pointer: &str,
    field: &str,
    allowed: &[&str],
) -> Result<(), Failure> {
    match obj.pointer(pointer) {
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        Some(Value::String(s)) => Err(invalid(
            t,
            name,
            field,
            format!(
                "Unsupported value: {s:?}: supported values: {}",
                allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        None => Err(invalid(t, name, field, "Required value".into())),
        Some(_) => Err(invalid(
            t,
            name,
            field,
            "Invalid value: must be a string".into(),
        )),
    }
}

/// The CRD schemas' checks, as an apiserver would run them.
fn validate(t: &Target, name: &str, obj: &Value) -> Result<(), Failure> {
    let kind_ok = obj.get("kind").and_then(Value::as_str) == Some(t.rt.kind)
        && obj.get("apiVersion").and_then(Value::as_str) == Some(&t.rt.api_version());
    if !kind_ok {
        return Err(fail(
            400,
            "BadRequest",
            format!("the object is not a {} {}", t.rt.api_version(), t.rt.kind),
        ));
    }
    let string = |pointer: &str, field: &str| match obj.pointer(pointer) {
        Some(Value::String(s)) if !s.is_empty() => Ok(()),
        _ => Err(invalid(t, name, field, "Required value".into())),
    };
    match t.rt.kind {
        "TalosOperation" => {
            string("/spec/cluster", "spec.cluster")?;
            one_of(
                t,
                name,
                obj,
                "/spec/kind",
                "spec.kind",
                &[
                    "talos",
                    "kubernetes",
                    "ichor",
                    "cni",
                    "shutdown",
                    "ca-rotation",
                ],
            )?;
            if let Some(m) = obj.pointer("/spec/maxUnavailable")
                && m.as_i64().is_none_or(|m| m < 1)
            {
                return Err(invalid(
                    t,
                    name,
                    "spec.maxUnavailable",
                    format!("Invalid value: {m}: should be greater than or equal to 1"),
                ));
            }
            if let Some(p) = obj.pointer("/spec/paused")
                && !p.is_boolean()
            {
                return Err(invalid(
                    t,
                    name,
                    "spec.paused",
                    "Invalid value: must be a boolean".into(),
                ));
            }
        }
        "TalosCluster" => {
            string("/spec/talosVersion", "spec.talosVersion")?;
            string("/spec/kubernetesVersion", "spec.kubernetesVersion")?;
            if obj.pointer("/spec/cni/kubeProxy").is_some() {
                one_of(
                    t,
                    name,
                    obj,
                    "/spec/cni/kubeProxy",
                    "spec.cni.kubeProxy",
                    &["enabled", "replaced"],
                )?;
            }
        }
        "Machine" => {
            string("/spec/cluster", "spec.cluster")?;
            one_of(
                t,
                name,
                obj,
                "/spec/role",
                "spec.role",
                &["controlplane", "worker"],
            )?;
        }
        "IchorInstallation" => string("/spec/version", "spec.version")?,
        _ => {}
    }
    Ok(())
}

/// The ValidatingAdmissionPolicy of ADR 0013: a `spec.cni.kubeProxy` change needs the
/// confirmation annotation.
fn admit(t: &Target, name: &str, old: &Value, new: &Value) -> Result<(), Failure> {
    if t.rt.kind != "TalosCluster" || t.status {
        return Ok(());
    }
    let mode = |v: &Value| {
        v.pointer("/spec/cni/kubeProxy")
            .and_then(Value::as_str)
            .unwrap_or("enabled")
            .to_string()
    };
    let confirmed = new
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(names::CONFIRM_KUBE_PROXY_SWITCH));
    if mode(old) != mode(new) && !confirmed {
        return Err(fail(
            422,
            "Invalid",
            format!(
                "{} {name:?} is forbidden: ValidatingAdmissionPolicy 'ichor-kube-proxy-switch' with binding 'ichor-kube-proxy-switch' denied request: changing spec.cni.kubeProxy requires the annotation {}",
                qualified(&t.rt),
                names::CONFIRM_KUBE_PROXY_SWITCH
            ),
        ));
    }
    Ok(())
}

/// The embedded API as a tower Service with a fixed bearer token, for `kube::Client::new`.
#[derive(Clone)]
pub struct BearerService {
    api: EmbeddedApi,
    header: String,
}

/// The error type of the embedded API's tower Service.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower::Service<http::Request<kube::client::Body>> for BearerService {
    type Response = http::Response<Full<Bytes>>;
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
            if !parts.headers.contains_key(::http::header::AUTHORIZATION) {
                parts.headers.insert(
                    ::http::header::AUTHORIZATION,
                    ::http::HeaderValue::from_str(&header)?,
                );
            }
            let bytes = body.collect().await?.to_bytes();
            api.serve(http::Request::from_parts(parts, bytes)).await
        })
    }
}

impl EmbeddedApi {
    /// Serves one request with its body read; a reset fault is an I/O error.
    pub async fn serve(
        &self,
        req: http::Request<Bytes>,
    ) -> Result<http::Response<Full<Bytes>>, BoxError> {
        match self.handle(req).await {
            Outcome::Respond(r) => Ok(r),
            Outcome::Reset => Err(Box::new(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "connection reset by peer",
            ))),
        }
    }
}
