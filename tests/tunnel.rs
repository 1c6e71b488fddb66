//! Remote first, in-process as the fallback: how the dashboard chooses its route in every state
//! ichor-ui can be in, and a tunnel that closes under a dashboard and is opened again. Against
//! the embedded API, whose ichor-ui pod forwards to `serve` on loopback.

use crate::common;

use common::paths::{User, tunnel};
use common::server;
use ichor_app::state::Route;
use ichor_client::remote::Protocol;
use ichor_client::tunnel::IchorUi;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::demo::ichor_ui;
use ichor_model::Fallback;
use ichor_model::OperationClient;
use ichor_tui::cli::reach::{ReachOptions, Reached, choose};
use ichor_tui::config::RouteChoice;

fn options(backend: RouteChoice, protocol: Protocol) -> ReachOptions {
    ReachOptions {
        backend,
        ichor_ui: IchorUi::default(),
        protocol,
        asked: false,
    }
}

/// An API with a small cluster and ichor-ui forwarding to a running server.
async fn answering() -> (EmbeddedApi, server::Running) {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    ichor_ui::seed(&api).unwrap();
    let running = server::start(&api, Default::default()).await;
    ichor_ui::forward_to(&api, running.addr).unwrap();
    (api, running)
}

/// Where `choose` leads for the admin, as the route the status bar shows.
async fn route_for(api: &EmbeddedApi, token: Result<String, Fallback>, o: &ReachOptions) -> Route {
    let kube = api.client(User::Admin.token());
    match choose(&kube, token, o, "default", "prod").await.unwrap() {
        Reached::Tunnel(client, route) => {
            // It answers as the service does, and says whom it took the token for (the
            // status bar's user).
            let ops = client.list_operations(Some("default")).await.unwrap();
            assert!(ops.is_empty());
            assert_eq!(client.user().as_deref(), Some(User::Admin.name()));
            route
        }
        Reached::InProcess(route) => route,
    }
}

fn admin_token() -> Result<String, Fallback> {
    Ok(User::Admin.token().to_string())
}

fn fell_back(why: Fallback) -> Route {
    Route::InProcess {
        context: "prod".into(),
        why: Some(why),
        asked: false,
    }
}

