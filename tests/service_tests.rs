//! OperationService on every path (in-process, impersonated, gRPC, Connect, the tunnel) through the real kube client code against the embedded Kubernetes API: reads, writes under faults, concurrency, the store and watches, the demo controller.
//!
//! One test binary for these modules (each was a binary of its own): they link kube, tonic
//! and the demo crate once.

#[macro_use]
mod common;

#[path = "concurrency.rs"]
mod concurrency;
#[path = "controller.rs"]
mod controller;
#[path = "embedded_api.rs"]
mod embedded_api;
#[path = "events.rs"]
mod events;
#[path = "expired_pages.rs"]
mod expired_pages;
#[path = "finalizer_delete.rs"]
mod finalizer_delete;
#[path = "list.rs"]
mod list;
#[path = "machine_versions.rs"]
mod machine_versions;
#[path = "pace.rs"]
mod pace;
#[path = "push.rs"]
mod push;
#[path = "robustness.rs"]
mod robustness;
#[path = "service.rs"]
mod service;
#[path = "store.rs"]
mod store;
#[path = "versions.rs"]
mod versions;
#[path = "watch.rs"]
mod watch;
#[path = "watch_measures.rs"]
mod watch_measures;
#[path = "writes.rs"]
mod writes;
