//! Every word a person reads, from `locales/{en,ja}/*.ftl` via Fluent (thread-safe bundles,
//! isolation marks off, English as the fallback): the dashboard's and the CLI's words, and the
//! English of every refusal the service sends ([`english`]), so that a refusal is written once.

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use unic_langid::LanguageIdentifier;

mod catalog;
use catalog::Catalog;

/// The languages we ship.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    Ja,
}

impl Lang {
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ja => "ja",
        }
    }

    /// Parses `ja`, `ja_JP.UTF-8`, `en-US`…; `None` for anything else.
    pub fn parse(s: &str) -> Option<Lang> {
        let s = s.trim().to_ascii_lowercase();
        let base = s.split(['_', '-', '.', '@']).next().unwrap_or("");
        match base {
            "ja" => Some(Lang::Ja),
            "en" | "c" | "posix" => Some(Lang::En),
            _ => None,
        }
    }

    /// `--lang`, else LC_ALL, LC_MESSAGES, LANG (the first that is set and not empty), else
    /// English.
    pub fn choose(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Lang {
        if let Some(l) = flag.and_then(Lang::parse) {
            return l;
        }
        for var in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let Some(v) = env(var).filter(|v| !v.is_empty()) {
                return Lang::parse(&v).unwrap_or(Lang::En);
            }
        }
        Lang::En
    }
}

/// The .ftl sources of a language, embedded at build time.
pub fn sources(lang: Lang) -> &'static [(&'static str, &'static str)] {
    match lang {
        Lang::En => &[
            ("common.ftl", include_str!("../../../locales/en/common.ftl")),
            (
                "operations.ftl",
                include_str!("../../../locales/en/operations.ftl"),
            ),
            ("errors.ftl", include_str!("../../../locales/en/errors.ftl")),
            ("start.ftl", include_str!("../../../locales/en/start.ftl")),
            ("cli.ftl", include_str!("../../../locales/en/cli.ftl")),
        ],
        Lang::Ja => &[
            ("common.ftl", include_str!("../../../locales/ja/common.ftl")),
            (
                "operations.ftl",
                include_str!("../../../locales/ja/operations.ftl"),
            ),
            ("errors.ftl", include_str!("../../../locales/ja/errors.ftl")),
            ("start.ftl", include_str!("../../../locales/ja/start.ftl")),
            ("cli.ftl", include_str!("../../../locales/ja/cli.ftl")),
        ],
    }
}

/// Whole numbers of four digits and more with their thousands grouped, as English and Japanese
/// both write them ("10,007"); fluent-bundle's own formatting does not group. Anything else is
/// left to it.
fn grouped<M>(v: &fluent_bundle::FluentValue, _: &M) -> Option<String> {
    let fluent_bundle::FluentValue::Number(n) = v else {
        return None;
    };
    let x = n.value;
    if x.fract() != 0.0 || x.abs() < 1000.0 || x.abs() > 1e15 {
        return None;
    }
    let digits = format!("{}", x.abs() as u64);
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if x < 0.0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    Some(out)
}

/// The bundle that formats a language's messages: its plural rules and number formatting. It
/// holds no message; each comes from the language's [`Catalog`], parsed when first used.
fn bundle(lang: Lang) -> FluentBundle<FluentResource> {
    let id: LanguageIdentifier = match lang {
        Lang::En => unic_langid::langid!("en"),
        Lang::Ja => unic_langid::langid!("ja"),
    };
    let mut b = FluentBundle::new_concurrent(vec![id]);
    b.set_use_isolating(false);
    b.set_formatter(Some(grouped));
    b
}

/// One language: its messages and the bundle that formats them.
struct Language {
    catalog: Catalog,
    bundle: FluentBundle<FluentResource>,
}

impl Language {
    fn new(lang: Lang) -> Language {
        Language {
            catalog: Catalog::new(sources(lang)),
            bundle: bundle(lang),
        }
    }

    /// Message `id` formatted with `args`, with the resolver's errors; `None` when there is no
    /// such message (or it has no value).
    fn format(
        &self,
        id: &str,
        args: Option<&FluentArgs<'_>>,
    ) -> Option<(String, Vec<fluent_bundle::FluentError>)> {
        let pattern = self.catalog.pattern(id)?;
        let mut errors = Vec::new();
        let s = self.bundle.format_pattern(pattern, args, &mut errors);
        Some((s.into_owned(), errors))
    }
}

/// The texts of one language, with English behind it.
pub struct Texts {
    lang: Lang,
    main: Language,
    fallback: Option<Language>,
}

impl Texts {
    pub fn new(lang: Lang) -> Texts {
        Texts {
            lang,
            main: Language::new(lang),
            fallback: (lang != Lang::En).then(|| Language::new(Lang::En)),
        }
    }

