//! Change to screen: the time from a change in the Kubernetes API (an operation created) to the
//! terminal write that shows its row, through the whole dashboard: the route's client, the
//! subscription, the app, the views, ratatui's diff and crossterm's escape sequences into a
//! 120×40 terminal in memory ([`common::tty`]), on each route: in-process (its own watch), to a
//! server over gRPC (serve's shared watch) and through the tunnel to the demo's ichor-ui. A
//! figure, never an assertion: under `cargo test` (no `--bench`) a short pass.
//!
//!     cargo bench --bench screen

mod common;
#[path = "../tests/common/server.rs"]
mod server;

use common::tty::{Wire, terminal};
use ichor_app::action::{Action, Key};
use ichor_app::state::{Route, Session, State};
use ichor_client::inprocess::InProcessClient;
use ichor_client::remote::{Protocol, RemoteClient, RemoteOptions};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient;

use ichor_runtime::{Clock, NoHost, Runtime};
use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use ichor_views::i18n::{Lang, Texts};
use ichor_views::widgets::Theme;
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn client(route: &str, api: &EmbeddedApi) -> (Arc<dyn OperationClient>, Route) {
    let kube = api.client(users::ADMIN_TOKEN);
    match route {
        "in-process" => {
            let service = OperationService::new(KubeAccess::new(kube.clone(), "ichor-tui"));
            let c = InProcessClient::new(service, Caller::in_process())
                .with_watch(kube, Some("default".into()));
            (Arc::new(c), Route::default())
        }
        "server" => {
            let running = server::start(api, Default::default()).await;
            let url = running.url(false);
            let mut o = RemoteOptions::new(url.clone()).with_protocol(Protocol::Grpc);
            o.token = Some(users::ADMIN_TOKEN.into());
            std::mem::forget(running);
            let c = RemoteClient::new(o).expect("a client");
            (Arc::new(c), Route::Server { url })
        }
        _ => {
            use ichor_demo::demo::ichor_ui;
            let running = server::start(api, Default::default()).await;
            if ichor_ui::pod(api).is_none() {
                ichor_ui::seed(api).expect("the demo's ichor-ui");
            }
            ichor_ui::forward_to(api, running.addr).expect("a forward");
            std::mem::forget(running);
            let ui = ichor_client::tunnel::IchorUi::default();
            ichor_client::tunnel::find(&kube, &ui)
                .await
                .expect("ichor-ui found");
            let mut o = RemoteOptions::new(format!("http://{}.{}", ui.service, ui.namespace));
            o.token = Some(users::ADMIN_TOKEN.into());
            let connector = ichor_client::tunnel::TunnelConnector::new(kube, ui.clone());
            let c = RemoteClient::through(o, connector).expect("a tunnel client");
            let service = format!("{}/{}", ui.namespace, ui.service);
            (Arc::new(c), Route::Tunnel { service })
        }
    }
}

/// The times from each of `changes` creations to the flush that shows the new row.
async fn measure(route: &str, changes: usize) -> Vec<Duration> {
    let api = EmbeddedApi::default();
    ichor_demo::demo::seed(&api, jiff::Timestamp::now()).expect("the demo's objects");
    let (client, route) = client(route, &api).await;
    let session = Session {
        route,
        namespace: "default".into(),
        ..Session::default()
    };
    let clock = Clock::new(jiff::Timestamp::now());
    let state = State::new(session, clock.now(), jiff::tz::TimeZone::UTC);
    let runtime = Runtime {
        state,
        client,
        texts: Texts::new(Lang::En),
        theme: Theme::default(),
        clock,
    };
    let (keys, input) = tokio::sync::mpsc::unbounded_channel::<Action>();
    let input = Box::pin(futures::stream::unfold(input, |mut rx| async move {
        rx.recv().await.map(|a| (a, rx))
    }));
    let (_retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    let (mut term, wire): (_, Wire) = terminal();
    // The loop is not Send (its host is not): it runs on this thread's LocalSet.
    let running = tokio::task::spawn_local(async move {
        let _ = runtime.run(&mut term, input, retry_rx, &mut NoHost).await;
    });
    // The first page, drawn and subscribed.
    wire.want("staging-talos-x7k2p");
    wait_found(&wire, 1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    for i in 0..changes {
        let name = format!("staging-shown-{i:04}");
        wire.want(&name);
        api.seed(&common::world::paused_operation(&name))
            .expect("seeded");
        wait_found(&wire, i + 2).await;
        if wire.found().len() < i + 2 {
            eprintln!("{name} not shown within 10 s");
        }
        // Taken away again, so the next one is on a screen of the same few rows.
        api.remove("talosoperations", "default", &name);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = keys.send(Action::Key(Key::ch('q')));
    let _ = tokio::time::timeout(Duration::from_secs(5), running).await;
    wire.found().into_iter().skip(1).collect()
}

/// Waits until `n` wanted texts have reached a flush (at most 10 s).
async fn wait_found(wire: &Wire, n: usize) {
    let until = Instant::now() + Duration::from_secs(10);
    while wire.found().len() < n && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

fn main() {
    let changes = std::env::var("ICHOR_SCREEN_CHANGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if common::full() { 200 } else { 3 });
    let rt = common::runtime();
    rt.block_on(async {
        for route in ["in-process", "server", "tunnel"] {
            let local = tokio::task::LocalSet::new();
            let mut found = local.run_until(measure(route, changes)).await;
            found.sort();
            let at = |q: f64| match found.len() {
                0 => f64::NAN,
                n => found[((n - 1) as f64 * q) as usize].as_secs_f64() * 1e3,
            };
            common::report(
                &format!("change to screen, {route}"),
                format!(
                    "{} of {changes} shown: median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                    found.len(),
                    at(0.5),
                    at(0.99),
                    at(1.0)
                ),
            );
        }
    });
}
