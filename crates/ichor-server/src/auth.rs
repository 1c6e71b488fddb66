//! Who is calling: the bearer token in the `authorization` metadata. By default
//! ([`AuthMode::Impersonate`], ADR 0058) a Kubernetes TokenReview made with the server's own
//! client says who it is (user, groups, uid, extras), and the service acts as them through
//! impersonation, carrying only the groups serve may impersonate ([`super::impersonable`]).
//! With [`AuthMode::Passthrough`] a SelfSubjectReview made with the caller's own token says who
//! they are, and the service sends that token as their credentials: no review by serve, no
//! impersonation. Tokens are never logged and never part of an error.

use super::impersonable::Impersonable;
use ichor_model::{ApiError, Code, Reason};
use ichor_service::access::{Acting, BearerToken, Caller, Identity, KubeAccess};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// How serve acts as its callers (`serve --auth`).
#[derive(Clone, Default)]
pub enum AuthMode {
    /// A TokenReview says who the token is, and every request impersonates them with serve's
    /// own credentials (the default).
    #[default]
    Impersonate,
    /// The caller's own token goes to the Kubernetes API as their credentials (for API
    /// servers that accept the same tokens: OIDC, service accounts). `bare` reaches the same
    /// API server with no credentials of its own.
    Passthrough { bare: kube::Client },
}

/// How long a token's review is trusted (kube-apiserver's webhook token authenticator caches
/// for 2 minutes; a dashboard polls every few seconds).
pub(crate) const REVIEW_TTL: Duration = Duration::from_secs(30);

/// How many reviewed tokens are remembered at most.
const CACHE_LIMIT: usize = 1024;

const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
const SELF_SUBJECT_REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// Turns a call's metadata into the caller the service acts as.
pub(crate) struct Authenticator {
    access: KubeAccess,
    allow_anonymous: bool,
    /// `Some` in impersonation: which groups serve may impersonate. `None`: passthrough.
    impersonable: Option<Impersonable>,
    ttl: Duration,
    /// Token → identity and when it was reviewed. Only accepted tokens are kept.
    cache: Mutex<HashMap<String, (Instant, Identity)>>,
    /// Turns to ask Kubernetes ([`super::pools::MAX_TOKEN_REVIEWS`]); `None`: unbounded (the
    /// unit tests).
    reviews: Option<super::shares::Shares>,
}

/// A refusal of the caller's credentials; `message` (which never holds the token) is also the
/// `detail` the dashboard shows.
fn unauthenticated(message: &str) -> ApiError {
    ApiError::refused(
        Code::Unauthenticated,
        Reason::Unauthenticated,
        &[("detail", message)],
        message,
    )
}

impl Authenticator {
    /// Impersonating: `access` holds the server's own client, which must be allowed to create
    /// tokenreviews. Passing tokens through: `access` was given the bare client
    /// ([`KubeAccess::passing_tokens_through`]).
    pub(crate) fn new(access: KubeAccess, allow_anonymous: bool, mode: &AuthMode) -> Authenticator {
        let impersonable = match mode {
            AuthMode::Impersonate => Some(Impersonable::new(access.clone(), REVIEW_TTL)),
            AuthMode::Passthrough { .. } => None,
        };
        Authenticator {
            access,
            allow_anonymous,
            impersonable,
            ttl: REVIEW_TTL,
            cache: Mutex::new(HashMap::new()),
            reviews: None,
        }
    }

    /// Reviews take a turn of `reviews` first.
    pub(crate) fn reviewing_in_turn(mut self, reviews: super::shares::Shares) -> Authenticator {
        self.reviews = Some(reviews);
        self
    }

    /// A review is trusted for at most `ttl` (less than [`REVIEW_TTL`] when the server asks
    /// Kubernetes about its callers more often: a stream's token is reviewed again at each
    /// recheck of its permission, and a cached review would hide a revoked token).
    pub(crate) fn trusting_reviews_for(mut self, ttl: Duration) -> Authenticator {
        self.ttl = ttl.min(REVIEW_TTL);
        if let Some(i) = &mut self.impersonable {
            *i = Impersonable::new(self.access.clone(), self.ttl);
        }
        self
    }

