//! Sets of fields, as structured-merge-diff keeps them and `FieldsV1` writes them: a tree of
//! path elements (`f:name` a field, `k:{"uid":"…"}` an item of a list keyed by its fields,
//! `v:"…"` an item of a set, `.` the node itself), and what the server computes from objects:
//! the fields an applied configuration sets, and what changed between two objects.
//!
//! Lists are atomic (replaced whole, owned as one field) unless named in [`list_kind`], as
//! for custom resources whose schema marks no `x-kubernetes-list-type`; the metadata's
//! `finalizers` are a set and its `ownerReferences` a list keyed by `uid`, as ObjectMeta
//! declares them.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// A set of fields: whether this node is a member, and the members below it by path element.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSet {
    me: bool,
    children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    /// The set holding this node only.
    fn leaf() -> FieldSet {
        FieldSet {
            me: true,
            children: BTreeMap::new(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        !self.me && self.children.is_empty()
    }

    fn insert(&mut self, element: String, set: FieldSet) {
        if !set.is_empty() {
            self.children.entry(element).or_default().union_with(&set);
        }
    }

    /// Every member of `other` added.
    pub(crate) fn union_with(&mut self, other: &FieldSet) {
        self.me |= other.me;
        for (k, v) in &other.children {
            self.children.entry(k.clone()).or_default().union_with(v);
        }
    }

    pub(crate) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.union_with(other);
        out
    }

    /// The members not in `other`.
    pub(crate) fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut children = BTreeMap::new();
        for (k, v) in &self.children {
            let rest = match other.children.get(k) {
                Some(o) => v.difference(o),
                None => v.clone(),
            };
            if !rest.is_empty() {
                children.insert(k.clone(), rest);
            }
        }
        FieldSet {
            me: self.me && !other.me,
            children,
        }
    }

    /// The members in both.
    pub(crate) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut children = BTreeMap::new();
        for (k, v) in &self.children {
            if let Some(o) = other.children.get(k) {
                let both = v.intersection(o);
                if !both.is_empty() {
                    children.insert(k.clone(), both);
                }
            }
        }
        FieldSet {
            me: self.me && other.me,
            children,
        }
    }

    /// The set below `element`, if any.
    pub(crate) fn child(&self, element: &str) -> Option<&FieldSet> {
        self.children.get(element)
    }

    /// Whether this node is a member.
    pub(crate) fn is_member(&self) -> bool {
        self.me
    }

    /// The elements below this node and their sets.
    pub(crate) fn children(&self) -> impl Iterator<Item = (&String, &FieldSet)> {
        self.children.iter()
    }

    /// The node `element` no longer a member itself (its members below stay).
    pub(crate) fn unmark(&mut self, element: &str) {
        if let Some(c) = self.children.get_mut(element) {
            c.me = false;
            if c.is_empty() {
                self.children.remove(element);
            }
        }
    }

    /// Only the members below `element` (`f:status`), or none.
    pub(crate) fn only(&self, element: &str) -> FieldSet {
        let mut out = FieldSet::default();
        if let Some(c) = self.children.get(element) {
            out.children.insert(element.to_string(), c.clone());
        }
        out
    }

    /// Every member below `element` left out.
    pub(crate) fn without(&self, element: &str) -> FieldSet {
        let mut out = self.clone();
        out.children.remove(element);
        out
    }

    /// The members, each as kube-apiserver writes a path in a conflict
    /// (`.spec.maxUnavailable`, `.metadata.finalizers[="x"]`, `.metadata.ownerReferences[uid="1"]`).
    pub(crate) fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_paths(String::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: String, out: &mut Vec<String>) {
        if self.me {
            out.push(prefix.clone());
        }
        for (k, v) in &self.children {
            v.collect_paths(format!("{prefix}{}", element_text(k)), out);
        }
    }

    /// The set as `FieldsV1` writes it.
    pub(crate) fn to_fields_v1(&self) -> Value {
        let mut m = Map::new();
        if self.me && !self.children.is_empty() {
            m.insert(".".into(), json!({}));
        }
        for (k, v) in &self.children {
            m.insert(k.clone(), v.to_fields_v1());
        }
        Value::Object(m)
    }

    /// The set a `FieldsV1` value writes (what is not an object names nothing).
    pub(crate) fn from_fields_v1(v: &Value) -> FieldSet {
        let Some(m) = v.as_object() else {
            return FieldSet::default();
        };
        let mut out = FieldSet {
            me: m.is_empty() || m.contains_key("."),
            children: BTreeMap::new(),
        };
        for (k, v) in m.iter().filter(|(k, _)| k.as_str() != ".") {
            let child = FieldSet::from_fields_v1(v);
            if !child.is_empty() {
                out.children.insert(k.clone(), child);
            }
        }
        out
    }
}

