//! The operations list: queries and pages, both ways.

use super::basics::non_empty;
use super::operation::{operation_from_proto, operation_to_proto};
use super::proto;
use ichor_model::{ApiError, Code, ListQuery, OperationPage, Order, Phase, Progress, Reason, View};

/// A progress for the wire.
pub(super) fn progress_to_proto(p: &Progress) -> proto::Progress {
    let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    proto::Progress {
        done: count(p.done),
        total: count(p.total),
        current_machine: p.current.clone().unwrap_or_default(),
        failed_machine: p.failed.clone().unwrap_or_default(),
    }
}

/// A progress from the wire (a negative count is none).
pub(super) fn progress_from_proto(p: proto::Progress) -> Progress {
    let count = |n: i32| usize::try_from(n).unwrap_or(0);
    Progress {
        done: count(p.done),
        total: count(p.total),
        current: non_empty(p.current_machine),
        failed: non_empty(p.failed_machine),
    }
}

/// A list query for the wire.
pub fn list_query_to_proto(q: &ListQuery) -> proto::ListOperationsRequest {
    proto::ListOperationsRequest {
        namespace: q.namespace.clone().unwrap_or_default(),
        all_namespaces: q.namespace.is_none(),
        view: match q.view {
            View::Full => proto::OperationView::Full,
            View::Summary => proto::OperationView::Summary,
        } as i32,
        page_size: i32::try_from(q.page_size).unwrap_or(i32::MAX),
        page_token: q.page_token.clone().unwrap_or_default(),
        cluster: q.cluster.clone().unwrap_or_default(),
        phases: q.phases.iter().map(|p| p.as_str().to_string()).collect(),
        filter: q.text.clone(),
        known_version: q.known_version.clone().unwrap_or_default(),
        order_by: q.order.to_order_by().to_string(),
    }
}

/// A list query from the wire. The scope is checked here (a namespace, or every namespace);
/// the filters by the service, on every path alike.
pub fn list_query_from_proto(r: proto::ListOperationsRequest) -> Result<ListQuery, ApiError> {
    let namespace = match (r.all_namespaces, r.namespace.is_empty()) {
        (true, _) => None,
        (false, false) => Some(r.namespace),
        (false, true) => {
            return Err(ApiError::said(
                Code::InvalidArgument,
                Reason::InvalidNamespace,
                &[("value", "")],
            ));
        }
    };
    let view = match proto::OperationView::try_from(r.view) {
        Ok(proto::OperationView::Summary) => View::Summary,
        Ok(proto::OperationView::Full | proto::OperationView::Unspecified) => View::Full,
        Err(_) => {
            return Err(ApiError::invalid_query(
                "view",
                &[("value", &r.view.to_string())],
            ));
        }
    };
    // A page size over the most a page holds is served as that most (AIP-158: the server
    // coerces it), and is that query: two lists that differ only there are one page, one list
    // the streams keep up to date.
    let page_size = u32::try_from(r.page_size)
        .map_err(|_| ApiError::invalid_query("page_size", &[("value", &r.page_size.to_string())]))?
        .min(ichor_model::MAX_PAGE_SIZE);
    let order = Order::from_order_by(&r.order_by)
        .ok_or_else(|| ApiError::invalid_query("order_by", &[]))?;
    Ok(ListQuery {
        namespace,
        view,
        page_size,
        page_token: non_empty(r.page_token),
        cluster: non_empty(r.cluster),
        phases: r.phases.iter().map(|p| Phase::parse(p)).collect(),
        text: r.filter,
        known_version: non_empty(r.known_version),
        order,
    })
}

/// A page for the wire.
pub fn page_to_proto(p: &OperationPage) -> proto::ListOperationsResponse {
    proto::ListOperationsResponse {
        operations: p.operations.iter().map(operation_to_proto).collect(),
        next_page_token: p.next_page_token.clone().unwrap_or_default(),
        total_size: i32::try_from(p.total).unwrap_or(i32::MAX),
        version: p.version.clone(),
        unchanged: p.unchanged,
    }
}

/// A page from the wire. A server from before paging sends only the operations: they are the
/// whole list, on one page.
pub fn page_from_proto(r: proto::ListOperationsResponse) -> OperationPage {
    let total = match usize::try_from(r.total_size) {
        Ok(n) if n > 0 || r.unchanged => n,
        _ => r.operations.len(),
    };
    OperationPage {
        operations: r.operations.into_iter().map(operation_from_proto).collect(),
        next_page_token: non_empty(r.next_page_token),
        total,
        version: r.version,
        unchanged: r.unchanged,
    }
}
