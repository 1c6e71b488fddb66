//! ListOperationEvents: the Kubernetes Events (core/v1) the controller recorded about an
//! operation and about its machines for that operation (`related` to its uid; see `belongs`),
//! newest first, read as the caller (RBAC on events decides). Each event is decoded on its
//! own; one that cannot be read is left out. Their text is the cluster's: made inert and
//! bounded here.

use super::OperationService;
use super::access::{Caller, map_kube_error};
use super::validate::{self, NameOf};
use ichor_model::{
    ApiError, EventsWanted, MAX_EVENT_MESSAGE, Operation, OperationEvent, OperationEvents,
};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use serde::Deserialize;
use serde_json::Value;

/// The reason and kind words kept (Kubernetes allows 128 for a reason).
const MAX_WORD: usize = 128;

fn inert(s: &str, max: usize) -> String {
    ichor_model::inert::truncate(&ichor_model::inert::sanitize(s), max)
}

/// An event as the page shows it.
fn event(e: &Event) -> OperationEvent {
    let o = &e.involved_object;
    OperationEvent {
        warning: e.type_.as_deref() == Some("Warning"),
        reason: inert(e.reason.as_deref().unwrap_or(""), MAX_WORD),
        message: inert(e.message.as_deref().unwrap_or(""), MAX_EVENT_MESSAGE),
        object_kind: inert(o.kind.as_deref().unwrap_or(""), MAX_WORD),
        object_name: inert(o.name.as_deref().unwrap_or(""), 253),
        count: e.count.and_then(|c| u32::try_from(c).ok()).unwrap_or(1),
        first_at: e
            .first_timestamp
            .as_ref()
            .map(|t| t.0)
            .or_else(|| e.event_time.as_ref().map(|t| t.0)),
        last_at: e
            .last_timestamp
            .as_ref()
            .map(|t| t.0)
            .or_else(|| {
                e.series
                    .as_ref()
                    .and_then(|s| s.last_observed_time.as_ref().map(|t| t.0))
            })
            .or_else(|| e.event_time.as_ref().map(|t| t.0)),
    }
}

/// The order in which the API wrote the event: its resourceVersion, when it is a number (as
/// etcd's revisions are; an opaque one orders nothing).
fn written(e: &Event) -> u64 {
    e.metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Whether `e` is about `op` or about one of its machines for it.
///
/// The controller records a machine's step on the Machine with `related` naming the
/// TalosOperation, so a machine's event is this operation's when it is related to its uid: a
/// later operation on the same machines names its own, and is left out. An event related to
/// the operation by name only (no uid) counts while the operation lived. An event about a
/// machine that names no operation (another component's) is counted only while the operation
/// lived: from its creation to its finish (to now while it runs).
fn belongs(e: &Event, op: &Operation) -> bool {
    let o = &e.involved_object;
    let name = o.name.as_deref().unwrap_or("");
    match o.kind.as_deref() {
        // Of this operation, not of an earlier one of the same name.
        Some("TalosOperation") => name == op.name && same_uid(o.uid.as_deref(), op),
        Some("Machine") => {
            op.machines.iter().any(|m| m.name == name)
                && match e.related.as_ref() {
                    Some(r) if r.kind.as_deref() == Some("TalosOperation") => {
                        match r.uid.as_deref().filter(|u| !u.is_empty()) {
                            Some(uid) if !op.uid.is_empty() => uid == op.uid,
                            _ => r.name.as_deref() == Some(op.name.as_str()) && while_alive(e, op),
                        }
                    }
                    _ => while_alive(e, op),
                }
        }
        _ => false,
    }
}

/// Whether an object's uid is the operation's (unknown on either side: not told apart).
fn same_uid(uid: Option<&str>, op: &Operation) -> bool {
    uid.is_none_or(|u| op.uid.is_empty() || u == op.uid)
}

/// Whether `e` happened while `op` lived: first seen no later than its finish and last seen no
/// earlier than its creation (a time not known does not exclude it).
fn while_alive(e: &Event, op: &Operation) -> bool {
    let ev = event(e);
    let (first, last) = (ev.first_at.or(ev.at()), ev.at());
    let after_created = match (last, op.created_at) {
        (Some(at), Some(created)) => at >= created,
        _ => true,
    };
    let before_finished = match (first, op.finished_at) {
        (Some(at), Some(finished)) => at <= finished,
        _ => true,
    };
    after_created && before_finished
}

impl OperationService {
    /// The events of `name` in `namespace` and of its machines, newest first: the newest
    /// [`ichor_model::MAX_EVENTS`] or, when all are wanted, up to
    /// [`ichor_model::MAX_EVENTS_ALL`]; with how many there are.
    pub async fn list_operation_events(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
        wanted: EventsWanted,
    ) -> Result<OperationEvents, ApiError> {
        validate::namespace(namespace)?;
        validate::name(NameOf::Operation, name)?;
        let op = self.get_operation(caller, namespace, name).await?;
        let own = self
            .events(
                caller,
                namespace,
                &format!("involvedObject.kind=TalosOperation,involvedObject.name={name}"),
            )
            .await?;
        let machines = match op.machines.is_empty() {
            true => Vec::new(),
            false => {
                self.events(caller, namespace, "involvedObject.kind=Machine")
                    .await?
            }
        };
        let mut events: Vec<(OperationEvent, u64)> = own
            .iter()
            .chain(machines.iter())
            .filter(|e| belongs(e, &op))
            .map(|e| (event(e), written(e)))
            .collect();
        // Event times have whole seconds: within one, the later write is the newer.
        events.sort_by_key(|(e, rv)| std::cmp::Reverse((e.at(), *rv)));
        let total = events.len();
        events.truncate(wanted.limit());
        Ok(OperationEvents {
            events: events.into_iter().map(|(e, _)| e).collect(),
            total: Some(total),
        })
    }

    /// The events of `namespace` the field selector names, each decoded on its own.
    async fn events(
        &self,
        caller: &Caller,
        namespace: &str,
        fields: &str,
    ) -> Result<Vec<Event>, ApiError> {
        let what = "listing events";
        let api: Api<Event> = self.api(caller, Some(namespace));
        let req = kube::core::Request::new(api.resource_url())
            .list(&ListParams::default().fields(fields))
            .map_err(|e| map_kube_error(what, kube::Error::BuildRequest(e)))?;
        let client = self.access.as_caller(caller);
        let body = self.access.call(what, client.request_text(req)).await?;
        let list: Value = serde_json::from_str(&body).map_err(|e| {
            ApiError::new(
                ichor_model::Code::Internal,
                format!(
                    "{what}: the answer is not JSON: {}",
                    inert(&e.to_string(), 200)
                ),
            )
        })?;
        Ok(list
            .get("items")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| Event::deserialize(i).ok())
                    .collect()
            })
            .unwrap_or_default())
    }
}
