//! Bytes written to the terminal.
//!
//! 1. One machine's phase changes on the Operation screen of a 15-machine rollout: the second
//!    draw writes only the cells that changed (hundreds of bytes, not thousands).
//! 2. Nothing changes: the real event loop (`Runtime`) against a fake client, on tokio's paused
//!    clock, for ten virtual minutes. Polls whose result draws the same frame write nothing;
//!    the only draws are the first frames and the clock whose display changes (ages, once a
//!    minute).
//!
//!     cargo bench --bench terminal_bytes

mod common;

use common::data::{listed, now, operations, rollout, rollout_cluster};
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{Session, State};
use ichor_app::update::update;
use ichor_client::fake::FakeClient;
use ichor_model::OperationClient;
use ichor_model::{MachinePhase, Operation};
use ichor_runtime::{Clock, NoHost, Runtime};
use ichor_views as views;
use ichor_views::i18n::{Lang, Texts};
use ichor_views::widgets::{Ctx, Theme};
use ratatui::Terminal;
use std::sync::Arc;
use std::time::Duration;

use common::tty::{Fixed, SIZE, terminal};

/// The rollout's page, loaded as the app loads it.
fn page(op: &Operation) -> State {
    let mut state = listed(vec![op.clone()], SIZE.0, SIZE.1);
    update(&mut state, Action::Key(Key::plain(KeyCode::Enter)));
    let seq = state.seq;
    update(
        &mut state,
        Action::Operation {
            seq,
            namespace: op.namespace.clone(),
            name: op.name.clone(),
            result: Ok(op.clone()),
        },
    );
    let seq = state.seq;
    update(
        &mut state,
        Action::Cluster {
            seq,
            purpose: ichor_app::action::ClusterFor::OperationPage,
            namespace: op.namespace.clone(),
            name: op.cluster.clone(),
            result: Ok(rollout_cluster()),
        },
    );
    state
}

/// Bytes of the first draw and of the draw after `change`.
fn bytes_of_change(change: impl Fn(&mut Operation)) -> (usize, usize) {
    let texts = Texts::new(Lang::En);
    let ctx = Ctx {
        texts: &texts,
        theme: Theme::default(),
    };
    let op = rollout();
    let mut state = page(&op);
    let (mut term, wire) = terminal();
    let draw = |term: &mut Terminal<Fixed>, state: &State| {
        term.draw(|f| views::render(state, &ctx, f.area(), f.buffer_mut()))
            .expect("a draw");
    };
    draw(&mut term, &state);
    let first = wire.total();
    let mut next = op.clone();
    change(&mut next);
    let seq = state.seq;
    update(
        &mut state,
        Action::Operation {
            seq,
            namespace: op.namespace.clone(),
            name: op.name.clone(),
            result: Ok(next),
        },
    );
    draw(&mut term, &state);
    (first, wire.total() - first)
}

struct Idle {
    seconds: u64,
    /// ListOperations and GetOperation calls: the polls.
    polls: u64,
    wakeups: u64,
    draws: u64,
    /// Frames laid out (a poll that changed nothing lays none out).
    renders: u64,
    bytes: usize,
    /// (seconds since start, bytes) of every draw.
    drawn: Vec<(u64, usize)>,
}