#[tokio::test]
async fn ichor_ui_found_and_answering_is_reached_through_a_tunnel_with_either_protocol() {
    let (api, _server) = answering().await;
    for protocol in [Protocol::Connect, Protocol::Grpc] {
        let route = route_for(&api, admin_token(), &options(RouteChoice::Auto, protocol)).await;
        assert_eq!(
            route,
            Route::Tunnel {
                service: "ichor-system/ichor-ui".into()
            }
        );
    }
    // The calls went through the tunnel: the server read as the admin, nothing was written.
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn each_reason_to_fall_back_is_named() {
    let auto = options(RouteChoice::Auto, Protocol::Connect);
    // No Service at all.
    let bare = EmbeddedApi::default();
    assert_eq!(
        route_for(&bare, admin_token(), &auto).await,
        fell_back(Fallback::NotFound)
    );
    // The same, when that ichor-ui was asked for by name: the route says so (an alarm).
    let asked = ReachOptions {
        asked: true,
        ..auto.clone()
    };
    assert_eq!(
        route_for(&bare, admin_token(), &asked).await,
        Route::InProcess {
            context: "prod".into(),
            why: Some(Fallback::NotFound),
            asked: true,
        }
    );
    // The pod is not ready.
    let (api, _server) = answering().await;
    ichor_ui::set_ready(&api, false);
    assert_eq!(
        route_for(&api, admin_token(), &auto).await,
        fell_back(Fallback::NotReady)
    );
    // No pod behind the Service.
    ichor_ui::remove(&api);
    assert_eq!(
        route_for(&api, admin_token(), &auto).await,
        fell_back(Fallback::NotReady)
    );
    // A pod whose port leads nowhere: the forward is refused inside the pod.
    let (api, server) = answering().await;
    drop(server);
    let nobody = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = nobody.local_addr().unwrap();
    drop(nobody);
    ichor_ui::forward_to(&api, addr).unwrap();
    match route_for(&api, admin_token(), &auto).await {
        Route::InProcess {
            why: Some(Fallback::NotAnswering { detail }),
            ..
        } => assert!(
            !detail.is_empty() && detail.chars().count() <= 200,
            "{detail}"
        ),
        other => panic!("{other:?}"),
    }
    // A port name the Service does not have.
    let (api, _server) = answering().await;
    let mut wrong_port = auto.clone();
    wrong_port.ichor_ui.port = "grpc".into();
    assert_eq!(
        route_for(&api, admin_token(), &wrong_port).await,
        fell_back(Fallback::NoPort)
    );
    // A kubeconfig whose user has no token to forward.
    assert_eq!(
        route_for(&api, Err(Fallback::NoToken { how: "exec" }), &auto).await,
        fell_back(Fallback::NoToken { how: "exec" })
    );
    // Chosen.
    assert_eq!(
        route_for(
            &api,
            admin_token(),
            &options(RouteChoice::InProcess, Protocol::Connect)
        )
        .await,
        fell_back(Fallback::Chosen)
    );
}

#[tokio::test]
async fn a_user_who_may_not_see_ichor_ui_falls_back_saying_so() {
    let (api, _server) = answering().await;
    // A token Kubernetes does not know: it may not even look for the Service.
    let kube = api.client("not-a-known-token");
    let auto = options(RouteChoice::Auto, Protocol::Connect);
    match choose(
        &kube,
        Ok("not-a-known-token".into()),
        &auto,
        "default",
        "prod",
    )
    .await
    .unwrap()
    {
        Reached::InProcess(Route::InProcess {
            why: Some(Fallback::Forbidden { detail }),
            ..
        }) => assert!(detail.chars().count() <= 200),
        Reached::InProcess(other) => panic!("{other:?}"),
        Reached::Tunnel(..) => panic!("reached ichor-ui without credentials"),
    }
}

#[tokio::test]
async fn backend_remote_is_an_error_in_words_when_ichor_ui_cannot_be_reached() {
    let api = EmbeddedApi::default();
    let kube = api.client(User::Admin.token());
    let remote = options(RouteChoice::Remote, Protocol::Connect);
    let e = match choose(&kube, admin_token(), &remote, "default", "prod").await {
        Err(e) => ichor_model::error_text::one_line(&e),
        Ok(_) => panic!("reached"),
    };
    assert_eq!(
        e,
        "--backend remote: ichor-ui (ichor-system/ichor-ui) cannot be reached: there is no such Service"
    );
}

#[tokio::test]
async fn a_tunnel_closed_under_the_dashboard_is_opened_again() {
    let (api, _server) = answering().await;
    let client = tunnel(&api, User::Admin, None).await;
    api.seed(&common::op("roll", "c1", "talos", 1)).unwrap();
    assert_eq!(
        client.get_operation("default", "roll").await.unwrap().name,
        "roll"
    );
    // ichor-ui's pod is replaced: the open forward ends; the next call opens a new one to
    // the new pod.
    let old = ichor_ui::pod(&api).unwrap();
    let new = ichor_ui::restart(&api).unwrap();
    assert_ne!(old, new);
    let mut answered = None;
    for _ in 0..3 {
        match client.get_operation("default", "roll").await {
            Ok(op) => {
                answered = Some(op);
                break;
            }
            Err(e) => assert!(e.code.is_transient(), "{e:?}"),
        }
    }
    assert_eq!(answered.unwrap().name, "roll");
    // Gone altogether: the calls fail as unavailable (the retrying client waits), and when
    // it is back they answer again.
    ichor_ui::remove(&api);
    let e = client.get_operation("default", "roll").await.unwrap_err();
    assert!(e.code.is_transient(), "{e:?}");
    let running = server::start(&api, Default::default()).await;
    ichor_ui::start(&api, Some(running.addr)).unwrap();
    assert_eq!(
        client.get_operation("default", "roll").await.unwrap().name,
        "roll"
    );
    // Nothing was written by any of it.
    assert!(api.write_log().is_empty());
}
