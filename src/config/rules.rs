//! The config's tables beyond the flags' defaults: `[timing]` (when a machine is slow) and
//! `[keys]` (keys rebound by action name); `[[contexts]]` is [`super::contexts`]. Each is
//! checked as the file is read: a value out of range, an unknown action, a key that cannot be
//! read or that would mean two things on one screen is an error naming the file, the line and
//! the column.

use ichor_app::rebind::{ACTIONS, KeyOverrides, RebindError};
use ichor_model::SlowRule;
use jiff::SignedDuration;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::path::Path;

/// `[timing]`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct Timing {
    /// A running machine is slow past this many times its role's pace (1 to 100; default 2).
    #[serde(default, deserialize_with = "factor")]
    pub(crate) slow_factor: Option<f64>,
    /// …and at least this much over it (`"30s"`, `"2m"`, `"1h 30m"`; up to a day; default 30s).
    #[serde(default, deserialize_with = "margin")]
    pub(crate) slow_margin: Option<SignedDuration>,
}

impl Timing {
    /// The rule in force: the file's values over the defaults.
    pub(crate) fn rule(&self) -> SlowRule {
        let d = SlowRule::default();
        SlowRule {
            factor: self.slow_factor.unwrap_or(d.factor),
            margin: self.slow_margin.unwrap_or(d.margin),
        }
    }
}

fn factor<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let f = f64::deserialize(d)?;
    if !(1.0..=SlowRule::MAX_FACTOR).contains(&f) {
        return Err(serde::de::Error::custom(
            "slow-factor must be a number from 1 to 100",
        ));
    }
    Ok(Some(f))
}

fn margin<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SignedDuration>, D::Error> {
    let s = String::deserialize(d)?;
    let bad = || {
        serde::de::Error::custom(format!(
            "slow-margin must be a duration from 0s to 24h, such as \"30s\" or \"2m\", not {}",
            ichor_model::error_text::quoted(&s)
        ))
    };
    let m: SignedDuration = s.trim().parse().map_err(|_| bad())?;
    if m.is_negative() || m > SlowRule::MAX_MARGIN {
        return Err(bad());
    }
    Ok(Some(m))
}

/// A `[keys]` value: one key or several.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub(crate) enum KeySpec {
    One(String),
    Many(Vec<String>),
}

/// `[keys]` as written: each action with its keys and where it was written.
pub(crate) type KeysTable = BTreeMap<toml::Spanned<String>, toml::Spanned<KeySpec>>;

/// The overrides `keys` gives, checked; an error names the file, the entry's line and
/// column, and what is wrong with it.
pub(crate) fn overrides(keys: &KeysTable, text: &str, path: &Path) -> anyhow::Result<KeyOverrides> {
    let mut written: Vec<(&toml::Spanned<String>, &toml::Spanned<KeySpec>)> = keys.iter().collect();
    written.sort_by_key(|(k, _)| k.span().start);
    let entries: Vec<(String, Vec<String>)> = written
        .iter()
        .map(|(k, v)| {
            let keys = match v.get_ref() {
                KeySpec::One(s) => vec![s.clone()],
                KeySpec::Many(v) => v.clone(),
            };
            (k.get_ref().clone(), keys)
        })
        .collect();
    KeyOverrides::new(&entries).map_err(|(i, e)| {
        let (action, value) = written[i.min(written.len().saturating_sub(1))];
        let span = match e {
            RebindError::UnknownAction(_) => action.span(),
            _ => value.span(),
        };
        let (line, column) = ichor_model::error_text::line_column(text, span.start);
        let what = match e {
            RebindError::UnknownAction(a) => {
                let known: Vec<&str> = ACTIONS.iter().map(|(n, _)| *n).collect();
                format!(
                    "[keys] has no action {}; the actions are {}",
                    ichor_model::error_text::quoted(&a),
                    known.join(", ")
                )
            }
            RebindError::BadKey(k) => format!(
                "[keys] {}: {} is not a key (a character, ctrl-X, or one of enter, esc, tab, backtab, backspace, up, down, left, right, pageup, pagedown, home, end, space)",
                action.get_ref(),
                ichor_model::error_text::quoted(&k)
            ),
            RebindError::Reserved => format!(
                "[keys] {}: ctrl-c quits everywhere and cannot be rebound",
                action.get_ref()
            ),
            RebindError::Clash { key, screen, other } => format!(
                "[keys] {}: {key} is already {other}'s key on the {} screen",
                action.get_ref(),
                screen_name(screen)
            ),
        };
        anyhow::anyhow!("config file {}:{line}:{column}: {what}", path.display())
    })
}

fn screen_name(s: ichor_app::state::Screen) -> &'static str {
    use ichor_app::state::Screen;
    match s {
        Screen::Operations => "Operations",
        Screen::Operation => "operation",
        Screen::Clusters => "Clusters",
        Screen::Cluster => "cluster",
    }
}

#[cfg(test)]
mod tests;
