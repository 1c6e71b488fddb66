//! serve's bounds on what it holds at once are its operator's to set: `--max-streams` and
//! `--max-connections` (a fleet of ten thousand dashboards needs more than the defaults).

use super::common::process::Process;
use super::common::server::{Options, client, start};
use super::world;
use futures::StreamExt as _;
use ichor_demo::apiserver::auth::users;
use ichor_model::{ApiError, Code, ListQuery, OperationClient as _, View, WatchRequest};

fn the_list() -> WatchRequest {
    WatchRequest {
        list: ListQuery {
            namespace: Some("default".into()),
            view: View::Summary,
            ..ListQuery::default()
        },
        follow: None,
        page_deltas: false,
    }
}

/// Subscribes as `token` and waits for the first page: the stream, or how it was refused.
async fn subscribed(url: &str, token: &str) -> Result<ichor_model::Updates, ApiError> {
    let c = client(url, Some(token));
    let mut updates = c.watch_operations(&the_list()).await?;
    match updates.next().await {
        Some(Ok(_)) => Ok(updates),
        Some(Err(e)) => Err(e),
        None => panic!("the stream ended without a word"),
    }
}

/// Three streams in all, each its own person: the fourth is refused naming the bound, and one
/// given back is taken again.
#[tokio::test]
async fn a_server_holds_as_many_streams_as_its_bound_says() {
    let api = world();
    let opts = Options {
        bounds: Some(ichor_server::Bounds {
            streams: 3,
            ..ichor_server::Bounds::default()
        }),
        ..Options::default()
    };
    let running = start(&api, opts).await;
    let url = running.url(false);
    let mut held = Vec::new();
    for i in 0..3 {
        let token = format!("bounded-{i}");
        api.add_token(&token, &format!("person-{i}"), &["ichor:viewers"]);
        held.push(subscribed(&url, &token).await.unwrap());
    }
    let e = subscribed(&url, users::VIEWER_TOKEN).await.err().unwrap();
    assert_eq!(e.code, Code::ResourceExhausted, "{e:?}");
    assert_eq!(e.params.get("limit").map(String::as_str), Some("streams"));
    assert!(e.message.contains("3 streams"), "{}", e.message);
    drop(held.pop());
    // Given back when its stream ends on the server: asked again until it is.
    let again = loop {
        match subscribed(&url, users::VIEWER_TOKEN).await {
            Ok(updates) => break updates,
            Err(e) if e.code == Code::ResourceExhausted => tokio::task::yield_now().await,
            Err(e) => panic!("{e:?}"),
        }
    };
    drop((again, held));
}

/// `serve --max-streams 1`: the second person's stream is refused; a bound of 0, or one that
/// is not a number, is refused before serve starts.
#[tokio::test]
async fn serve_takes_its_bounds_from_its_flags() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let args = [
        "serve",
        "--demo",
        "--listen",
        "127.0.0.1:0",
        "--max-streams",
        "1",
        "--max-connections",
        "64",
    ];
    let (server, first) = Process::start(&args, log.path());
    let addr = first.strip_prefix("serving on ").unwrap().to_string();
    let url = format!("http://{addr}");
    let held = subscribed(&url, users::VIEWER_TOKEN).await.unwrap();
    let e = subscribed(&url, users::ADMIN_TOKEN).await.err().unwrap();
    assert_eq!(e.code, Code::ResourceExhausted, "{e:?}");
    assert!(e.message.contains("1 streams"), "{}", e.message);
    drop((held, server));
    for bad in ["0", "many", "1000001"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ichor-tui"))
            .args(["serve", "--demo", "--max-streams", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--max-streams {bad}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("from 1 to 1000000"), "{said}");
    }
}
