//! Who a request is: its bearer token, then its impersonation headers if that user may
//! impersonate. And the reviews that answer who someone is and what they may do: TokenReview,
//! SelfSubjectReview and SelfSubjectAccessReview.

use super::auth::{AuthConfig, Identity};
use super::protobuf;
use super::rbac::Attributes;
use super::responses::{Failure, fail, parse_body};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Authenticates the bearer token, then applies impersonation headers if the user may.
pub(crate) fn authenticate(
    auth: &AuthConfig,
    headers: &http::HeaderMap,
) -> Result<Identity, Failure> {
    let token = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let who = token
        .and_then(|t| auth.authenticate(t))
        .cloned()
        .ok_or_else(|| fail(401, "Unauthorized", "Unauthorized"))?;
    impersonate(auth, who, headers)
}

/// What the `Impersonate-*` headers ask for: the user, groups, uid and extras (the extras'
/// keys unescaped and lower-cased, as kube-apiserver reads them).
struct Asked {
    user: Option<String>,
    groups: Vec<String>,
    uid: Option<String>,
    extra: BTreeMap<String, Vec<String>>,
}

impl Asked {
    /// What kube-apiserver asks RBAC before it impersonates: a service account's user name as
    /// that service account (`impersonate` on serviceaccounts, in its namespace), any other
    /// name as a user; each group as a group; the uid as a uid and each extra's value under
    /// `userextras/KEY` (authentication.k8s.io).
    fn checks<'a>(
        &'a self,
        user: &'a str,
        account: Option<(&'a str, &'a str)>,
    ) -> Vec<Attributes<'a>> {
        const AUTHENTICATION: &str = "authentication.k8s.io";
        let mut checks = vec![match account {
            Some((ns, name)) => {
                Attributes::resource("impersonate", "", "serviceaccounts", Some(name), Some(ns))
            }
            None => Attributes::resource("impersonate", "", "users", Some(user), None),
        }];
        checks.extend(
            self.groups
                .iter()
                .map(|g| Attributes::resource("impersonate", "", "groups", Some(g), None)),
        );
        if let Some(uid) = &self.uid {
            let uids = Attributes::resource("impersonate", AUTHENTICATION, "uids", Some(uid), None);
            checks.push(uids);
        }
        for (key, values) in &self.extra {
            for v in values {
                checks.push(Attributes::Resource {
                    verb: "impersonate",
                    group: AUTHENTICATION,
                    resource: "userextras",
                    subresource: key,
                    name: v,
                    namespace: "",
                });
            }
        }
        checks
    }

    fn of(headers: &http::HeaderMap) -> Asked {
        let text = |v: &http::HeaderValue| v.to_str().ok().map(str::to_string);
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, value) in headers {
            let Some(key) = name.as_str().strip_prefix("impersonate-extra-") else {
                continue;
            };
            let key = percent_encoding::percent_decode_str(key)
                .decode_utf8_lossy()
                .to_lowercase();
            extra.entry(key).or_default().extend(text(value));
        }
        Asked {
            user: headers.get("impersonate-user").and_then(text),
            groups: headers
                .get_all("impersonate-group")
                .iter()
                .filter_map(text)
                .collect(),
            uid: headers.get("impersonate-uid").and_then(text),
            extra,
        }
    }
}

