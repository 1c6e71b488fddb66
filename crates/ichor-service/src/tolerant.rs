//! Reading tolerantly: a list is decoded object by object, so one object that cannot be read as
//! its type (a status written by hand with the wrong type, a field from a newer controller)
//! becomes an [`Unreadable`] that says which object and why, and the rest of the list stays
//! live. The response is read as text and decoded here, never by kube's typed `list`/`get`,
//! which log the whole response body when decoding fails.

use super::OperationService;
use super::access::{Caller, map_kube_error};
use ichor_model::{ApiError, Code, Reason};
use ichor_resources::{
    IchorInstallation, IchorInstallationSpec, Machine, MachineSpec, TalosCluster, TalosClusterSpec,
    TalosClusterStatus, TalosOperation, TalosOperationSpec, TalosOperationStatus,
};
use kube::api::{Api, GetParams, ListParams, ObjectMeta};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most characters of a decoding error kept (it may quote a value of the object).
pub(crate) const MAX_WHY: usize = 200;

/// An object that could not be read as its type: its metadata (as far as it reads), the object
/// as JSON (to pick out what can be read, such as `spec.cluster`), and why, short and inert.
#[derive(Clone, Debug)]
pub(crate) struct Unreadable {
    /// Boxed: most objects read, and a `Result` with this as its error stays small.
    pub(crate) meta: Box<ObjectMeta>,
    pub(crate) raw: Value,
    pub(crate) why: String,
}

impl Unreadable {
    pub(crate) fn name(&self) -> String {
        self.meta.name.clone().unwrap_or_default()
    }

    pub(crate) fn namespace(&self) -> String {
        self.meta.namespace.clone().unwrap_or_default()
    }

    /// A string field of the object (`/spec/cluster`), when it is one.
    pub(crate) fn str_at(&self, pointer: &str) -> Option<&str> {
        self.raw.pointer(pointer).and_then(Value::as_str)
    }

    /// Whether this object may belong to `cluster`: its `spec.cluster` says so, or cannot be
    /// read.
    pub(crate) fn may_belong_to(&self, cluster: &str) -> bool {
        self.str_at("/spec/cluster").is_none_or(|c| c == cluster)
    }
}

/// A decoding error as a person reads it: which part, what, at most [`MAX_WHY`] characters,
/// control characters made inert.
pub(crate) fn why(part: Option<&str>, e: &dyn std::fmt::Display) -> String {
    let text = match part {
        Some(p) => format!("{p}: {e}"),
        None => e.to_string(),
    };
    ichor_model::inert::truncate(&ichor_model::inert::sanitize(&text), MAX_WHY)
}

/// A resource read part by part: which part of an object does not decode.
pub(crate) trait Tolerant: DeserializeOwned {
    /// The first part of `raw` (other than the metadata) that does not decode, and why.
    fn bad_part(raw: &Value) -> Option<(&'static str, String)>;
}

/// `raw[part]` decodes as `T` (an absent part is not this part's fault).
fn check<T: DeserializeOwned>(raw: &Value, part: &'static str) -> Option<(&'static str, String)> {
    let v = raw.get(part)?;
    T::deserialize(v).err().map(|e| (part, e.to_string()))
}

impl Tolerant for TalosOperation {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<TalosOperationSpec>(raw, "spec")
            .or_else(|| check::<Option<TalosOperationStatus>>(raw, "status"))
    }
}

impl Tolerant for TalosCluster {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<TalosClusterSpec>(raw, "spec")
            .or_else(|| check::<Option<TalosClusterStatus>>(raw, "status"))
    }
}

impl Tolerant for Machine {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<MachineSpec>(raw, "spec")
    }
}

impl Tolerant for IchorInstallation {
    fn bad_part(raw: &Value) -> Option<(&'static str, String)> {
        check::<IchorInstallationSpec>(raw, "spec")
    }
}

