//! The event loop on tokio's paused clock: it wakes only for polls and for a clock whose display
//! changes, and draws only when the frame differs.

mod common;
mod runtime_outage;

use common::fixtures;
use futures::StreamExt;
use ichor_app::action::{Action, Key};
use ichor_client::fake::FakeClient;
use ichor_model::{ApiError, Code, Operation};
use ichor_model::{OperationClient, RetryEvent};
use ichor_runtime::{Clock, NoHost, Runtime, Stats};
use ichor_views::i18n::{Lang, Texts};
use ichor_views::widgets::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::time::Duration;

/// The one test fake: it answers from a list it can be told to change, and counts the calls;
/// a pause takes 5 s to answer, and the caller may pause.
fn scripted(ops: Vec<Operation>) -> FakeClient {
    let fake = FakeClient::with_operations(ops);
    fake.permissions.lock().unwrap().pause = true;
    fake.delays
        .lock()
        .unwrap()
        .insert("pause", Duration::from_secs(5));
    fake
}

/// The runtime as the tests run it, with this client, in English.
fn runtime(client: &Arc<FakeClient>, state: ichor_app::state::State) -> Runtime {
    Runtime {
        state,
        client: client.clone(),
        texts: Texts::new(Lang::En),
        theme: Theme::default(),
        clock: Clock::new(fixtures::now()),
    }
}

