//! What every cluster has besides its objects: its Namespaces (the four kube-apiserver creates,
//! and each one the demo's objects live in), the health endpoints, and no Nodes.
//!
//! A Namespace is a stored object (`kubectl get ns -w` watches it as any other); the demo's
//! own data creates the namespace it is seeded into, and a create through the API into a
//! namespace that does not exist is refused 404, as kube-apiserver's NamespaceLifecycle
//! admission refuses it.

use super::ApiState;
use super::kinds::NAMESPACES;
use super::responses::{Failure, status_body};
use super::store::now_rfc3339;
use serde_json::{Value, json};

/// The namespaces kube-apiserver creates at start.
const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-node-lease", "kube-public", "kube-system"];

/// The health endpoints kube-apiserver serves to anyone (`system:public-info-viewer`).
pub(crate) fn is_health_path(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/livez")
        || ["/healthz/", "/readyz/", "/livez/"]
            .iter()
            .any(|p| path.strip_prefix(p).is_some_and(|rest| rest == "ping"))
}

/// A Namespace as kube-apiserver stores it, without its server-set metadata.
fn namespace_object(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/metadata.name": name},
            "creationTimestamp": now_rfc3339(),
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

fn key(name: &str) -> super::store::Key {
    (
        NAMESPACES.plural.to_string(),
        String::new(),
        name.to_string(),
    )
}

impl ApiState {
    /// Stores the namespace `name` unless it exists (a change of its own, as a create).
    pub(crate) fn ensure_namespace(&mut self, name: &str) {
        if name.is_empty() || self.objects.contains_key(&key(name)) {
            return;
        }
        let mut obj = namespace_object(name);
        let rv = self.next_resource_version();
        let uid = self.next_uid();
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
            meta.insert("uid".into(), json!(uid));
        }
        self.put_object(key(name), obj, rv);
    }

    /// The namespaces of a new cluster.
    pub(crate) fn ensure_system_namespaces(&mut self) {
        for ns in SYSTEM_NAMESPACES {
            self.ensure_namespace(ns);
        }
    }

    /// 404 NotFound unless the namespace exists, as a create in a missing one is answered.
    pub(crate) fn check_namespace_exists(&self, name: &str) -> Result<(), Failure> {
        if self.objects.contains_key(&key(name)) {
            return Ok(());
        }
        let details = json!({"name": name, "kind": "namespaces"});
        let message = format!("namespaces {name:?} not found");
        Err((404, status_body(404, "NotFound", &message, Some(details))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_paths() {
        for p in ["/healthz", "/readyz", "/livez", "/livez/ping"] {
            assert!(is_health_path(p), "{p}");
        }
        for p in ["/health", "/readyz/etcd/x", "/healthzz"] {
            assert!(!is_health_path(p), "{p}");
        }
    }
}
