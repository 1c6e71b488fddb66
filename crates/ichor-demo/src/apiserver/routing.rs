//! From a request to an answer: the path names a target, the method and the query a verb; the
//! requester is authenticated, the verb authorised by RBAC, then carried out on the store.

use super::auth::{AuthConfig, Identity};
use super::authn::{self, Review};
use super::events::to_events_v1;
use super::field_validation::FieldValidation;
use super::fields::FieldSelector;
use super::kinds::{ResourceType, resource};
use super::managed::apply::Apply;
use super::managed::manager_of;
use super::patch::PatchType;
use super::rbac::Attributes;
use super::responses::{Failure, ListOut, Reply, fail, not_found, parse_body, status_body};
use super::selector::LabelSelector;
use super::snapshot::Gone;
use super::store::Fields;
use super::table::Include;
use super::watch::{Watch, query_bool};
use super::{ApiState, EmbeddedApi, cluster, discovery, paging, portforward, requests, table};
use bytes::Bytes;
use http::{Method, Request};
use serde_json::{Value, json};
use std::sync::Arc;

/// What a request names, once its path is understood.
pub(crate) struct Target {
    pub(crate) rt: ResourceType,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    /// The status subresource.
    pub(crate) status: bool,
}

impl Target {
    /// The object's name (empty for a collection).
    pub(crate) fn name(&self) -> String {
        self.name.clone().unwrap_or_default()
    }

    /// The resource as RBAC, fault rules and the write log name it: `plural`, or
    /// `plural/status` for the subresource.
    pub(crate) fn resource(&self) -> String {
        if self.status {
            format!("{}/status", self.rt.plural)
        } else {
            self.rt.plural.to_string()
        }
    }

    /// `plural.group`, as messages name the kind.
    pub(crate) fn qualified(&self) -> String {
        self.rt.qualified()
    }
}

/// The target of a resource path: `/apis/{group}/{version}[/namespaces/{ns}]/{plural}` (or
/// `/api/v1/…` for the core group) with an optional `/{name}` and `/{name}/status` (names only
/// within a namespace).
pub(crate) fn parse_path(path: &str) -> Result<Target, Failure> {
    let (group, rest) = match path.strip_prefix("/api/") {
        Some(rest) => ("", rest),
        None => {
            let rest = path.strip_prefix("/apis/").ok_or_else(not_found)?;
            rest.split_once('/').ok_or_else(not_found)?
        }
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let [version, parts @ ..] = parts.as_slice() else {
        return Err(not_found());
    };
    let (namespace, rest) = match parts {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some(ns.to_string()), rest),
        rest => (None, rest),
    };
    let (plural, name, status) = match rest {
        [plural] => (*plural, None, false),
        [plural, name] => (*plural, Some(name.to_string()), false),
        [plural, name, "status"] => (*plural, Some(name.to_string()), true),
        _ => return Err(not_found()),
    };
    let rt = resource(group, version, plural).ok_or_else(not_found)?;
    // Names within a namespace for the namespaced kinds, at the top for the others.
    let misplaced = matches!(
        (rt.namespaced, &namespace, &name),
        (true, None, Some(_)) | (false, Some(_), _)
    );
    if misplaced || (status && !rt.has_status) {
        return Err(not_found());
    }
    Ok(Target {
        rt,
        namespace,
        name,
        status,
    })
}

