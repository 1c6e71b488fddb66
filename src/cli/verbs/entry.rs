//! A command run as a process: the settings (the dashboard's flags, given after the command,
//! over the config file), the question's terminal, the dashboard's own route and client, and
//! the retrying client's waits said on standard error with the dashboard's words.

use super::args::{Reach, Verb};
use super::{Exit, Io};
use crate::cli::settings::Source;
use crate::cli::{Cli, Command};
use std::io::IsTerminal as _;

/// The command's verb and its reach flags, if `cli` runs one.
pub fn verb_of(cli: &Cli) -> Option<(Verb, &Reach)> {
    Some(match cli.command.as_ref()? {
        Command::Upgrade(a) => (a.verb(), &a.reach),
        Command::Cni(a) => (a.verb(), &a.reach),
        Command::Cluster(a) => (a.verb(), &a.reach),
        Command::Operation(a) => (a.verb(), &a.reach),
        Command::Serve(_)
        | Command::DemoCluster(_)
        | Command::Version(_)
        | Command::Completion(_)
        | Command::Man(_) => return None,
    })
}

/// The `--confirm-cluster` given to a write, if any.
fn confirm_cluster_of(cli: &Cli) -> Option<String> {
    use super::args::{ClusterCommand, OperationCommand};
    let confirm = match cli.command.as_ref()? {
        Command::Upgrade(a) => &a.start.confirm,
        Command::Cni(a) => &a.start.confirm,
        Command::Cluster(a) => match &a.command {
            ClusterCommand::Shutdown(s) | ClusterCommand::RotateCa(s) => &s.confirm,
        },
        Command::Operation(a) => match &a.command {
            OperationCommand::Pause(w)
            | OperationCommand::Resume(w)
            | OperationCommand::Delete(w) => &w.confirm,
            _ => return None,
        },
        Command::Serve(_)
        | Command::DemoCluster(_)
        | Command::Version(_)
        | Command::Completion(_)
        | Command::Man(_) => return None,
    };
    confirm.confirm_cluster.clone()
}

/// The dashboard's settings as the command's flags give them (`top`: the command line, for the
/// demo's speed).
pub(crate) fn as_dashboard(top: &Cli, reach: &Reach, all_namespaces: bool) -> anyhow::Result<Cli> {
    let mut cli = crate::cli::try_parse_from(["ichor-tui"])?;
    cli.demo_speed = top.demo_speed;
    cli.demo_without_ichor_ui = top.demo_without_ichor_ui;
    cli.reach = reach.clone();
    cli.all_namespaces = all_namespaces;
    Ok(cli)
}

/// How often a wait repeated at the same length is said again: the person sees it still tries.
const RETRY_SAID_AGAIN: std::time::Duration = std::time::Duration::from_secs(60);

/// Says the retrying client's waits on standard error, as the dashboard's banner does, each
/// line with the time it is said at: a wait when it differs from the last one said of the same
/// outage (a wait repeated at the same length is said again once a minute), and that the side
/// answers again once a call is answered after one.
fn say_retries(
    texts: std::sync::Arc<ichor_views::i18n::Texts>,
    side: String,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<ichor_model::RetryEvent>,
) {
    use ichor_model::RetryEvent;
    tokio::spawn(async move {
        let tz = jiff::tz::TimeZone::system();
        let hhmm = |at: jiff::Timestamp| at.to_zoned(tz.clone()).strftime("%H:%M").to_string();
        // The outage said: since when, the last wait said of it and when.
        let mut outage: Option<(jiff::Timestamp, String, std::time::Instant)> = None;
        while let Some(e) = rx.recv().await {
            let line = match e {
                RetryEvent::Retrying { delay, since, .. } => {
                    // Rounded: a wait of 1.9 s (jittered) is said as the 2 s it is.
                    let n = (delay.as_secs_f64().round() as u64).max(1).to_string();
                    let line = texts.tr(
                        "banner-retrying",
                        &[("n", &n), ("since", &hhmm(since)), ("side", &side)],
                    );
                    let now = std::time::Instant::now();
                    match &mut outage {
                        Some((_, said, at)) if *said == line && at.elapsed() < RETRY_SAID_AGAIN => {
                            continue;
                        }
                        Some((_, said, at)) => (*said, *at) = (line.clone(), now),
                        None => outage = Some((since, line.clone(), now)),
                    }
                    line
                }
                RetryEvent::Recovered { .. } => match outage.take() {
                    Some((since, ..)) => texts.tr(
                        "cli-answers-again",
                        &[("side", &side), ("since", &hhmm(since))],
                    ),
                    None => continue,
                },
                RetryEvent::GaveUp { .. } => {
                    outage = None;
                    continue;
                }
            };
            eprintln!("{} {line}", super::follow::clock(&tz));
        }
    });
}