    /// The language of these texts.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// The message `id` with no arguments.
    pub fn t(&self, id: &str) -> String {
        self.format(id, None)
    }

    /// The message `id` with string arguments.
    pub fn tr(&self, id: &str, args: &[(&str, &str)]) -> String {
        let mut fa = FluentArgs::new();
        for (k, v) in args {
            fa.set(*k, FluentValue::from(*v));
        }
        self.format(id, Some(&fa))
    }

    /// The message `id` with arguments that may be numbers (plural rules).
    pub fn tn(&self, id: &str, args: &[(&str, FluentValue<'_>)]) -> String {
        let mut fa = FluentArgs::new();
        for (k, v) in args {
            fa.set(*k, v.clone());
        }
        self.format(id, Some(&fa))
    }

    /// The message `id` with string arguments, only if it renders whole: `None` when it is
    /// missing or an argument it needs was not given (Fluent would show `{$name}`).
    pub fn tr_whole(&self, id: &str, args: &[(&str, &str)]) -> Option<String> {
        let mut fa = FluentArgs::new();
        for (k, v) in args {
            fa.set(*k, FluentValue::from(*v));
        }
        let (s, errors) = std::iter::once(&self.main)
            .chain(self.fallback.as_ref())
            .find_map(|l| l.format(id, Some(&fa)))?;
        if !errors.is_empty() {
            tracing::warn!(id, ?errors, "a message lacks arguments");
            return None;
        }
        Some(s)
    }

    fn format(&self, id: &str, args: Option<&FluentArgs<'_>>) -> String {
        for language in std::iter::once(&self.main).chain(self.fallback.as_ref()) {
            if let Some((s, errors)) = language.format(id, args) {
                if !errors.is_empty() {
                    tracing::warn!(id, ?errors, "formatting a message");
                }
                return s;
            }
        }
        tracing::warn!(id, "missing message");
        id.to_string()
    }

    /// The message `id` of this language alone (no English fallback), or what went wrong: a
    /// missing message, or the resolver's errors (an unknown variable, message or function).
    /// For the locale tests.
    pub fn format_strict(&self, id: &str, args: &FluentArgs<'_>) -> Result<String, String> {
        let (s, errors) = self
            .main
            .format(id, Some(args))
            .ok_or_else(|| format!("{}: no message {id}", self.lang.code()))?;
        if errors.is_empty() {
            Ok(s)
        } else {
            Err(format!("{}: {id}: {errors:?}", self.lang.code()))
        }
    }

    /// Whether the language has a message `id`.
    pub fn has(&self, id: &str) -> bool {
        self.main.catalog.has(id)
    }
}

/// The English texts, made once for the whole process.
static ENGLISH: std::sync::LazyLock<Texts> = std::sync::LazyLock::new(|| Texts::new(Lang::En));

/// The Japanese texts, made once when first asked for (the words a filter matches).
static JAPANESE: std::sync::LazyLock<Texts> = std::sync::LazyLock::new(|| Texts::new(Lang::Ja));

/// The message `id`, without arguments, in each shipped language: what a row says in any of
/// them (the list's filter matches those words, whichever language is on screen).
pub fn in_every_language(id: &str) -> impl Iterator<Item = String> + '_ {
    [&*ENGLISH, &*JAPANESE].into_iter().map(move |t| t.t(id))
}

/// The message `id` in English with string arguments: the words the service sends with a
/// refusal (gRPC's `grpc-message`, Connect's `message`, the CLI's and the log's line), from the
/// same `locales/en` the dashboard reads. A message its arguments do not fill is still said
/// (Fluent marks what is missing) and logged.
pub fn english(id: &str, args: &[(&str, &str)]) -> String {
    ENGLISH
        .tr_whole(id, args)
        .unwrap_or_else(|| ENGLISH.tr(id, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_is_the_dashboards_english() {
        let args = [("namespace", "prod")];
        assert_eq!(
            english("error-no-clusters", &args),
            "There is no TalosCluster in namespace prod."
        );
        assert_eq!(
            english("error-no-clusters", &args),
            Texts::new(Lang::En).tr("error-no-clusters", &args)
        );
        // A message whose arguments are missing is still said, marked where they lack.
        assert!(english("error-no-clusters", &[]).contains("namespace"));
    }

    #[test]
    fn counts_of_four_digits_and_more_are_grouped() {
        let t = Texts::new(Lang::En);
        let title = |n: usize| t.tn("operations-title", &[("n", n.into())]);
        assert_eq!(title(999), "Operations (999)");
        assert_eq!(title(1000), "Operations (1,000)");
        assert_eq!(title(10_007), "Operations (10,007)");
        assert_eq!(title(1_234_567), "Operations (1,234,567)");
        let t = Texts::new(Lang::Ja);
        assert!(
            t.tn("operations-title", &[("n", 10_007usize.into())])
                .contains("10,007")
        );
    }
}