/// A query string, decoded (`+` and `%XX`).
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(query: Option<&str>) -> Query {
        Query(
            form_urlencoded::parse(query.unwrap_or("").as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// The first value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `?dryRun=All`: everything is checked, nothing is stored.
    pub(crate) fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }
}

/// 405: a method the resource does not serve.
fn method_not_allowed() -> Failure {
    fail(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

/// What a request does to its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
}

impl Verb {
    /// The verb of a method on a named object or a collection; 405 for the other pairs.
    pub(crate) fn of(method: &Method, named: bool, query: &Query) -> Result<Verb, Failure> {
        Ok(match (method, named) {
            (&Method::GET, true) => Verb::Get,
            (&Method::GET, false) if query_bool(query.get("watch")) => Verb::Watch,
            (&Method::GET, false) => Verb::List,
            (&Method::POST, false) => Verb::Create,
            (&Method::PUT, true) => Verb::Update,
            (&Method::PATCH, true) => Verb::Patch,
            (&Method::DELETE, true) => Verb::Delete,
            _ => return Err(method_not_allowed()),
        })
    }

    /// The verb as RBAC names it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }
}

/// One request to a resource: what it names, who makes it, and how.
struct Call<'a> {
    target: Target,
    who: Identity,
    query: Query,
    req: &'a Request<Bytes>,
    /// The field manager its writes are recorded under (see `managed`).
    manager: String,
}

impl Call<'_> {
    fn header(&self, name: http::header::HeaderName) -> Option<&str> {
        self.req.headers().get(name).and_then(|v| v.to_str().ok())
    }

    fn body(&self) -> Result<Value, Failure> {
        parse_body(self.req.body())
    }

    /// kubectl's default output asks for a server-side Table.
    fn wants_table(&self) -> bool {
        table::wants_table(self.header(http::header::ACCEPT))
    }

    /// Whether the client asks for the objects' metadata only
    /// (`Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`).
    fn wants_metadata(&self) -> bool {
        self.header(http::header::ACCEPT)
            .is_some_and(|a| a.contains("as=PartialObjectMetadataList"))
    }

    /// What a Table's rows carry of their objects (`?includeObject=`).
    fn include(&self) -> Result<Include, Failure> {
        Include::parse(self.query.get("includeObject")).map_err(|e| fail(400, "BadRequest", e))
    }
}

impl EmbeddedApi {
    /// The answer to one request (its body read): a discovery document, a review, or a verb on
    /// a resource.
    pub(crate) fn answer(&self, req: &Request<Bytes>) -> Result<(u16, Reply), Failure> {
        let path = req.uri().path().trim_end_matches('/');
        if cluster::is_health_path(path) {
            return Ok((200, Reply::Text("ok")));
        }
        if let Some(doc) = discovery::document(path) {
            return Ok((200, Reply::Json(doc)));
        }
        let mut st = self.lock();
        let who = authn::authenticate(&st.auth, req.headers())?;
        if path == requests::PATH && req.method() == Method::GET {
            return Ok((200, Reply::Json(st.requests_by.document())));
        }
        if portforward::parse_path(path).is_some() {
            // A port-forward is an upgrade: the server takes those before they get here.
            return Err(portforward::upgrade_required());
        }
        let by = who.impersonated_by.as_deref();
        st.requests_by
            .count((&who.user, by), req.method(), path, req.uri().query());
        if let Some(i) = who.impersonation() {
            st.impersonations.see(i);
        }
        if req.method() == Method::POST
            && let Some(review) = Review::at(path)
        {
            let ct = req
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            return review
                .answer(&st.auth, &who, req.body(), ct)
                .map(|(code, v)| (code, Reply::Json(v)));
        }
        let query = Query::parse(req.uri().query());
        let target = parse_path(path)?;
        let verb = Verb::of(req.method(), target.name.is_some(), &query)?;
        if target.rt.read_only && !matches!(verb, Verb::Get | Verb::List | Verb::Watch) {
            return Err(method_not_allowed());
        }
        authorize(&st.auth, &who, verb, &target)?;
        if verb == Verb::Watch {
            let table = table::wants_table(
                req.headers()
                    .get(http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok()),
            );
            let w = Watch::open(self, &mut st, &target, &query, table)?;
            return Ok((200, Reply::Watch(Box::new(w))));
        }
        st.field_validation = FieldValidation::parse(query.get("fieldValidation"))?;
        st.warnings.clear();
        let manager = manager_of(
            query.get("fieldManager"),
            req.headers()
                .get(http::header::USER_AGENT)
                .and_then(|v| v.to_str().ok()),
        );
        let call = Call {
            target,
            who,
            query,
            req,
            manager,
        };
        let answer = dispatch(&mut st, verb, &call)?;
        let warnings = std::mem::take(&mut st.warnings);
        Ok(match answer {
            (code, Reply::Json(obj)) if !warnings.is_empty() => {
                (code, Reply::Warned(warnings, obj))
            }
            other => other,
        })
    }
}

