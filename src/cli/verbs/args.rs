//! The commands beside the dashboard (ADR 0068, Decision 6): their arguments as clap reads them,
//! and the one [`Verb`] each comes to.

use super::output::candidates as output_candidates;
pub use super::output::{OUTPUTS, Output, parse_output};
pub use super::verb::{Verb, WriteKind};
pub use crate::cli::flags::Reach;
use clap::{Args, Subcommand, ValueEnum};
use ichor_model::OperationKind;

/// What every command's help ends with.
pub const EXIT_CODES: &str = "Exit codes: 0 done; 1 refused (by the service, by you at the question, or an error); 2 usage (a wrong flag, or a write without a terminal and without --yes); 3 the operation failed (--follow, get --watch: it failed, or a failed machine paused it).";

/// What a write asks before it writes, and what it does after.
#[derive(Debug, Args, Clone, Default)]
pub struct Confirm {
    /// Confirm without the question (and without asking for the plan: the start still makes
    /// every check it makes).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// The cluster this write is on, named to confirm it: in a context the config marks
    /// production, --yes writes only with it (and it must name the write's cluster).
    #[arg(long, value_name = "NAME")]
    pub confirm_cluster: Option<String>,
}

/// `ichor-tui upgrade talos|kubernetes|ichor VERSION`.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct UpgradeArgs {
    /// What to upgrade.
    pub what: Upgradable,
    /// The version to upgrade to, with or without the leading v (v1.10.0, 1.10.0).
    pub version: String,
    #[command(flatten)]
    pub start: StartFlags,
    #[command(flatten)]
    pub reach: Reach,
}

/// What `upgrade` upgrades.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Upgradable {
    Talos,
    Kubernetes,
    Ichor,
}

/// `ichor-tui cni kube-proxy replaced|enabled`.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct CniArgs {
    /// Only kube-proxy is switched.
    pub what: CniPart,
    /// The mode to switch to.
    pub mode: KubeProxyMode,
    #[command(flatten)]
    pub start: StartFlags,
    #[command(flatten)]
    pub reach: Reach,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CniPart {
    KubeProxy,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KubeProxyMode {
    Replaced,
    Enabled,
}

/// The flags of a start.
#[derive(Debug, Args, Clone, Default)]
pub struct StartFlags {
    /// The cluster (default: the only cluster in the namespace).
    #[arg(long, value_name = "NAME",
        add = clap_complete::ArgValueCandidates::new(crate::cli::complete::clusters))]
    pub cluster: Option<String>,
    /// Workers handled at once (control planes are always one at a time).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..=9999))]
    pub max_unavailable: Option<i32>,
    /// Follow the operation until it ends: exit 0 when it completes, 3 when it fails or a
    /// failed machine pauses it.
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub confirm: Confirm,
}

/// `ichor-tui cluster shutdown|rotate-ca NAME`.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
    #[command(flatten)]
    pub reach: Reach,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Shut every machine of the cluster down: the workers together, then the control planes.
    Shutdown(ClusterStart),
    /// Rotate the cluster's CAs, machine by machine, in 5 passes.
    RotateCa(ClusterStart),
}

/// A start on a named cluster.
#[derive(Debug, Args)]
pub struct ClusterStart {
    /// The cluster.
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::complete::clusters))]
    pub name: String,
    /// Follow the operation until it ends (exit 0 completed, 3 failed).
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub confirm: Confirm,
}

/// `ichor-tui operation list|get|pause|resume|delete|report` (alias `op`).
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct OperationArgs {
    #[command(subcommand)]
    pub command: OperationCommand,
    #[command(flatten)]
    pub reach: Reach,
}

#[derive(Debug, Subcommand)]
pub enum OperationCommand {
    /// List the operations of the namespace (-A: of every namespace).
    List(ListArgs),
    /// Show one operation: its state, each machine, the failure and what to do.
    Get(GetArgs),
    /// Pause an operation: the machine under way finishes, then nothing else starts.
    Pause(WriteArgs),
    /// Resume a paused operation (not one a failed machine paused: delete it and start again).
    Resume(WriteArgs),
    /// Delete an operation (nothing is rolled back).
    Delete(WriteArgs),
    /// A report of one operation for a change ticket: who, when, the plan's order, each
    /// machine's times and result, the warnings, the failure, what the machines run, totals.
    Report(ReportArgs),
}

/// How a report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ReportFormat {
    /// Markdown in your language (safe to paste: no control characters).
    #[default]
    Markdown,
    /// JSON in a stable shape.
    Json,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The operation.
    pub name: String,
    /// markdown (default) or json.
    #[arg(short = 'o', long, value_enum, default_value_t)]
    pub output: ReportFormat,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Every namespace (adds the NAMESPACE column).
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// table (default: the dashboard's columns), wide (adds MACHINE, the machines under way),
    /// json, yaml, name or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_name = "FORMAT", default_value = "table",
        value_parser = parse_output, add = clap_complete::ArgValueCandidates::new(output_candidates))]
    pub output: Output,
    /// The table without its header line.
    #[arg(long)]
    pub no_headers: bool,
    /// Then print a row for each operation whose row changes, until stopped (Ctrl-C), as
    /// kubectl get --watch.
    #[arg(short = 'w', long)]
    pub watch: bool,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The operation.
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::complete::operations))]
    pub name: String,
    /// table (default), json, yaml, name or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_name = "FORMAT", default_value = "table",
        value_parser = parse_output, add = clap_complete::ArgValueCandidates::new(output_candidates))]
    pub output: Output,
    /// Then print each change until it ends (exit 0 completed, 3 failed).
    #[arg(short = 'w', long)]
    pub watch: bool,
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The operation.
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::complete::operations))]
    pub name: String,
    #[command(flatten)]
    pub confirm: Confirm,
}

