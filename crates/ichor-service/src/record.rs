//! What the service keeps of each write it makes, beside the write: the history entry on the
//! operation (written in the same request as a pause, a resume or a create; just before a
//! delete, which is preconditioned on it) and a Kubernetes Event naming the person, for
//! `kubectl get events` and the Events view. The Event is written as the caller, after the
//! write, under a short deadline of its own; one that cannot be written is logged, never
//! failing a write that landed.

use super::OperationService;
use super::access::Caller;
use ichor_model::{HistoryAction, HistoryEntry, HistoryOutcome, history_appended};
use ichor_resources::{TalosOperation, history, names};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ObjectMeta, PostParams};
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
        HistoryAction::Delete => "DeleteRequested",
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

/// The Event recording `entry` on `op`.
fn event(op: &TalosOperation, entry: &HistoryEntry, route: &str) -> Event {
    let name = op.metadata.name.clone().unwrap_or_default();
    let at = entry.at.unwrap_or_else(Timestamp::now);
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{name}.{:016x}", fastrand::u64(..))),
            namespace: op.metadata.namespace.clone(),
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
            namespace: op.metadata.namespace.clone(),
            uid: op.metadata.uid.clone(),
            resource_version: op.metadata.resource_version.clone(),
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
    /// Records `entry` on `op` (as written) as an Event made as the caller; logged, never
    /// failing, when it cannot be written.
    pub(crate) async fn record_event(
        &self,
        caller: &Caller,
        op: &TalosOperation,
        entry: &HistoryEntry,
    ) {
        let Some(ns) = op.metadata.namespace.as_deref() else {
            return;
        };
        let api: Api<Event> = self.api(caller, Some(ns));
        let ev = event(op, entry, self.access.route(caller));
        let sent =
            tokio::time::timeout(EVENT_DEADLINE, api.create(&PostParams::default(), &ev)).await;
        let why = match sent {
            Ok(Ok(_)) => return,
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer in {} s", EVENT_DEADLINE.as_secs()),
        };
        tracing::warn!(
            operation = op.metadata.name.as_deref().unwrap_or_default(),
            action = entry.action.as_str(),
            "the event recording who asked was not written: {}",
            ichor_model::inert::truncate(&ichor_model::inert::sanitize(&why), 200)
        );
    }
}
