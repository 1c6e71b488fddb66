//! An operation's resource as YAML, as `kubectl get -o yaml` shows it (without the managed
//! fields): read as the caller, whether or not it reads as a TalosOperation, so a person can see
//! what the controller wrote. serde-saphyr writes it, every string on one line and quoted
//! unless plainly a word, so nothing in the object can change the document's shape; control
//! characters come out as escapes.

use super::OperationService;
use super::access::Caller;
use super::validate::{self, NameOf};
use ichor_model::{ApiError, Code};
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
            return Err(super::missing::operation_not_found(namespace, name));
        };
        if let Some(meta) = raw.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        to_yaml(&raw)
    }
}

/// `v` as a YAML document, by serde-saphyr. Every string that is not plainly a word is quoted
/// on one line (block scalars off), its control characters escaped, so nothing in the object can
/// change the document's shape or reach the terminal raw.
pub(crate) fn to_yaml(v: &Value) -> Result<String, ApiError> {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.prefer_block_scalars = false;
    serde_saphyr::to_string_with_options(v, options).map_err(|e| {
        ApiError::new(
            Code::Internal,
            format!(
                "writing the operation as YAML: {}",
                ichor_model::inert::truncate(&e.to_string(), 200)
            ),
        )
    })
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
            to_yaml(&v).unwrap(),
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
            "a\r\nb\u{7}",
            "---",
            "&anchor *ref !tag",
        ] {
            let v = json!({ "k": s, "list": [s] });
            let out = to_yaml(&v).unwrap();
            let back: Value = serde_saphyr::from_str(&out).unwrap();
            assert_eq!(back, v, "{out}");
            assert_eq!(out.lines().count(), 3, "one line each: {out:?}");
            assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        }
        assert_eq!(to_yaml(&json!({"v": "v1.9.3"})).unwrap(), "v: v1.9.3\n");
        assert_eq!(to_yaml(&json!({"v": "1.10"})).unwrap(), "v: \"1.10\"\n");
    }
}
