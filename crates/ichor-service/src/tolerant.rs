//! Reading tolerantly: a list is decoded object by object, so one object that cannot be read as
//! its type (a status written by hand with the wrong type, a field from a newer controller)
//! becomes an [`Unreadable`] that says which object and why, and the rest of the list stays
//! live. The response is read as text and decoded here, never by kube's typed `list`/`get`,
//! which log the whole response body when decoding fails.

use super::OperationService;
use super::access::{Caller, map_kube_error};
use ichor_model::{ApiError, Code, Reason};
use kube::api::{Api, GetParams, ListParams};
use serde_json::Value;

pub(crate) use ichor_resources::tolerant::{Chunk, Tolerant, Unreadable, decode};
use ichor_resources::tolerant::{NotAList, why};

/// One chunk of a list, decoded by the one tolerant decoder; an answer that is not a list is an
/// internal error.
fn decode_list_chunk<K: Tolerant>(body: &str) -> Result<Chunk<K>, ApiError> {
    ichor_resources::tolerant::decode_list(body).map_err(|NotAList(e)| unreadable_answer(&e))
}

/// How many objects one request of a list reads: a list holds one chunk's text and parsed JSON
/// at a time, not the whole list's (10,000 operations are 12 MB of JSON, parsed several times
/// that, for each call at once); 2,000 operations are about 2.4 MB. (kube-runtime's watcher
/// lists 500 at a time; the demo API answers each `continue` from the whole list, so fewer,
/// larger chunks cost less time there.)
const LIST_CHUNK: u32 = 2000;

/// An answer that is not a Kubernetes object or list at all.
fn unreadable_answer(e: &dyn std::fmt::Display) -> ApiError {
    let detail = why(None, e);
    ApiError::refused(
        Code::Internal,
        Reason::Internal,
        &[("what", "decoding the answer"), ("detail", &detail)],
        format!("decoding the answer: {detail}"),
    )
}

/// How often a list whose continue token expired is read again from the start.
const EXPIRED_RESTARTS: u32 = 3;

/// Whether a chunk's failure is its continue token expired (410: the snapshot it names is
/// compacted, answered as a conflict), and the list may start again: kube-apiserver's answer
/// to a list that took longer than its history reaches, which kube's own pager meets by
/// listing again.
pub(super) fn token_expired(e: &ApiError, with_token: bool, restarts: &mut u32) -> bool {
    if !with_token || e.code != Code::Aborted || *restarts >= EXPIRED_RESTARTS {
        return false;
    }
    *restarts += 1;
    true
}

impl OperationService {
    /// Lists `K` as the caller, each object decoded on its own.
    pub(super) async fn list_tolerant<K>(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
        what: &str,
    ) -> Result<(Vec<K>, Vec<Unreadable>), ApiError>
    where
        K: Tolerant + kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        let (mut good, mut bad) = (Vec::new(), Vec::new());
        let mut token: Option<String> = None;
        let mut restarts = 0;
        loop {
            let chunk = self
                .list_chunk::<K>(caller, namespace, what, token.as_deref())
                .await;
            let (g, b, next) = match chunk {
                Err(e) if token_expired(&e, token.is_some(), &mut restarts) => {
                    (good, bad, token) = (Vec::new(), Vec::new(), None);
                    continue;
                }
                other => other?,
            };
            good.extend(g);
            bad.extend(b);
            match next {
                Some(t) => token = Some(t),
                None => return Ok((good, bad)),
            }
        }
    }

    /// One chunk of [`LIST_CHUNK`] `K`, from the start or from `token`, as the caller.
    pub(super) async fn list_chunk<K>(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
        what: &str,
        token: Option<&str>,
    ) -> Result<Chunk<K>, ApiError>
    where
        K: Tolerant + kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        let api: Api<K> = self.api(caller, namespace);
        let client = self.access.as_caller(caller);
        let mut params = ListParams::default().limit(LIST_CHUNK);
        if let Some(t) = token {
            params = params.continue_token(t);
        }
        let req = kube::core::Request::new(api.resource_url())
            .list(&params)
            .map_err(|e| map_kube_error(what, kube::Error::BuildRequest(e)))?;
        let body = self.access.call(what, client.request_text(req)).await?;
        decode_list_chunk::<K>(&body).map_err(|e| in_context(what, e))
    }

    /// Reads one `K` as the caller: `None` when it does not exist.
    pub(super) async fn get_tolerant<K>(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
        what: &str,
    ) -> Result<Option<Result<K, Unreadable>>, ApiError>
    where
        K: Tolerant + kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        let raw = self.get_json::<K>(caller, namespace, name, what).await?;
        Ok(raw.map(decode::<K>))
    }

    /// Reads one `K` as the caller as JSON, whatever its fields hold: `None` when it does not
    /// exist.
    pub(super) async fn get_json<K>(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
        what: &str,
    ) -> Result<Option<Value>, ApiError>
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        let api: Api<K> = self.api(caller, Some(namespace));
        let req = kube::core::Request::new(api.resource_url())
            .get(name, &GetParams::default())
            .map_err(|e| map_kube_error(what, kube::Error::BuildRequest(e)))?;
        let client = self.access.as_caller(caller);
        let body = match self.access.call(what, client.request_text(req)).await {
            Ok(body) => body,
            Err(e) if e.code == Code::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let raw: Value =
            serde_json::from_str(&body).map_err(|e| in_context(what, unreadable_answer(&e)))?;
        Ok(Some(raw))
    }
}

fn in_context(what: &str, mut e: ApiError) -> ApiError {
    e.message = format!("{what}: {}", e.message);
    e.params.insert("what".into(), what.to_string());
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use ichor_resources::TalosOperation;

    #[test]
    fn an_answer_that_is_not_a_list_is_an_internal_error_said_briefly() {
        let e = decode_list_chunk::<TalosOperation>(&format!("<html>{}", "x".repeat(10_000)))
            .unwrap_err();
        assert_eq!((e.code, e.reason), (Code::Internal, Some(Reason::Internal)));
        assert!(
            e.message.starts_with("decoding the answer: "),
            "{}",
            e.message
        );
        assert!(e.message.len() < 300, "{}", e.message);
        let e = in_context("listing operations", e);
        assert_eq!(e.param("what"), Some("listing operations"));
    }
}
