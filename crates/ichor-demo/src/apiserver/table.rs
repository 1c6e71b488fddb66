//! Server-side printing: kubectl asks for a `meta.k8s.io/v1` Table (`Accept: …;as=Table`) and
//! prints its columns, as it does for CRDs with additionalPrinterColumns.

use super::kinds::ResourceType;
use serde_json::{Value, json};

fn text(v: &Value, pointer: &str) -> String {
    match v.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// kubectl's short age: 42s, 7m, 3h, 12d.
fn age(v: &Value, now: jiff::Timestamp) -> String {
    let Some(created) = v
        .pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
    else {
        return "<unknown>".into();
    };
    let s = now.duration_since(created).as_secs().max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// How a column's cell is read from an object.
#[derive(Clone, Copy)]
enum Cell {
    /// The value at a JSON pointer, as text.
    At(&'static str),
    /// Computed, as kubectl's own printers do for the core kinds.
    Computed(fn(&Value) -> String),
}

/// The columns of a kind: (header, cell); Name first and Age last are added.
fn columns(rt: &ResourceType) -> &'static [(&'static str, Cell)] {
    use Cell::{At, Computed};
    match rt.kind {
        "TalosOperation" => &[
            ("Cluster", At("/spec/cluster")),
            ("Kind", At("/spec/kind")),
            ("Phase", At("/status/phase")),
            ("Paused", At("/spec/paused")),
        ],
        "TalosCluster" => &[
            ("Talos", At("/spec/talosVersion")),
            ("Kubernetes", At("/spec/kubernetesVersion")),
            ("Kube-Proxy", At("/spec/cni/kubeProxy")),
        ],
        "Machine" => &[
            ("Cluster", At("/spec/cluster")),
            ("Role", At("/spec/role")),
            ("Approved", At("/spec/approved")),
        ],
        "IchorInstallation" => &[("Version", At("/spec/version"))],
        "Service" => &[
            ("Type", At("/spec/type")),
            ("Cluster-IP", At("/spec/clusterIP")),
            ("External-IP", Computed(|_| "<none>".into())),
            ("Port(s)", Computed(service_ports)),
        ],
        "Endpoints" => &[("Endpoints", Computed(endpoints_addresses))],
        "EndpointSlice" => &[
            ("AddressType", At("/addressType")),
            ("Ports", Computed(slice_ports)),
            ("Endpoints", Computed(slice_addresses)),
        ],
        "Pod" => &[
            ("Ready", Computed(pod_ready)),
            ("Status", At("/status/phase")),
            ("Restarts", Computed(pod_restarts)),
        ],
        _ => &[],
    }
}

fn items<'a>(v: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `8080/TCP,9090/TCP`.
fn service_ports(v: &Value) -> String {
    let ports: Vec<String> = items(v, "/spec/ports")
        .map(|p| {
            let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            format!("{}/{proto}", text(p, "/port"))
        })
        .collect();
    or_none(ports.join(","))
}

/// `10.244.0.5:8080`: the ready addresses with each port.
fn endpoints_addresses(v: &Value) -> String {
    let mut out = Vec::new();
    for subset in items(v, "/subsets") {
        for addr in items(subset, "/addresses") {
            for port in items(subset, "/ports") {
                out.push(format!("{}:{}", text(addr, "/ip"), text(port, "/port")));
            }
        }
    }
    or_none(out.join(","))
}

fn slice_ports(v: &Value) -> String {
    let ports: Vec<String> = items(v, "/ports").map(|p| text(p, "/port")).collect();
    or_none(ports.join(","))
}

fn slice_addresses(v: &Value) -> String {
    let addrs: Vec<String> = items(v, "/endpoints")
        .flat_map(|e| items(e, "/addresses").filter_map(Value::as_str))
        .map(str::to_string)
        .collect();
    or_none(addrs.join(","))
}

/// `1/1`: ready containers of all containers.
fn pod_ready(v: &Value) -> String {
    let total = items(v, "/spec/containers").count();
    let ready = items(v, "/status/containerStatuses")
        .filter(|c| c.get("ready").and_then(Value::as_bool) == Some(true))
        .count();
    format!("{ready}/{total}")
}

fn pod_restarts(v: &Value) -> String {
    let n: i64 = items(v, "/status/containerStatuses")
        .filter_map(|c| c.get("restartCount").and_then(Value::as_i64))
        .sum();
    n.to_string()
}

fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".into() } else { s }
}

/// The Table for `items`.
pub(crate) fn table(
    rt: &ResourceType,
    items: &[&Value],
    resource_version: &str,
    now: jiff::Timestamp,
) -> Value {
    let cols = columns(rt);
    let mut defs = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "name", "priority": 0}),
    ];
    defs.extend(cols.iter().map(|(h, _)| json!({"name": h, "type": "string", "format": "", "description": h, "priority": 0})));
    defs.push(
        json!({"name": "Age", "type": "string", "format": "", "description": "age", "priority": 0}),
    );
    let rows: Vec<Value> = items
        .iter()
        .map(|item| {
            let mut cells = vec![json!(text(item, "/metadata/name"))];
            cells.extend(cols.iter().map(|(_, cell)| match cell {
                Cell::At(p) => json!(text(item, p)),
                Cell::Computed(f) => json!(f(item)),
            }));
            cells.push(json!(age(item, now)));
            json!({
                "cells": cells,
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": item.get("metadata").cloned().unwrap_or(Value::Null),
                }
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": defs,
        "rows": rows,
    })
}

/// Whether the request asks for a Table.
pub(crate) fn wants_table(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',')
            .next()
            .is_some_and(|first| first.contains("as=Table"))
    })
}
