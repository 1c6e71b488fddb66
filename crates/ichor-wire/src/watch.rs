//! WatchOperations' messages and the model's, both ways.

use super::basics::{non_empty, params_from_proto, params_to_proto};
use super::error::{code_from_grpc, code_to_grpc};
use super::{events_from_proto, events_to_proto, list_query_from_proto, list_query_to_proto};
use super::{operation_from_proto, operation_to_proto, page_from_proto, page_to_proto, proto};
use ichor_model::{ApiError, EventsWanted, Reason, WatchRequest, WatchUpdate};

pub fn watch_request_to_proto(r: &WatchRequest) -> proto::WatchOperationsRequest {
    let (follow_namespace, follow_name) = r.follow.clone().unwrap_or_default();
    proto::WatchOperationsRequest {
        list: Some(list_query_to_proto(&r.list)),
        follow_namespace,
        follow_name,
    }
}

/// The request, checked as ListOperations checks its query; a followed operation needs both
/// its namespace and its name.
pub fn watch_request_from_proto(
    r: proto::WatchOperationsRequest,
) -> Result<WatchRequest, ApiError> {
    let list = list_query_from_proto(r.list.unwrap_or_default())?;
    let follow = match (non_empty(r.follow_namespace), non_empty(r.follow_name)) {
        (Some(ns), Some(name)) => Some((ns, name)),
        (None, None) => None,
        _ => {
            return Err(ApiError::new(
                ichor_model::Code::InvalidArgument,
                "follow_namespace and follow_name go together",
            ));
        }
    };
    Ok(WatchRequest { list, follow })
}

fn error_to_proto(e: &ApiError) -> proto::WatchError {
    proto::WatchError {
        code: code_to_grpc(e.code) as i32,
        reason: e.reason.map(|r| r.as_str().to_string()).unwrap_or_default(),
        metadata: params_to_proto(&e.params),
        message: e.message.clone(),
    }
}

fn error_from_proto(e: proto::WatchError) -> ApiError {
    let mut error = ApiError::new(code_from_grpc(tonic::Code::from(e.code)), e.message);
    error.reason = Reason::parse(&e.reason);
    error.params = params_from_proto(e.metadata);
    error
}

pub fn watch_update_to_proto(u: &WatchUpdate) -> proto::WatchOperationsResponse {
    let mut m = proto::WatchOperationsResponse {
        page: u.page.as_ref().map(page_to_proto),
        heartbeat: u.heartbeat,
        ..Default::default()
    };
    match &u.followed {
        Some(Ok(op)) => m.followed = Some(operation_to_proto(op)),
        Some(Err(e)) => m.followed_error = Some(error_to_proto(e)),
        None => {}
    }
    match &u.events {
        Some(Ok(events)) => {
            m.events = Some(events_to_proto(events));
        }
        Some(Err(e)) => m.events_error = Some(error_to_proto(e)),
        None => {}
    }
    m
}

pub fn watch_update_from_proto(m: proto::WatchOperationsResponse) -> WatchUpdate {
    let followed = match (m.followed, m.followed_error) {
        (Some(op), _) => Some(Ok(operation_from_proto(op))),
        (None, Some(e)) => Some(Err(error_from_proto(e))),
        (None, None) => None,
    };
    let events = match (m.events, m.events_error) {
        (Some(ev), _) => Some(Ok(events_from_proto(ev, EventsWanted::Newest))),
        (None, Some(e)) => Some(Err(error_from_proto(e))),
        (None, None) => None,
    };
    WatchUpdate {
        page: m.page.map(page_from_proto),
        followed,
        events,
        heartbeat: m.heartbeat,
    }
}
