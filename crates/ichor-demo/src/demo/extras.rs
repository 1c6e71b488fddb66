//! Extra demo data for the end-to-end tests and the benchmarks, asked for through the
//! environment: a hostile cluster whose text tries to reach the terminal, and a long history.

use super::{NAMESPACE, at, cluster, completed, headed, machines, operation, progress};
use crate::apiserver::EmbeddedApi;
use anyhow::Context as _;
use ichor_resources::{TalosOperation, TalosOperationStatus, machine, names};
use jiff::Timestamp;
use std::collections::BTreeMap;

/// The environment variable that seeds a hostile cluster, whose text tries to reach the
/// terminal (tests only): any value but empty or `0`.
pub const HOSTILE_ENV: &str = "ICHOR_DEMO_HOSTILE";
/// The environment variable that adds N Completed operations to the history of `staging`
/// (tests and benchmarks only).
pub const OPERATIONS_ENV: &str = "ICHOR_DEMO_OPERATIONS";
/// The environment variable that adds N viewers, `bench-viewer-I` with the token
/// `demo-bench-token-I` for I in 0..N (benchmarks only: serve bounds the streams of one person,
/// so a thousand dashboards need a thousand people).
pub const USERS_ENV: &str = "ICHOR_DEMO_USERS";

/// The token of the `i`th viewer [`USERS_ENV`] adds.
pub fn bench_token(i: usize) -> String {
    format!("demo-bench-token-{i}")
}

/// Every kind of terminal control a hostile cluster might put in its text: a CSI that clears
/// the screen, an OSC that sets the window title, an OSC 52 that writes the clipboard, a DCS,
/// BEL, backspace, carriage return, line feed and the bidi overrides U+202E and U+2066.
pub(crate) const HOSTILE_TEXT: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}P+q544e\u{1b}\\\u{7}\u{8}\r\n\u{202E}\u{2066}";

/// Extra demo data for the end-to-end tests and the benchmarks, read from the environment by
/// [`DemoCluster::start`](super::DemoCluster::start). Not a user feature: undocumented in `--help` on purpose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DemoExtras {
    /// `ICHOR_DEMO_HOSTILE=1` (test-only): a cluster `hostile` whose machines, operations,
    /// failure reason, messages, actor, hold reason and tracking carry [`HOSTILE_TEXT`], seeded
    /// past the API's validation so even object names carry it.
    pub(crate) hostile: bool,
    /// `ICHOR_DEMO_OPERATIONS=N` (tests and benchmarks only): N more Completed operations in
    /// the history of `staging`.
    pub(crate) history: usize,
    /// `ICHOR_DEMO_USERS=N` (benchmarks only): N more viewers.
    pub(crate) users: usize,
}

