//! Pods as the demo runs them: where a pod's ports forward to, its readiness, its removal
//! and its replacement by a new pod (a restart, as its ReplicaSet would do it), with the
//! Endpoints and EndpointSlices of the Services that select it kept in step, as the
//! endpoints controllers would.

use super::store::{Key, NAME_SUFFIX_CHARS, now_rfc3339};
use super::{ApiState, EmbeddedApi};
use serde_json::{Map, Value, json};
use std::net::SocketAddr;

impl EmbeddedApi {
    /// Port-forwards to `container_port` of the pod `namespace/pod` reach `target`, a TCP
    /// address the caller serves (the demo has no containers). Connections already open stay
    /// with the target they reached.
    pub fn set_forward(&self, namespace: &str, pod: &str, container_port: u16, target: SocketAddr) {
        self.lock()
            .forwards
            .set(namespace, pod, container_port, target);
    }

    /// Port-forwards to that port are refused again, as when nothing listens on it. Returns
    /// whether it had a target.
    pub fn clear_forward(&self, namespace: &str, pod: &str, container_port: u16) -> bool {
        self.lock().forwards.clear(namespace, pod, container_port)
    }

    /// Marks the pod ready or not ready (its `Ready` and `ContainersReady` conditions and its
    /// containers' `ready`), and moves its address between the ready and not-ready addresses
    /// of the Endpoints that select it. Port-forwards still work, as they do to a running pod
    /// that is not ready. Returns whether the pod exists.
    pub fn set_pod_ready(&self, namespace: &str, pod: &str, ready: bool) -> bool {
        let mut st = self.lock();
        let key = pod_key(namespace, pod);
        let Some(mut obj) = st.objects.get(&key).map(|v| Value::clone(v)) else {
            return false;
        };
        set_readiness(&mut obj, ready);
        st.put(&key, obj);
        st.sync_endpoints(namespace);
        true
    }

    /// Removes the pod: its port-forwarded connections end (their error streams say the pod
    /// was deleted), its forward targets are forgotten, and it leaves the Endpoints. Returns
    /// whether it existed.
    pub fn remove_pod(&self, namespace: &str, pod: &str) -> bool {
        let mut st = self.lock();
        let existed = st.take_object(&pod_key(namespace, pod)).is_some();
        st.forwards.pod_gone(namespace, pod);
        st.sync_endpoints(namespace);
        existed
    }

    /// Replaces the pod by a new one, as its ReplicaSet does when it restarts: the same
    /// labels and spec under a new name (the old name with a new last segment), a new uid and
    /// IP, running and ready. The old pod's port-forwarded connections end; its forward targets
    /// move to the new pod; the Endpoints follow. Returns the new pod's name, `None` if there
    /// was no such pod.
    pub fn restart_pod(&self, namespace: &str, pod: &str) -> Option<String> {
        let mut st = self.lock();
        let old = st.take_object(&pod_key(namespace, pod))?;
        let base = pod.rsplit_once('-').map_or(pod, |(b, _)| b);
        let name = loop {
            let candidate = format!("{base}-{}", random_suffix());
            if candidate != pod && !st.objects.contains_key(&pod_key(namespace, &candidate)) {
                break candidate;
            }
        };
        let mut new = old;
        if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("name".into(), json!(name));
            for k in ["uid", "resourceVersion", "creationTimestamp"] {
                meta.remove(k);
            }
        }
        st.new_pod_status(&mut new);
        st.put(&pod_key(namespace, &name), new);
        for (port, target) in st.forwards.pod_gone(namespace, pod) {
            st.forwards.set(namespace, &name, port, target);
        }
        st.sync_endpoints(namespace);
        Some(name)
    }

    /// Stores a pod as a newly started one (running and ready, with an IP) and updates the
    /// Endpoints. Demo data; `pod` needs `metadata.name` and `metadata.namespace`.
    pub(crate) fn start_pod(&self, mut pod: Value) -> anyhow::Result<String> {
        let text = |p: &str| pod.pointer(p).and_then(Value::as_str).map(str::to_string);
        let (Some(namespace), Some(name)) = (text("/metadata/namespace"), text("/metadata/name"))
        else {
            anyhow::bail!("a pod needs a name and a namespace");
        };
        let mut st = self.lock();
        st.new_pod_status(&mut pod);
        st.put(&pod_key(&namespace, &name), pod);
        st.sync_endpoints(&namespace);
        Ok(name)
    }

    /// Stores a Service and updates its Endpoints. Demo data.
    pub(crate) fn store_service(&self, service: Value) -> anyhow::Result<()> {
        let Some(namespace) = service
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            anyhow::bail!("a service needs a namespace");
        };
        let name = service
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut st = self.lock();
        st.put(&("services".into(), namespace.clone(), name), service);
        st.sync_endpoints(&namespace);
        Ok(())
    }

    /// A stored object as JSON (demo data and unit tests).
    pub(crate) fn stored(&self, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        self.lock()
            .objects
            .get(&(plural.to_string(), namespace.to_string(), name.to_string()))
            .map(|v| Value::clone(v))
    }

    /// The names of the pods in `namespace` whose labels include all of `labels`.
    pub fn pods_with_labels(&self, namespace: &str, labels: &[(&str, &str)]) -> Vec<String> {
        let st = self.lock();
        st.objects
            .iter()
            .filter(|((plural, ns, _), _)| plural == "pods" && ns == namespace)
            .filter(|(_, pod)| {
                labels.iter().all(|(k, v)| {
                    pod.pointer("/metadata/labels")
                        .and_then(|l| l.get(*k))
                        .and_then(Value::as_str)
                        == Some(*v)
                })
            })
            .map(|((_, _, name), _)| name.clone())
            .collect()
    }
}

