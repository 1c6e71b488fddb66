//! Field selectors, as `?fieldSelector=` sends them: `metadata.name=a,involvedObject.kind!=Pod`
//! (`=`, `==` and `!=`; `\,` `\=` and `\\` escape). Each kind answers for a few fields, as
//! kube-apiserver's do: `metadata.name` and `metadata.namespace` for every kind; Events their
//! involved object, reason, source, type and reporting component (`kubectl describe` and
//! `kubectl get events --field-selector` name them); Pods their node, phase and IP. Any other
//! field is refused, as the apiserver refuses it.

use super::kinds::ResourceType;
use serde_json::Value;

/// The fields of every kind: (field, JSON pointer).
const COMMON: &[(&str, &str)] = &[
    ("metadata.name", "/metadata/name"),
    ("metadata.namespace", "/metadata/namespace"),
];

/// The fields of core Events (kube-apiserver's `EventToSelectableFields`).
const EVENT: &[(&str, &str)] = &[
    ("involvedObject.kind", "/involvedObject/kind"),
    ("involvedObject.namespace", "/involvedObject/namespace"),
    ("involvedObject.name", "/involvedObject/name"),
    ("involvedObject.uid", "/involvedObject/uid"),
    ("involvedObject.apiVersion", "/involvedObject/apiVersion"),
    (
        "involvedObject.resourceVersion",
        "/involvedObject/resourceVersion",
    ),
    ("involvedObject.fieldPath", "/involvedObject/fieldPath"),
    ("reason", "/reason"),
    ("reportingComponent", "/reportingComponent"),
    ("source", "/source/component"),
    ("type", "/type"),
];

/// The names `events.k8s.io/v1` gives the same fields.
const EVENT_V1_NAMES: &[(&str, &str)] = &[
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource.component", "source"),
];

const POD: &[(&str, &str)] = &[
    ("spec.nodeName", "/spec/nodeName"),
    ("spec.serviceAccountName", "/spec/serviceAccountName"),
    ("status.phase", "/status/phase"),
    ("status.podIP", "/status/podIP"),
];

/// The fields of the objects stored under `plural`, besides the common ones.
fn kind_fields(plural: &str) -> &'static [(&'static str, &'static str)] {
    match plural {
        "events" => EVENT,
        "pods" => POD,
        _ => &[],
    }
}

/// An object's selectable fields and their values (empty when absent), kept apart from it
/// as the watch history keeps them with each change.
pub(crate) type Fields = Vec<(&'static str, String)>;

/// The selectable fields of `obj`, stored under `plural`.
pub(crate) fn fields_of(plural: &str, obj: &Value) -> Fields {
    COMMON
        .iter()
        .chain(kind_fields(plural))
        .map(|(field, pointer)| {
            let value = obj.pointer(pointer).and_then(Value::as_str).unwrap_or("");
            (*field, value.to_string())
        })
        .collect()
}

/// The stored name of `field` as `rt` names it, if `rt` answers for it.
fn canonical(rt: &ResourceType, field: &str) -> Option<&'static str> {
    let field = if rt.group == "events.k8s.io" {
        EVENT_V1_NAMES
            .iter()
            .find(|(v1, _)| *v1 == field)
            .map_or(field, |(_, core)| *core)
    } else {
        field
    };
    COMMON
        .iter()
        .chain(kind_fields(rt.plural))
        .map(|(f, _)| *f)
        .find(|f| *f == field)
}

/// One requirement: the field, whether it must equal (or differ from) the value, the value.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Requirement {
    field: &'static str,
    equals: bool,
    value: String,
}

/// A parsed field selector: every requirement must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector(Vec<Requirement>);

/// `s` split at the unescaped `sep`s, escapes kept.
fn split_unescaped(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            c if c == sep && !escaped => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => escaped = false,
        }
    }
    parts.push(&s[start..]);
    parts
}

/// A value with its escapes removed.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

impl FieldSelector {
    /// Parses a selector for `rt`; `Err` carries the reason, as the apiserver words it.
    pub(crate) fn parse(rt: &ResourceType, s: &str) -> Result<FieldSelector, String> {
        let mut reqs = Vec::new();
        for term in split_unescaped(s, ',') {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            let (name, equals, value) = match split_unescaped(term, '=').as_slice() {
                [name, value] => match name.strip_suffix('!') {
                    Some(name) => (name, false, *value),
                    None => (*name, true, *value),
                },
                [name, "", value] => (*name, true, *value),
                _ => return Err(format!("invalid selector: {term:?}; can't understand it")),
            };
            let name = name.trim();
            let field =
                canonical(rt, name).ok_or_else(|| format!("field label not supported: {name}"))?;
            reqs.push(Requirement {
                field,
                equals,
                value: unescape(value.trim()),
            });
        }
        Ok(FieldSelector(reqs))
    }

    /// Whether it selects nothing out.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether fields kept apart from their object (see [`fields_of`]) satisfy it.
    pub(crate) fn matches(&self, fields: &Fields) -> bool {
        self.0.iter().all(|r| {
            let have = fields
                .iter()
                .find(|(f, _)| *f == r.field)
                .map_or("", |(_, v)| v.as_str());
            (have == r.value) == r.equals
        })
    }

    /// Whether `obj`, stored under `plural`, satisfies it.
    pub(crate) fn matches_object(&self, plural: &str, obj: &Value) -> bool {
        self.is_empty() || self.matches(&fields_of(plural, obj))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::kinds::{EVENTS, EVENTS_V1, RESOURCES};
    use serde_json::json;

    #[test]
    fn event_fields_as_kubectl_describe_sends_them() {
        let ev = json!({
            "metadata": {"name": "op.1", "namespace": "default"},
            "involvedObject": {"kind": "TalosOperation", "name": "op", "namespace": "default",
                               "uid": "u-1"},
            "reason": "Started", "type": "Normal", "source": {"component": "ichor-controller"}
        });
        let fields = fields_of("events", &ev);
        let sel = |s: &str| FieldSelector::parse(&EVENTS, s).map(|f| f.matches(&fields));
        assert_eq!(
            sel(
                "involvedObject.name=op,involvedObject.namespace=default,involvedObject.kind=TalosOperation,involvedObject.uid=u-1"
            ),
            Ok(true)
        );
        assert_eq!(sel("involvedObject.name==other"), Ok(false));
        assert_eq!(sel("type!=Warning,source=ichor-controller"), Ok(true));
        assert_eq!(
            sel("involvedObject.fieldPath="),
            Ok(true),
            "absent is empty"
        );
        assert_eq!(sel(""), Ok(true));
        assert_eq!(
            sel("spec.x=1"),
            Err("field label not supported: spec.x".to_string())
        );
        // events.k8s.io names the same fields its own way.
        let v1 = FieldSelector::parse(&EVENTS_V1, "regarding.name=op,reportingController=x");
        assert_eq!(v1.map(|f| f.matches(&fields)), Ok(false));
        assert!(FieldSelector::parse(&EVENTS, "regarding.name=op").is_err());
    }

    #[test]
    fn escapes_and_other_kinds() {
        let obj = json!({"metadata": {"name": "a,b=c", "namespace": "ns"}});
        let machines = RESOURCES[1];
        let f = FieldSelector::parse(&machines, r"metadata.name=a\,b\=c").unwrap();
        assert!(f.matches_object("machines", &obj));
        assert!(FieldSelector::parse(&machines, "involvedObject.name=x").is_err());
        assert!(FieldSelector::parse(&machines, "metadata.name").is_err());
    }
}
