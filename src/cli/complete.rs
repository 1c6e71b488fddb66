//! Shell completion with clap_complete's dynamic engine (as jj uses it).
//! `ichor-tui completion bash|zsh|fish|powershell|elvish` prints the script that registers it,
//! as `COMPLETE=bash ichor-tui` would; on each Tab the shell runs `COMPLETE=bash ichor-tui --
//! WORDS…` (main's `CompleteEnv`), and the binary answers from its own grammar: subcommands,
//! flags and their fixed values, and the names it can ask for cheaply. Context names come from
//! the kubeconfig (no network); operation, cluster and namespace names from the route the typed
//! flags reach (`--demo`, `--kubeconfig`, `--context`, `-n`, `--server`, …), within
//! [`DEADLINE`]; when nothing answers in time there are none, and the shell completes nothing.

use super::verbs::args::Reach;
use clap::{Args, ValueEnum};
use clap_complete::CompletionCandidate;
use std::io::Write as _;
use std::path::PathBuf;

/// How long a Tab may wait for names.
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// `ichor-tui completion`.
#[derive(Debug, Args)]
#[command(
    after_help = "bash: source <(ichor-tui completion bash)   zsh: source <(ichor-tui completion zsh)   fish: ichor-tui completion fish | source   PowerShell: ichor-tui completion powershell | Out-String | Invoke-Expression"
)]
pub struct CompletionArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The shells clap_complete registers for.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

/// The path the script calls back: this program as it was started (made absolute when started
/// by a relative path, as `CompleteEnv` does).
fn completer() -> String {
    let first = std::env::args_os()
        .next()
        .unwrap_or_else(|| "ichor-tui".into());
    let mut path = PathBuf::from(first);
    if path.components().count() > 1
        && let Ok(dir) = std::env::current_dir()
    {
        path = dir.join(path);
    }
    path.to_string_lossy().into_owned()
}