fn pod_key(namespace: &str, pod: &str) -> Key {
    ("pods".into(), namespace.into(), pod.into())
}

fn random_suffix() -> String {
    (0..5)
        .map(|_| NAME_SUFFIX_CHARS[fastrand::usize(..NAME_SUFFIX_CHARS.len())] as char)
        .collect()
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn array<'a>(v: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Sets the pod's readiness in its conditions and container statuses.
fn set_readiness(pod: &mut Value, ready: bool) {
    let status = if ready { "True" } else { "False" };
    let now = now_rfc3339();
    if let Some(conds) = pod
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for c in conds.iter_mut() {
            let t = c.get("type").and_then(Value::as_str).unwrap_or("");
            if (t == "Ready" || t == "ContainersReady")
                && c.get("status").and_then(Value::as_str) != Some(status)
            {
                c["status"] = json!(status);
                c["lastTransitionTime"] = json!(now);
            }
        }
    }
    if let Some(cs) = pod
        .pointer_mut("/status/containerStatuses")
        .and_then(Value::as_array_mut)
    {
        for c in cs.iter_mut() {
            c["ready"] = json!(ready);
        }
    }
}

impl ApiState {
    /// Stores `obj` under `key` with a new resourceVersion; a new object also gets a uid and
    /// a creation time, a replaced one keeps its own.
    fn put(&mut self, key: &Key, mut obj: Value) {
        self.ensure_namespace(&key.1);
        let rv = self.next_resource_version();
        let old_meta = self
            .objects
            .get(key)
            .and_then(|o| o.get("metadata"))
            .cloned();
        let uid = match old_meta.as_ref().and_then(|m| m.get("uid")).cloned() {
            Some(uid) => uid,
            None => json!(self.next_uid()),
        };
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("namespace".into(), json!(key.1));
            meta.insert("name".into(), json!(key.2));
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
            meta.insert("uid".into(), uid);
            let created = old_meta
                .as_ref()
                .and_then(|m| m.get("creationTimestamp"))
                .cloned()
                .unwrap_or_else(|| json!(now_rfc3339()));
            meta.entry("creationTimestamp").or_insert(created);
        }
        self.put_object(key.clone(), obj, rv);
    }

    /// A new pod's status: running and ready since now, with an IP of its own.
    fn new_pod_status(&mut self, pod: &mut Value) {
        self.uid += 1;
        let ip = format!("10.244.{}.{}", (self.uid / 250) % 250, self.uid % 250 + 2);
        let now = now_rfc3339();
        let containers: Vec<Value> = array(pod, "/spec/containers")
            .map(|c| {
                json!({
                    "name": str_at(c, "/name"), "image": str_at(c, "/image"),
                    "imageID": "", "containerID": format!("containerd://{:064x}", fastrand::u64(..)),
                    "ready": true, "started": true, "restartCount": 0,
                    "state": {"running": {"startedAt": now}}
                })
            })
            .collect();
        let condition = |t: &str| json!({"type": t, "status": "True", "lastTransitionTime": now});
        let status = json!({
            "phase": "Running",
            "conditions": [condition("PodScheduled"), condition("Initialized"),
                           condition("ContainersReady"), condition("Ready")],
            "hostIP": "10.0.0.10", "podIP": ip, "podIPs": [{"ip": ip}],
            "startTime": now, "containerStatuses": containers, "qosClass": "BestEffort"
        });
        if let Value::Object(o) = pod {
            o.insert("status".into(), status);
        }
    }

    /// The Endpoints and EndpointSlice of every Service with a selector in `namespace`, from
    /// the pods it selects: ready pods' addresses ready, the others not.
    fn sync_endpoints(&mut self, namespace: &str) {
        let services: Vec<Value> = self
            .objects
            .iter()
            .filter(|((p, ns, _), _)| p == "services" && ns == namespace)
            .map(|(_, v)| Value::clone(v))
            .collect();
        for svc in services {
            let Some(selector) = svc.pointer("/spec/selector").and_then(Value::as_object) else {
                continue;
            };
            let name = str_at(&svc, "/metadata/name").to_string();
            let pods: Vec<Value> = self
                .objects
                .iter()
                .filter(|((p, ns, _), _)| p == "pods" && ns == namespace)
                .map(|(_, v)| v)
                .filter(|pod| selects(selector, pod))
                .map(|v| Value::clone(v))
                .collect();
            let endpoints = endpoints_of(namespace, &name, &svc, &pods);
            self.put(
                &("endpoints".into(), namespace.into(), name.clone()),
                endpoints,
            );
            let slice = slice_of(namespace, &name, &svc, &pods);
            let slice_name = str_at(&slice, "/metadata/name").to_string();
            self.put(
                &("endpointslices".into(), namespace.into(), slice_name),
                slice,
            );
        }
    }
}

