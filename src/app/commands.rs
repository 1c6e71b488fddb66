//! The command line's words (`:ops`, `:clusters`, `:q`, as k9s has them): what each means, and
//! which ones Tab offers for what was typed. Data, like the key tables.

/// What a command line asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// `:ops [CLUSTER]`: the Operations list, of one cluster when named.
    Operations,
    /// `:ns [NAME]`: switch the namespace listed (`all`: every namespace).
    Namespace,
    /// `:ctx [NAME]`: reach the service through another kubeconfig context.
    Context,
    Clusters,
    Help,
    Quit,
}

/// One word of the command line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Word {
    pub(crate) word: &'static str,
    pub(crate) verb: Verb,
    /// Tab offers it (the names; the aliases work but are not offered).
    pub(crate) offered: bool,
}

const fn w(word: &'static str, verb: Verb, offered: bool) -> Word {
    Word {
        word,
        verb,
        offered,
    }
}

/// Every word, the offered names in the order Tab offers them.
pub(crate) const WORDS: &[Word] = &[
    w("ops", Verb::Operations, true),
    w("clusters", Verb::Clusters, true),
    w("help", Verb::Help, true),
    w("quit", Verb::Quit, true),
    w("ns", Verb::Namespace, true),
    w("ctx", Verb::Context, true),
    w("context", Verb::Context, false),
    w("namespace", Verb::Namespace, false),
    w("operations", Verb::Operations, false),
    w("op", Verb::Operations, false),
    w("cluster", Verb::Clusters, false),
    w("cl", Verb::Clusters, false),
    w("q", Verb::Quit, false),
    w("q!", Verb::Quit, false),
];

/// Every verb as `?` lists it under `:`, in that order: how it is typed, and the Fluent id of
/// what it does.
pub const HELP: &[(Verb, &str, &str)] = &[
    (Verb::Operations, ":ops CLUSTER", "key-cmd-ops"),
    (Verb::Namespace, ":ns NAME", "key-cmd-ns"),
    (Verb::Context, ":ctx NAME", "key-cmd-ctx"),
    (Verb::Clusters, ":clusters", "key-cmd-clusters"),
    (Verb::Help, ":help", "key-cmd-help"),
    (Verb::Quit, ":q", "key-cmd-quit"),
];

/// The verb a command line names, and what follows it (surrounding spaces and a leading `:`
/// are ignored). A verb that takes nothing, given something, is not a command.
pub(crate) fn parse(text: &str) -> Option<(Verb, Option<&str>)> {
    let line = text.trim().trim_start_matches(':').trim();
    let (word, rest) = match line.split_once(char::is_whitespace) {
        Some((w, rest)) => (w, Some(rest.trim()).filter(|r| !r.is_empty())),
        None => (line, None),
    };
    let verb = WORDS.iter().find(|w| w.word == word).map(|w| w.verb)?;
    match (verb, rest) {
        (Verb::Operations | Verb::Namespace | Verb::Context, _) | (_, None) => Some((verb, rest)),
        _ => None,
    }
}

/// The names Tab offers for `prefix`, in order.
pub fn completions(prefix: &str) -> Vec<&'static str> {
    let prefix = prefix.trim_start();
    WORDS
        .iter()
        .filter(|w| w.offered && w.word.starts_with(prefix))
        .map(|w| w.word)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_aliases() {
        assert_eq!(parse("ops"), Some((Verb::Operations, None)));
        assert_eq!(parse(" :op "), Some((Verb::Operations, None)));
        assert_eq!(
            parse("ops  staging "),
            Some((Verb::Operations, Some("staging")))
        );
        assert_eq!(
            parse("ns platform"),
            Some((Verb::Namespace, Some("platform")))
        );
        assert_eq!(parse("ns"), Some((Verb::Namespace, None)));
        assert_eq!(parse("cl"), Some((Verb::Clusters, None)));
        assert_eq!(parse("clusters x"), None, "takes nothing");
        assert_eq!(parse("q!"), Some((Verb::Quit, None)));
        assert_eq!(parse("o"), None, "a prefix is completed, not guessed");
        assert_eq!(parse(""), None);
        assert_eq!(completions("c"), ["clusters", "ctx"]);
        assert_eq!(parse("ctx viewer"), Some((Verb::Context, Some("viewer"))));
        assert_eq!(parse("context"), Some((Verb::Context, None)));
        assert_eq!(
            completions(""),
            ["ops", "clusters", "help", "quit", "ns", "ctx"]
        );
        assert!(completions("x").is_empty());
    }

    #[test]
    fn help_lists_every_verb_once_as_it_is_typed() {
        for w in WORDS {
            let listed = HELP.iter().filter(|(v, ..)| *v == w.verb).count();
            assert_eq!(listed, 1, "{}", w.word);
        }
        for (verb, typed, _) in HELP {
            assert_eq!(parse(typed).map(|(v, _)| v), Some(*verb), "{typed}");
        }
    }
}
