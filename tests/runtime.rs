//! The event loop on tokio's paused clock: it wakes only for polls and for a clock whose display
//! changes, and draws only when the frame differs.

mod common;

use common::fixtures;
use futures::StreamExt;
use ichor_app::action::{Action, Key};
use ichor_model::{
    ApiError, Cluster, Code, Confirmed, Created, Operation, OperationRequest, Permissions, Plan,
};
use ichor_model::{OperationClient, RetryEvent};
use ichor_runtime::{Clock, NoHost, Runtime, Stats};
use ichor_views::i18n::{Lang, Texts};
use ichor_views::widgets::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A client that answers from a list it can be told to change, and counts the calls.
struct Scripted {
    ops: Mutex<Vec<Operation>>,
    lists: AtomicUsize,
    /// Listing clusters panics (a bug in a worker).
    panics: bool,
    /// Pauses carried out (each takes 5 s to answer).
    paused: AtomicUsize,
    /// How long a list takes to answer.
    list_delay: Duration,
}

impl Scripted {
    /// Answers with `ops`, at once, without panicking.
    fn new(ops: Vec<Operation>) -> Scripted {
        Scripted {
            ops: Mutex::new(ops),
            lists: AtomicUsize::new(0),
            panics: false,
            paused: AtomicUsize::new(0),
            list_delay: Duration::ZERO,
        }
    }

    /// The runtime as the tests run it, with this client, in English.
    fn runtime(self: &Arc<Self>, state: ichor_app::state::State) -> Runtime {
        Runtime {
            state,
            client: self.clone(),
            texts: Texts::new(Lang::En),
            theme: Theme::default(),
            clock: Clock::new(fixtures::now()),
        }
    }
}

#[async_trait::async_trait]
impl OperationClient for Scripted {
    async fn list_page(
        &self,
        q: &ichor_model::ListQuery,
    ) -> Result<ichor_model::OperationPage, ApiError> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.list_delay).await;
        ichor_service::list::page(self.ops.lock().unwrap().clone(), q)
    }
    async fn get_operation(&self, _: &str, name: &str) -> Result<Operation, ApiError> {
        self.ops
            .lock()
            .unwrap()
            .iter()
            .find(|o| o.name == name)
            .cloned()
            .ok_or_else(|| ApiError::new(Code::NotFound, "gone"))
    }
    async fn plan_operation(&self, _: &OperationRequest) -> Result<Plan, ApiError> {
        Err(ApiError::new(Code::Unimplemented, "not in this test"))
    }
    async fn create_operation(&self, _: &OperationRequest) -> Result<Created, ApiError> {
        Err(ApiError::new(Code::Unimplemented, "not in this test"))
    }
    async fn set_operation_paused(
        &self,
        _: &str,
        name: &str,
        _: bool,
        _: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        tokio::time::sleep(Duration::from_secs(5)).await;
        self.paused.fetch_add(1, Ordering::SeqCst);
        self.get_operation("default", name).await
    }
    async fn delete_operation(
        &self,
        _: &str,
        _: &str,
        _: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        Err(ApiError::new(Code::Unimplemented, "not in this test"))
    }
    async fn permissions(&self, _: &str) -> Result<Permissions, ApiError> {
        Ok(Permissions {
            pause: true,
            ..Permissions::default()
        })
    }
    async fn list_clusters(&self, _: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        if self.panics {
            panic!("a bug while listing clusters");
        }
        Ok(Vec::new())
    }
    async fn get_cluster(&self, _: &str, _: &str) -> Result<Cluster, ApiError> {
        Err(ApiError::new(Code::NotFound, "none"))
    }
}

/// Runs the dashboard for `run_for` of paused time; `script` may send keys or change data.
async fn run(
    ops: Vec<Operation>,
    run_for: Duration,
    retry: Option<RetryEvent>,
) -> (Stats, Arc<Scripted>) {
    let client = Arc::new(Scripted::new(ops));
    let runtime = client.runtime(fixtures::state());
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
    let polls = client.lists.load(Ordering::SeqCst);
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
    let polls = client.lists.load(Ordering::SeqCst);
    assert_eq!(polls, 1 + 10, "{stats:?}");
    // The ages are 27m and 2m exactly at t=0 and change only at t=60 s: in 30 s, identical data
    // draws nothing new, and is not even laid out: the frames laid out are the loading one,
    // the list, and the list once the caller's permissions (which keys are offered) arrived.
    assert_eq!(stats.draws, 2, "{stats:?}");
    assert_eq!(stats.renders, 3, "{stats:?}");
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
    let client = Arc::new(Scripted {
        panics: true,
        ..Scripted::new(vec![fixtures::completed()])
    });
    let runtime = client.runtime(fixtures::state());
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
    assert!(screen.contains("a bug while listing clusters"), "{screen}");
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
    let client = Arc::new(Scripted::new(vec![fixtures::running_rollout()]));
    let runtime = client.runtime(fixtures::state());
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
        client.paused.load(Ordering::SeqCst),
        1,
        "the pause ran to its end after Esc\n{screen}"
    );
}

/// `:ctx` as the runtime carries it out: the host reaches the other context (here after a
/// second), the new client answers from then on, and a read of the connection before that
/// answers late is not shown.
#[tokio::test(start_paused = true)]
async fn ctx_switches_the_client_and_a_late_answer_of_the_one_before_is_not_shown() {
    struct Contexts(Option<Arc<Scripted>>);
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
                    },
                    namespace: "default".into(),
                    all_namespaces: false,
                    user: Some("bob".into()),
                    production: false,
                    read_only: false,
                })
            }))
        }
    }
    let scripted = |op: Operation, delay: u64| {
        Arc::new(Scripted {
            list_delay: Duration::from_secs(delay),
            ..Scripted::new(vec![op])
        })
    };
    // Context a answers its lists after 5 s; b at once.
    let a = scripted(fixtures::running_rollout(), 5);
    let b = scripted(fixtures::completed(), 0);
    let mut state = fixtures::state();
    state.session.demo = false;
    state.session.context = Some("a".into());
    state.session.contexts = vec!["a".into(), "b".into()];
    let runtime = a.runtime(state);
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
    assert!(b.lists.load(Ordering::SeqCst) >= 1);
}
