//! WatchOperations' messages and the model's, both ways.

use super::basics::{non_empty, params_from_proto, params_to_proto};
use super::error::{code_from_grpc, code_to_grpc};
use super::{events_from_proto, events_to_proto, list_query_from_proto, list_query_to_proto};
use super::{operation_from_proto, operation_to_proto, page_from_proto, page_to_proto, proto};
use ichor_model::{ApiError, EventsWanted, PageDelta, Reason, WatchRequest, WatchUpdate};

pub fn watch_request_to_proto(r: &WatchRequest) -> proto::WatchOperationsRequest {
    let (follow_namespace, follow_name) = r.follow.clone().unwrap_or_default();
    proto::WatchOperationsRequest {
        list: Some(list_query_to_proto(&r.list)),
        follow_namespace,
        follow_name,
        page_deltas: r.page_deltas,
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
    Ok(WatchRequest {
        list,
        follow,
        page_deltas: r.page_deltas,
    })
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
        page_delta: u.delta.as_ref().map(page_delta_to_proto),
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
        delta: m.page_delta.map(page_delta_from_proto),
        followed,
        events,
        heartbeat: m.heartbeat,
    }
}

/// A page's change for the wire.
pub fn page_delta_to_proto(d: &PageDelta) -> proto::PageDelta {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    proto::PageDelta {
        base_version: d.base_version.clone(),
        version: d.version.clone(),
        rows: d.rows.iter().map(|(_, o)| operation_to_proto(o)).collect(),
        positions: d.rows.iter().map(|(i, _)| count(*i)).collect(),
        removed: d
            .removed
            .iter()
            .map(|(namespace, name)| proto::RowKey {
                namespace: namespace.clone(),
                name: name.clone(),
            })
            .collect(),
        size: count(d.size),
        next_page_token: d.next_page_token.clone().unwrap_or_default(),
        total_size: i32::try_from(d.total).unwrap_or(i32::MAX),
    }
}

/// A page's change from the wire. Rows and positions go in pairs (one without the other is
/// left out); whether the change fills the page is checked when it is applied
/// ([`PageDelta::apply`]).
pub fn page_delta_from_proto(d: proto::PageDelta) -> PageDelta {
    let place = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
    PageDelta {
        base_version: d.base_version,
        version: d.version,
        rows: d
            .positions
            .into_iter()
            .map(place)
            .zip(d.rows.into_iter().map(operation_from_proto))
            .collect(),
        removed: d
            .removed
            .into_iter()
            .map(|k| (k.namespace, k.name))
            .collect(),
        size: place(d.size),
        next_page_token: non_empty(d.next_page_token),
        total: usize::try_from(d.total_size).unwrap_or(0),
    }
}
