//! Flags before the command, as kubectl, talosctl and helm take them: `ichor-tui -n prod op
//! list` is `ichor-tui op list -n prod`, `ichor-tui --kubeconfig K serve` is `ichor-tui serve
//! --kubeconfig K`. The top-level flags are the dashboard's; given before a command, each one
//! the command acts on reaches it (a flag given after the command wins), and one it does not act
//! on is refused, naming the flag and the command, rather than silently ignored. A command's help
//! lists only its own flags.

use super::verbs::args::OperationCommand;
use super::{Cli, Command};
use clap::parser::ValueSource;
use clap::{CommandFactory as _, FromArgMatches as _};

/// The whole command line's grammar, with the completion candidates.
pub fn command() -> clap::Command {
    Cli::command()
}

/// The process's own arguments, parsed and lifted; a usage error exits 2, as clap's own do.
pub fn parse() -> Cli {
    try_parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// `args` (the program's name first), parsed, with the flags given before the command lifted
/// into it.
pub fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    lift(&mut cli, &matches)
        .map_err(|msg| cmd.error(clap::error::ErrorKind::ArgumentConflict, msg))?;
    Ok(cli)
}

/// The top-level flags given on the command line (not by the environment or a default): each
/// one's id and how it is spelt.
fn given(matches: &clap::ArgMatches) -> Vec<(String, String)> {
    command()
        .get_arguments()
        .filter(|a| matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .map(|a| {
            let spelt = a
                .get_long()
                .map(|l| format!("--{l}"))
                .unwrap_or_else(|| a.get_id().to_string());
            (a.get_id().to_string(), spelt)
        })
        .collect()
}

/// The dashboard's flags that only the dashboard acts on (its terminal).
const DASHBOARD_ONLY: &[&str] = &["color", "ascii", "ambiguous_width", "no_notify"];

/// Whether the command acts on the top-level flag `id`.
fn acts_on(command: &Command, id: &str) -> bool {
    match command {
        Command::Upgrade(_) | Command::Cni(_) | Command::Cluster(_) => {
            !DASHBOARD_ONLY.contains(&id) && id != "all_namespaces"
        }
        Command::Operation(a) => {
            !DASHBOARD_ONLY.contains(&id)
                && (id != "all_namespaces" || matches!(a.command, OperationCommand::List(_)))
        }
        Command::Version(_) => {
            !DASHBOARD_ONLY.contains(&id) && !["all_namespaces", "read_only"].contains(&id)
        }
        Command::Serve(_) => [
            "kubeconfig",
            "context",
            "demo",
            "demo_speed",
            "read_only",
            "log_file",
        ]
        .contains(&id),
        Command::DemoCluster(_) => ["demo_speed", "log_file"].contains(&id),
        Command::Completion(_) | Command::Man(_) => false,
    }
}

/// The command's name as typed in messages.
fn name_of(command: &Command) -> &'static str {
    match command {
        Command::Upgrade(_) => "upgrade",
        Command::Cni(_) => "cni",
        Command::Cluster(_) => "cluster",
        Command::Operation(_) => "operation",
        Command::Version(_) => "version",
        Command::Serve(_) => "serve",
        Command::DemoCluster(_) => "demo-cluster",
        Command::Completion(_) => "completion",
        Command::Man(_) => "man",
    }
}

