//! ichor-tui: arguments, logging (a file for the dashboard, stderr for a server), backend
//! choice, run.

use anyhow::Context as _;
use ichor_tui::cli::{Cli, Command};
use std::net::SocketAddr;

fn main() -> std::process::ExitCode {
    // `COMPLETE=bash ichor-tui -- WORDS…`, as the completion script calls it: the candidates,
    // then exit (before anything else prints).
    clap_complete::CompleteEnv::with_factory(ichor_tui::cli::command)
        .completer(ichor_tui::cli::complete::COMMAND)
        .shells(ichor_tui::cli::complete::shells())
        .complete();
    let cli = ichor_tui::cli::parse();
    let logging = match ichor_tui::cli::init_logging(cli.log_setup()) {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!("ichor-tui: {}", ichor_model::error_text::one_line(&e));
            None
        }
    };
    // An error is said once: in the log when the log is on stderr, else on stderr as well.
    let log_on_stderr = logging.as_ref().is_some_and(|l| l.on_stderr);
    // The dashboard alone waits on the terminal, a timer and its calls: one thread, so an
    // idle poll wakes no second one. Serving (serve, demo-cluster, --demo's embedded cluster
    // and its ichor-ui) takes every core.
    let dashboard_alone = !cli.serves();
    if matches!(cli.command, Some(Command::Serve(_))) {
        ichor_server::memory::limit_arenas();
    }
    let mut builder = match dashboard_alone {
        true => tokio::runtime::Builder::new_current_thread(),
        false => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ichor-tui: starting the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            let line = ichor_model::error_text::one_line(&e);
            tracing::error!(error = %line, "ichor-tui failed");
            if !log_on_stderr {
                eprintln!("ichor-tui: {line}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    match &cli.command {
        Some(Command::DemoCluster(args)) => {
            let addr: SocketAddr = args.listen.parse().context("parsing --listen")?;
            ichor_demo::apiserver::server::check_listen(&addr, args.allow_remote)?;
            let demo = ichor_demo::demo::DemoCluster::start(args.demo_speed)?;
            if let Some(target) = args.ichor_ui_forward {
                demo.forward_ichor_ui(target)?;
            }
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("listening on {addr}"))?;
            let local = listener.local_addr()?;
            if let Some(path) = &args.kubeconfig_out {
                ichor_demo::apiserver::server::write_kubeconfig(path, &local)?;
            }
            println!("demo cluster listening on http://{local}");
            tokio::select! {
                r = ichor_demo::apiserver::server::serve(demo.api.clone(), listener) => r?,
                _ = tokio::signal::ctrl_c() => {}
            }
            Ok(std::process::ExitCode::SUCCESS)
        }
        Some(Command::Serve(args)) => {
            ichor_tui::cli::run_serve(args).await?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        Some(Command::Version(_)) => ichor_tui::cli::version::run(&cli).await,
        Some(Command::Completion(args)) => ichor_tui::cli::complete::print_script(args),
        Some(Command::Man(args)) => ichor_tui::cli::man::run(args),
        Some(_) => ichor_tui::cli::run_verb(&cli).await,
        None => ichor_tui::cli::run_dashboard(cli).await,
    }
}