/// 403 unless an RBAC rule lets `who` do `verb` on the target.
fn authorize(auth: &AuthConfig, who: &Identity, verb: Verb, t: &Target) -> Result<(), Failure> {
    let verb = verb.as_str();
    let resource = t.resource();
    let asked = Attributes::resource(
        verb,
        t.rt.group,
        &resource,
        t.name.as_deref(),
        t.namespace.as_deref(),
    );
    if auth.allowed(who, &asked) {
        return Ok(());
    }
    let what = match &t.name {
        Some(n) => format!("{} {n:?}", t.qualified()),
        None => t.qualified(),
    };
    let scope = match &t.namespace {
        Some(ns) => format!("in the namespace {ns:?}"),
        None => "at the cluster scope".to_string(),
    };
    let sub = if t.status {
        " subresource \"status\""
    } else {
        ""
    };
    Err(fail(
        403,
        "Forbidden",
        format!(
            "{what} is forbidden: User {:?} cannot {verb} resource {:?}{sub} in API group {:?} {scope}",
            who.user, t.rt.plural, t.rt.group
        ),
    ))
}

/// Carries an authorised verb out.
fn dispatch(st: &mut ApiState, verb: Verb, call: &Call) -> Result<(u16, Reply), Failure> {
    let (t, who, dry_run) = (&call.target, &call.who, call.query.dry_run());
    let (code, obj) = match verb {
        Verb::Get => return get(st, call),
        Verb::List | Verb::Watch => return list(st, call),
        Verb::Create => {
            let fields = Fields::Updated(&call.manager);
            (201, st.create(t, call.body()?, who, dry_run, fields)?)
        }
        Verb::Update => {
            let fields = Fields::Updated(&call.manager);
            (
                200,
                st.update(t, call.body()?, who, dry_run, "update", fields)?,
            )
        }
        Verb::Patch => patch(st, call)?,
        Verb::Delete => (200, delete(st, call)?),
    };
    Ok((code, Reply::Json(obj)))
}

/// A get or list from a version the API has not reached (it waited for it, in `serve`):
/// 504, "Too large resource version".
fn not_reached(st: &ApiState, call: &Call) -> Result<(), Failure> {
    match super::watch::required(call.req.method(), &call.query) {
        Some(rv) if rv > st.resource_version => {
            Err(super::watch::too_large(rv, st.resource_version))
        }
        _ => Ok(()),
    }
}

fn get(st: &ApiState, call: &Call) -> Result<(u16, Reply), Failure> {
    not_reached(st, call)?;
    let obj = st.get(&call.target)?;
    if !call.wants_table() {
        if call.target.rt.group == "events.k8s.io" {
            return Ok((200, Reply::Json(to_events_v1(&obj))));
        }
        return Ok((200, Reply::Json(obj)));
    }
    // kubectl's default output: the kind's columns, printed server-side.
    let rv = st.resource_version.to_string();
    let now = jiff::Timestamp::now();
    let table = table::table(&call.target.rt, &[&obj], &rv, now, call.include()?);
    Ok((200, Reply::Json(table)))
}

/// A list, with its label and field selectors.
fn list(st: &ApiState, call: &Call) -> Result<(u16, Reply), Failure> {
    not_reached(st, call)?;
    let rt = &call.target.rt;
    let selector = LabelSelector::parse(call.query.get("labelSelector").unwrap_or(""))
        .map_err(|e| fail(400, "BadRequest", e))?;
    let fields = FieldSelector::parse(rt, call.query.get("fieldSelector").unwrap_or(""))
        .map_err(|e| fail(400, "BadRequest", e))?;
    let (at, gone) = snapshot_version(call)?;
    let mut items: Vec<Arc<Value>> = match at {
        Some(v) => st
            .list_at(&call.target, &selector, v)
            .map_err(|()| gone.failure())?,
        None => st
            .list_items(&call.target, &selector)
            .into_iter()
            .cloned()
            .collect(),
    };
    if !fields.is_empty() {
        items.retain(|obj| fields.matches_object(rt.plural, obj));
    }
    let rv = match (at, call.query.get("resourceVersionMatch")) {
        (Some(v), Some("Exact")) => v.to_string(),
        _ => st.resource_version.to_string(),
    };
    let paging::Page { items, metadata } = paging::page(
        items,
        call.query.get("limit"),
        call.query.get("continue"),
        &rv,
    )?;
    if call.wants_table() {
        let items: Vec<&Value> = items.iter().map(|i| &**i).collect();
        let mut table = table::table(rt, &items, &rv, jiff::Timestamp::now(), call.include()?);
        table["metadata"] = metadata;
        return Ok((200, Reply::Json(table)));
    }
    if call.wants_metadata() {
        let items: Vec<Value> = items
            .into_iter()
            .map(|o| {
                json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                            "metadata": o["metadata"]})
            })
            .collect();
        let list = json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                          "metadata": metadata, "items": items});
        return Ok((200, Reply::Json(list)));
    }
    if rt.group == "events.k8s.io" {
        let items: Vec<Value> = items.iter().map(|i| to_events_v1(i)).collect();
        let list = json!({"apiVersion": rt.api_version(), "kind": "EventList",
                          "metadata": metadata, "items": items});
        return Ok((200, Reply::Json(list)));
    }
    // The stored objects as they are, encoded once the lock is let go: no copy of a large
    // list, and no write waits for its encoding.
    let list = ListOut {
        api_version: rt.api_version(),
        kind: format!("{}List", rt.kind),
        metadata,
        items,
    };
    Ok((200, Reply::List(list)))
}

