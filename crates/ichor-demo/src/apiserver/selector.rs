//! Label selectors, as `?labelSelector=` sends them: `a=b,c!=d,e,!f,g in (x,y),h notin (z)`.

use serde_json::Value;

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector: every requirement must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

/// The requirements of a selector: split at the commas outside parentheses.
fn split_requirements(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    parts
}

fn unparsable(p: &str) -> String {
    format!("unable to parse requirement: {p:?}")
}

impl Requirement {
    /// One requirement (trimmed, not empty); `Err` carries the reason.
    fn parse(p: &str) -> Result<Requirement, String> {
        let set = |rest: &str| -> Result<Vec<String>, String> {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| unparsable(p))?;
            Ok(inner.split(',').map(|v| v.trim().to_string()).collect())
        };
        let req = if let Some((k, v)) = p.split_once("!=") {
            Requirement::NotEquals(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
            Requirement::Equals(k.trim().into(), v.trim().into())
        } else if let Some((k, rest)) = p.split_once(" notin ") {
            Requirement::NotIn(k.trim().into(), set(rest)?)
        } else if let Some((k, rest)) = p.split_once(" in ") {
            Requirement::In(k.trim().into(), set(rest)?)
        } else if let Some(k) = p.strip_prefix('!') {
            Requirement::NotExists(k.trim().into())
        } else if p
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        {
            Requirement::Exists(p.into())
        } else {
            return Err(unparsable(p));
        };
        Ok(req)
    }
}

impl LabelSelector {
    /// Parses a selector; `Err` carries the reason.
    pub(crate) fn parse(s: &str) -> Result<LabelSelector, String> {
        split_requirements(s)
            .iter()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .map(Requirement::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(LabelSelector)
    }

    /// Whether an object's labels satisfy every requirement.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
        self.matches_with(|k| labels.and_then(|l| l.get(k)).and_then(Value::as_str))
    }

    /// Whether labels kept apart from their object (see [`labels_of`]) satisfy it.
    pub(crate) fn matches_labels(&self, labels: &Labels) -> bool {
        self.matches_with(|k| {
            labels
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.as_str())
        })
    }

    /// Whether the labels that `get` reads satisfy every requirement.
    fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        })
    }
}

/// An object's labels, kept apart from it (as the watch history keeps them with each change).
pub(crate) type Labels = Vec<(String, String)>;

/// The labels of `obj`.
pub(crate) fn labels_of(obj: &Value) -> Labels {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selectors() {
        let o = json!({"metadata": {"labels": {"app": "x", "tier": "db"}}});
        for (sel, want) in [
            ("app=x", true),
            ("app==x,tier=db", true),
            ("app!=x", false),
            ("tier in (db, web)", true),
            ("tier notin (db)", false),
            ("app", true),
            ("!app", false),
            ("missing", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&o),
                want,
                "{sel}"
            );
        }
        assert!(LabelSelector::parse("a in b").is_err());
    }
}
