//! Events: stored once as core `v1` Events (what the controller records, as client-go's
//! recorder does), and shown under `events.k8s.io/v1` converted as kube-apiserver converts
//! them: `involvedObject` is `regarding`, `message` is `note`, a repeated event has a `series`,
//! and the core-only fields become `deprecated…`.

use serde_json::{Map, Value, json};

/// A core timestamp (`2026-11-29T10:00:00Z`) as a MicroTime (`…T10:00:00.000000Z`).
fn micro(v: &Value) -> Value {
    match v.as_str().and_then(|s| s.parse::<jiff::Timestamp>().ok()) {
        Some(t) => json!(t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()),
        None => Value::Null,
    }
}

/// The `events.k8s.io/v1` form of a core Event.
pub(crate) fn to_events_v1(core: &Value) -> Value {
    let get = |k: &str| core.get(k).cloned().unwrap_or(Value::Null);
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!("events.k8s.io/v1"));
    out.insert("kind".into(), json!("Event"));
    out.insert("metadata".into(), get("metadata"));
    let event_time = match core.get("eventTime") {
        Some(t) if !t.is_null() => t.clone(),
        _ => micro(&get("firstTimestamp")),
    };
    out.insert("eventTime".into(), event_time);
    let count = core.get("count").and_then(Value::as_i64).unwrap_or(1);
    if let Some(series) = core.get("series").filter(|s| !s.is_null()) {
        out.insert("series".into(), series.clone());
    } else if count > 1 {
        out.insert(
            "series".into(),
            json!({"count": count, "lastObservedTime": micro(&get("lastTimestamp"))}),
        );
    }
    let renamed = [
        ("involvedObject", "regarding"),
        ("message", "note"),
        ("reportingComponent", "reportingController"),
        ("reportingInstance", "reportingInstance"),
        ("related", "related"),
        ("action", "action"),
        ("reason", "reason"),
        ("type", "type"),
        ("source", "deprecatedSource"),
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("count", "deprecatedCount"),
    ];
    for (from, to) in renamed {
        if let Some(v) = core.get(from).filter(|v| !v.is_null()) {
            out.insert(to.into(), v.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_core_event_has_a_series() {
        let core = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "op.17", "namespace": "default"},
            "involvedObject": {"kind": "TalosOperation", "name": "op"},
            "reason": "Paused", "message": "paused", "type": "Normal", "count": 3,
            "firstTimestamp": "2026-11-29T10:00:00Z", "lastTimestamp": "2026-11-29T10:05:00Z",
            "source": {"component": "ichor-controller"}, "reportingComponent": "ichor-controller",
            "action": "Pause"
        });
        let v1 = to_events_v1(&core);
        assert_eq!(v1["apiVersion"], "events.k8s.io/v1");
        assert_eq!(v1["regarding"]["name"], "op");
        assert_eq!(v1["note"], "paused");
        assert_eq!(v1["eventTime"], "2026-11-29T10:00:00.000000Z");
        assert_eq!(
            v1["series"],
            json!({"count": 3, "lastObservedTime": "2026-11-29T10:05:00.000000Z"})
        );
        assert_eq!(v1["reportingController"], "ichor-controller");
        assert_eq!(v1["deprecatedCount"], 3);
        assert!(v1.get("message").is_none() && v1.get("involvedObject").is_none());
        let once = to_events_v1(&json!({"count": 1, "firstTimestamp": "2026-11-29T10:00:00Z"}));
        assert!(once.get("series").is_none());
    }
}
