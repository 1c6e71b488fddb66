//! gRPC's health service, `grpc.health.v1.Health`, whole, as gRPC's health-checking protocol
//! (and its health.proto) says: `Check` of a known service (`""` is the server as a whole) or
//! NOT_FOUND; `List` of every known service (at most [`MAX_LISTED`], else RESOURCE_EXHAUSTED);
//! `Watch`, which sends the status now and then each change, and for a service not known sends
//! SERVICE_UNKNOWN and stays open (a client retries any other ending), sending its status if it
//! becomes known. When the server stops, every service turns NOT_SERVING, which each Watch
//! sends before it ends.
//!
//! Ours, not tonic-health's: its health.proto predates `List`, and its `Watch` of an unknown
//! service ends at once with NOT_FOUND. The messages are generated from
//! `proto/grpc/health/v1/health.proto` (build.rs).

use futures::Stream;
use std::collections::BTreeMap;
use std::pin::Pin;
use tokio::sync::watch;
use tonic::{Request, Response, Status};

/// The generated messages and server.
pub(crate) mod pb {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    tonic::include_proto!("grpc.health.v1");

    /// The encoded descriptor set, for server reflection.
    pub(crate) const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("health_descriptor");
}

use pb::health_check_response::ServingStatus;
use pb::{HealthCheckRequest, HealthCheckResponse, HealthListRequest, HealthListResponse};

/// The most services `List` answers (health.proto's limit).
pub(crate) const MAX_LISTED: usize = 100;

/// The longest service name a refusal says back.
const MAX_ECHOED: usize = 64;

/// The services' statuses, and whether the server is stopping.
#[derive(Clone, Debug, Default)]
struct State {
    statuses: BTreeMap<String, ServingStatus>,
    stopping: bool,
}

/// The health of the server and its services, shared by every call of the service.
#[derive(Clone)]
pub(crate) struct Health {
    state: watch::Sender<State>,
}

impl Health {
    /// The server as a whole (`""`) serving, and no service yet.
    pub(crate) fn new() -> Health {
        let mut statuses = BTreeMap::new();
        statuses.insert(String::new(), ServingStatus::Serving);
        let (state, _) = watch::channel(State {
            statuses,
            stopping: false,
        });
        Health { state }
    }

    /// Sets the status of the service `name` (its full name, `ichor.v1alpha1.OperationService`).
    pub(crate) fn set(&self, name: &str, status: ServingStatus) {
        self.state.send_modify(|s| {
            s.statuses.insert(name.to_string(), status);
        });
    }

    /// Every service NOT_SERVING, and every Watch ends once it has said so.
    pub(crate) fn stopping(&self) {
        self.state.send_modify(|s| {
            s.statuses
                .values_mut()
                .for_each(|v| *v = ServingStatus::NotServing);
            s.stopping = true;
        });
    }

    /// The service, for tonic's routes.
    pub(crate) fn server(&self) -> pb::health_server::HealthServer<Health> {
        pb::health_server::HealthServer::new(self.clone())
    }

    fn status_of(&self, name: &str) -> Option<ServingStatus> {
        self.state.borrow().statuses.get(name).copied()
    }
}

fn answer(status: ServingStatus) -> HealthCheckResponse {
    HealthCheckResponse {
        status: status as i32,
    }
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<HealthCheckResponse, Status>> + Send>>;

#[tonic::async_trait]
impl pb::health_server::Health for Health {
    async fn check(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        let name = &request.get_ref().service;
        match self.status_of(name) {
            Some(status) => Ok(Response::new(answer(status))),
            None => Err(Status::not_found(format!(
                "unknown service {}",
                ichor_model::error_text::quoted(&name.chars().take(MAX_ECHOED).collect::<String>())
            ))),
        }
    }

    async fn list(
        &self,
        _: Request<HealthListRequest>,
    ) -> Result<Response<HealthListResponse>, Status> {
        let state = self.state.borrow().clone();
        if state.statuses.len() > MAX_LISTED {
            return Err(Status::resource_exhausted(format!(
                "{} services, more than the {MAX_LISTED} a list holds",
                state.statuses.len()
            )));
        }
        let statuses = state
            .statuses
            .into_iter()
            .map(|(name, status)| (name, answer(status)))
            .collect();
        Ok(Response::new(HealthListResponse { statuses }))
    }

    type WatchStream = WatchStream;

    async fn watch(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<WatchStream>, Status> {
        let name = request.into_inner().service;
        let changes = self.state.subscribe();
        let stream = futures::stream::unfold(
            (changes, None::<ServingStatus>, false),
            move |(mut changes, sent, ended)| {
                let name = name.clone();
                async move {
                    if ended {
                        return None;
                    }
                    loop {
                        let (now, stopping) = {
                            let state = changes.borrow_and_update();
                            let now = state
                                .statuses
                                .get(&name)
                                .copied()
                                .unwrap_or(ServingStatus::ServiceUnknown);
                            (now, state.stopping)
                        };
                        if sent != Some(now) || stopping {
                            return Some((Ok(answer(now)), (changes, Some(now), stopping)));
                        }
                        if changes.changed().await.is_err() {
                            return None;
                        }
                    }
                }
            },
        );
        Ok(Response::new(Box::pin(stream)))
    }
}

#[cfg(test)]
mod tests {
    use super::pb::health_server::Health as _;
    use super::*;
    use futures::StreamExt as _;

    fn asked(service: &str) -> Request<HealthCheckRequest> {
        Request::new(HealthCheckRequest {
            service: service.into(),
        })
    }

    #[tokio::test]
    async fn an_unknown_service_is_watched_until_it_is_known() {
        let health = Health::new();
        let Ok(resp) = health.watch(asked("later")).await else {
            panic!("the watch was refused");
        };
        let mut stream = resp.into_inner();
        let first = stream.next().await.and_then(Result::ok);
        assert_eq!(first, Some(answer(ServingStatus::ServiceUnknown)));
        health.set("later", ServingStatus::Serving);
        let next = stream.next().await.and_then(Result::ok);
        assert_eq!(next, Some(answer(ServingStatus::Serving)));
        health.stopping();
        let last = stream.next().await.and_then(Result::ok);
        assert_eq!(last, Some(answer(ServingStatus::NotServing)));
        assert!(stream.next().await.is_none(), "ends once stopping is said");
    }

    #[tokio::test]
    async fn check_and_list() {
        let health = Health::new();
        health.set("a.B", ServingStatus::Serving);
        let code = health.check(asked("nope")).await.err().map(|s| s.code());
        assert_eq!(code, Some(tonic::Code::NotFound));
        let Ok(listed) = health.list(Request::new(HealthListRequest {})).await else {
            panic!("no list");
        };
        // A map on the wire (a HashMap here): its order is no order.
        let mut names: Vec<String> = listed.into_inner().statuses.into_keys().collect();
        names.sort();
        assert_eq!(names, ["", "a.B"]);
        for i in 0..MAX_LISTED {
            health.set(&format!("s{i}"), ServingStatus::Serving);
        }
        let code = health
            .list(Request::new(HealthListRequest {}))
            .await
            .err()
            .map(|s| s.code());
        assert_eq!(code, Some(tonic::Code::ResourceExhausted));
    }
}