/// A version as the service takes it: with its leading v.
pub fn with_v(version: &str) -> String {
    let v = version.trim();
    let bare = v.strip_prefix(['v', 'V']).unwrap_or(v);
    format!("v{bare}")
}

impl UpgradeArgs {
    pub fn verb(&self) -> Verb {
        let kind = match self.what {
            Upgradable::Talos => OperationKind::Talos,
            Upgradable::Kubernetes => OperationKind::Kubernetes,
            Upgradable::Ichor => OperationKind::Ichor,
        };
        start_verb(kind, Some(with_v(&self.version)), &self.start)
    }
}

impl CniArgs {
    pub fn verb(&self) -> Verb {
        let CniPart::KubeProxy = self.what;
        let mode = match self.mode {
            KubeProxyMode::Replaced => "replaced",
            KubeProxyMode::Enabled => "enabled",
        };
        start_verb(OperationKind::Cni, Some(mode.into()), &self.start)
    }
}

fn start_verb(kind: OperationKind, target: Option<String>, f: &StartFlags) -> Verb {
    Verb::Start {
        kind,
        cluster: f.cluster.clone(),
        target,
        max_unavailable: f.max_unavailable,
        yes: f.confirm.yes,
        follow: f.follow,
    }
}

impl ClusterArgs {
    pub fn verb(&self) -> Verb {
        let (kind, a) = match &self.command {
            ClusterCommand::Shutdown(a) => (OperationKind::Shutdown, a),
            ClusterCommand::RotateCa(a) => (OperationKind::CaRotation, a),
        };
        Verb::Start {
            kind,
            cluster: Some(a.name.clone()),
            target: None,
            max_unavailable: None,
            yes: a.confirm.yes,
            follow: a.follow,
        }
    }
}

impl OperationArgs {
    pub fn verb(&self) -> Verb {
        let write = |kind, a: &WriteArgs| Verb::Write {
            kind,
            name: a.name.clone(),
            yes: a.confirm.yes,
        };
        match &self.command {
            OperationCommand::List(a) => Verb::List {
                all_namespaces: a.all_namespaces,
                output: a.output.clone(),
                no_headers: a.no_headers,
                watch: a.watch,
            },
            OperationCommand::Get(a) => Verb::Get {
                name: a.name.clone(),
                output: a.output.clone(),
                watch: a.watch,
            },
            OperationCommand::Pause(a) => write(WriteKind::Pause, a),
            OperationCommand::Resume(a) => write(WriteKind::Resume, a),
            OperationCommand::Delete(a) => write(WriteKind::Delete, a),
            OperationCommand::Report(a) => Verb::Report {
                name: a.name.clone(),
                output: a.output,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, verbs::verb_of};
    use clap::Parser as _;

    fn verb(args: &[&str]) -> Verb {
        let cli =
            Cli::try_parse_from(std::iter::once("ichor-tui").chain(args.iter().copied())).unwrap();
        verb_of(&cli).unwrap().0
    }

    #[test]
    fn the_version_is_taken_with_or_without_its_v() {
        assert_eq!(with_v("1.10.0"), "v1.10.0");
        assert_eq!(with_v("v1.10.0"), "v1.10.0");
        assert_eq!(with_v("V1.10.0-beta.1"), "v1.10.0-beta.1");
        let Verb::Start {
            target,
            kind,
            cluster,
            ..
        } = verb(&["upgrade", "talos", "1.10.0"])
        else {
            panic!()
        };
        assert_eq!(
            (kind, target.as_deref(), cluster),
            (OperationKind::Talos, Some("v1.10.0"), None)
        );
    }

    #[test]
    fn every_command_and_its_spelling() {
        assert_eq!(
            verb(&["op", "list", "-A", "-o", "json"]),
            Verb::List {
                all_namespaces: true,
                output: Output::Json,
                no_headers: false,
                watch: false,
            }
        );
        assert_eq!(
            verb(&["operation", "get", "x", "--watch"]),
            Verb::Get {
                name: "x".into(),
                output: Output::Table,
                watch: true
            }
        );
        assert_eq!(
            verb(&["op", "resume", "x", "-y"]),
            Verb::Write {
                kind: WriteKind::Resume,
                name: "x".into(),
                yes: true
            }
        );
        let v = verb(&[
            "cni",
            "kube-proxy",
            "replaced",
            "--cluster",
            "c1",
            "--max-unavailable",
            "2",
            "--follow",
        ]);
        assert_eq!(
            v,
            Verb::Start {
                kind: OperationKind::Cni,
                cluster: Some("c1".into()),
                target: Some("replaced".into()),
                max_unavailable: Some(2),
                yes: false,
                follow: true
            }
        );
        let v = verb(&["cluster", "rotate-ca", "prod", "--yes"]);
        assert!(matches!(
            v,
            Verb::Start {
                kind: OperationKind::CaRotation,
                yes: true,
                ..
            }
        ));
        assert!(v.writes() && !v.asks());
        // The reach flags after the command, at any depth.
        let cli = Cli::try_parse_from([
            "ichor-tui",
            "op",
            "-n",
            "prod",
            "list",
            "--server",
            "http://x",
        ])
        .unwrap();
        let (_, reach) = verb_of(&cli).unwrap();
        assert_eq!(
            (reach.namespace.as_deref(), reach.server.as_deref()),
            (Some("prod"), Some("http://x"))
        );
        for bad in [
            &["upgrade", "nothing", "1.0.0"][..],
            &["cni", "kube-proxy", "off"],
            &["op", "get"],
            &["upgrade", "talos", "1.0.0", "--max-unavailable", "0"],
        ] {
            let e = Cli::try_parse_from(std::iter::once("ichor-tui").chain(bad.iter().copied()))
                .unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
        }
    }
}