/// Prints the shell's registration script.
pub fn print_script(args: &CompletionArgs) -> anyhow::Result<std::process::ExitCode> {
    let name = match args.shell {
        Shell::Bash => "bash",
        Shell::Zsh => "zsh",
        Shell::Fish => "fish",
        Shell::Powershell => "powershell",
        Shell::Elvish => "elvish",
    };
    let shells = clap_complete::env::Shells::builtins();
    let shell = shells
        .completer(name)
        .ok_or_else(|| anyhow::anyhow!("no completion for {name}"))?;
    let mut script = Vec::new();
    shell.write_registration(
        "COMPLETE",
        "ichor-tui",
        "ichor-tui",
        &completer(),
        &mut script,
    )?;
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// The words typed before the one being completed (the program's name first), as the shell
/// passed them after `--`.
fn typed_words() -> Vec<String> {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let words = match args.iter().position(|a| a == "--") {
        Some(i) => &args[i + 1..],
        None => &[][..],
    };
    // bash says which word is being completed; the others complete the last one.
    let index = std::env::var("_CLAP_COMPLETE_INDEX")
        .ok()
        .and_then(|i| i.parse::<usize>().ok())
        .unwrap_or(words.len().saturating_sub(1));
    words[..index.min(words.len())].to_vec()
}

/// The connection flags among `words`, wherever they stand (as the commands take them): each
/// word that is one of [`Reach`]'s flags, with its value, read by Reach's own declaration (the
/// others are the command's, and left out). A value it cannot take leaves that flag unset.
fn typed_reach(words: &[String]) -> Reach {
    use clap::FromArgMatches as _;
    let grammar = Reach::augment_args(clap::Command::new("ichor-tui"))
        .no_binary_name(true)
        .ignore_errors(true);
    let spelt = |a: &clap::Arg, flag: &str| match flag.strip_prefix("--") {
        Some(long) => a
            .get_long_and_visible_aliases()
            .is_some_and(|l| l.contains(&long)),
        None => flag.strip_prefix('-').is_some_and(|short| {
            let mut chars = short.chars();
            a.get_short().is_some() && chars.next() == a.get_short() && chars.next().is_none()
        }),
    };
    let mut kept = Vec::new();
    let mut words = words.iter().skip(1);
    while let Some(w) = words.next() {
        let (flag, inline) = match w.split_once('=') {
            Some((f, _)) if f.starts_with("--") => (f, true),
            _ => (w.as_str(), false),
        };
        let Some(arg) = grammar.get_arguments().find(|a| spelt(a, flag)) else {
            continue;
        };
        kept.push(w.clone());
        if arg.get_action().takes_values() && !inline {
            kept.extend(words.next().cloned());
        }
    }
    grammar
        .try_get_matches_from(kept)
        .ok()
        .and_then(|m| Reach::from_arg_matches(&m).ok())
        .unwrap_or_default()
}

/// What `ask` does once the route is reached: names, or why none.
type Ask = for<'a> fn(
    &'a super::dashboard::Connected,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = anyhow::Result<Vec<String>>> + Send + 'a>,
>;

/// Reaches the route the typed flags name and asks it for names, within [`DEADLINE`]; none on
/// any failure (a Tab says nothing).
fn ask(what: Ask) -> Vec<CompletionCandidate> {
    let reach = typed_reach(&typed_words());
    let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let names = rt.block_on(async move {
        let asked = async {
            let connected = connect(&reach).await?;
            let names = what(&connected).await;
            drop(connected);
            names
        };
        tokio::time::timeout(DEADLINE, asked).await
    });
    rt.shutdown_background();
    let mut names = match names {
        Ok(Ok(names)) => names,
        _ => Vec::new(),
    };
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// The route the typed flags reach, as a command would (the demo without its ichor-ui: the
/// service in-process answers soonest).
async fn connect(reach: &Reach) -> anyhow::Result<super::dashboard::Connected> {
    let top = super::try_parse_from(["ichor-tui"])?;
    let mut dash = super::verbs::as_dashboard(&top, reach, false)?;
    dash.demo_without_ichor_ui = true;
    let settings = super::dashboard::settings_of(&dash, false)?;
    let source = super::settings::Source::choose(&dash, &settings)?;
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    super::dashboard::connect(&dash, &settings, source, tx).await
}

/// Operation names in the namespace the flags name.
pub fn operations() -> Vec<CompletionCandidate> {
    ask(|c| {
        Box::pin(async move {
            let ops = c.client.list_operations(Some(&c.namespace)).await?;
            Ok(ops.into_iter().map(|o| o.name).collect())
        })
    })
}

/// Cluster names in the namespace the flags name.
pub fn clusters() -> Vec<CompletionCandidate> {
    ask(|c| {
        Box::pin(async move {
            let clusters = c.client.list_clusters(Some(&c.namespace)).await?;
            Ok(clusters.into_iter().map(|c| c.name).collect())
        })
    })
}

/// Namespace names, from the Kubernetes API (none through `--server`).
pub fn namespaces() -> Vec<CompletionCandidate> {
    ask(|c| {
        Box::pin(async move {
            let Some(kube) = c.kube.clone() else {
                return Ok(Vec::new());
            };
            let api = kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(kube);
            let list = api.list_metadata(&Default::default()).await?;
            Ok(list
                .items
                .into_iter()
                .filter_map(|n| n.metadata.name)
                .collect())
        })
    })
}

/// The kubeconfig's context names (the file the typed flags name; no network).
pub fn contexts() -> Vec<CompletionCandidate> {
    let reach = typed_reach(&typed_words());
    let Ok(loaded) = crate::kubeconfig::read(reach.kube.kubeconfig.as_deref()) else {
        return Vec::new();
    };
    loaded
        .context_names()
        .into_iter()
        .map(CompletionCandidate::new)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::typed_reach;

    #[test]
    fn the_typed_flags_are_read_wherever_they_stand() {
        let words: Vec<String> = [
            "ichor-tui",
            "--kubeconfig=/k",
            "op",
            "-n",
            "prod",
            "--demo",
            "--as",
            "viewer",
            "--protocol",
            "grpc",
            "get",
        ]
        .map(String::from)
        .to_vec();
        let r = typed_reach(&words);
        assert_eq!(
            r.kube.kubeconfig.as_deref(),
            Some(std::path::Path::new("/k"))
        );
        assert_eq!(r.namespace.as_deref(), Some("prod"));
        assert_eq!(r.as_user.as_deref(), Some("viewer"));
        assert!(r.demo);
        assert_eq!(r.protocol, Some(crate::config::ProtocolChoice::Grpc));
    }
}