fn selects(selector: &Map<String, Value>, pod: &Value) -> bool {
    let labels = pod.pointer("/metadata/labels");
    selector
        .iter()
        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}

fn is_ready(pod: &Value) -> bool {
    array(pod, "/status/conditions")
        .any(|c| str_at(c, "/type") == "Ready" && str_at(c, "/status") == "True")
}

/// The Service's ports as the pod serves them: `targetPort` resolved by name through the
/// pod's container ports (or the number itself; or `port` when absent).
fn resolved_ports(svc: &Value, pod: Option<&Value>) -> Vec<Value> {
    array(svc, "/spec/ports")
        .filter_map(|p| {
            let number = match p.get("targetPort") {
                Some(Value::Number(n)) => n.as_u64(),
                Some(Value::String(name)) => pod.and_then(|pod| {
                    array(pod, "/spec/containers")
                        .flat_map(|c| array(c, "/ports"))
                        .find(|cp| str_at(cp, "/name") == name)
                        .and_then(|cp| cp.get("containerPort").and_then(Value::as_u64))
                }),
                _ => p.get("port").and_then(Value::as_u64),
            }?;
            let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            Some(json!({"name": str_at(p, "/name"), "port": number, "protocol": proto}))
        })
        .collect()
}

fn target_ref(namespace: &str, pod: &Value) -> Value {
    json!({"kind": "Pod", "namespace": namespace, "name": str_at(pod, "/metadata/name"),
           "uid": str_at(pod, "/metadata/uid")})
}

fn endpoints_of(namespace: &str, name: &str, svc: &Value, pods: &[Value]) -> Value {
    let address = |pod: &Value| {
        json!({"ip": str_at(pod, "/status/podIP"), "nodeName": str_at(pod, "/spec/nodeName"),
               "targetRef": target_ref(namespace, pod)})
    };
    let ready: Vec<Value> = pods.iter().filter(|p| is_ready(p)).map(address).collect();
    let not_ready: Vec<Value> = pods.iter().filter(|p| !is_ready(p)).map(address).collect();
    let mut subset = Map::new();
    if !ready.is_empty() {
        subset.insert("addresses".into(), json!(ready));
    }
    if !not_ready.is_empty() {
        subset.insert("notReadyAddresses".into(), json!(not_ready));
    }
    subset.insert("ports".into(), json!(resolved_ports(svc, pods.first())));
    let subsets = if pods.is_empty() {
        json!([])
    } else {
        json!([subset])
    };
    json!({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": svc.pointer("/metadata/labels").cloned().unwrap_or(json!({}))},
        "subsets": subsets,
    })
}

fn slice_of(namespace: &str, name: &str, svc: &Value, pods: &[Value]) -> Value {
    let endpoints: Vec<Value> = pods
        .iter()
        .map(|pod| {
            let ready = is_ready(pod);
            json!({
                "addresses": [str_at(pod, "/status/podIP")],
                "conditions": {"ready": ready, "serving": ready, "terminating": false},
                "nodeName": str_at(pod, "/spec/nodeName"),
                "targetRef": target_ref(namespace, pod),
            })
        })
        .collect();
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": format!("{name}-slice"), "namespace": namespace,
                     "labels": {"kubernetes.io/service-name": name,
                                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": resolved_ports(svc, pods.first()),
    })
}
