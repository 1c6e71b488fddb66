//! Operation events, both ways.

use super::basics::{time_from_proto, time_to_proto};
use super::proto;
use ichor_model::{EventsWanted, OperationEvent, OperationEvents};

/// An event for the wire.
pub fn event_to_proto(e: &OperationEvent) -> proto::OperationEvent {
    proto::OperationEvent {
        r#type: if e.warning { "Warning" } else { "Normal" }.to_string(),
        reason: e.reason.clone(),
        message: e.message.clone(),
        object_kind: e.object_kind.clone(),
        object_name: e.object_name.clone(),
        count: e.count,
        first_at: time_to_proto(e.first_at),
        last_at: time_to_proto(e.last_at),
    }
}

/// An event from the wire (its text is made inert where it is drawn).
pub fn event_from_proto(e: proto::OperationEvent) -> OperationEvent {
    OperationEvent {
        warning: e.r#type == "Warning",
        first_at: time_from_proto(&e.first_at),
        last_at: time_from_proto(&e.last_at),
        reason: e.reason,
        message: e.message,
        object_kind: e.object_kind,
        object_name: e.object_name,
        count: e.count,
    }
}

/// An answer of ListOperationEvents for the wire: the events and how many there are.
pub fn events_to_proto(e: &OperationEvents) -> proto::ListOperationEventsResponse {
    proto::ListOperationEventsResponse {
        events: e.events.iter().map(event_to_proto).collect(),
        total: e.total.and_then(|t| u32::try_from(t).ok()),
    }
}

/// An answer of ListOperationEvents from the wire, bounded by what was asked for (a server
/// that sends more is not believed past the bound). A server from before the count says no
/// total.
pub fn events_from_proto(
    r: proto::ListOperationEventsResponse,
    wanted: EventsWanted,
) -> OperationEvents {
    let total = r.total.and_then(|t| usize::try_from(t).ok());
    let mut events: Vec<OperationEvent> = r.events.into_iter().map(event_from_proto).collect();
    let received = events.len();
    events.truncate(wanted.limit());
    OperationEvents {
        total: total.map(|t| t.max(received)),
        events,
    }
}
