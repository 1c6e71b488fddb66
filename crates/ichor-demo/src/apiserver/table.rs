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

/// kubectl's short age of the time at `pointer`: 42s, 7m, 3h, 12d.
fn age_at(v: &Value, pointer: &str, now: jiff::Timestamp) -> Option<String> {
    let then = v
        .pointer(pointer)
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())?;
    let s = now.duration_since(then).as_secs().max(0);
    Some(match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    })
}

fn age(v: &Value, now: jiff::Timestamp) -> String {
    age_at(v, "/metadata/creationTimestamp", now).unwrap_or_else(|| "<unknown>".into())
}

/// How a column's cell is read from an object.
#[derive(Clone, Copy)]
enum Cell {
    /// The value at a JSON pointer, as text.
    At(&'static str),
    /// Computed, as kubectl's own printers do for the core kinds.
    Computed(fn(&Value) -> String),
    /// Computed from the object and the time now (ages).
    Timed(fn(&Value, jiff::Timestamp) -> String),
}

/// One column: its header, its cell, and its priority (0 always shown, 1 with `-o wide`).
#[derive(Clone, Copy)]
struct Column {
    header: &'static str,
    cell: Cell,
    priority: u8,
}

const fn col(header: &'static str, cell: Cell) -> Column {
    Column {
        header,
        cell,
        priority: 0,
    }
}

const fn wide(header: &'static str, cell: Cell) -> Column {
    Column {
        header,
        cell,
        priority: 1,
    }
}

const NAME: Column = col("Name", Cell::At("/metadata/name"));
const AGE: Column = col("Age", Cell::Timed(age));

const OPERATION_COLUMNS: &[Column] = &[
    NAME,
    col("Cluster", Cell::At("/spec/cluster")),
    col("Kind", Cell::At("/spec/kind")),
    col("Phase", Cell::At("/status/phase")),
    col("Paused", Cell::At("/spec/paused")),
    AGE,
    wide("Max-Unavailable", Cell::At("/spec/maxUnavailable")),
    wide("Started", Cell::At("/status/startedAt")),
    wide("Failure", Cell::At("/status/failureReason")),
];

const CLUSTER_COLUMNS: &[Column] = &[
    NAME,
    col("Talos", Cell::At("/spec/talosVersion")),
    col("Kubernetes", Cell::At("/spec/kubernetesVersion")),
    col("Kube-Proxy", Cell::At("/spec/cni/kubeProxy")),
    AGE,
    wide("Lock-Holder", Cell::At("/status/lockHolder")),
];

const MACHINE_COLUMNS: &[Column] = &[
    NAME,
    col("Cluster", Cell::At("/spec/cluster")),
    col("Role", Cell::At("/spec/role")),
    col("Approved", Cell::At("/spec/approved")),
    AGE,
    wide(
        "Upgrade-Order",
        Cell::At("/metadata/labels/ichor.maesh.dev~1upgrade-order"),
    ),
];

const INSTALLATION_COLUMNS: &[Column] = &[NAME, col("Version", Cell::At("/spec/version")), AGE];

const SERVICE_COLUMNS: &[Column] = &[
    NAME,
    col("Type", Cell::At("/spec/type")),
    col("Cluster-IP", Cell::At("/spec/clusterIP")),
    col("External-IP", Cell::Computed(no_external_ip)),
    col("Port(s)", Cell::Computed(service_ports)),
    AGE,
    wide("Selector", Cell::Computed(service_selector)),
];

const ENDPOINTS_COLUMNS: &[Column] = &[
    NAME,
    col("Endpoints", Cell::Computed(endpoints_addresses)),
    AGE,
];

const SLICE_COLUMNS: &[Column] = &[
    NAME,
    col("AddressType", Cell::At("/addressType")),
    col("Ports", Cell::Computed(slice_ports)),
    col("Endpoints", Cell::Computed(slice_addresses)),
    AGE,
];

const POD_COLUMNS: &[Column] = &[
    NAME,
    col("Ready", Cell::Computed(pod_ready)),
    col("Status", Cell::At("/status/phase")),
    col("Restarts", Cell::Computed(pod_restarts)),
    AGE,
    wide("IP", Cell::At("/status/podIP")),
    wide("Node", Cell::At("/spec/nodeName")),
];

const NAMESPACE_COLUMNS: &[Column] = &[NAME, col("Status", Cell::At("/status/phase")), AGE];

/// kube-apiserver's CustomResourceDefinition columns.
const CRD_COLUMNS: &[Column] = &[
    NAME,
    col("Created At", Cell::At("/metadata/creationTimestamp")),
];

/// kube-apiserver's Node columns (no Node is ever listed: the demo has none).
const NODE_COLUMNS: &[Column] = &[
    NAME,
    col("Status", Cell::At("/status/phase")),
    col(
        "Roles",
        Cell::At("/metadata/labels/node-role.kubernetes.io~1control-plane"),
    ),
    AGE,
    col("Version", Cell::At("/status/nodeInfo/kubeletVersion")),
    wide("OS-Image", Cell::At("/status/nodeInfo/osImage")),
];

/// The columns of a kind, as kube-apiserver prints them (Events) or as the CRDs'
/// additionalPrinterColumns would (Name first, Age last).
fn columns(rt: &ResourceType) -> &'static [Column] {
    match rt.kind {
        "TalosOperation" => OPERATION_COLUMNS,
        "TalosCluster" => CLUSTER_COLUMNS,
        "Machine" => MACHINE_COLUMNS,
        "IchorInstallation" => INSTALLATION_COLUMNS,
        "Service" => SERVICE_COLUMNS,
        "Endpoints" => ENDPOINTS_COLUMNS,
        "EndpointSlice" => SLICE_COLUMNS,
        "Pod" => POD_COLUMNS,
        "Event" => EVENT_COLUMNS,
        "Namespace" => NAMESPACE_COLUMNS,
        "Node" => NODE_COLUMNS,
        "CustomResourceDefinition" => CRD_COLUMNS,
        _ => &[NAME, AGE],
    }
}

