//! Pieces of the embedded API that are plain data: the resource table, label selectors, query
//! strings and Status bodies.

use ichor_resources::{GROUP, VERSION};
use serde_json::{Value, json};

/// One kind the embedded API serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceType {
    /// The API group and version it is served under.
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub has_status: bool,
    pub short_names: &'static [&'static str],
}

/// The four ichor kinds.
pub const RESOURCES: [ResourceType; 4] = [
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "talosclusters",
        singular: "taloscluster",
        kind: "TalosCluster",
        has_status: true,
        short_names: &["tc"],
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "machines",
        singular: "machine",
        kind: "Machine",
        has_status: false,
        short_names: &[],
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "ichorinstallations",
        singular: "ichorinstallation",
        kind: "IchorInstallation",
        has_status: false,
        short_names: &[],
    },
    ResourceType {
        group: GROUP,
        version: VERSION,
        plural: "talosoperations",
        singular: "talosoperation",
        kind: "TalosOperation",
        has_status: true,
        short_names: &["top"],
    },
];

/// `coordination.k8s.io/v1` Leases: the start claim of OperationService (one per cluster).
pub const LEASES: ResourceType = ResourceType {
    group: "coordination.k8s.io",
    version: "v1",
    plural: "leases",
    singular: "lease",
    kind: "Lease",
    has_status: false,
    short_names: &[],
};

/// The resource type of a plural name in a group and version.
pub fn resource(group: &str, version: &str, plural: &str) -> Option<ResourceType> {
    RESOURCES
        .iter()
        .copied()
        .chain([LEASES])
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

impl ResourceType {
    /// `group/version`, as `apiVersion` names it.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }
}

/// Parses a query string into (key, value) pairs, `+` and `%XX` decoded.
pub fn parse_query(q: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(q.unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector (`a=b,c!=d,e,!f,g in (x,y),h notin (z)`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses a selector; `Err` carries the reason.
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let mut parts = Vec::new();
        let mut depth = 0;
        let mut cur = String::new();
        for c in s.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        parts.push(cur);
        let mut reqs = Vec::new();
        for p in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
            let set = |rest: &str| -> Result<Vec<String>, String> {
                let rest = rest.trim();
                let inner = rest
                    .strip_prefix('(')
                    .and_then(|r| r.strip_suffix(')'))
                    .ok_or_else(|| format!("unable to parse requirement: {p:?}"))?;
                Ok(inner.split(',').map(|v| v.trim().to_string()).collect())
            };
            let req = if let Some((k, v)) = p.split_once("!=") {
                Requirement::NotEquals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
                Requirement::Equals(k.trim().into(), v.trim().into())
            } else if let Some((k, rest)) = p.split_once(" notin ") {
                Requirement::NotIn(k.trim().into(), set(rest)?)
            } else if let Some((k, rest)) = p.split_once(" in ") {
                Requirement::In(k.trim().into(), set(rest)?)
            } else if let Some(k) = p.strip_prefix('!') {
                Requirement::NotExists(k.trim().into())
            } else if p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
            {
                Requirement::Exists(p.into())
            } else {
                return Err(format!("unable to parse requirement: {p:?}"));
            };
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether an object's labels satisfy every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        })
    }
}

/// A Kubernetes `Status` failure body.
pub fn status_body(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut v = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if let (Some(d), Value::Object(m)) = (details, &mut v) {
        m.insert("details".into(), d);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors() {
        let o = json!({"metadata": {"labels": {"app": "x", "tier": "db"}}});
        for (sel, want) in [
            ("app=x", true),
            ("app==x,tier=db", true),
            ("app!=x", false),
            ("tier in (db, web)", true),
            ("tier notin (db)", false),
            ("app", true),
            ("!app", false),
            ("missing", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&o),
                want,
                "{sel}"
            );
        }
        assert!(LabelSelector::parse("a in b").is_err());
    }

    #[test]
    fn query_decoding() {
        assert_eq!(
            parse_query(Some("labelSelector=a%3Db%2Cc&dryRun=All")),
            vec![
                ("labelSelector".into(), "a=b,c".into()),
                ("dryRun".into(), "All".into())
            ]
        );
    }
}
