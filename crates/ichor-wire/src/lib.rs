//! The API on the wire: the types and tonic stubs generated from `proto/ichor/v1alpha1/`
//! ([`proto`]), and the conversions between them and the domain types, both ways. The server
//! encodes with these and the clients decode with them, so a value survives the round trip
//! unchanged: `from(to(x)) == x` for everything the proto can express. Used by the client and
//! the server alike; neither owns it, so neither depends on the other.

pub mod proto;
pub mod rpc;
pub mod version;

mod basics;
mod cluster;
mod error;
mod events;
mod list;
mod operation;
mod plan;
mod request;
mod watch;

pub use basics::non_empty;
pub use cluster::{cluster_from_proto, cluster_to_proto, required_cluster};
pub use error::code_from_connect;
pub use error::{
    ERROR_DOMAIN, code_from_grpc, code_to_connect, code_to_grpc, connect_error_body,
    connect_http_status, error_from_connect, error_from_status, error_info, status_from_error,
};
pub use events::{event_from_proto, event_to_proto, events_from_proto, events_to_proto};
pub use list::{list_query_from_proto, list_query_to_proto, page_from_proto, page_to_proto};
pub use operation::{operation_from_proto, operation_to_proto, required_operation};
pub use plan::{created_from_proto, created_to_proto, plan_from_proto, plan_to_proto};
pub use request::{
    confirmed_from_proto, confirmed_to_proto, create_request_to_proto, permissions_from_proto,
    permissions_to_proto, plan_request_to_proto, request_from_proto,
};
pub use rpc::Rpc;
pub use watch::{
    page_delta_from_proto, page_delta_to_proto, watch_request_from_proto, watch_request_to_proto,
    watch_update_from_proto, watch_update_to_proto,
};

#[cfg(test)]
mod tests;