/// Reaches the service from `source`, saying on standard error what is looked for and why the
/// cluster is read directly (each once, and neither when `quiet`: before an output for
/// programs), and the retrying client's waits.
async fn connect_saying(
    dash: &Cli,
    settings: &crate::cli::settings::Settings,
    source: Source,
    (texts, quiet): (&std::sync::Arc<ichor_views::i18n::Texts>, bool),
) -> anyhow::Result<crate::cli::dashboard::Connected> {
    let (retry_tx, retry_rx) = tokio::sync::mpsc::unbounded_channel();
    // The side that does not answer: a server, else Kubernetes (the tunnel is opened through it).
    let side = texts.t(match source {
        Source::Remote { .. } => "side-server",
        Source::Demo | Source::Kubeconfig { .. } => "side-kubernetes",
    });
    say_retries(texts.clone(), side, retry_rx);
    if let Source::Kubeconfig { loaded, context } = &source
        && !quiet
    {
        let server = loaded.client_config(context).await?.cluster_url.to_string();
        let options = crate::cli::reach::ReachOptions::of(settings);
        if let Some(line) = crate::cli::reach::asking_line(texts, &options, &server) {
            eprintln!("{line}");
        }
    }
    let connected = crate::cli::dashboard::connect(dash, settings, source, retry_tx).await?;
    if let Some(line) = crate::cli::reach::fallback_line(texts, &connected.route)
        && !quiet
    {
        eprintln!("{line}");
    }
    Ok(connected)
}

/// Runs the command `cli` names.
pub async fn run_verb(cli: &Cli) -> anyhow::Result<std::process::ExitCode> {
    let Some((verb, reach)) = verb_of(cli) else {
        anyhow::bail!("not a command");
    };
    let all = matches!(
        verb,
        Verb::List {
            all_namespaces: true,
            ..
        }
    );
    let dash = as_dashboard(cli, reach, all)?;
    let mut settings = crate::cli::dashboard::settings_of(&dash, false)?;
    if verb.watches() {
        // A watch reads at its poll's pace; a read that fails is retried at that pace too, so
        // the API back is seen within a poll, not after a backoff of 30 s.
        settings.retry.max_delay = super::POLL;
    }
    let texts = std::sync::Arc::new(ichor_views::i18n::Texts::new(settings.lang));
    let terminal = std::io::stdin().is_terminal();
    if verb.asks() && !terminal {
        // Said before anything is contacted: nothing can be written.
        let line = texts.tr("cli-needs-yes", &[("command", &verb.command())]);
        eprintln!("{line}");
        return Ok(std::process::ExitCode::from(Exit::Usage.code()));
    }
    let source = Source::choose(&dash, &settings)?;
    // The context whose `[[contexts]]` rules hold, with every other that reaches its API
    // server (with `--server` too: the kubeconfig's context decides).
    let in_force = source.in_force(&settings);
    let quiet = verb.prints_for_programs();
    let connected = connect_saying(&dash, &settings, source, (&texts, quiet)).await?;
    if verb.writes() && settings.read_only_in(&in_force) {
        // The config marks the context read only: refused before anything is read.
        let e = ichor_model::read_only_refusal(&verb.command());
        eprintln!("{}", ichor_views::words::error_text(&texts, &e));
        return Ok(std::process::ExitCode::from(Exit::Refused.code()));
    }
    let stdin = std::io::stdin();
    let mut lock = stdin.lock();
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    let mut io = Io {
        texts: &texts,
        out: &mut out,
        err: &mut err,
        answers: terminal.then_some(&mut lock as &mut dyn std::io::BufRead),
        poll: super::POLL,
        tz: jiff::tz::TimeZone::system(),
        production: in_force.marks.production.then(|| super::Production {
            context: in_force.context.clone().unwrap_or_default(),
            api_server: in_force.api_server.as_ref().map(|s| s.url()),
        }),
        confirm_cluster: confirm_cluster_of(cli),
        slow: settings.slow,
        clock: jiff::Timestamp::now,
    };
    let exit = super::run(
        connected.client.as_ref(),
        &connected.namespace,
        &verb,
        &mut io,
    )
    .await;
    drop(connected);
    Ok(std::process::ExitCode::from(exit.code()))
}