/// A path element as a conflict's path writes it.
fn element_text(e: &str) -> String {
    if let Some(name) = e.strip_prefix("f:") {
        return format!(".{name}");
    }
    if let Some(v) = e.strip_prefix("v:") {
        return format!("[={v}]");
    }
    if let Some(i) = e.strip_prefix("i:") {
        return format!("[{i}]");
    }
    if let Some(keys) = e.strip_prefix("k:") {
        let fields: Vec<String> = serde_json::from_str::<Map<String, Value>>(keys)
            .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
            .unwrap_or_default();
        return format!("[{}]", fields.join(","));
    }
    e.to_string()
}

/// How a list is merged and owned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// Replaced whole; one field.
    Atomic,
    /// A set of scalars: each item its own field (`v:`).
    Set,
    /// Items keyed by the named field (`k:`).
    Map(&'static str),
}

/// The kind of the list at the field path `fields` (the field names from the root).
pub(crate) fn list_kind(fields: &[&str]) -> ListKind {
    match fields {
        ["metadata", "finalizers"] => ListKind::Set,
        ["metadata", "ownerReferences"] => ListKind::Map("uid"),
        _ => ListKind::Atomic,
    }
}

/// The path element of an item of a set or keyed list (`None` for an item without its key).
pub(crate) fn item_element(kind: ListKind, item: &Value) -> Option<String> {
    match kind {
        ListKind::Atomic => None,
        ListKind::Set => Some(format!("v:{item}")),
        ListKind::Map(key) => {
            let k = item.get(key)?;
            Some(format!("k:{}", json!({ key: k })))
        }
    }
}

/// The fields a value sets (structured-merge-diff's `ToFieldSet`): its leaves, an empty
/// object as a leaf, each item of a set, and each item of a keyed list with its fields.
/// `all_nodes`: every node a member too, as a comparison's added and removed paths are.
pub(crate) fn fields_of(v: &Value, path: &mut Vec<String>, all_nodes: bool) -> FieldSet {
    let mut out = FieldSet::default();
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.me = all_nodes;
            for (k, child) in m {
                path.push(k.clone());
                out.insert(format!("f:{k}"), fields_of(child, path, all_nodes));
                path.pop();
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let fields: Vec<&str> = path.iter().map(String::as_str).collect();
            let kind = list_kind(&fields);
            if kind == ListKind::Atomic {
                return FieldSet::leaf();
            }
            out.me = all_nodes;
            for item in items {
                let Some(element) = item_element(kind, item) else {
                    continue;
                };
                let mut set = match kind {
                    ListKind::Map(_) => fields_of(item, &mut Vec::new(), all_nodes),
                    _ => FieldSet::default(),
                };
                set.me = true;
                out.insert(element, set);
            }
        }
        _ => return FieldSet::leaf(),
    }
    out
}

/// What changed from one object to another: the paths added, modified and removed
/// (structured-merge-diff's `Comparison`).
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    pub(crate) added: FieldSet,
    pub(crate) modified: FieldSet,
    pub(crate) removed: FieldSet,
}

impl Comparison {
    /// The paths added or modified: what a write takes from others.
    pub(crate) fn changed(&self) -> FieldSet {
        self.added.union(&self.modified)
    }
}

/// Compares `old` and `new`, both objects' (already stripped) values.
pub(crate) fn compare(old: &Value, new: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_into(old, new, &mut Vec::new(), &mut c);
    c
}

/// The three sets of one node's children, filled in by comparing them.
fn compare_into(old: &Value, new: &Value, path: &mut Vec<String>, c: &mut Comparison) {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (k, nv) in n {
                path.push(k.clone());
                let element = format!("f:{k}");
                match o.get(k) {
                    None => c.added.insert(element, fields_of(nv, path, true)),
                    Some(ov) => {
                        let mut sub = Comparison::default();
                        compare_into(ov, nv, path, &mut sub);
                        c.added.insert(element.clone(), sub.added);
                        c.modified.insert(element.clone(), sub.modified);
                        c.removed.insert(element, sub.removed);
                    }
                }
                path.pop();
            }
            for (k, ov) in o.iter().filter(|(k, _)| !n.contains_key(*k)) {
                path.push(k.clone());
                c.removed
                    .insert(format!("f:{k}"), fields_of(ov, path, true));
                path.pop();
            }
        }
        (Value::Array(o), Value::Array(n)) => {
            let fields: Vec<&str> = path.iter().map(String::as_str).collect();
            match list_kind(&fields) {
                ListKind::Atomic => c.modified.me = o != n,
                kind => compare_items(kind, o, n, c),
            }
        }
        (o, n) => c.modified.me = o != n,
    }
}