    /// The caller of a call, from its headers alone: the reviewed user, or with
    /// `--allow-anonymous` and no token at all, the server itself. A token that is sent always
    /// decides.
    pub(crate) async fn caller(&self, headers: &http::HeaderMap) -> Result<Caller, ApiError> {
        self.caller_on(headers, None).await
    }

    /// [`Authenticator::caller`] of a call on `connection`, which waits for the answer while
    /// Kubernetes reviews the token (and only then: not while the review waits for its turn).
    pub(crate) async fn caller_on(
        &self,
        headers: &http::HeaderMap,
        connection: Option<&super::listen::Authenticated>,
    ) -> Result<Caller, ApiError> {
        let Some(value) = headers.get(http::header::AUTHORIZATION) else {
            if self.allow_anonymous {
                return Ok(Caller::in_process());
            }
            return Err(unauthenticated(
                "a bearer token is required (authorization: Bearer TOKEN)",
            ));
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                unauthenticated("the authorization metadata must be \"Bearer TOKEN\"")
            })?;
        if let Some(identity) = self.cached(token) {
            return Ok(Caller {
                identity: Some(identity),
            });
        }
        let _turn = match &self.reviews {
            Some(reviews) => Some(
                reviews
                    .take(&super::shares::Person::Undecided, None)
                    .await
                    .map_err(|r| r.error())?,
            ),
            None => None,
        };
        let _reviewing = connection.map(super::listen::Authenticated::under_review);
        let identity = self.review(token).await?;
        Ok(Caller {
            identity: Some(identity),
        })
    }

    fn cached(&self, token: &str) -> Option<Identity> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(token)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, id)| id.clone())
    }

    fn remember(&self, token: &str, id: &Identity) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= CACHE_LIMIT {
            let ttl = self.ttl;
            cache.retain(|_, (at, _)| at.elapsed() < ttl);
            if cache.len() >= CACHE_LIMIT {
                cache.clear();
            }
        }
        cache.insert(token.to_string(), (Instant::now(), id.clone()));
    }

    /// Who the token belongs to: remembered, or asked of Kubernetes as the mode says.
    async fn review(&self, token: &str) -> Result<Identity, ApiError> {
        if let Some(id) = self.cached(token) {
            return Ok(id);
        }
        let id = match &self.impersonable {
            Some(impersonable) => {
                let mut id = self.token_review(token).await?;
                if !ichor_service::access::is_service_account(&id.user) {
                    id.groups = impersonable.groups(std::mem::take(&mut id.groups)).await?;
                }
                id
            }
            None => self.self_subject_review(token).await?,
        };
        self.remember(token, &id);
        Ok(id)
    }

    /// A TokenReview made with the server's own client: who the token is.
    async fn token_review(&self, token: &str) -> Result<Identity, ApiError> {
        let body = json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        });
        let client = self.access.own();
        let review = self
            .access
            .call(
                "reviewing the caller's token",
                client.request::<Value>(post(TOKEN_REVIEWS, &body)?),
            )
            .await
            .map_err(|e| match e.code {
                // The server's own identity may not review tokens: not the caller's fault.
                Code::PermissionDenied | Code::Unauthenticated => ApiError {
                    code: Code::Internal,
                    reason: Some(Reason::Internal),
                    message: format!(
                        "the server cannot review tokens (it needs create on tokenreviews.authentication.k8s.io): {}",
                        e.message
                    ),
                    params: e.params,
                },
                _ => e,
            })?;
        let status = review.get("status").unwrap_or(&Value::Null);
        if status.get("authenticated").and_then(Value::as_bool) != Some(true) {
            let why = status.get("error").and_then(Value::as_str).unwrap_or("");
            tracing::info!(
                reason = why,
                "a bearer token was rejected by the token review"
            );
            return Err(unauthenticated(
                "the bearer token was not accepted by the Kubernetes API (TokenReview)",
            ));
        }
        user_info(status.get("user"), Acting::Impersonating)
    }

    /// A SelfSubjectReview made with the caller's own token (passthrough): who it is, as the
    /// API server itself authenticates it.
    async fn self_subject_review(&self, token: &str) -> Result<Identity, ApiError> {
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
        let token = BearerToken::new(token);
        let client = self.access.with_own_token(&token);
        let review = self
            .access
            .call(
                "asking who the caller's token is",
                client.request::<Value>(post(SELF_SUBJECT_REVIEWS, &body)?),
            )
            .await
            .map_err(|e| match e.code {
                Code::Unauthenticated => {
                    tracing::info!("a bearer token was rejected by the Kubernetes API");
                    unauthenticated(
                        "the bearer token was not accepted by the Kubernetes API (SelfSubjectReview)",
                    )
                }
                Code::NotFound => ApiError::new(
                    Code::Internal,
                    "the Kubernetes API does not answer SelfSubjectReviews (--auth passthrough needs Kubernetes 1.28 or later)",
                ),
                _ => e,
            })?;
        user_info(review.pointer("/status/userInfo"), Acting::OwnToken(token))
    }
}