/// One object: `K`, or what can be said of it.
pub(crate) fn decode<K: Tolerant>(raw: Value) -> Result<K, Unreadable> {
    match K::deserialize(&raw) {
        Ok(k) => Ok(k),
        Err(whole) => {
            let meta_value = raw.get("metadata").cloned().unwrap_or(Value::Null);
            let (meta, why) = match ObjectMeta::deserialize(&meta_value) {
                Err(e) => {
                    // Even the metadata is wrong: keep what names the object.
                    let s = |k: &str| meta_value.get(k).and_then(Value::as_str).map(String::from);
                    let meta = ObjectMeta {
                        name: s("name"),
                        namespace: s("namespace"),
                        uid: s("uid"),
                        ..ObjectMeta::default()
                    };
                    (meta, why(Some("metadata"), &e))
                }
                Ok(meta) => {
                    let why = match K::bad_part(&raw) {
                        Some((part, e)) => why(Some(part), &e),
                        None => why(None, &whole),
                    };
                    (meta, why)
                }
            };
            Err(Unreadable {
                meta: Box::new(meta),
                raw,
                why,
            })
        }
    }
}

/// A list answer's items, each decoded on its own.
#[cfg(test)]
fn decode_list<K: Tolerant>(body: &str) -> Result<(Vec<K>, Vec<Unreadable>), ApiError> {
    decode_list_chunk(body).map(|(good, bad, _)| (good, bad))
}

/// One chunk of a list (`limit`/`continue`): its objects, as [`decode_list`] reads them, and
/// the token of the next chunk, if any.
pub(super) type Chunk<K> = (Vec<K>, Vec<Unreadable>, Option<String>);

fn decode_list_chunk<K: Tolerant>(body: &str) -> Result<Chunk<K>, ApiError> {
    let mut list: Value = serde_json::from_str(body).map_err(|e| unreadable_answer(&e))?;
    let next = list
        .pointer("/metadata/continue")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let items = match list.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items,
        Some(Value::Null) | None => Vec::new(),
        Some(_) => return Err(unreadable_answer(&"items is not a list")),
    };
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for item in items {
        match decode::<K>(item) {
            Ok(k) => good.push(k),
            Err(u) => bad.push(u),
        }
    }
    Ok((good, bad, next))
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
    use serde_json::json;

    fn op(name: &str, status: Value) -> Value {
        json!({
            "apiVersion": "ichor.maesh.dev/v1alpha1",
            "kind": "TalosOperation",
            "metadata": {"name": name, "namespace": "default", "uid": "u-1"},
            "spec": {"cluster": "c1", "kind": "talos", "maxUnavailable": 1},
            "status": status,
        })
    }

    #[test]
    fn one_bad_object_is_one_unreadable_item() {
        let body = json!({
            "apiVersion": "ichor.maesh.dev/v1alpha1",
            "kind": "TalosOperationList",
            "metadata": {},
            "items": [
                op("good", json!({"phase": "Running"})),
                op("bad", json!({"phase": 42})),
                op("other", json!({"phase": "Completed"})),
            ],
        })
        .to_string();
        let (good, bad) = decode_list::<TalosOperation>(&body).unwrap();
        assert_eq!(good.len(), 2);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].name(), "bad");
        assert!(
            bad[0].why.starts_with("status: invalid type: integer `42`"),
            "{}",
            bad[0].why
        );
        assert_eq!(bad[0].str_at("/spec/cluster"), Some("c1"));
        let body = json!({"items": [op("huge", json!({"machines": "y".repeat(100_000)}))]});
        let (_, bad) = decode_list::<TalosOperation>(&body.to_string()).unwrap();
        assert!(bad[0].why.chars().count() <= MAX_WHY, "{}", bad[0].why);
        let e = decode_list::<TalosOperation>("<html>").unwrap_err();
        assert_eq!(e.code, Code::Internal);
        assert!(e.message.len() < 300);
    }

    #[test]
    fn broken_metadata_still_names_the_object() {
        let mut raw = op("m", json!({}));
        raw["metadata"]["labels"] = json!(5);
        let u = decode::<TalosOperation>(raw).unwrap_err();
        assert_eq!(
            (u.name().as_str(), u.namespace().as_str()),
            ("m", "default")
        );
        assert!(u.why.starts_with("metadata: "), "{}", u.why);
    }
}
