//! Every word a person reads, from `locales/{en,ja}/*.ftl` via Fluent (thread-safe bundles,
//! isolation marks off, English as the fallback): the dashboard's and the CLI's words, and the
//! English of every refusal the service sends ([`english`]), so that a refusal is written once.

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use unic_langid::LanguageIdentifier;

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

fn bundle(lang: Lang) -> FluentBundle<FluentResource> {
    let id: LanguageIdentifier = match lang {
        Lang::En => unic_langid::langid!("en"),
        Lang::Ja => unic_langid::langid!("ja"),
    };
    let mut b = FluentBundle::new_concurrent(vec![id]);
    b.set_use_isolating(false);
    b.set_formatter(Some(grouped));
    for (name, src) in sources(lang) {
        match FluentResource::try_new(src.to_string()) {
            Ok(res) => {
                if let Err(errs) = b.add_resource(res) {
                    tracing::error!(file = name, ?errs, "duplicate messages in a locale file");
                }
            }
            Err((res, errs)) => {
                tracing::error!(file = name, ?errs, "syntax errors in a locale file");
                let _ = b.add_resource(res);
            }
        }
    }
    b
}

/// The texts of one language, with English behind it.
pub struct Texts {
    lang: Lang,
    main: FluentBundle<FluentResource>,
    fallback: Option<FluentBundle<FluentResource>>,
}

impl Texts {
    pub fn new(lang: Lang) -> Texts {
        Texts {
            lang,
            main: bundle(lang),
            fallback: (lang != Lang::En).then(|| bundle(Lang::En)),
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
        let b = std::iter::once(&self.main)
            .chain(self.fallback.as_ref())
            .find(|b| b.has_message(id))?;
        let pattern = b.get_message(id)?.value()?;
        let mut errors = Vec::new();
        let s = b.format_pattern(pattern, Some(&fa), &mut errors);
        if !errors.is_empty() {
            tracing::warn!(id, ?errors, "a message lacks arguments");
            return None;
        }
        Some(s.into_owned())
    }

    fn format(&self, id: &str, args: Option<&FluentArgs<'_>>) -> String {
        for b in std::iter::once(&self.main).chain(self.fallback.as_ref()) {
            if let Some(pattern) = b.get_message(id).and_then(|m| m.value()) {
                let mut errors = Vec::new();
                let s = b.format_pattern(pattern, args, &mut errors);
                if !errors.is_empty() {
                    tracing::warn!(id, ?errors, "formatting a message");
                }
                return s.into_owned();
            }
        }
        tracing::warn!(id, "missing message");
        id.to_string()
    }

    /// The message `id` of this language alone (no English fallback), or what went wrong: a
    /// missing message, or the resolver's errors (an unknown variable, message or function).
    /// For the locale tests.
    pub fn format_strict(&self, id: &str, args: &FluentArgs<'_>) -> Result<String, String> {
        let pattern = self
            .main
            .get_message(id)
            .and_then(|m| m.value())
            .ok_or_else(|| format!("{}: no message {id}", self.lang.code()))?;
        let mut errors = Vec::new();
        let s = self.main.format_pattern(pattern, Some(args), &mut errors);
        if errors.is_empty() {
            Ok(s.into_owned())
        } else {
            Err(format!("{}: {id}: {errors:?}", self.lang.code()))
        }
    }

    /// Whether the language bundle has `id` (tests).
    pub fn has(&self, id: &str) -> bool {
        self.main.has_message(id)
    }
}

/// The English texts, made once for the whole process.
static ENGLISH: std::sync::LazyLock<Texts> = std::sync::LazyLock::new(|| Texts::new(Lang::En));

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