impl DemoExtras {
    /// Reads the knobs from `env` (a variable's value, if set).
    pub(crate) fn from_env(env: impl Fn(&str) -> Option<String>) -> anyhow::Result<DemoExtras> {
        let hostile = env(HOSTILE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        let count = |key: &str, what: &str| -> anyhow::Result<usize> {
            match env(key).filter(|v| !v.is_empty()) {
                Some(v) => v.trim().parse().map_err(|e| {
                    anyhow::anyhow!("{key} must be a number of {what}, not {v:?}: {e}")
                }),
                None => Ok(0),
            }
        };
        let history = count(OPERATIONS_ENV, "operations")?;
        let users = count(USERS_ENV, "users")?.min(10_000);
        Ok(DemoExtras {
            hostile,
            history,
            users,
        })
    }
}

/// Stores the extra data `extras` asks for in `api` (after [`seed`](super::seed)).
pub(crate) fn seed_extras(
    api: &EmbeddedApi,
    now: Timestamp,
    extras: DemoExtras,
) -> anyhow::Result<()> {
    if extras.hostile {
        seed_hostile(api, now)?;
    }
    for i in 0..extras.users {
        api.add_bench_viewer(&bench_token(i), &format!("bench-viewer-{i}"));
    }
    if extras.history > 0 {
        let staging: Vec<String> = ["staging-cp1", "staging-w01", "staging-w02", "staging-w03"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for i in 0..extras.history {
            let name = format!("staging-talos-h{i:06}");
            let days = 40 + i64::try_from(i).unwrap_or(i64::MAX / 4096) % 3650;
            let op = headed(
                completed(
                    now,
                    [&name, "staging", "talos", "history-bot"],
                    &staging,
                    days,
                    "running Talos v1.9.3",
                ),
                "v1.9.2",
                "v1.9.3",
            );
            api.seed(&op)
                .with_context(|| format!("seeding history operation {name}"))?;
        }
    }
    Ok(())
}

/// A cluster `hostile` whose every piece of text tries to reach the terminal.
fn seed_hostile(api: &EmbeddedApi, now: Timestamp) -> anyhow::Result<()> {
    seed_hostile_cluster(api)?;
    api.seed(&hostile_paused_operation(now))
        .context("seeding the hostile paused operation")?;
    api.seed(&hostile_odd_phase_operation(now))
        .context("seeding the hostile odd-phase operation")?;
    api.seed(&hostile_named_operation(now))
        .context("seeding the hostile-named operation")?;
    Ok(())
}

/// The cluster (its tracking id) and its machines (a name and hold reasons).
fn seed_hostile_cluster(api: &EmbeddedApi) -> anyhow::Result<()> {
    let evil = HOSTILE_TEXT;
    let mut c = cluster("hostile", "v1.9.3", "v1.32.3", "enabled");
    c.metadata.annotations = Some(BTreeMap::from([(
        names::ARGOCD_TRACKING_ID.to_string(),
        format!("app{evil}x"),
    )]));
    api.seed(&c).context("seeding the hostile cluster")?;
    let mut ms = machines("hostile", 1, 2);
    ms.push(machine(
        "hostile",
        &format!("hostile-w{evil}9"),
        "worker",
        Some(30),
        true,
        Some(&format!("hold{evil}reason")),
    ));
    if let Some(m) = ms.first_mut() {
        m.metadata.annotations = Some(BTreeMap::from([(
            names::UPGRADE_HOLD.to_string(),
            format!("held{evil}here"),
        )]));
    }
    for m in &mut ms {
        m.metadata.namespace = Some(NAMESPACE.into());
        api.seed(m).context("seeding a hostile machine")?;
    }
    Ok(())
}

/// Paused by a failed machine: the failure banner and every machine row carry the text.
fn hostile_paused_operation(now: Timestamp) -> TalosOperation {
    let evil = HOSTILE_TEXT;
    let mut paused = headed(
        operation(
            "hostile-talos-e5c1x",
            "hostile",
            "talos",
            &format!("mallory{evil}@example.com"),
            &at(now, 1),
        ),
        &format!("v1.9.2{evil}"),
        &format!("v1.9.3{evil}"),
    );
    paused.status = Some(TalosOperationStatus {
        phase: "Paused".into(),
        failure_reason: Some(format!("machine hostile-w01 failed: {evil} end")),
        machines: vec![
            progress(
                &format!("hostile{evil}cp1"),
                "Completed",
                &format!("done{evil}ok"),
                Some(at(now, 1)),
                Some(at(now, 1)),
            ),
            progress(
                "hostile-w01",
                "Failed",
                &format!("installer said {evil} and exited"),
                Some(at(now, 1)),
                Some(at(now, 1)),
            ),
            progress(
                &format!("hostile-w{evil}9"),
                &format!("Weird{evil}"),
                &format!("pending{evil}"),
                None,
                None,
            ),
        ],
        started_at: Some(at(now, 1)),
        ..Default::default()
    });
    paused
}

/// The cluster's oldest unfinished operation, in a phase nobody knows: the Clusters list
/// shows its phase.
fn hostile_odd_phase_operation(now: Timestamp) -> TalosOperation {
    let mut odd = operation(
        "hostile-ichor-q0q0q",
        "hostile",
        "ichor",
        "mallory@example.com",
        &at(now, 600),
    );
    odd.status = Some(TalosOperationStatus {
        // Short, so the bidi characters fit in the column and are not cut off.
        phase: "\u{202E}Odd\u{2066}\u{1b}]0;pwned\u{7}".into(),
        started_at: Some(at(now, 600)),
        ..Default::default()
    });
    odd
}

/// Finished, with the text in its name, cluster and kind: only listed.
fn hostile_named_operation(now: Timestamp) -> TalosOperation {
    let evil = HOSTILE_TEXT;
    let mut named = operation(
        &format!("x{evil}y"),
        &format!("c{evil}d"),
        &format!("k{evil}l"),
        &format!("m{evil}n"),
        &at(now, 2),
    );
    named.status = Some(TalosOperationStatus {
        phase: "Completed".into(),
        started_at: Some(at(now, 2)),
        finished_at: Some(at(now, 2)),
        ..Default::default()
    });
    named
}
