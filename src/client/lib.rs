//! The clients of OperationService: in-process (its list's rows kept by the service's watch),
//! remote (Connect or gRPC, directly or through a port-forward tunnel to ichor-ui), and the
//! retrying wrapper (reads retried, writes sent once). The trait they implement is the model's.

#[cfg(any(test, feature = "fake"))]
pub mod fake;
pub mod inprocess;
pub mod remote;
pub mod retry;
pub mod tunnel;
