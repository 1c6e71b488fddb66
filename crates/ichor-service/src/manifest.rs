//! An operation's resource as YAML, as `kubectl get -o yaml` shows it (without the managed
//! fields): read as the caller, whether or not it reads as a TalosOperation, so a person can see
//! what the controller wrote. The YAML is written here, by a small emitter that quotes every
//! string that is not plainly a word, so nothing in the object can change the document's
//! shape; control characters come out as escapes.

use super::OperationService;
use super::access::Caller;
use super::validate::{self, NameOf};
use ichor_model::ApiError;
use ichor_resources::TalosOperation;
use serde_json::Value;

impl OperationService {
    /// The operation `namespace/name` as YAML.
    pub async fn get_operation_manifest(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError> {
        validate::namespace(namespace)?;
        validate::name(NameOf::Operation, name)?;
        let what = "reading the operation's resource";
        let Some(mut raw) = self
            .get_json::<TalosOperation>(caller, namespace, name, what)
            .await?
        else {
            return Err(super::operation_not_found(namespace, name));
        };
        if let Some(meta) = raw.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        Ok(to_yaml(&raw))
    }
}

/// `v` as a YAML document.
pub(crate) fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => mapping(m, 0, &mut out),
        Value::Array(a) if !a.is_empty() => sequence(a, 0, &mut out),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn pad(indent: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn mapping(m: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    for (k, v) in m {
        pad(indent, out);
        out.push_str(&string(k));
        out.push(':');
        value_after_key(v, indent, out);
    }
}

/// A value after `key:`: a scalar on the same line, a collection on the lines under it.
fn value_after_key(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            mapping(m, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            sequence(a, indent, out);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn sequence(a: &[Value], indent: usize, out: &mut String) {
    for v in a {
        pad(indent, out);
        out.push_str("- ");
        match v {
            Value::Object(m) if !m.is_empty() => {
                // The first key on the dash's line, the rest under it.
                let mut first = true;
                for (k, v) in m {
                    if !first {
                        pad(indent + 2, out);
                    }
                    first = false;
                    out.push_str(&string(k));
                    out.push(':');
                    value_after_key(v, indent + 2, out);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                sequence(inner, indent + 2, out);
            }
            other => {
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => string(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

/// A string as YAML: plain when it can only read as that string, else double-quoted with JSON's
/// escapes (a JSON string is a YAML double-quoted scalar).
fn string(s: &str) -> String {
    if plain(s) {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
    }
}

/// Whether `s` reads as itself, a string, when written without quotes.
fn plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let word_chars = s.chars().all(|c| {
        c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '@' | '+' | '=' | ' ')
    });
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
    );
    let numberish = s.parse::<f64>().is_ok() || first.is_ascii_digit() && s.contains(':');
    word_chars
        && first.is_alphanumeric()
        && !s.ends_with(' ')
        && !s.ends_with(':')
        && !s.contains(": ")
        && !s.contains(" #")
        && !reserved
        && !numberish
        && s.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_as_yaml() {
        let v = json!({
            "apiVersion": "ichor.maesh.dev/v1alpha1",
            "kind": "TalosOperation",
            "metadata": {"name": "op-1", "annotations": {}, "labels": {"a": "true"}},
            "spec": {"maxUnavailable": 1, "paused": false},
            "status": {
                "machines": [{"name": "cp1", "phase": "Completed"}, {"name": "w1"}],
                "failureReason": "machine w1 failed: exit 1",
                "conditions": [],
            },
        });
        assert_eq!(
            to_yaml(&v),
            "apiVersion: ichor.maesh.dev/v1alpha1\n\
             kind: TalosOperation\n\
             metadata:\n  annotations: {}\n  labels:\n    a: \"true\"\n  name: op-1\n\
             spec:\n  maxUnavailable: 1\n  paused: false\n\
             status:\n  conditions: []\n  failureReason: \"machine w1 failed: exit 1\"\n  \
             machines:\n  - name: cp1\n    phase: Completed\n  - name: w1\n"
        );
    }

    #[test]
    fn nothing_in_a_string_escapes_its_quotes() {
        for s in [
            "x\ny: 1",
            "- a",
            "#c",
            "\u{1b}[31m",
            "a: b",
            "v1.9.3",
            "1.10",
            "yes",
            "",
            " lead",
            "12:30",
            "日本",
        ] {
            let out = string(s);
            let back: String = if out.starts_with('"') {
                serde_json::from_str(&out).unwrap()
            } else {
                out.clone()
            };
            assert_eq!(back, s, "{out}");
            assert!(!out.contains('\n') && !out.contains('\u{1b}'), "{out:?}");
        }
        assert_eq!(string("v1.9.3"), "v1.9.3");
        assert_eq!(string("1.10"), "\"1.10\"");
    }
}