/// Compares the items of a set or a keyed list.
fn compare_items(kind: ListKind, old: &[Value], new: &[Value], c: &mut Comparison) {
    let keyed = |items: &[Value]| -> BTreeMap<String, Value> {
        items
            .iter()
            .filter_map(|i| Some((item_element(kind, i)?, i.clone())))
            .collect()
    };
    let (o, n) = (keyed(old), keyed(new));
    let whole = |item: &Value| {
        let mut set = match kind {
            ListKind::Map(_) => fields_of(item, &mut Vec::new(), true),
            _ => FieldSet::default(),
        };
        set.me = true;
        set
    };
    for (e, item) in &n {
        match o.get(e) {
            None => c.added.insert(e.clone(), whole(item)),
            Some(old_item) if matches!(kind, ListKind::Map(_)) => {
                let mut sub = Comparison::default();
                compare_into(old_item, item, &mut Vec::new(), &mut sub);
                c.added.insert(e.clone(), sub.added);
                c.modified.insert(e.clone(), sub.modified);
                c.removed.insert(e.clone(), sub.removed);
            }
            Some(_) => {}
        }
    }
    for (e, item) in o.iter().filter(|(e, _)| !n.contains_key(*e)) {
        c.removed.insert(e.clone(), whole(item));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: Value) -> FieldSet {
        FieldSet::from_fields_v1(&v)
    }

    #[test]
    fn fields_v1_round_trips_and_names_paths() {
        let v = json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}},
                                      "f:finalizers": {"v:\"x\"": {}}},
                       "f:spec": {"f:n": {}}});
        let s = set(v.clone());
        assert_eq!(s.to_fields_v1(), v);
        assert_eq!(
            s.paths(),
            [
                ".metadata.finalizers[=\"x\"]",
                ".metadata.labels",
                ".metadata.labels.app",
                ".spec.n"
            ]
        );
        let keyed = set(json!({"f:metadata": {"f:ownerReferences": {"k:{\"uid\":\"1\"}": {}}}}));
        assert_eq!(keyed.paths(), [".metadata.ownerReferences[uid=\"1\"]"]);
    }

    #[test]
    fn set_operations() {
        let a = set(json!({"f:spec": {"f:a": {}, "f:b": {}}}));
        let b = set(json!({"f:spec": {"f:b": {}, "f:c": {}}}));
        assert_eq!(a.difference(&b), set(json!({"f:spec": {"f:a": {}}})));
        assert_eq!(a.intersection(&b), set(json!({"f:spec": {"f:b": {}}})));
        assert_eq!(
            a.union(&b),
            set(json!({"f:spec": {"f:a": {}, "f:b": {}, "f:c": {}}}))
        );
        assert!(a.difference(&a).is_empty());
    }

    #[test]
    fn an_applied_configuration_sets_its_leaves_and_set_items() {
        let config = json!({"metadata": {"labels": {"a": "1"}, "finalizers": ["x"]},
                            "spec": {"list": [1, 2], "empty": {}}});
        assert_eq!(
            fields_of(&config, &mut Vec::new(), false).to_fields_v1(),
            json!({"f:metadata": {"f:labels": {"f:a": {}}, "f:finalizers": {"v:\"x\"": {}}},
                   "f:spec": {"f:list": {}, "f:empty": {}}})
        );
    }

    #[test]
    fn a_comparison_names_what_was_added_modified_and_removed() {
        let old = json!({"metadata": {"finalizers": ["x", "y"]}, "spec": {"a": 1, "b": 2}});
        let new = json!({"metadata": {"finalizers": ["y", "z"], "labels": {"l": "v"}},
                         "spec": {"a": 1, "b": 3}});
        let c = compare(&old, &new);
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:metadata": {"f:finalizers": {"v:\"z\"": {}},
                                  "f:labels": {".": {}, "f:l": {}}}})
        );
        assert_eq!(c.modified.to_fields_v1(), json!({"f:spec": {"f:b": {}}}));
        assert_eq!(
            c.removed.to_fields_v1(),
            json!({"f:metadata": {"f:finalizers": {"v:\"x\"": {}}}})
        );
    }
}