/// The identity the `Impersonate-*` headers ask for, if `who` may impersonate each part of
/// it (as kube-apiserver checks: the user or service account, each group, the uid, each
/// extra's value); `who` itself without the headers.
fn impersonate(
    auth: &AuthConfig,
    who: Identity,
    headers: &http::HeaderMap,
) -> Result<Identity, Failure> {
    let asked = Asked::of(headers);
    let Some(user) = asked.user.as_deref() else {
        if !asked.groups.is_empty() || asked.uid.is_some() || !asked.extra.is_empty() {
            return Err(fail(
                500,
                "InternalError",
                "requested impersonation of groups, a uid or extras without a user",
            ));
        }
        return Ok(who);
    };
    // Acting as oneself (the same user, none but one's own groups, nothing more) gains
    // nothing: the demo's kubeconfig names each person with a token and `as` (kubectl sends no
    // token over plain HTTP and impersonates instead; a client that sends the token sends both).
    if user == who.user
        && asked.groups.iter().all(|g| who.groups.contains(g))
        && asked.uid.is_none()
        && asked.extra.is_empty()
    {
        let mut groups = asked.groups;
        groups.push("system:authenticated".to_string());
        groups.dedup();
        return Ok(Identity {
            user: user.to_string(),
            groups,
            ..Identity::default()
        });
    }
    let account = service_account(user);
    let checks = asked.checks(user, account);
    if let Some(refused) = checks.iter().find(|asked| !auth.allowed(&who, asked)) {
        return Err(impersonation_denied(&who, refused));
    }
    let mut groups = asked.groups;
    if let (Some((ns, _)), true) = (account, groups.is_empty()) {
        groups = vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{ns}"),
        ];
    }
    groups.push("system:authenticated".to_string());
    Ok(Identity {
        user: user.to_string(),
        groups,
        uid: asked.uid,
        extra: asked.extra,
        impersonated_by: Some(who.user),
    })
}

/// The namespace and name of a service account's user name
/// (`system:serviceaccount:NAMESPACE:NAME`).
fn service_account(user: &str) -> Option<(&str, &str)> {
    let (ns, name) = user
        .strip_prefix("system:serviceaccount:")?
        .split_once(':')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
}

/// kube-apiserver's refusal of an impersonation.
fn impersonation_denied(who: &Identity, asked: &Attributes) -> Failure {
    let Attributes::Resource {
        group,
        resource,
        subresource,
        name,
        namespace,
        ..
    } = asked
    else {
        return fail(403, "Forbidden", "impersonation is forbidden");
    };
    let resource = match subresource.is_empty() {
        true => resource.to_string(),
        false => format!("{resource}/{subresource}"),
    };
    let scope = match namespace.is_empty() {
        true => "at the cluster scope".to_string(),
        false => format!("in the namespace {namespace:?}"),
    };
    fail(
        403,
        "Forbidden",
        format!(
            "{resource} {name:?} is forbidden: User {:?} cannot impersonate resource {resource:?} in API group {group:?} {scope}",
            who.user
        ),
    )
}

/// The review endpoints (each answers a POST).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Review {
    /// Whether a token is valid, and whose: for a server that authenticates its own callers.
    Token,
    /// Who am I.
    SelfSubject,
    /// May I do this.
    SelfSubjectAccess,
    /// What may I do (in a namespace).
    SelfSubjectRules,
}

impl Review {
    /// The review served at `path`, if any.
    pub(crate) fn at(path: &str) -> Option<Review> {
        match path {
            "/apis/authentication.k8s.io/v1/tokenreviews" => Some(Review::Token),
            "/apis/authentication.k8s.io/v1/selfsubjectreviews" => Some(Review::SelfSubject),
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" => {
                Some(Review::SelfSubjectAccess)
            }
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews" => {
                Some(Review::SelfSubjectRules)
            }
            _ => None,
        }
    }

    /// The answer to `who` posting `body` (JSON, or protobuf as kubectl 1.32+ sends the
    /// reviews): 201 with the review and its status.
    pub(crate) fn answer(
        self,
        auth: &AuthConfig,
        who: &Identity,
        body: &Bytes,
        content_type: &str,
    ) -> Result<(u16, Value), Failure> {
        let decode = || {
            if content_type.starts_with(protobuf::MEDIA_TYPE) {
                protobuf::decode_review(body)
            } else {
                parse_body(body)
            }
        };
        match self {
            Review::Token => token_review(auth, who, body),
            Review::SelfSubject => Ok((201, self_subject_review(who))),
            Review::SelfSubjectAccess => access_review(auth, who, decode()?),
            Review::SelfSubjectRules => Ok((201, rules_review(auth, who, decode()?))),
        }
    }
}

