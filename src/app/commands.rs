//! The command line's words (`:ops`, `:clusters`, `:q`, as k9s has them): what each means, and
//! which ones Tab offers for what was typed. Data, like the key tables.

/// What a command line asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verb {
    Operations,
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
    w("operations", Verb::Operations, false),
    w("op", Verb::Operations, false),
    w("cluster", Verb::Clusters, false),
    w("cl", Verb::Clusters, false),
    w("q", Verb::Quit, false),
    w("q!", Verb::Quit, false),
];

/// The verb a command line names (surrounding spaces and a leading `:` are ignored).
pub(crate) fn parse(text: &str) -> Option<Verb> {
    let word = text.trim().trim_start_matches(':').trim();
    WORDS.iter().find(|w| w.word == word).map(|w| w.verb)
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
        assert_eq!(parse("ops"), Some(Verb::Operations));
        assert_eq!(parse(" :op "), Some(Verb::Operations));
        assert_eq!(parse("cl"), Some(Verb::Clusters));
        assert_eq!(parse("q!"), Some(Verb::Quit));
        assert_eq!(parse("o"), None, "a prefix is completed, not guessed");
        assert_eq!(parse(""), None);
        assert_eq!(completions("c"), ["clusters"]);
        assert_eq!(completions(""), ["ops", "clusters", "help", "quit"]);
        assert!(completions("x").is_empty());
    }
}