/// Refuses a flag before the command that the command does not act on; hands the others to it.
fn lift(cli: &mut Cli, matches: &clap::ArgMatches) -> Result<(), String> {
    let given = given(matches);
    let Some(command) = &cli.command else {
        return Ok(());
    };
    if let Some((_, spelt)) = given.iter().find(|(id, _)| !acts_on(command, id)) {
        let name = name_of(command);
        return Err(format!(
            "{spelt} does nothing for `ichor-tui {name}` (`ichor-tui {name} --help` lists its flags)"
        ));
    }
    let reach = cli.reach.clone();
    let sub = matches.subcommand().map(|(_, m)| m);
    let sub_given =
        |id: &str| sub.is_some_and(|m| m.value_source(id) == Some(ValueSource::CommandLine));
    let speed_before = given.iter().any(|(id, _)| id == "demo_speed");
    let (all_namespaces, demo_speed) = (cli.all_namespaces, cli.demo_speed);
    let Some(command) = cli.command.as_mut() else {
        return Ok(());
    };
    match command {
        Command::Upgrade(a) => a.reach = std::mem::take(&mut a.reach).under(reach),
        Command::Cni(a) => a.reach = std::mem::take(&mut a.reach).under(reach),
        Command::Cluster(a) => a.reach = std::mem::take(&mut a.reach).under(reach),
        Command::Version(a) => a.reach = std::mem::take(&mut a.reach).under(reach),
        Command::Operation(a) => {
            a.reach = std::mem::take(&mut a.reach).under(reach);
            if let OperationCommand::List(l) = &mut a.command {
                l.all_namespaces |= all_namespaces;
            }
        }
        Command::Serve(a) => {
            a.kube = std::mem::take(&mut a.kube).under(reach.kube);
            a.log_file = a.log_file.take().or(reach.log_file);
            a.demo |= reach.demo;
            a.read_only |= reach.read_only;
            if speed_before && !sub_given("demo_speed") {
                a.demo_speed = demo_speed;
            }
            if a.demo && (a.kube.kubeconfig.is_some() || a.kube.context.is_some()) {
                return Err("`serve --demo` serves the embedded cluster: it takes no --kubeconfig or --context".into());
            }
        }
        Command::DemoCluster(a) => {
            a.log_file = a.log_file.take().or(reach.log_file);
            if speed_before && !sub_given("demo_speed") {
                a.demo_speed = demo_speed;
            }
        }
        Command::Completion(_) | Command::Man(_) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::verbs::{args::Verb, verb_of};

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        try_parse_from(std::iter::once("ichor-tui").chain(args.iter().copied()))
    }

    #[test]
    fn connection_flags_before_the_command_reach_it() {
        let cli = parse(&[
            "--kubeconfig",
            "/k",
            "-n",
            "prod",
            "--as",
            "viewer",
            "op",
            "list",
        ])
        .unwrap();
        let (verb, reach) = verb_of(&cli).unwrap();
        assert!(matches!(
            verb,
            Verb::List {
                all_namespaces: false,
                ..
            }
        ));
        assert_eq!(
            reach.kube.kubeconfig.as_deref(),
            Some(std::path::Path::new("/k"))
        );
        assert_eq!(reach.namespace.as_deref(), Some("prod"));
        assert_eq!(reach.as_user.as_deref(), Some("viewer"));
        // After the command wins; -A before `op list` lists every namespace.
        let cli = parse(&["-n", "a", "-A", "op", "list", "-n", "b"]).unwrap();
        let (verb, reach) = verb_of(&cli).unwrap();
        assert_eq!(reach.namespace.as_deref(), Some("b"));
        assert!(matches!(
            verb,
            Verb::List {
                all_namespaces: true,
                ..
            }
        ));
        let cli = parse(&["--call-timeout", "7", "upgrade", "talos", "1.0.0"]).unwrap();
        assert_eq!(verb_of(&cli).unwrap().1.call_timeout, Some(7));
    }

    #[test]
    fn serve_takes_the_flags_it_acts_on_and_refuses_the_others() {
        let cli = parse(&["--kubeconfig", "/k", "--context", "c", "serve"]).unwrap();
        let Some(Command::Serve(a)) = &cli.command else {
            panic!()
        };
        assert_eq!(
            (a.kube.kubeconfig.as_deref(), a.kube.context.as_deref()),
            (Some("/k".as_ref()), Some("c"))
        );
        let e = parse(&["-n", "prod", "serve"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string()
                .contains("--namespace does nothing for `ichor-tui serve`"),
            "{e}"
        );
        let e = parse(&["--color", "never", "op", "list"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("--color does nothing for `ichor-tui operation`"),
            "{e}"
        );
        assert!(
            parse(&["-A", "op", "get", "x"]).is_err(),
            "-A lists: get does not"
        );
        assert!(parse(&["--kubeconfig", "/k", "serve", "--demo"]).is_err());
        let cli = parse(&["--demo-speed", "5", "demo-cluster"]).unwrap();
        let Some(Command::DemoCluster(a)) = &cli.command else {
            panic!()
        };
        assert_eq!(a.demo_speed, 5.0);
    }
}
