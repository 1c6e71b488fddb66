//! `ichor-tui serve` and the clients others wrote: gRPC, gRPC-Web, Connect (curl, connect-es, grpcio), the hostile caller, the tunnel and port-forward, kubectl; and `deploy/` (the image, the manifests, least privilege, probes and logs).
//!
//! One test binary for these modules (each was a binary of its own): they link kube, tonic
//! and the demo crate once.

#[macro_use]
mod common;

#[path = "browser.rs"]
mod browser;
#[path = "connect_curl.rs"]
mod connect_curl;
#[path = "connect_edges.rs"]
mod connect_edges;
#[path = "connect_peers.rs"]
mod connect_peers;
#[path = "demo_contexts.rs"]
mod demo_contexts;
#[path = "deploy.rs"]
mod deploy;
#[path = "grpc.rs"]
mod grpc;
#[path = "hostile.rs"]
mod hostile;
#[path = "interop.rs"]
mod interop;
#[path = "kube_contract.rs"]
mod kube_contract;
#[path = "kubectl.rs"]
mod kubectl;
#[path = "portforward.rs"]
mod portforward;
#[path = "tunnel.rs"]
mod tunnel;
