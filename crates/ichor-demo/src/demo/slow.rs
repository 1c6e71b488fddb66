//! The demo's slow machine: `ICHOR_DEMO_SLOW=MACHINE[=FACTOR]` seeds the annotation
//! `demo.ichor.maesh.dev/slow: FACTOR` (default 30) on that demo machine, so the steps of it
//! that the simulated controller carries out take FACTOR times as long (at `--demo-speed 1`, a
//! step of 4 s takes two minutes). On `demo-cluster`, `kubectl annotate machine NAME
//! demo.ichor.maesh.dev/slow=FACTOR` does the same at any time.

use ichor_resources::{Machine, names};
use std::collections::BTreeMap;

/// The environment variable that makes a demo machine slow.
pub const SLOW_ENV: &str = "ICHOR_DEMO_SLOW";

/// How many times as long a slow machine's steps take, when the variable names no factor.
const DEFAULT_FACTOR: u32 = 30;

/// A demo machine made slow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlowMachine {
    pub machine: String,
    /// From 2 to 100.
    pub factor: u32,
}

impl SlowMachine {
    /// From `ICHOR_DEMO_SLOW` (`MACHINE` or `MACHINE=FACTOR`); `None` when it is unset or empty.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Option<SlowMachine>> {
        let Some(v) = env(SLOW_ENV).filter(|v| !v.trim().is_empty()) else {
            return Ok(None);
        };
        let (machine, factor) = match v.trim().split_once('=') {
            None => (v.trim(), DEFAULT_FACTOR),
            Some((m, f)) => {
                let factor = f
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|f| (2..=100).contains(f));
                let Some(factor) = factor else {
                    anyhow::bail!("{SLOW_ENV}: the factor must be a whole number from 2 to 100");
                };
                (m.trim(), factor)
            }
        };
        if machine.is_empty() {
            anyhow::bail!("{SLOW_ENV} must name a demo machine: MACHINE or MACHINE=FACTOR");
        }
        Ok(Some(SlowMachine {
            machine: machine.to_string(),
            factor,
        }))
    }

    /// Annotates the machine among `machines`, if it is one of them.
    pub(crate) fn mark(slow: Option<&SlowMachine>, machines: &mut [Machine]) {
        let Some(slow) = slow else {
            return;
        };
        for m in machines
            .iter_mut()
            .filter(|m| m.metadata.name.as_deref() == Some(slow.machine.as_str()))
        {
            m.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(names::DEMO_SLOW.to_string(), slow.factor.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(v: &str) -> anyhow::Result<Option<SlowMachine>> {
        SlowMachine::from_env(|k| (k == SLOW_ENV).then(|| v.to_string()))
    }

    #[test]
    fn the_knob_names_a_machine_and_a_factor() {
        assert_eq!(read("").unwrap(), None);
        let w = |f| {
            Some(SlowMachine {
                machine: "staging-w02".into(),
                factor: f,
            })
        };
        assert_eq!(read("staging-w02").unwrap(), w(30));
        assert_eq!(read(" staging-w02 = 5 ").unwrap(), w(5));
        for bad in ["staging-w02=1", "staging-w02=101", "staging-w02=x", "=5"] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }
}