/// Runs the dashboard for `run_for` of paused time; `script` may send keys or change data.
async fn run(
    ops: Vec<Operation>,
    run_for: Duration,
    retry: Option<RetryEvent>,
) -> (Stats, Arc<FakeClient>) {
    let client = Arc::new(scripted(ops));
    let runtime = runtime(&client, fixtures::state());
    let (keys_tx, keys_rx) = tokio::sync::mpsc::unbounded_channel::<Action>();
    let input = tokio_stream_from(keys_rx);
    let (retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    if let Some(ev) = retry {
        retry_tx.send(ev).unwrap();
    }
    tokio::spawn(async move {
        tokio::time::sleep(run_for).await;
        let _ = keys_tx.send(Action::Key(Key::ch('q')));
    });
    let mut term = Terminal::new(TestBackend::new(120, 30)).unwrap();
    let stats = runtime
        .run(&mut term, input, retry_rx, &mut NoHost)
        .await
        .unwrap();
    drop(retry_tx);
    (stats, client)
}

/// The terminal's screen as text, a line each.
fn screen_of(term: &Terminal<TestBackend>) -> String {
    let buf = term.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Action>,
) -> impl futures::Stream<Item = Action> + Unpin {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
}

#[tokio::test(start_paused = true)]
async fn an_idle_finished_list_wakes_only_for_its_10_s_polls() {
    // Everything finished, ages in days; each poll keeps "updated just now" true, so nothing on
    // screen changes by itself.
    let ops = vec![
        fixtures::completed(),
        fixtures::ichor_completed(),
        fixtures::shutdown_completed(),
    ];
    let (stats, client) = run(ops, Duration::from_secs(95), None).await;
    let polls = client.count("list");
    assert_eq!(
        polls,
        1 + 9,
        "the first load and one poll every 10 s: {stats:?}"
    );
    // Frames: loading, then the list — and nothing for the identical polls.
    assert_eq!(stats.draws, 2, "{stats:?}");
    // Nor are they laid out: only when "updated …" could have changed (each minute).
    assert!(stats.renders <= 4, "{stats:?}");
    assert_eq!(stats.wakeups, 9, "only the polls wake it: {stats:?}");
}

#[tokio::test(start_paused = true)]
async fn a_running_list_polls_every_3_s_and_redraws_only_what_changes() {
    // A running rollout shows a 27 min age (minute resolution) and a waiting operation at 2 m.
    let ops = vec![fixtures::running_rollout(), fixtures::waiting_for_lock()];
    let (stats, client) = run(ops, Duration::from_secs(30), None).await;
    let polls = client.count("list");
    assert_eq!(polls, 1 + 10, "{stats:?}");
    // The ages are 27m and 2m exactly at t=0 and change only at t=60 s: in 30 s, identical data
    // draws nothing new, and is not even laid out: the frames laid out are the loading one,
    // the list, the list once the caller's permissions (which keys are offered) arrived, and
    // the list at t=18 s, when the rollout's estimate at the pace so far (its running step has
    // 2m 18s of its 3 min pace left) goes down a minute; at 120 columns the estimate's column
    // is on screen, so that frame is drawn too (the loading one, the list, the new estimate).
    assert_eq!(stats.draws, 3, "{stats:?}");
    assert_eq!(stats.renders, 4, "{stats:?}");
    assert_eq!(stats.wakeups, 10, "only the 3 s polls wake it: {stats:?}");
}

#[tokio::test(start_paused = true)]
async fn a_retry_countdown_redraws_once_a_second() {
    let ev = RetryEvent::Retrying {
        what: "listing operations".into(),
        attempt: 1,
        delay: Duration::from_secs(8),
        since: fixtures::now(),
        error: ApiError::new(Code::Unavailable, "connection refused"),
    };
    let (stats, _) = run(
        vec![fixtures::completed()],
        Duration::from_secs(5),
        Some(ev),
    )
    .await;
    // The banner counts 8, 7, 6, 5, 4, 3: a frame each second while it is on screen.
    assert!((5..=8).contains(&stats.draws), "{stats:?}");
}

/// Runs the dashboard with a client whose cluster list panics: `2` opens Clusters, then `keys`
/// are pressed a second apart, and input then stays open until the dashboard ends or a minute
/// of (paused) time passes. Returns the last frame, and whether the dashboard ended by itself
/// while its input was still open.
async fn run_into_a_panic(keys: &[char]) -> (String, bool) {
    let mut fake = scripted(vec![fixtures::completed()]);
    fake.panics_on = Some("clusters");
    let client = Arc::new(fake);
    let runtime = runtime(&client, fixtures::state());
    let (keys_tx, keys_rx) = tokio::sync::mpsc::unbounded_channel::<Action>();
    let keys: Vec<char> = std::iter::once('2').chain(keys.iter().copied()).collect();
    let typist = tokio::spawn(async move {
        for k in keys {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let _ = keys_tx.send(Action::Key(Key::ch(k)));
        }
        // The dashboard dropping its input first is it ending by itself.
        tokio::select! {
            _ = keys_tx.closed() => true,
            _ = tokio::time::sleep(Duration::from_secs(60)) => false,
        }
    });
    let (_retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut term = Terminal::new(TestBackend::new(120, 30)).unwrap();
    runtime
        .run(&mut term, tokio_stream_from(keys_rx), retry_rx, &mut NoHost)
        .await
        .expect("the dashboard goes on after a worker panicked");
    let ended_by_itself = typist.await.unwrap();
    let screen = screen_of(&term);
    (screen, ended_by_itself)
}

/// A panic in a performed effect ends in a clear error on screen, and the dashboard still
/// answers: `q` quits it.
#[tokio::test(start_paused = true)]
async fn a_panicking_worker_is_said_on_screen_and_q_still_quits() {
    let (screen, ended_by_itself) = run_into_a_panic(&[]).await;
    assert!(!ended_by_itself, "it goes on without a key");
    assert!(
        screen.contains("Something went wrong inside the dashboard while listing clusters"),
        "{screen}"
    );
    assert!(
        screen.contains("a bug while answering clusters"),
        "{screen}"
    );
    let (screen, ended_by_itself) = run_into_a_panic(&['q']).await;
    assert!(
        ended_by_itself,
        "q quits it, its input still open\n{screen}"
    );
}

/// A write once sent runs to its end, in-process as in `serve`: Esc stops the waiting (the
/// screen says the write may still happen), never the write.
#[tokio::test(start_paused = true)]
async fn esc_stops_waiting_for_a_write_never_the_write() {
    let client = Arc::new(scripted(vec![fixtures::running_rollout()]));
    let runtime = runtime(&client, fixtures::state());
    let (keys_tx, keys_rx) = tokio::sync::mpsc::unbounded_channel::<Action>();
    tokio::spawn(async move {
        for k in [
            Key::ch('p'),
            Key::ch('y'),
            Key::plain(ichor_app::action::KeyCode::Esc),
        ] {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let _ = keys_tx.send(Action::Key(k));
        }
        // Input ends long after the write would have answered.
        tokio::time::sleep(Duration::from_secs(10)).await;
    });
    let (_retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut term = Terminal::new(TestBackend::new(120, 30)).unwrap();
    runtime
        .run(&mut term, tokio_stream_from(keys_rx), retry_rx, &mut NoHost)
        .await
        .unwrap();
    let screen = screen_of(&term);
    assert_eq!(
        client.answered("pause"),
        1,
        "the pause ran to its end after Esc\n{screen}"
    );
}

/// `:ctx` as the runtime carries it out: the host reaches the other context (here after a
/// second), the new client answers from then on, and a read of the connection before that
/// answers late is not shown.
#[tokio::test(start_paused = true)]
async fn ctx_switches_the_client_and_a_late_answer_of_the_one_before_is_not_shown() {
    struct Contexts(Option<Arc<FakeClient>>);
    impl ichor_runtime::Host for Contexts {
        fn reach_context(&mut self, context: &str) -> Option<ichor_runtime::Reaching> {
            assert_eq!(context, "b");
            let client: Arc<dyn OperationClient> = self.0.take()?;
            Some(Box::pin(async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok(ichor_runtime::Reached {
                    client,
                    route: ichor_app::state::Route::InProcess {
                        context: "b".into(),
                        why: None,
                        asked: false,
                    },
                    namespace: "default".into(),
                    all_namespaces: false,
                    user: Some("bob".into()),
                    production: false,
                    read_only: false,
                    api_server: None,
                })
            }))
        }
    }
    let scripted = |op: Operation, delay: u64| {
        let fake = scripted(vec![op]);
        fake.delays
            .lock()
            .unwrap()
            .insert("list", Duration::from_secs(delay));
        Arc::new(fake)
    };
    // Context a answers its lists after 5 s; b at once.
    let a = scripted(fixtures::running_rollout(), 5);
    let b = scripted(fixtures::completed(), 0);
    let mut state = fixtures::state();
    state.session.demo = false;
    state.session.context = Some("a".into());
    state.session.contexts = vec!["a".into(), "b".into()];
    let runtime = runtime(&a, state);
    let (keys_tx, keys_rx) = tokio::sync::mpsc::unbounded_channel::<Action>();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        for c in ":ctx b".chars() {
            let _ = keys_tx.send(Action::Key(Key::ch(c)));
        }
        let _ = keys_tx.send(Action::Key(Key::plain(ichor_app::action::KeyCode::Enter)));
        // a's first list would have answered at 5 s.
        tokio::time::sleep(Duration::from_secs(9)).await;
        let _ = keys_tx.send(Action::Key(Key::ch('q')));
    });
    let (_retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut term = Terminal::new(TestBackend::new(120, 30)).unwrap();
    runtime
        .run(
            &mut term,
            tokio_stream_from(keys_rx),
            retry_rx,
            &mut Contexts(Some(b.clone())),
        )
        .await
        .unwrap();
    let screen = screen_of(&term);
    assert!(screen.contains("in-process (b)"), "{screen}");
    assert!(screen.contains("user bob"), "{screen}");
    assert!(
        screen.contains("staging-cni-p2m8v"),
        "b's operation: {screen}"
    );
    assert!(
        !screen.contains("prod-eu-talos-8xk2m"),
        "never a's: {screen}"
    );
    assert!(b.count("list") >= 1);
}

#[tokio::test]
async fn the_report_key_writes_the_report_to_a_new_file() {
    let op = fixtures::running_rollout();
    let fake = FakeClient::with_operations(vec![op.clone()]);
    fake.clusters
        .lock()
        .unwrap()
        .push(fixtures::cluster_of(&op));
    let dir = tempfile::tempdir().unwrap();
    let of = (op.namespace.as_str(), op.name.as_str());
    let tz = jiff::tz::TimeZone::UTC;
    let path = ichor_runtime::report::save(&fake, Lang::Ja, tz.clone(), dir.path(), of)
        .await
        .unwrap();
    let file = std::path::Path::new(&path);
    assert_eq!(file.parent(), Some(dir.path()));
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.starts_with("ichor-report-prod-eu-talos-8xk2m-") && name.ends_with(".md"),
        "{name}"
    );
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.starts_with("# レポート："), "{text}");
    assert!(text.chars().all(|c| c == '\n' || !c.is_control()));
    // An operation that cannot be read: why, and no file.
    let gone = ichor_runtime::report::save(&fake, Lang::En, tz, dir.path(), ("default", "gone"))
        .await
        .unwrap_err();
    assert!(!gone.is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
