//! One language's messages, each parsed when it is first asked for.
//!
//! Parsing every `.ftl` file whole at start made the Fluent tree the largest thing on the
//! dashboard's heap beside the screen's two buffers (docs/performance.md), and as much again
//! for Japanese with English behind it, while an idle dashboard says a fraction of its
//! messages. So the sources are cut into their entries once (a scan of the embedded text, no
//! copy) and each message is parsed on its first use, into a `OnceLock` beside its source:
//! after that a lookup takes no lock.
//!
//! Fluent's grammar makes the cut exact: an entry begins at the start of a line with an
//! identifier (a message), `-` (a term) or `#` (a comment), and no line that continues one
//! starts so. A message is formatted by the language's bundle without being added to
//! it, which holds as long as no message refers to another message or a term; none does, and
//! the locale tests render every message through this path, so one that did would fail there.

use fluent_bundle::FluentResource;
use fluent_syntax::ast;
use std::collections::HashMap;
use std::collections::hash_map::Entry::{Occupied, Vacant};
use std::sync::OnceLock;

/// A message's source and, once asked for, its parsed form.
struct Entry {
    source: &'static str,
    parsed: OnceLock<FluentResource>,
}

/// The messages of one language by id (a hash map: the dashboard looks up hundreds a frame).
pub(crate) struct Catalog {
    entries: HashMap<&'static str, Entry>,
}

impl Catalog {
    /// The messages of `sources` (file name, text); the first of two with one id is kept, as
    /// Fluent's bundle keeps it, and the second is logged.
    pub(crate) fn new(sources: &'static [(&'static str, &'static str)]) -> Catalog {
        let mut entries = HashMap::new();
        for (file, text) in sources {
            for (id, source) in messages(text) {
                match entries.entry(id) {
                    Vacant(v) => {
                        v.insert(Entry {
                            source,
                            parsed: OnceLock::new(),
                        });
                    }
                    Occupied(_) => tracing::error!(file, id, "a message defined twice in a locale"),
                }
            }
        }
        entries.shrink_to_fit();
        Catalog { entries }
    }

    /// Whether a message `id` is defined.
    pub(crate) fn has(&self, id: &str) -> bool {
        self.entries.contains_key(id)
    }

    /// The value of message `id`, parsed now if it was not before; `None` when there is no
    /// such message or it has no value.
    pub(crate) fn pattern(&self, id: &str) -> Option<&ast::Pattern<&str>> {
        let entry = self.entries.get(id)?;
        let resource = entry.parsed.get_or_init(|| parse(id, entry.source));
        resource.entries().find_map(|e| match e {
            ast::Entry::Message(m) if m.id.name == id => m.value.as_ref(),
            _ => None,
        })
    }
}

fn parse(id: &str, source: &str) -> FluentResource {
    match FluentResource::try_new(source.to_string()) {
        Ok(resource) => resource,
        Err((resource, errors)) => {
            tracing::error!(id, ?errors, "a syntax error in a locale message");
            resource
        }
    }
}

/// The messages of one `.ftl` text: each id with the whole source of its entry. As Fluent's
/// parser reads it, a line that starts with a letter, `-` or `#` begins an entry (a message, a
/// term, a comment); any other line continues the one before (indented text, a blank line, the
/// `}` that closes a select expression). Comments and terms are left out.
fn messages(text: &'static str) -> Vec<(&'static str, &'static str)> {
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with(|c: char| c.is_ascii_alphabetic() || c == '-' || c == '#') {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(text.len());
    starts
        .windows(2)
        .filter_map(|w| {
            let [start, end] = *w else { return None };
            let source = text.get(start..end)?;
            if !source.starts_with(|c: char| c.is_ascii_alphabetic()) {
                return None;
            }
            let id = source
                .split(|c: char| c == '=' || c.is_whitespace())
                .next()?;
            Some((id, source))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Lang, sources};

    /// Each message parsed alone is the message the whole file parses to.
    #[test]
    fn a_message_cut_out_is_the_message_of_the_whole_file() {
        for lang in [Lang::En, Lang::Ja] {
            let catalog = Catalog::new(sources(lang));
            let mut seen = 0;
            for (file, text) in sources(lang) {
                let whole = match FluentResource::try_new(text.to_string()) {
                    Ok(r) => r,
                    Err((_, errors)) => panic!("{lang:?}/{file}: {errors:?}"),
                };
                for entry in whole.entries() {
                    let ast::Entry::Message(m) = entry else {
                        continue;
                    };
                    assert_eq!(
                        catalog.pattern(m.id.name),
                        m.value.as_ref(),
                        "{lang:?}/{file}: {}",
                        m.id.name
                    );
                    seen += 1;
                }
            }
            assert_eq!(seen, catalog.entries.len(), "{lang:?}: every message, once");
            assert!(seen > 500, "{lang:?}: {seen} messages");
        }
    }

    #[test]
    fn entries_are_cut_at_lines_that_start_unindented() {
        let text = "# a comment\n\
                    one = One\n\
                    \x20   and more\n\
                    \n\
                    \x20   after a blank line\n\
                    -term = a term\n\
                    two =\n\
                    \x20   { $n ->\n\
                    \x20       [one] a\n\
                    \x20      *[other] b\n\
                    }\n\
                    ## another comment\n\
                    three=3";
        let got = messages(text);
        let ids: Vec<_> = got.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, ["one", "two", "three"]);
        assert_eq!(
            got[0].1,
            "one = One\n    and more\n\n    after a blank line\n"
        );
        assert!(got[1].1.ends_with("b\n}\n"));
        assert_eq!(got[2].1, "three=3");
    }

    #[test]
    fn the_first_of_two_equal_ids_is_kept_and_nothing_else_is_found() {
        static TWICE: &[(&str, &str)] =
            &[("a.ftl", "x = first\ny = why\n"), ("b.ftl", "x = second\n")];
        let c = Catalog::new(TWICE);
        assert_eq!(c.entries.len(), 2);
        let text = |id| {
            c.pattern(id).map(|p| match p.elements.as_slice() {
                [ast::PatternElement::TextElement { value }] => value.to_string(),
                other => format!("{other:?}"),
            })
        };
        assert_eq!(text("x").as_deref(), Some("first"));
        assert_eq!(text("y").as_deref(), Some("why"));
        assert_eq!(text("z"), None);
        assert!(!c.has("z") && c.has("y"));
    }
}
