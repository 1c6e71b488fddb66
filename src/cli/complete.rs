//! Shell completion with clap_complete's dynamic engine (as jj uses it).
//! `ichor-tui completion bash|zsh|fish|powershell|elvish` prints the script that registers it,
//! as `COMPLETE=bash ichor-tui` would (calling back the command by its name, found on PATH;
//! zsh's also from `fpath`: [`ZshFromFpath`]); on each Tab the shell runs `COMPLETE=bash ichor-tui --
//! WORDS…` (main's `CompleteEnv`), and the binary answers from its own grammar: subcommands,
//! flags and their fixed values, and the names it can ask for cheaply. Context names come from
//! the kubeconfig (no network); operation, cluster and namespace names from the route the typed
//! flags reach (`--demo`, `--kubeconfig`, `--context`, `-n`, `--server`, …), within
//! [`DEADLINE`]; when nothing answers in time there are none, and the shell completes nothing.

mod script;
pub use script::{COMMAND, ZshFromFpath, print_script, shells};

use super::verbs::args::Reach;
use clap::{Args, ValueEnum};
use clap_complete::CompletionCandidate;

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
    let names = match names {
        Ok(Ok(names)) => names,
        _ => Vec::new(),
    };
    plain_candidates(names)
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
    plain_candidates(loaded.context_names())
}

/// Names as candidates, sorted, once each, and only those every shell reads as one plain
/// word ([`plain_word`]): no shell quotes a candidate (bash and PowerShell put it on the line
/// as it is), so a name from the cluster that is not one would be read as several words, or
/// as commands, once the person presses Enter; it is left out, never printed.
fn plain_candidates(mut names: Vec<String>) -> Vec<CompletionCandidate> {
    names.retain(|n| plain_word(n));
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// Whether bash, zsh, fish and PowerShell all read `name` as one word that means itself: ASCII
/// letters and digits and `- . _ : / + @ =` only (Kubernetes names, contexts such as
/// `arn:aws:eks:…/name` or `admin@cluster`), not empty, not longer than a DNS subdomain, and
/// not starting with what a shell expands at a word's start (`=` in zsh, `@` in PowerShell).
/// Control characters, bidirectional marks, spaces, quotes, `$`, `;`, `&`, `|`, `` ` ``, `(`,
/// `{`, `~`, `*`, `?`, `!`, `#` and `\` are never printed.
fn plain_word(name: &str) -> bool {
    const MAX: usize = 253;
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._:/+@=".contains(c);
    !name.is_empty()
        && name.len() <= MAX
        && name.chars().all(allowed)
        && !name.starts_with(['=', '@'])
}

#[cfg(test)]
mod tests {
    use super::{plain_candidates, plain_word, typed_reach};

    #[test]
    fn only_plain_words_are_candidates() {
        for plain in [
            "staging-talos-x7k2p",
            "prod",
            "arn:aws:eks:eu-west-1:1:cluster/a",
            "admin@kind",
            "a.b_c+d=e",
        ] {
            assert!(plain_word(plain), "{plain}");
        }
        let hostile = "x\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\r\n\u{202E}\u{2066}y";
        for not in [
            "",
            hostile,
            "a b",
            "a;b",
            "$(id)",
            "`id`",
            "a|b",
            "a&b",
            "'a'",
            "\"a\"",
            "a\\b",
            "~root",
            "a*",
            "=ls",
            "@args",
            "a\u{202E}b",
            "ｆｕｌｌ",
            &"a".repeat(254),
        ] {
            assert!(!plain_word(not), "{not:?}");
        }
        let kept = plain_candidates(vec!["b".into(), hostile.into(), "a".into(), "b".into()]);
        let values: Vec<_> = kept.iter().map(|c| c.get_value().to_owned()).collect();
        assert_eq!(values, ["a", "b"]);
    }

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