fn no_external_ip(_: &Value) -> String {
    "<none>".into()
}

/// kube-apiserver's columns for Events.
const EVENT_COLUMNS: &[Column] = &[
    col("Last Seen", Cell::Timed(event_last_seen)),
    col("Type", Cell::At("/type")),
    col("Reason", Cell::At("/reason")),
    col("Object", Cell::Computed(event_object)),
    wide("Subobject", Cell::At("/involvedObject/fieldPath")),
    wide("Source", Cell::At("/source/component")),
    col("Message", Cell::At("/message")),
    wide("First Seen", Cell::Timed(event_first_seen)),
    wide("Count", Cell::At("/count")),
    wide("Name", Cell::At("/metadata/name")),
];

/// When an Event was last seen: its lastTimestamp (or eventTime, or creation), with the
/// count and first time when it repeated: `12s (x3 over 2m)`.
fn event_last_seen(v: &Value, now: jiff::Timestamp) -> String {
    let last = [
        "/lastTimestamp",
        "/eventTime",
        "/metadata/creationTimestamp",
    ]
    .iter()
    .find_map(|p| age_at(v, p, now))
    .unwrap_or_else(|| "<unknown>".into());
    match v.get("count").and_then(Value::as_i64) {
        Some(n) if n > 1 => format!("{last} (x{n} over {})", event_first_seen(v, now)),
        _ => last,
    }
}

fn event_first_seen(v: &Value, now: jiff::Timestamp) -> String {
    [
        "/firstTimestamp",
        "/eventTime",
        "/metadata/creationTimestamp",
    ]
    .iter()
    .find_map(|p| age_at(v, p, now))
    .unwrap_or_else(|| "<unknown>".into())
}

/// `talosoperation/staging-talos-x7k2p`: the involved object's kind (lowercase) and name.
fn event_object(v: &Value) -> String {
    format!(
        "{}/{}",
        text(v, "/involvedObject/kind").to_lowercase(),
        text(v, "/involvedObject/name")
    )
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

/// `app=ichor-ui`: the selector's labels.
fn service_selector(v: &Value) -> String {
    let pairs: Vec<String> = v
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    or_none(pairs.join(","))
}

fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".into() } else { s }
}