/// A POST of `body` (JSON) to `path`.
fn post(path: &str, body: &Value) -> Result<http::Request<Vec<u8>>, ApiError> {
    http::Request::post(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body.to_string().into_bytes())
        .map_err(|e| ApiError::new(Code::Internal, format!("building a review: {e}")))
}

/// The identity a review's `UserInfo` names (`username`, `groups`, `uid`, `extra`), acted as
/// `acting`. Unnamed, it is no one: unauthenticated.
fn user_info(info: Option<&Value>, acting: Acting) -> Result<Identity, ApiError> {
    let info = info.unwrap_or(&Value::Null);
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let user = info
        .get("username")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| unauthenticated("the review named no user"))?;
    let extra: BTreeMap<String, Vec<String>> = info
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), strings(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    Ok(Identity {
        user: user.to_string(),
        groups: strings(info.get("groups")),
        uid: info
            .get("uid")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
            .map(str::to_string),
        extra,
        acting,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ichor_demo::apiserver::auth::users;
    use ichor_demo::apiserver::{EmbeddedApi, Fault};

    fn md(auth: Option<&str>) -> http::HeaderMap {
        let mut m = http::HeaderMap::new();
        if let Some(a) = auth {
            m.insert("authorization", http::HeaderValue::try_from(a).unwrap());
        }
        m
    }

    fn authenticator(api: &EmbeddedApi, token: &str, anonymous: bool) -> Authenticator {
        Authenticator::new(
            KubeAccess::new(api.client(token), "ichor-tui-server"),
            anonymous,
            &AuthMode::Impersonate,
        )
    }

    fn passing_through(api: &EmbeddedApi) -> Authenticator {
        let access = KubeAccess::new(api.client(users::SERVER_TOKEN), "ichor-tui-server")
            .passing_tokens_through(api.bare_client());
        let mode = AuthMode::Passthrough {
            bare: api.bare_client(),
        };
        Authenticator::new(access, false, &mode)
    }

    #[tokio::test]
    async fn in_passthrough_the_callers_own_token_says_who_they_are() {
        let api = EmbeddedApi::default();
        let a = passing_through(&api);
        let c = a
            .caller(&md(Some(&format!("Bearer {}", users::OPERATOR_TOKEN))))
            .await
            .unwrap();
        let id = c.identity.unwrap();
        assert_eq!(id.user, users::OPERATOR);
        assert!(matches!(id.acting, Acting::OwnToken(_)));
        let asked: Vec<_> = api
            .requests_by()
            .into_iter()
            .map(|r| (r.user, r.resource))
            .collect();
        assert_eq!(
            asked,
            [(
                users::OPERATOR.to_string(),
                "selfsubjectreviews".to_string()
            )],
            "asked with the caller's token, nothing as the server"
        );
        let e = a.caller(&md(Some("Bearer nope"))).await.unwrap_err();
        assert_eq!(e.code, Code::Unauthenticated);
        assert!(!e.message.contains("nope"), "{}", e.message);
    }

    #[tokio::test]
    async fn an_impersonated_callers_groups_are_those_the_role_names_with_the_uid_and_extras() {
        let api = EmbeddedApi::default();
        let extra = BTreeMap::from([("example.com/team".to_string(), vec!["blue".to_string()])]);
        api.add_token_with(
            "dana-token",
            ("dana", &["ichor:operators", "system:masters"]),
            Some("uid-dana"),
            extra.clone(),
        );
        let a = authenticator(&api, users::SERVER_TOKEN, false);
        let id = a
            .caller(&md(Some("Bearer dana-token")))
            .await
            .unwrap()
            .identity
            .unwrap();
        assert_eq!(id.groups, ["ichor:operators"], "never system:masters");
        assert_eq!((id.uid.as_deref(), &id.extra), (Some("uid-dana"), &extra));
        assert_eq!(id.acting, Acting::Impersonating);
    }

    #[tokio::test]
    async fn a_reviewed_token_names_the_user_and_groups() {
        let api = EmbeddedApi::default();
        let a = authenticator(&api, users::SERVER_TOKEN, false);
        let c = a
            .caller(&md(Some(&format!("Bearer {}", users::OPERATOR_TOKEN))))
            .await
            .unwrap();
        let id = c.identity.unwrap();
        assert_eq!(id.user, users::OPERATOR);
        assert!(id.groups.iter().any(|g| g == "ichor:operators"));
    }

    #[tokio::test]
    async fn missing_malformed_and_rejected_tokens_are_unauthenticated() {
        let api = EmbeddedApi::default();
        let a = authenticator(&api, users::SERVER_TOKEN, false);
        for m in [
            md(None),
            md(Some("Basic YWRtaW4=")),
            md(Some("Bearer ")),
            md(Some("Bearer nope")),
        ] {
            let e = a.caller(&m).await.unwrap_err();
            assert_eq!(
                (e.code, e.reason),
                (Code::Unauthenticated, Some(Reason::Unauthenticated))
            );
            assert!(
                !e.message.contains("nope"),
                "no token in errors: {}",
                e.message
            );
            assert_eq!(
                e.param("detail"),
                Some(e.message.as_str()),
                "the dashboard has words to show"
            );
        }
        let anon = authenticator(&api, users::SERVER_TOKEN, true);
        assert_eq!(anon.caller(&md(None)).await.unwrap(), Caller::in_process());
        let e = anon.caller(&md(Some("Bearer nope"))).await.unwrap_err();
        assert_eq!(
            e.code,
            Code::Unauthenticated,
            "a token that is sent decides"
        );
    }

    #[tokio::test]
    async fn a_server_that_may_not_review_tokens_is_an_internal_fault() {
        let api = EmbeddedApi::default();
        let a = authenticator(&api, users::VIEWER_TOKEN, false);
        let e = a
            .caller(&md(Some(&format!("Bearer {}", users::OPERATOR_TOKEN))))
            .await
            .unwrap_err();
        assert_eq!(e.code, Code::Internal);
        assert!(e.message.contains("cannot review tokens"), "{}", e.message);
    }

    #[tokio::test(start_paused = true)]
    async fn reviews_are_remembered_for_a_while_and_faults_are_transient() {
        let api = EmbeddedApi::default();
        let a = authenticator(&api, users::SERVER_TOKEN, false);
        let bearer = md(Some(&format!("Bearer {}", users::ADMIN_TOKEN)));
        api.fail_next(1, Fault::Unavailable);
        assert_eq!(a.caller(&bearer).await.unwrap_err().code, Code::Unavailable);
        a.caller(&bearer).await.unwrap();
        // Within the TTL no review is made: the fault stays queued for the next request.
        api.fail_next(1, Fault::Unavailable);
        a.caller(&bearer).await.unwrap();
        tokio::time::advance(REVIEW_TTL).await;
        assert_eq!(a.caller(&bearer).await.unwrap_err().code, Code::Unavailable);
    }
}