/// The resourceVersion a list is served at when not the newest: a continue token's (the
/// first page's), or `resourceVersion` under `resourceVersionMatch=Exact`; and what to answer
/// when it is gone.
fn snapshot_version(call: &Call) -> Result<(Option<u64>, Gone), Failure> {
    let bad = |what: &str| fail(400, "BadRequest", what.to_string());
    if let Some(token) = call.query.get("continue").filter(|c| !c.is_empty()) {
        let rv = paging::token_version(token)?;
        return Ok((Some(rv), Gone::Continue));
    }
    match call.query.get("resourceVersionMatch") {
        None | Some("") | Some("NotOlderThan") => Ok((None, Gone::Continue)),
        Some("Exact") => {
            let rv = call
                .query
                .get("resourceVersion")
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| *v > 0)
                .ok_or_else(|| bad("resourceVersionMatch: Forbidden: resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"\" or \"0\""))?;
            Ok((Some(rv), Gone::Exact(rv)))
        }
        Some(_) => Err(bad(
            "resourceVersionMatch: Unsupported value: supported values: \"Exact\", \"NotOlderThan\"",
        )),
    }
}

/// A patch: JSON merge patch, JSON patch and server-side apply on every resource, strategic
/// merge patch on the built-in kinds (see `patch`); `force` is for an apply only.
fn patch(st: &mut ApiState, call: &Call) -> Result<(u16, Value), Failure> {
    let ct = call.header(http::header::CONTENT_TYPE).unwrap_or("");
    let rt = &call.target.rt;
    let built_in = rt.group.is_empty() || rt.group.ends_with(".k8s.io");
    let kind = PatchType::of(ct, built_in)?;
    let force = query_bool(call.query.get("force"));
    let dry_run = call.query.dry_run();
    if kind == PatchType::Apply {
        let how = Apply {
            body: call.req.body(),
            manager: &call.manager,
            force,
        };
        return st.apply(&call.target, &how, &call.who, dry_run);
    }
    if force {
        let message = "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch";
        let details = json!({"causes": [{"reason": "FieldValueForbidden",
            "message": "Forbidden: may not be specified for non-apply patch", "field": "force"}]});
        return Err((422, status_body(422, "Invalid", message, Some(details))));
    }
    let obj = st.patch(
        &call.target,
        kind,
        call.req.body(),
        &call.who,
        dry_run,
        &call.manager,
    )?;
    Ok((200, obj))
}

/// A delete, with the DeleteOptions body's dry run and preconditions.
fn delete(st: &mut ApiState, call: &Call) -> Result<Value, Failure> {
    let options = if call.req.body().is_empty() {
        Value::Null
    } else {
        call.body()?
    };
    let dry_run = call.query.dry_run()
        || options
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "All"));
    let pre = options.get("preconditions").cloned().unwrap_or(Value::Null);
    st.delete(&call.target, &call.who, dry_run, &pre)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let q = Query::parse(Some("labelSelector=a%3Db%2Cc+d&dryRun=All&watch"));
        assert_eq!(q.get("labelSelector"), Some("a=b,c d"));
        assert!(q.dry_run());
        assert_eq!(q.get("watch"), Some(""));
        assert_eq!(q.get("missing"), None);
    }
}
