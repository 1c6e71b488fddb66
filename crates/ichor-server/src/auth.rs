//! Who is calling: the bearer token in the `authorization` metadata, verified by a Kubernetes
//! TokenReview made with the server's own client. The service then acts as that user through
//! impersonation. Tokens are never logged and never part of an error.

use ichor_model::{ApiError, Code, Reason};
use ichor_service::access::{Caller, Identity, KubeAccess};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// How long a token's review is trusted (kube-apiserver's webhook token authenticator caches
/// for 2 minutes; a dashboard polls every few seconds).
pub(crate) const REVIEW_TTL: Duration = Duration::from_secs(30);

/// How many reviewed tokens are remembered at most.
const CACHE_LIMIT: usize = 1024;

const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";

/// Turns a call's metadata into the caller the service acts as.
pub(crate) struct Authenticator {
    access: KubeAccess,
    allow_anonymous: bool,
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
    /// `access` holds the server's own client, which must be allowed to create tokenreviews.
    pub(crate) fn new(access: KubeAccess, allow_anonymous: bool) -> Authenticator {
        Authenticator {
            access,
            allow_anonymous,
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

    /// Asks the Kubernetes API who the token belongs to.
    async fn review(&self, token: &str) -> Result<Identity, ApiError> {
        if let Some(id) = self.cached(token) {
            return Ok(id);
        }
        let body = json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        });
        let request = http::Request::post(TOKEN_REVIEWS)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body.to_string().into_bytes())
            .map_err(|e| {
                ApiError::new(Code::Internal, format!("building the token review: {e}"))
            })?;
        let client = self.access.own();
        let review: Value = self
            .access
            .call(
                "reviewing the caller's token",
                client.request::<Value>(request),
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
        let user = status
            .pointer("/user/username")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
            .ok_or_else(|| unauthenticated("the token review named no user"))?;
        let groups = status
            .pointer("/user/groups")
            .and_then(Value::as_array)
            .map(|g| {
                g.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let id = Identity {
            user: user.to_string(),
            groups,
        };
        self.remember(token, &id);
        Ok(id)
    }
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
        )
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
