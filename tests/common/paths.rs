//! The ways a test reaches OperationService. The behaviour suite runs over each of them.
#![allow(dead_code)]

use ichor_client::inprocess::InProcessClient;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient;
use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use std::sync::Arc;

/// How the test reaches the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The dashboard's in-process client with the user's own credentials (actor `ichor-tui`).
    InProcess,
    /// The service acting as the caller through impersonation, as `serve` does.
    Impersonated,
    /// `ichor-tui serve` on loopback (the server's identity, TokenReview, impersonation) and
    /// the remote client speaking gRPC with the user's bearer token.
    Grpc,
    /// The same server, and the remote client speaking the Connect protocol.
    Connect,
    /// The same server as the cluster's ichor-ui, reached as the dashboard reaches it: the
    /// Service found with the user's credentials, a port-forward to its pod, the user's
    /// token forwarded (Connect through the tunnel).
    Tunnel,
}

/// A demo user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum User {
    Admin,
    Viewer,
    Operator,
    ClusterEditor,
    /// Reads operations, clusters and machines, but not Events.
    OperationsReader,
}

impl User {
    pub fn name(self) -> &'static str {
        match self {
            User::Admin => users::ADMIN,
            User::Viewer => users::VIEWER,
            User::Operator => users::OPERATOR,
            User::ClusterEditor => users::CLUSTER_EDITOR,
            User::OperationsReader => users::OPERATIONS_READER,
        }
    }

    pub fn token(self) -> &'static str {
        match self {
            User::Admin => users::ADMIN_TOKEN,
            User::Viewer => users::VIEWER_TOKEN,
            User::Operator => users::OPERATOR_TOKEN,
            User::ClusterEditor => users::CLUSTER_EDITOR_TOKEN,
            User::OperationsReader => users::OPERATIONS_READER_TOKEN,
        }
    }

    /// The groups a service impersonating the user carries: for the admin, `ichor:admins`
    /// alone (serve's role never names system:masters, so serve leaves it out).
    pub fn groups(self) -> &'static [&'static str] {
        match self {
            User::Admin => &["ichor:admins"],
            User::Viewer => &["ichor:viewers"],
            User::Operator => &["ichor:operators"],
            User::ClusterEditor => &["ichor:cluster-editors"],
            User::OperationsReader => &["ichor:operation-readers"],
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
        Path::InProcess | Path::Impersonated | Path::Grpc | Path::Connect | Path::Tunnel => {
            user.name()
        }
    }
}

/// A client for `user` on `path`.
pub async fn connect(path: Path, api: &EmbeddedApi, user: User) -> Arc<dyn OperationClient> {
    connect_with_deadline(path, api, user, None).await
}

/// Clients for each of `who` on `path`, all reaching one service: one server over gRPC,
/// Connect and the tunnel; one service impersonating each caller. In-process each person's
/// dashboard runs its own service with their own credentials, so there each client has its own.
pub async fn connect_each(
    path: Path,
    api: &EmbeddedApi,
    who: &[User],
) -> Vec<Arc<dyn OperationClient>> {
    let mut clients: Vec<Arc<dyn OperationClient>> = Vec::new();
    match path {
        Path::InProcess => {
            for u in who {
                clients.push(connect(path, api, *u).await);
            }
        }
        Path::Impersonated => {
            let mut access = KubeAccess::new(api.client(users::SERVER_TOKEN), "ichor-tui");
            access.settle_window = super::SETTLE_WINDOW;
            let service = OperationService::new(access);
            for u in who {
                let caller = Caller::user(u.name(), u.groups());
                clients.push(Arc::new(InProcessClient::new(service.clone(), caller)));
            }
        }
        Path::Grpc | Path::Connect => {
            let running = super::server::start(api, Default::default()).await;
            let protocol = match path {
                Path::Grpc => ichor_client::remote::Protocol::Grpc,
                _ => ichor_client::remote::Protocol::Connect,
            };
            for u in who {
                let url = running.url(false);
                clients.push(Arc::new(super::server::client_over(
                    &url,
                    Some(u.token()),
                    protocol,
                )));
            }
            // The server task lives until the test's runtime ends.
            std::mem::forget(running);
        }
        Path::Tunnel => {
            serve_as_ichor_ui(api).await;
            for u in who {
                clients.push(Arc::new(through_tunnel(api, *u, None).await));
            }
        }
    }
    clients
}

