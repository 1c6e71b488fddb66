//! What the service keeps of each write it makes, beside the write: the history entry on the
//! operation (written in the same request as a pause, a resume or a create, so one cannot land
//! without the other) and a Kubernetes Event naming the person, for `kubectl get events`, the
//! Events view and the report. A delete request carries no body to hold an entry: its record
//! is the Event alone, which outlives the operation. The Event is written as the caller, after the
//! write, under a short deadline of its own; one that cannot be written is logged, never
//! failing a write that landed.

use super::OperationService;
use super::access::Caller;
use ichor_model::{HistoryAction, HistoryEntry, HistoryOutcome, history_appended};
use ichor_resources::{TalosOperation, history, names};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ObjectMeta};
use std::time::Duration;

/// The longest an Event's write may delay a write's answer.
const EVENT_DEADLINE: Duration = Duration::from_secs(5);

/// The component the service's Events are reported by.
pub(crate) const EVENT_COMPONENT: &str = "ichor-operation-service";

/// The history annotation's value with `entry` appended to what `op` holds.
pub(crate) fn history_with(op: &TalosOperation, entry: HistoryEntry) -> String {
    history::encode(&history_appended(&held(op), entry))
}

/// The entries `op` holds, as read.
pub(crate) fn held(op: &TalosOperation) -> Vec<HistoryEntry> {
    op.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(names::HISTORY))
        .map(|v| history::decode(v))
        .unwrap_or_default()
}

/// A new entry by `actor`, now (to the millisecond, as it is written).
pub(crate) fn entry(action: HistoryAction, actor: &str, outcome: HistoryOutcome) -> HistoryEntry {
    let now = Timestamp::now();
    HistoryEntry {
        action,
        actor: actor.to_string(),
        at: Some(Timestamp::from_millisecond(now.as_millisecond()).unwrap_or(now)),
        outcome,
    }
}

/// The Event's reason for an action.
fn reason(action: &HistoryAction) -> &'static str {
    match action {
        HistoryAction::Start => "StartRequested",
        HistoryAction::Pause => "PauseRequested",
        HistoryAction::Resume => "ResumeRequested",
        HistoryAction::Delete => ichor_model::DELETE_REQUESTED,
        HistoryAction::ConfirmKubeProxySwitch => "KubeProxySwitchConfirmed",
        HistoryAction::Other(_) => "Requested",
    }
}

/// The Event's message: what was asked, by whom and by which route (English, as Kubernetes
/// Events are).
fn message(action: &HistoryAction, actor: &str, route: &str) -> String {
    let what = match action {
        HistoryAction::Start => "started",
        HistoryAction::Pause => "pause asked",
        HistoryAction::Resume => "resume asked",
        HistoryAction::Delete => "delete asked",
        HistoryAction::ConfirmKubeProxySwitch => "kube-proxy switch confirmed",
        HistoryAction::Other(_) => "asked",
    };
    format!("{what} by {actor} (through {route})")
}

/// The operation an Event is about.
pub(crate) struct Subject {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) uid: String,
    pub(crate) resource_version: String,
}

impl Subject {
    pub(crate) fn of(op: &TalosOperation) -> Subject {
        let m = &op.metadata;
        Subject {
            namespace: m.namespace.clone().unwrap_or_default(),
            name: m.name.clone().unwrap_or_default(),
            uid: m.uid.clone().unwrap_or_default(),
            resource_version: m.resource_version.clone().unwrap_or_default(),
        }
    }

    pub(crate) fn of_operation(op: &ichor_model::Operation) -> Subject {
        Subject {
            namespace: op.namespace.clone(),
            name: op.name.clone(),
            uid: op.uid.clone(),
            resource_version: op.resource_version.clone(),
        }
    }
}

/// The Event recording `entry` on `op`.
fn event(op: &Subject, entry: &HistoryEntry, route: &str) -> Event {
    let name = op.name.clone();
    let at = entry.at.unwrap_or_else(Timestamp::now);
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{name}.{:016x}", fastrand::u64(..))),
            namespace: Some(op.namespace.clone()),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: Some(format!(
                "{}/{}",
                ichor_resources::GROUP,
                ichor_resources::VERSION
            )),
            kind: Some("TalosOperation".into()),
            name: Some(name),
            namespace: Some(op.namespace.clone()),
            uid: Some(op.uid.clone()),
            resource_version: Some(op.resource_version.clone()),
            ..Default::default()
        },
        reason: Some(reason(&entry.action).into()),
        message: Some(message(&entry.action, &entry.actor, route)),
        type_: Some("Normal".into()),
        source: Some(EventSource {
            component: Some(EVENT_COMPONENT.into()),
            host: None,
        }),
        reporting_component: Some(EVENT_COMPONENT.into()),
        reporting_instance: Some(route.into()),
        first_timestamp: Some(Time(at)),
        last_timestamp: Some(Time(at)),
        count: Some(1),
        action: Some(entry.action.as_str().into()),
        ..Default::default()
    }
}

impl OperationService {
    /// Records `entry` on `op` as an Event made as the caller, once the write has landed and
    /// before it is answered (so whoever reads after the answer finds it), under a deadline of
    /// its own ([`EVENT_DEADLINE`]). One that cannot be written is logged, never failing the
    /// write that landed.
    pub(crate) async fn record_event(&self, caller: &Caller, op: &Subject, entry: &HistoryEntry) {
        let api: Api<Event> = Api::namespaced(self.access.as_caller(caller), &op.namespace);
        let ev = event(op, entry, self.access.route(caller));
        let sent = tokio::time::timeout(
            EVENT_DEADLINE,
            api.create(&crate::manager::post(false), &ev),
        )
        .await;
        let why = match sent {
            Ok(Ok(_)) => return,
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer in {} s", EVENT_DEADLINE.as_secs()),
        };
        tracing::warn!(
            operation = op.name.as_str(),
            action = entry.action.as_str(),
            "the event recording who asked was not written: {}",
            ichor_model::inert::truncate(&ichor_model::inert::sanitize(&why), 200)
        );
    }
}
