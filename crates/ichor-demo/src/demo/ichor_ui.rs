//! ichor-ui in the demo cluster: the Service `ichor-ui` in `ichor-system`, one pod behind it
//! and their Endpoints, so that a client finds ichor-ui and port-forwards to it as in a real
//! cluster. The pod's `api` port (8080) forwards to a TCP address the demo is given
//! ([`forward_to`]): the product runs its own OperationService there; without one a
//! port-forward is refused as by a port nothing listens on.
//!
//! For the dashboard's "ichor-ui restarted / not ready / gone" paths: [`restart`], [`set_ready`]
//! and [`remove`]; [`start`] brings it back.

use crate::apiserver::EmbeddedApi;
use serde_json::json;
use std::net::SocketAddr;

/// The namespace ichor-ui runs in.
pub const NAMESPACE: &str = "ichor-system";
/// Its Service.
pub const SERVICE: &str = "ichor-ui";
/// The name of its API port, on the Service and the container.
pub const PORT_NAME: &str = "api";
/// The container's API port (also the Service's port).
pub const CONTAINER_PORT: u16 = 8080;
/// The label that the Service selects its pods by.
pub const APP_LABEL: (&str, &str) = ("app.kubernetes.io/name", "ichor-ui");

/// The ReplicaSet part of pod names: `ichor-ui-<hash>-<suffix>`.
const POD_PREFIX: &str = "ichor-ui-6d4cf8b7d9";

/// Seeds the Service and a running, ready pod (no forward target yet).
pub fn seed(api: &EmbeddedApi) -> anyhow::Result<()> {
    let (k, v) = APP_LABEL;
    api.store_service(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": NAMESPACE, "labels": {k: v}},
        "spec": {
            "type": "ClusterIP", "clusterIP": "10.96.118.27", "clusterIPs": ["10.96.118.27"],
            "selector": {k: v}, "sessionAffinity": "None",
            "ports": [{"name": PORT_NAME, "port": CONTAINER_PORT, "targetPort": PORT_NAME,
                       "protocol": "TCP"}]
        }
    }))?;
    start_pod(api)?;
    Ok(())
}

fn start_pod(api: &EmbeddedApi) -> anyhow::Result<String> {
    let (k, v) = APP_LABEL;
    let suffix: String = (0..5)
        .map(|_| {
            let chars = b"bcdfghjklmnpqrstvwxz2456789";
            chars[fastrand::usize(..chars.len())] as char
        })
        .collect();
    api.start_pod(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{POD_PREFIX}-{suffix}"), "namespace": NAMESPACE,
            "labels": {k: v, "pod-template-hash": "6d4cf8b7d9"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": POD_PREFIX, "uid": "00000000-0000-0000-0000-0000000000aa",
                                 "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "nodeName": "ichor-demo",
            "serviceAccountName": "ichor-ui",
            "containers": [{
                "name": "ichor-ui", "image": "ghcr.io/maesh/ichor-ui:v0.14.2",
                "ports": [{"name": PORT_NAME, "containerPort": CONTAINER_PORT, "protocol": "TCP"}]
            }]
        }
    }))
}

/// The current ichor-ui pod's name, if it has one.
pub fn pod(api: &EmbeddedApi) -> Option<String> {
    api.pods_with_labels(NAMESPACE, &[APP_LABEL])
        .into_iter()
        .next()
}

/// Port-forwards to ichor-ui's pod reach `target` (port [`CONTAINER_PORT`]); a restart keeps
/// it. Returns the pod's name; an error when there is no pod ([`start`] makes one).
pub fn forward_to(api: &EmbeddedApi, target: SocketAddr) -> anyhow::Result<String> {
    let Some(name) = pod(api) else {
        anyhow::bail!("ichor-ui has no pod in {NAMESPACE}");
    };
    api.set_forward(NAMESPACE, &name, CONTAINER_PORT, target);
    Ok(name)
}

/// Makes sure ichor-ui has a pod (a new one if it was removed), forwarding to `target` if
/// given. Returns the pod's name.
pub fn start(api: &EmbeddedApi, target: Option<SocketAddr>) -> anyhow::Result<String> {
    let name = match pod(api) {
        Some(name) => name,
        None => start_pod(api)?,
    };
    if let Some(target) = target {
        api.set_forward(NAMESPACE, &name, CONTAINER_PORT, target);
    }
    Ok(name)
}