fn token_review(auth: &AuthConfig, who: &Identity, body: &Bytes) -> Result<(u16, Value), Failure> {
    let asked = Attributes::resource(
        "create",
        "authentication.k8s.io",
        "tokenreviews",
        None,
        None,
    );
    if !auth.allowed(who, &asked) {
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
        Some(id) => json!({"authenticated": true, "user": user_info(id)}),
        None => json!({"authenticated": false, "error": "invalid bearer token"}),
    };
    if let Value::Object(m) = &mut review {
        m.insert("status".into(), status);
    }
    Ok((201, review))
}

/// A user as the reviews name them: `username`, `groups`, and `uid` and `extra` when known.
fn user_info(id: &Identity) -> Value {
    let mut info = json!({"username": id.user, "groups": id.groups});
    if let Some(uid) = &id.uid {
        info["uid"] = json!(uid);
    }
    if !id.extra.is_empty() {
        info["extra"] = json!(id.extra);
    }
    info
}

/// Who am I: any authenticated user may ask, as in Kubernetes 1.28+.
fn self_subject_review(who: &Identity) -> Value {
    json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "SelfSubjectReview",
        "metadata": {"creationTimestamp": null},
        "status": {"userInfo": user_info(who)},
    })
}

/// May the requester do this? Answered from the RBAC rules; a non-resource URL is allowed
/// where a rule names it (or `*`), and the discovery and health URLs to everyone, as
/// kube-apiserver's `system:discovery` and `system:public-info-viewer` roles allow them.
fn access_review(
    auth: &AuthConfig,
    who: &Identity,
    mut review: Value,
) -> Result<(u16, Value), Failure> {
    if let Some(attr) = review.pointer("/spec/nonResourceAttributes").cloned() {
        let field = |k: &str| {
            attr.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (path, verb) = (field("path"), field("verb"));
        let public = verb == "get" && PUBLIC_URLS.iter().any(|u| public_match(u, &path));
        let asked = Attributes::NonResource {
            verb: &verb,
            path: &path,
        };
        let allowed = public || auth.would_allow(who, &asked);
        if let Value::Object(m) = &mut review {
            m.insert("status".into(), json!({"allowed": allowed}));
        }
        return Ok((201, review));
    }
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
    let asked = Attributes::Resource {
        verb: field("verb"),
        group: field("group"),
        resource: field("resource"),
        subresource: field("subresource"),
        name: field("name"),
        namespace: field("namespace"),
    };
    let allowed = auth.would_allow(who, &asked);
    if let Value::Object(m) = &mut review {
        m.insert("status".into(), json!({"allowed": allowed}));
    }
    Ok((201, review))
}

/// The URLs every user may get (kube-apiserver's `system:discovery` and
/// `system:public-info-viewer`); a trailing `*` matches any rest.
const PUBLIC_URLS: [&str; 11] = [
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/readyz",
    "/openapi",
    "/openapi/*",
    "/version",
    "/version/",
];

fn public_match(pattern: &str, path: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => pattern == path,
    }
}

/// What may the requester do in `spec.namespace`: its RBAC rules there (every API group: the
/// demo's rules name resources only), the reviews every user may create, and the public URLs.
fn rules_review(auth: &AuthConfig, who: &Identity, mut review: Value) -> Value {
    let ns = review
        .pointer("/spec/namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let mut rules = vec![json!({
        "verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]
    })];
    for (verbs, resources) in auth.rules_for(who, ns.as_deref()) {
        rules.push(json!({"verbs": verbs, "apiGroups": ["*"], "resources": resources}));
    }
    for rule in auth.deployed_rules_for(who) {
        rules.push(serde_json::to_value(rule).unwrap_or_default());
    }
    let status = json!({
        "resourceRules": rules,
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": PUBLIC_URLS}],
        "incomplete": false,
    });
    if let Value::Object(m) = &mut review {
        m.insert("status".into(), status);
        m.entry("apiVersion")
            .or_insert(json!("authorization.k8s.io/v1"));
        m.entry("kind").or_insert(json!("SelfSubjectRulesReview"));
    }
    review
}
