//! Settings: flags win over the user's config file, which wins over the defaults.

pub(crate) mod contexts;
pub(crate) mod rules;

use serde::{Deserialize, Deserializer};
use std::path::{Path, PathBuf};

/// `~/.config/ichor-tui/config.toml`: the user's defaults.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct FileConfig {
    pub(crate) kubeconfig: Option<PathBuf>,
    pub(crate) context: Option<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) all_namespaces: Option<bool>,
    pub(crate) server: Option<String>,
    pub protocol: Option<ProtocolChoice>,
    pub(crate) backend: Option<RouteChoice>,
    pub(crate) ichor_ui: Option<String>,
    pub(crate) ichor_ui_port: Option<String>,
    pub(crate) token_file: Option<PathBuf>,
    pub(crate) ca_file: Option<PathBuf>,
    #[serde(default, deserialize_with = "lang")]
    pub(crate) lang: Option<String>,
    pub(crate) color: Option<ColorMode>,
    pub(crate) ascii: Option<bool>,
    pub(crate) read_only: Option<bool>,
    pub(crate) ambiguous_width: Option<AmbiguousWidth>,
    /// Bell and desktop notification when an operation shown completes, fails, awaits
    /// credentials or turns slow (default true).
    pub(crate) notify: Option<bool>,
    /// `[timing]`: when a running machine is slow.
    #[serde(default)]
    pub(crate) timing: rules::Timing,
    /// `[[contexts]]`: contexts marked production or read only, by name or API server.
    #[serde(default)]
    pub(crate) contexts: Vec<contexts::ContextRule>,
    /// `[keys]` as written (checked into [`FileConfig::key_overrides`] as the file is read).
    #[serde(default)]
    pub(crate) keys: rules::KeysTable,
    /// The keys `[keys]` rebinds, checked.
    #[serde(skip)]
    pub(crate) key_overrides: ichor_app::rebind::KeyOverrides,
}

impl FileConfig {
    /// The default location.
    pub(crate) fn default_path() -> Option<PathBuf> {
        dirs::config_dir().map(|d| d.join("ichor-tui").join("config.toml"))
    }

    /// Reads `path`. A missing file is an empty config unless it was `required` (named by
    /// `--config`); an unreadable or malformed one is an error naming the file and, for a
    /// malformed one, the line and column.
    pub(crate) fn load(path: &Path, required: bool) -> anyhow::Result<FileConfig> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|e| {
                    let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                    let valid = std::str::from_utf8(valid).unwrap_or_default();
                    let (line, column) = ichor_model::error_text::line_column(valid, valid.len());
                    anyhow::anyhow!(
                        "config file {}:{line}:{column}: not UTF-8 text",
                        path.display()
                    )
                })?;
                FileConfig::parse(&text, path)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                Ok(FileConfig::default())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                anyhow::bail!("config file {} (--config) does not exist", path.display())
            }
            Err(e) => anyhow::bail!("cannot read config file {}: {e}", path.display()),
        }
    }

    /// Parses the text of `path`; an error is one line, `FILE:LINE:COLUMN: what`, without the
    /// snippet toml would print.
    pub(crate) fn parse(text: &str, path: &Path) -> anyhow::Result<FileConfig> {
        let mut config: FileConfig = toml::from_str(text).map_err(|e| {
            let at = match e.span() {
                Some(span) => {
                    let (line, column) = ichor_model::error_text::line_column(text, span.start);
                    format!(":{line}:{column}")
                }
                None => String::new(),
            };
            let what = ichor_model::inert::truncate(
                &ichor_model::inert::sanitize(e.message().trim()),
                200,
            );
            anyhow::anyhow!("config file {}{at}: {what}", path.display())
        })?;
        config.key_overrides = rules::overrides(&config.keys, text, path)?;
        Ok(config)
    }

    /// The context rules, in the order written.
    pub(crate) fn context_rules(&self) -> contexts::ContextRules {
        contexts::ContextRules(self.contexts.clone())
    }
}

/// `lang = "…"`: en or ja (as `--lang` takes them).
fn lang<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(d)?;
    if ichor_views::i18n::Lang::parse(&s).is_none() {
        return Err(serde::de::Error::custom(format!(
            "lang must be en or ja, not {}",
            ichor_model::error_text::quoted(&s)
        )));
    }
    Ok(Some(s))
}

/// `--backend` (and `backend` in the config file): how the dashboard reaches OperationService
/// when no server URL is given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteChoice {
    /// ichor-ui through a tunnel when it answers, else in-process.
    #[default]
    Auto,
    /// ichor-ui (through a tunnel), or an error saying why not.
    Remote,
    /// The service in this process, with the kubeconfig's credentials.
    InProcess,
}

/// `--protocol` (and `protocol` in the config file): how the dashboard speaks to a server. The
/// command line's and the config file's spelling of the client's [`ichor_client::remote::Protocol`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProtocolChoice {
    /// The Connect protocol: unary calls as HTTP POSTs, over HTTP/1.1 or HTTP/2; passes
    /// HTTP/1.1-only proxies and TLS-terminating ingresses.
    #[default]
    Connect,
    /// gRPC over HTTP/2.
    Grpc,
}

impl From<ProtocolChoice> for ichor_client::remote::Protocol {
    fn from(p: ProtocolChoice) -> Self {
        match p {
            ProtocolChoice::Connect => ichor_client::remote::Protocol::Connect,
            ProtocolChoice::Grpc => ichor_client::remote::Protocol::Grpc,
        }
    }
}