/// The dashboard's own client stack for `user` on `path`: the retrying client (reads retried
/// quickly, writes sent once) over the path's client, with every call's deadline `deadline`
/// (the Kubernetes request deadline in-process, the call deadline over gRPC).
pub async fn dashboard_client(
    path: Path,
    api: &EmbeddedApi,
    user: User,
    deadline: std::time::Duration,
) -> Arc<dyn OperationClient> {
    use ichor_client::retry::{RetryPolicy, Retrying};
    let inner = connect_with_deadline(path, api, user, Some(deadline)).await;
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let policy = RetryPolicy {
        initial: std::time::Duration::from_millis(10),
        max_delay: std::time::Duration::from_millis(50),
        give_up_after: std::time::Duration::from_secs(2),
        jitter: 0.0,
    };
    Arc::new(Retrying::with_policy(inner, tx, policy))
}

async fn connect_with_deadline(
    path: Path,
    api: &EmbeddedApi,
    user: User,
    deadline: Option<std::time::Duration>,
) -> Arc<dyn OperationClient> {
    let (base, caller) = match path {
        Path::InProcess => (api.client(user.token()), Caller::in_process()),
        Path::Impersonated => (
            api.client(users::SERVER_TOKEN),
            Caller::user(user.name(), user.groups()),
        ),
        Path::Tunnel => return Arc::new(tunnel(api, user, deadline).await),
        Path::Grpc | Path::Connect => {
            // The server task lives until the test's runtime ends.
            let running = super::server::start(api, Default::default()).await;
            let protocol = if path == Path::Grpc {
                ichor_client::remote::Protocol::Grpc
            } else {
                ichor_client::remote::Protocol::Connect
            };
            let mut o = ichor_client::remote::RemoteOptions::new(running.url(false))
                .with_protocol(protocol);
            o.token = Some(user.token().to_string());
            if let Some(d) = deadline {
                o.deadline = d;
            }
            let client = ichor_client::remote::RemoteClient::new(o).unwrap();
            std::mem::forget(running);
            return Arc::new(client);
        }
    };
    let mut access = KubeAccess::new(base, "ichor-tui");
    access.settle_window = super::SETTLE_WINDOW;
    if let Some(d) = deadline {
        access.request_timeout = d;
    }
    // In-process, as the dashboard makes it: acting for the kubeconfig's person.
    let service = match caller.identity {
        None => OperationService::in_process(access).await.0,
        Some(_) => OperationService::new(access),
    };
    Arc::new(InProcessClient::new(service, caller))
}

/// The server as the demo's ichor-ui (seeded if the API has none), and the client through a
/// tunnel to it, as the dashboard reaches it.
pub async fn tunnel(
    api: &EmbeddedApi,
    user: User,
    deadline: Option<std::time::Duration>,
) -> ichor_client::remote::RemoteClient {
    serve_as_ichor_ui(api).await;
    through_tunnel(api, user, deadline).await
}

/// A server made the demo's ichor-ui (seeded if the API has none); it lives until the test's
/// runtime ends.
async fn serve_as_ichor_ui(api: &EmbeddedApi) {
    use ichor_demo::demo::ichor_ui;
    let running = super::server::start(api, Default::default()).await;
    if ichor_ui::pod(api).is_none() {
        ichor_ui::seed(api).unwrap();
    }
    ichor_ui::forward_to(api, running.addr).unwrap();
    std::mem::forget(running);
}

/// A client of the demo's ichor-ui for `user`, through a tunnel, as the dashboard reaches it.
async fn through_tunnel(
    api: &EmbeddedApi,
    user: User,
    deadline: Option<std::time::Duration>,
) -> ichor_client::remote::RemoteClient {
    let ui = ichor_client::tunnel::IchorUi::default();
    let kube = api.client(user.token());
    ichor_client::tunnel::find(&kube, &ui).await.unwrap();
    let mut o =
        ichor_client::remote::RemoteOptions::new(format!("http://{}.{}", ui.service, ui.namespace));
    o.token = Some(user.token().to_string());
    if let Some(d) = deadline {
        o.deadline = d;
    }
    ichor_client::remote::RemoteClient::through(
        o,
        ichor_client::tunnel::TunnelConnector::new(kube, ui),
    )
    .unwrap()
}

/// One `#[tokio::test]` per behaviour and path: `matrix!(a, b)` runs `a(path)` and `b(path)` on
/// every path, each path's tests in a module of its name; `matrix!(paths: [InProcess =>
/// in_process, …]; [a, b])` on the paths named.
#[macro_export]
macro_rules! matrix {
    (@one $path:ident $module:ident [$($name:ident),* $(,)?]) => {
        mod $module {
            $( #[tokio::test] async fn $name() { super::$name(super::Path::$path).await } )*
        }
    };
    (paths: [$($path:ident => $module:ident),* $(,)?]; $names:tt) => {
        $( $crate::matrix!(@one $path $module $names); )*
    };
    ($($name:ident),* $(,)?) => {
        $crate::matrix!(
            paths: [
                InProcess => in_process,
                Impersonated => impersonated,
                Grpc => grpc,
                Connect => connect,
                Tunnel => tunnel,
            ];
            [$($name),*]
        );
    };
}
