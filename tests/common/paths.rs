//! The ways a test reaches OperationService. The behaviour suite runs over each of them.
#![allow(dead_code)]

use ichor_tui::client::inprocess::InProcessClient;
use ichor_tui::client::{Backend, OperationClient};
use ichor_tui::cluster::apiserver::EmbeddedApi;
use ichor_tui::cluster::apiserver::auth::users;
use ichor_tui::service::OperationService;
use ichor_tui::service::access::{Caller, KubeAccess};
use std::sync::Arc;

/// How the test reaches the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The dashboard's in-process client with the user's own credentials (actor `ichor-tui`).
    InProcess,
    /// The service acting as the caller through impersonation, as `serve` does.
    Impersonated,
    /// `ichor-tui serve` on loopback (the server's identity, TokenReview, impersonation) and
    /// the gRPC client with the user's bearer token.
    Grpc,
}

/// A demo user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum User {
    Admin,
    Viewer,
    Operator,
    ClusterEditor,
}

impl User {
    pub fn name(self) -> &'static str {
        match self {
            User::Admin => users::ADMIN,
            User::Viewer => users::VIEWER,
            User::Operator => users::OPERATOR,
            User::ClusterEditor => users::CLUSTER_EDITOR,
        }
    }

    pub fn token(self) -> &'static str {
        match self {
            User::Admin => users::ADMIN_TOKEN,
            User::Viewer => users::VIEWER_TOKEN,
            User::Operator => users::OPERATOR_TOKEN,
            User::ClusterEditor => users::CLUSTER_EDITOR_TOKEN,
        }
    }

    pub fn groups(self) -> &'static [&'static str] {
        match self {
            User::Admin => &["system:masters"],
            User::Viewer => &["ichor:viewers"],
            User::Operator => &["ichor:operators"],
            User::ClusterEditor => &["ichor:cluster-editors"],
        }
    }
}

/// The user name that the write log shows for writes made as `user` on `path`.
pub fn writer(_path: Path, user: User) -> &'static str {
    user.name()
}

/// The actor recorded on an operation started as `user` on `path`.
pub fn actor(path: Path, user: User) -> &'static str {
    match path {
        Path::InProcess => "ichor-tui",
        Path::Impersonated | Path::Grpc => user.name(),
    }
}

/// A client for `user` on `path`.
pub async fn connect(path: Path, api: &EmbeddedApi, user: User) -> Arc<dyn OperationClient> {
    let (base, caller) = match path {
        Path::InProcess => (api.client(user.token()), Caller::in_process()),
        Path::Impersonated => (
            api.client(users::SERVER_TOKEN),
            Caller::user(user.name(), user.groups()),
        ),
        Path::Grpc => {
            // The server task lives until the test's runtime ends.
            let running = super::server::start(api, Default::default()).await;
            let client = super::server::client(&running.url(false), Some(user.token()));
            std::mem::forget(running);
            return Arc::new(client);
        }
    };
    let service = OperationService::new(KubeAccess::new(base, "ichor-tui"));
    Arc::new(InProcessClient::new(service, caller, Backend::Demo, false))
}