/// `--color` (and `color` in the config file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorMode {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorMode {
    /// Whether to colour: `always`/`never` decide; `auto` colours a terminal unless NO_COLOR is
    /// set (to anything non-empty).
    pub(crate) fn resolve(self, no_color: Option<&str>, is_tty: bool) -> bool {
        match self {
            ColorMode::Always => true,
            ColorMode::Never => false,
            ColorMode::Auto => no_color.is_none_or(str::is_empty) && is_tty,
        }
    }
}

/// `--ambiguous-width` (and `ambiguous-width` in the config file): how wide the terminal draws
/// the characters of East Asian Width "Ambiguous" (box drawing, `·`, `…`, `▶`, `○`, `█`, `é`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AmbiguousWidth {
    /// Measured at start, as Vim does for 'ambiwidth': one such character is printed and the
    /// terminal asked where the cursor went; narrow when it does not answer in time.
    #[default]
    Auto,
    /// One column: most terminals.
    Narrow,
    /// Two columns: Tera Term and PuTTY set to Japanese, mintty under a ja locale,
    /// `xterm -cjk_width`. Nothing ambiguous is drawn then.
    Wide,
}

impl AmbiguousWidth {
    /// Whether ambiguous characters are wide, when the setting says (`auto`: not known until
    /// the terminal is asked).
    pub(crate) fn known(self) -> Option<bool> {
        match self {
            AmbiguousWidth::Auto => None,
            AmbiguousWidth::Narrow => Some(false),
            AmbiguousWidth::Wide => Some(true),
        }
    }
}

/// Whether the locale's character set is UTF-8 (LC_ALL, then LC_CTYPE, then LANG).
pub(crate) fn locale_is_utf8(env: impl Fn(&str) -> Option<String>) -> bool {
    for var in ["LC_ALL", "LC_CTYPE", "LANG"] {
        if let Some(v) = env(var).filter(|v| !v.is_empty()) {
            let v = v.to_ascii_lowercase();
            return v.contains("utf-8") || v.contains("utf8");
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_file_and_colour() {
        let c: FileConfig =
            toml::from_str("namespace = \"prod\"\nread-only = true\ncolor = \"never\"\n").unwrap();
        assert_eq!(c.namespace.as_deref(), Some("prod"));
        assert_eq!(c.read_only, Some(true));
        assert!(
            toml::from_str::<FileConfig>("nmespace = \"x\"").is_err(),
            "typos are errors"
        );
        assert!(!ColorMode::Auto.resolve(Some("1"), true));
        assert!(ColorMode::Auto.resolve(Some(""), true));
        assert!(!ColorMode::Auto.resolve(None, false));
        assert!(ColorMode::Always.resolve(Some("1"), false));
        let env = |k: &str| (k == "LANG").then(|| "ja_JP.UTF-8".to_string());
        assert!(locale_is_utf8(env));
        assert!(!locale_is_utf8(|_| None));
        assert!(!locale_is_utf8(
            |k: &str| (k == "LC_ALL").then(|| "C".to_string())
        ));
    }

    fn load_err(text: &[u8], required: bool) -> String {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, text).unwrap();
        let e = FileConfig::load(&p, required).unwrap_err();
        ichor_model::error_text::one_line(&e).replace(&p.display().to_string(), "FILE")
    }

    #[test]
    fn config_errors_are_one_line_with_the_line_and_column() {
        assert_eq!(
            load_err(b"namespace = \"prod\"\nnmespace = \"x\"\n", false),
            "config file FILE:2:1: unknown field `nmespace`, expected one of `kubeconfig`, `context`, `namespace`, `all-namespaces`, `server`, `protocol`, `backend`, `ichor-ui`, `ichor-ui-port`, `token-file`, `ca-file`, `lang`, `color…"
        );
        assert_eq!(
            load_err(b"color = \"blue\"\n", false),
            "config file FILE:1:9: unknown variant `blue`, expected one of `auto`, `always`, `never`"
        );
        assert_eq!(
            load_err(b"\nlang = \"fr\"\n", false),
            "config file FILE:2:8: lang must be en or ja, not \"fr\""
        );
        assert_eq!(
            load_err(b"read-only = yes\n", false),
            "config file FILE:1:13: string values must be quoted, expected literal string"
        );
        assert_eq!(
            load_err(b"namespace = \"caf\xe9\"\n", false),
            "config file FILE:1:17: not UTF-8 text"
        );
        let c = FileConfig::parse("lang = \"ja\"\ncolor = \"never\"\n", Path::new("f")).unwrap();
        assert_eq!(
            (c.lang.as_deref(), c.color),
            (Some("ja"), Some(ColorMode::Never))
        );
    }

    #[test]
    fn only_the_default_config_file_may_be_missing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("absent.toml");
        assert_eq!(FileConfig::load(&p, false).unwrap(), FileConfig::default());
        let e = FileConfig::load(&p, true).unwrap_err();
        assert_eq!(
            ichor_model::error_text::one_line(&e),
            format!("config file {} (--config) does not exist", p.display())
        );
        let e = FileConfig::load(dir.path(), true).unwrap_err();
        let io = std::fs::read(dir.path()).unwrap_err();
        assert_eq!(
            ichor_model::error_text::one_line(&e),
            format!("cannot read config file {}: {io}", dir.path().display())
        );
    }
}
