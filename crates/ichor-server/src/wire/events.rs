//! Operation events, both ways.

use super::basics::{time_from_proto, time_to_proto};
use super::proto;
use ichor_model::OperationEvent;

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
