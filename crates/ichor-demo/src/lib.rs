//! The embedded demo cluster: an in-memory Kubernetes API that kubectl and kube-rs accept, a
//! simulated ichor controller that really carries operations out, and the demo data. Behind
//! `ichor-tui --demo` and `ichor-tui demo-cluster`; never part of the product's own modules.
//! Fault injection (for tests) is compiled only with the `faults` feature.

pub mod apiserver;
pub mod controller;
pub mod demo;

/// The resources the demo serves, for callers that name them through the demo.
pub use ichor_resources as resources;