/// Replaces ichor-ui's pod by a new one of a new name (see [`EmbeddedApi::restart_pod`]):
/// open port-forwards to the old one end, the forward target moves on. Returns the new name,
/// `None` when there was no pod.
pub fn restart(api: &EmbeddedApi) -> Option<String> {
    let old = pod(api)?;
    api.restart_pod(NAMESPACE, &old)
}

/// Marks ichor-ui's pod ready or not (see [`EmbeddedApi::set_pod_ready`]). Returns whether
/// there was a pod.
pub fn set_ready(api: &EmbeddedApi, ready: bool) -> bool {
    pod(api).is_some_and(|p| api.set_pod_ready(NAMESPACE, &p, ready))
}

/// Removes ichor-ui's pod (see [`EmbeddedApi::remove_pod`]): the Service stays, with no
/// endpoints. Returns whether there was a pod.
pub fn remove(api: &EmbeddedApi) -> bool {
    pod(api).is_some_and(|p| api.remove_pod(NAMESPACE, &p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
    use k8s_openapi::api::discovery::v1::EndpointSlice;

    fn get<K: serde::de::DeserializeOwned>(api: &EmbeddedApi, plural: &str, name: &str) -> K {
        let v = api
            .stored(plural, NAMESPACE, name)
            .unwrap_or_else(|| panic!("no {plural}/{name}"));
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{plural}/{name}: {e}"))
    }

    /// The seeded objects decode as the core kinds, and the Endpoints follow the pod through
    /// not ready, restart and removal.
    #[test]
    fn seeded_objects_and_their_endpoints() {
        let api = EmbeddedApi::default();
        seed(&api).expect("seeds");
        let svc: Service = get(&api, "services", SERVICE);
        assert!(
            api.stored("namespaces", "", NAMESPACE).is_some(),
            "its namespace exists"
        );
        let port = &svc.spec.and_then(|s| s.ports).unwrap_or_default()[0];
        assert_eq!(port.name.as_deref(), Some(PORT_NAME));
        let name = pod(&api).expect("a pod");
        assert!(name.starts_with("ichor-ui-"), "{name}");
        let p: Pod = get(&api, "pods", &name);
        let status = p.status.expect("status");
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(
            status
                .conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        );
        let ep: Endpoints = get(&api, "endpoints", SERVICE);
        let subset = &ep.subsets.unwrap_or_default()[0];
        let addr = &subset.addresses.clone().unwrap_or_default()[0];
        assert_eq!(
            addr.target_ref.as_ref().and_then(|r| r.name.as_deref()),
            Some(name.as_str())
        );
        assert_eq!(subset.ports.clone().unwrap_or_default()[0].port, 8080);
        let _slice: EndpointSlice = get(&api, "endpointslices", "ichor-ui-slice");

        assert!(set_ready(&api, false));
        let ep: Endpoints = get(&api, "endpoints", SERVICE);
        let subset = &ep.subsets.unwrap_or_default()[0];
        assert!(subset.addresses.is_none());
        assert_eq!(
            subset.not_ready_addresses.clone().unwrap_or_default().len(),
            1
        );

        let new = restart(&api).expect("restarted");
        assert_ne!(new, name);
        assert!(api.stored("pods", NAMESPACE, &name).is_none());
        let ep: Endpoints = get(&api, "endpoints", SERVICE);
        let addr = &ep.subsets.unwrap_or_default()[0]
            .addresses
            .clone()
            .unwrap_or_default()[0];
        assert_eq!(
            addr.target_ref.as_ref().and_then(|r| r.name.as_deref()),
            Some(new.as_str()),
            "the new pod is ready"
        );

        assert!(remove(&api));
        assert_eq!(pod(&api), None);
        let ep: Endpoints = get(&api, "endpoints", SERVICE);
        assert!(ep.subsets.unwrap_or_default().is_empty());
        assert!(!remove(&api));
        let back = start(&api, None).expect("started");
        assert_eq!(pod(&api), Some(back));
    }
}