/// The real event loop for `minutes` virtual minutes on the Operations list, then as long on
/// the rollout's page, with nothing changing.
fn idle(minutes: u64) -> Idle {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let mut ops = operations(20);
        ops.insert(0, rollout());
        // The one test fake, whose data never changes; it counts the reads (the polls).
        let still = Arc::new(FakeClient::with_operations(ops));
        *still.clusters.lock().expect("clusters") = vec![rollout_cluster()];
        let client: Arc<dyn OperationClient> = still.clone();
        let clock = Clock::new(now());
        let session = Session {
            route: Default::default(),
            demo: true,
            namespace: "default".into(),
            all_namespaces: false,
            user: None,
            read_only: false,
            server_version: Default::default(),
            ..Default::default()
        };
        let runtime = Runtime {
            state: State::new(session, clock.now(), jiff::tz::TimeZone::UTC),
            client,
            texts: Texts::new(Lang::En),
            theme: Theme::default(),
            clock,
        };
        let half = Duration::from_secs(minutes * 60);
        // Idle on the list, open the rollout (Enter), idle on its page, then quit.
        let input = Box::pin(futures::stream::unfold(0, move |step| async move {
            match step {
                0 => {
                    tokio::time::sleep(half).await;
                    Some((Action::Key(Key::plain(KeyCode::Enter)), 1))
                }
                1 => {
                    tokio::time::sleep(half).await;
                    Some((Action::Terminate, 2))
                }
                _ => None,
            }
        }));
        let (_retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
        let (mut term, wire) = terminal();
        let start = tokio::time::Instant::now();
        let stats = runtime
            .run(&mut term, input, retry_rx, &mut NoHost)
            .await
            .expect("the run");
        Idle {
            seconds: start.elapsed().as_secs(),
            polls: u64::try_from(still.count("list") + still.count("get")).unwrap_or(u64::MAX),
            wakeups: stats.wakeups,
            draws: stats.draws,
            renders: stats.renders,
            bytes: wire.total(),
            drawn: wire
                .flushes()
                .iter()
                .map(|(at, n)| (at.duration_since(start).as_secs(), *n))
                .collect(),
        }
    })
}

fn main() {
    let full = common::full();

    let (first, phase_only) = bytes_of_change(|op| op.machines[5].phase = MachinePhase::Completed);
    common::report(
        "bytes: first frame of a 15-machine rollout's page (120x40)",
        format!("{first} B"),
    );
    common::report(
        "bytes: one machine's phase changes (Running -> Completed)",
        format!("{phase_only} B"),
    );
    let (_, step) = bytes_of_change(|op| {
        let at = op.machines[5].started_at;
        op.machines[5].phase = MachinePhase::Completed;
        op.machines[5].message = "running Talos v1.9.3".into();
        op.machines[5].finished_at = at;
        op.machines[6].phase = MachinePhase::Running;
        op.machines[6].message = "installing Talos v1.9.3 and rebooting".into();
        op.machines[6].started_at = at;
    });
    common::report(
        "bytes: one machine completes and the next starts",
        format!("{step} B"),
    );
    assert!(
        phase_only < 1_000,
        "a phase change wrote {phase_only} bytes"
    );

    let minutes = if full { 10 } else { 2 };
    let r = idle(minutes);
    let changed: Vec<String> = r
        .drawn
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{s}s:{n}B"))
        .collect();
    common::report(
        &format!(
            "idle: {} virtual minutes (list, then page), nothing changes",
            2 * minutes
        ),
        format!(
            "{} polls, {} wake-ups, {} frames laid out, {} draws, {} B in all",
            r.polls, r.wakeups, r.renders, r.draws, r.bytes
        ),
    );
    common::report("idle: every draw (time: bytes)", changed.join(" "));
    // Every byte belongs to a draw, and a draw happens only when the frame changed: the
    // ratatui Terminal flushes once per draw, so flushes with bytes == draws.
    let with_bytes = r.drawn.iter().filter(|(_, n)| *n > 0).count() as u64;
    assert_eq!(
        with_bytes, r.draws,
        "every draw wrote something; nothing else did"
    );
    assert!(r.seconds >= 2 * minutes * 60);
    // At most two clocks tick per minute (an age or elapsed time, and the running machine's),
    // plus the first frames and the page opening: never one draw per poll.
    assert!(r.polls >= 2 * minutes * 60 / 10, "{} polls", r.polls);
    assert!(
        r.draws <= 2 * (2 * minutes + 1) + 3,
        "{} draws in {} idle minutes",
        r.draws,
        2 * minutes
    );
    // A poll whose answer changed nothing is not laid out: frames are laid out for the clock's
    // changes, not per poll.
    assert!(
        r.renders <= r.polls / 2,
        "{} frames laid out for {} polls",
        r.renders,
        r.polls
    );
}
