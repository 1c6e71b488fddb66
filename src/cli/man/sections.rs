//! The sections of ichor-tui(1) that clap's grammar does not hold, each made from the table the
//! program itself reads, so the page cannot drift from it: KEYS from the dashboard's key tables
//! (the ones its footers and `?` are drawn from; their words are the English of
//! `locales/en`), CONFIGURATION from the config file's own fields (read from the type serde
//! decodes, so a key added there is listed, or the test fails for want of its words), and EXIT
//! STATUS from the commands' [`Exit`].

use crate::cli::verbs::Exit;
use crate::config::FileConfig;
use clap_mangen::roff::{Roff, bold, italic, roman};
use ichor_app::keymap::{self, Binding};
use ichor_app::state::Screen;
use ichor_views::i18n::{Lang, Texts};
use serde::de::{self, Deserialize, Deserializer, Visitor};

/// Where each key table applies, as the page names it, and its bindings.
fn key_tables() -> Vec<(&'static str, Vec<&'static Binding>)> {
    let screen = |s: Screen| keymap::all(s).collect::<Vec<_>>();
    vec![
        ("The Operations list", screen(Screen::Operations)),
        ("An operation's page", screen(Screen::Operation)),
        ("The Clusters list", screen(Screen::Clusters)),
        ("A cluster's page", screen(Screen::Cluster)),
        (
            "The new-operation form",
            keymap::FORM.iter().chain(keymap::TEXT).collect(),
        ),
        (
            "The Review (before Start)",
            keymap::review(false).iter().collect(),
        ),
        ("The events view", keymap::EVENTS.iter().collect()),
        (
            "A text read on screen (the YAML, the report)",
            keymap::READING.iter().chain(keymap::SEARCH).collect(),
        ),
        (
            "A text field (the filter, the command line, a search)",
            keymap::COMMAND_LINE.iter().chain(keymap::TEXT).collect(),
        ),
    ]
}

/// `KEYS`: every screen's and dialog's keys, and the command line's commands.
pub(super) fn keys() -> Roff {
    let texts = Texts::new(Lang::En);
    let mut roff = Roff::default();
    roff.control("SH", ["KEYS"]);
    roff.text([roman(
        "Run without a command, ichor-tui is a dashboard. Each screen's footer shows its main keys and ? shows them all. The config file's [keys] table gives any action other keys (see CONFIGURATION).",
    )]);
    // One line a key: no space between the entries, as the key tables are long.
    roff.control("PD", ["0"]);
    for (title, bindings) in key_tables() {
        roff.control("SS", [title]);
        for b in bindings {
            roff.control("TP", []);
            roff.text([bold(b.label)]);
            roff.text([roman(texts.t(b.hint))]);
        }
    }
    roff.control("SS", ["The command line (:)"]);
    for (_, typed, hint) in ichor_app::commands::HELP {
        roff.control("TP", []);
        roff.text([bold(*typed)]);
        roff.text([roman(texts.t(hint))]);
    }
    roff.control("PD", []);
    roff
}

/// The keys a struct decoded by serde's derive takes, in the order of its fields (serde hands
/// them to `deserialize_struct`; this deserializer keeps them and decodes nothing).
fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields(&'static [&'static str]);
    impl<'de> Deserializer<'de> for &mut Fields {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("only a struct's fields are read"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = fields;
            Err(de::Error::custom("only a struct's fields are read"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut fields = Fields(&[]);
    let _ = T::deserialize(&mut fields);
    fields.0
}

/// What a config key that is not a flag's holds.
fn table_words(key: &str) -> Option<String> {
    let keys = |fields: &[&str]| fields.join(", ");
    Some(match key {
        "notify" => "true or false: the bell and a desktop notification when an operation shown completes, fails, awaits credentials or turns slow (default true; --no-notify is false).".into(),
        "timing" => format!(
            "[timing]: when a running machine is called slow; its keys: {}.",
            keys(fields_of::<crate::config::rules::Timing>())
        ),
        "contexts" => format!(
            "[[contexts]]: contexts marked production or read only, one table each; its keys: {}.",
            keys(fields_of::<crate::config::contexts::ContextRule>())
        ),
        "keys" => format!(
            "[keys]: other keys for an action, by its name ({}), e.g. pause = \"P\".",
            keys(&ichor_app::rebind::ACTIONS.iter().map(|(name, _)| *name).collect::<Vec<_>>())
        ),
        _ => return None,
    })
}

/// What a config key holds: the words of the flag of its name, or of its table.
fn config_key_words(cmd: &clap::Command, key: &str) -> Option<String> {
    let flag = cmd
        .get_arguments()
        .find(|a| a.get_long() == Some(key))
        .and_then(|a| a.get_help().map(|h| h.to_string()));
    match flag {
        Some(help) => Some(format!("as --{key}: {help}")),
        None => table_words(key),
    }
}

/// `CONFIGURATION`: the file and every key it takes.
pub(super) fn config_file(cmd: &clap::Command) -> Roff {
    let mut roff = Roff::default();
    roff.control("SH", ["CONFIGURATION"]);
    roff.text([
        italic("~/.config/ichor-tui/config.toml"),
        roman(" (or the file --config names, which must then exist), TOML. A flag wins over the file, the file over the defaults. An unknown key, or a value out of range, is an error naming the file, the line and the column. Its keys:"),
    ]);
    for key in fields_of::<FileConfig>() {
        roff.control("TP", []);
        roff.text([bold(*key)]);
        let words = config_key_words(cmd, key).unwrap_or_default();
        roff.text([roman(words)]);
    }
    roff
}

/// What a command's exit code says.
fn exit_words(exit: Exit) -> &'static str {
    match exit {
        Exit::Done => "done (--follow, --watch: the operation completed)",
        Exit::Refused => {
            "refused: by the service, by you at the question (n, or a name that does not match), or an error (not found, permission denied, unreachable after 10 minutes)"
        }
        Exit::Usage => {
            "usage: a wrong flag, a write without a terminal and without --yes, --yes in a production context without --confirm-cluster, or the dashboard without a terminal"
        }
        Exit::Failed => {
            "the operation failed: it failed, or a failed machine paused it (--follow, get --watch), naming the machine"
        }
    }
}

/// `EXIT STATUS`.
pub(super) fn exit_status() -> Roff {
    let mut roff = Roff::default();
    roff.control("SH", ["EXIT STATUS"]);
    for exit in Exit::ALL {
        roff.control("TP", []);
        roff.text([bold(exit.code().to_string())]);
        roff.text([roman(exit_words(exit))]);
    }
    roff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_key_has_words_and_every_field_is_read() {
        let cmd = super::super::command();
        let keys = fields_of::<FileConfig>();
        assert!(
            keys.contains(&"read-only") && keys.contains(&"contexts"),
            "{keys:?}"
        );
        for key in keys {
            let words = config_key_words(&cmd, key);
            assert!(words.is_some_and(|w| !w.is_empty()), "no words for {key}");
        }
        assert_eq!(
            fields_of::<crate::config::rules::Timing>(),
            ["slow-factor", "slow-margin"]
        );
    }

    #[test]
    fn every_key_table_has_english_words() {
        let texts = Texts::new(Lang::En);
        for (title, bindings) in key_tables() {
            assert!(!bindings.is_empty(), "{title}");
            for b in bindings {
                assert!(texts.has(b.hint), "{title}: {}", b.hint);
            }
        }
    }
}