/// What a row carries of its object (`?includeObject=`): nothing, its metadata (the
/// default), or all of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Include {
    None,
    #[default]
    Metadata,
    Object,
}

impl Include {
    /// The `includeObject` parameter; `Err` for a value the apiserver does not know.
    pub(crate) fn parse(v: Option<&str>) -> Result<Include, String> {
        match v {
            None | Some("") | Some("Metadata") => Ok(Include::Metadata),
            Some("None") => Ok(Include::None),
            Some("Object") => Ok(Include::Object),
            Some(other) => Err(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
            )),
        }
    }
}

/// The column definitions of a kind's Table.
fn column_definitions(rt: &ResourceType) -> Vec<Value> {
    columns(rt)
        .iter()
        .map(|c| {
            let format = if c.header == "Name" && c.priority == 0 {
                "name"
            } else {
                ""
            };
            json!({"name": c.header, "type": "string", "format": format,
                   "description": c.header, "priority": c.priority})
        })
        .collect()
}

/// A custom kind's columns as its CustomResourceDefinition's `additionalPrinterColumns` (the
/// name is every Table's first column, not one of them): a JSON path for each value read
/// from the object, the age as the creation time (`date`, which kubectl prints as an age).
pub(crate) fn printer_columns(rt: &ResourceType) -> Vec<Value> {
    columns(rt)
        .iter()
        .filter(|c| c.header != "Name")
        .filter_map(|c| {
            let (path, type_) = match c.cell {
                Cell::At(p) => (json_path(p), "string"),
                Cell::Timed(_) if c.header == "Age" => {
                    (".metadata.creationTimestamp".to_string(), "date")
                }
                _ => return None,
            };
            Some(json!({"name": c.header, "type": type_, "jsonPath": path, "priority": c.priority}))
        })
        .collect()
}

/// A JSON pointer as a CRD column's JSON path: `/metadata/labels/a.b~1c` is
/// `.metadata.labels.a\.b/c`.
fn json_path(pointer: &str) -> String {
    pointer
        .split('/')
        .skip(1)
        .map(|part| {
            let part = part.replace("~1", "/").replace("~0", "~");
            format!(".{}", part.replace('.', "\\."))
        })
        .collect()
}

/// One row: the cells, and the object as `include` asks.
fn row(rt: &ResourceType, item: &Value, now: jiff::Timestamp, include: Include) -> Value {
    let cells: Vec<Value> = columns(rt)
        .iter()
        .map(|c| match c.cell {
            Cell::At(p) => json!(text(item, p)),
            Cell::Computed(f) => json!(f(item)),
            Cell::Timed(f) => json!(f(item, now)),
        })
        .collect();
    let object = match include {
        Include::None => Value::Null,
        Include::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": item.get("metadata").cloned().unwrap_or(Value::Null),
        }),
        Include::Object => item.clone(),
    };
    json!({"cells": cells, "object": object})
}

/// The Table for `items`.
pub(crate) fn table(
    rt: &ResourceType,
    items: &[&Value],
    resource_version: &str,
    now: jiff::Timestamp,
    include: Include,
) -> Value {
    let rows: Vec<Value> = items.iter().map(|i| row(rt, i, now, include)).collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": column_definitions(rt),
        "rows": rows,
    })
}

/// The Table of one watch event: one row (none for a bookmark), the column definitions only
/// when `with_columns` (the first event), as kube-apiserver sends them to kubectl's `get -w`.
pub(crate) fn watch_table(
    rt: &ResourceType,
    item: Option<&Value>,
    resource_version: &str,
    now: jiff::Timestamp,
    include: Include,
    with_columns: bool,
) -> Value {
    let columns = if with_columns {
        json!(column_definitions(rt))
    } else {
        Value::Null
    };
    let rows: Vec<Value> = item.map(|i| row(rt, i, now, include)).into_iter().collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": columns,
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
