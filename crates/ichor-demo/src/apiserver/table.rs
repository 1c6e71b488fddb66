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

/// The columns of a kind: (header, JSON pointer); Name first and Age last are added.
fn columns(rt: &ResourceType) -> &'static [(&'static str, &'static str)] {
    match rt.kind {
        "TalosOperation" => &[
            ("Cluster", "/spec/cluster"),
            ("Kind", "/spec/kind"),
            ("Phase", "/status/phase"),
            ("Paused", "/spec/paused"),
        ],
        "TalosCluster" => &[
            ("Talos", "/spec/talosVersion"),
            ("Kubernetes", "/spec/kubernetesVersion"),
            ("Kube-Proxy", "/spec/cni/kubeProxy"),
        ],
        "Machine" => &[
            ("Cluster", "/spec/cluster"),
            ("Role", "/spec/role"),
            ("Approved", "/spec/approved"),
        ],
        "IchorInstallation" => &[("Version", "/spec/version")],
        _ => &[],
    }
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
            cells.extend(cols.iter().map(|(_, p)| json!(text(item, p))));
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
