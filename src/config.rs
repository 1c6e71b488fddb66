//! Settings: flags win over the user's config file, which wins over the defaults.

use anyhow::Context as _;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `~/.config/ichor-tui/config.toml`: the user's defaults.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileConfig {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    pub all_namespaces: Option<bool>,
    pub server: Option<String>,
    pub token_file: Option<PathBuf>,
    pub ca_file: Option<PathBuf>,
    pub lang: Option<String>,
    pub color: Option<String>,
    pub ascii: Option<bool>,
    pub read_only: Option<bool>,
}

impl FileConfig {
    /// The default location.
    pub fn default_path() -> Option<PathBuf> {
        dirs::config_dir().map(|d| d.join("ichor-tui").join("config.toml"))
    }

    /// Reads `path`; a missing file is an empty config, a malformed one an error.
    pub fn load(path: &Path) -> anyhow::Result<FileConfig> {
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text)
                .with_context(|| format!("reading config file {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileConfig::default()),
            Err(e) => Err(e).with_context(|| format!("reading config file {}", path.display())),
        }
    }
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ColorMode {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorMode {
    pub fn parse(s: &str) -> Option<ColorMode> {
        match s {
            "auto" => Some(ColorMode::Auto),
            "always" => Some(ColorMode::Always),
            "never" => Some(ColorMode::Never),
            _ => None,
        }
    }

    /// Whether to colour: `always`/`never` decide; `auto` colours a terminal unless NO_COLOR is
    /// set (to anything non-empty).
    pub fn resolve(self, no_color: Option<&str>, is_tty: bool) -> bool {
        match self {
            ColorMode::Always => true,
            ColorMode::Never => false,
            ColorMode::Auto => no_color.is_none_or(str::is_empty) && is_tty,
        }
    }
}

/// Whether the locale's character set is UTF-8 (LC_ALL, then LC_CTYPE, then LANG).
pub fn locale_is_utf8(env: impl Fn(&str) -> Option<String>) -> bool {
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
}
