//! RBAC as kube-apiserver decides it, for the roles the product ships: the ClusterRoles and
//! ClusterRoleBindings of `deploy/base/rbac.yaml` (what `ichor-tui serve`'s own identity may do),
//! read into k8s-openapi's types and matched rule by rule as kube-apiserver's RBAC authorizer
//! matches them (`k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go`): verbs, API groups,
//! resources and subresources (`*`, `*/status`), resource names, non-resource URLs (`*` and a
//! trailing `*`). So the demo's `serve` has exactly the rights the deployed one has: a rule
//! missing there fails a call here.
//!
//! Which verb, group and resource of each rule a request used is recorded, and what was refused
//! to a bound subject, for the test that proves the role is least privilege.

use super::auth::Identity;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Subject};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// The manifests whose roles the demo grants: the kustomize base's.
pub const DEPLOY_RBAC: &str = include_str!("../../../../deploy/base/rbac.yaml");

/// The passthrough component's ClusterRole, which takes the base's place in that mode.
pub const PASSTHROUGH_ROLE: &str =
    include_str!("../../../../deploy/components/passthrough/cluster-role.yaml");

/// What a request asks to do, as RBAC reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attributes<'a> {
    /// A verb on a resource: `group` is `""` for the core group; `name` empty for a collection.
    Resource {
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        subresource: &'a str,
        name: &'a str,
        /// `""`: cluster scope.
        namespace: &'a str,
    },
    /// A verb on a URL that names no resource (`/version`, `/readyz`).
    NonResource { verb: &'a str, path: &'a str },
}

impl<'a> Attributes<'a> {
    /// `verb` on `resource` (`plural` or `plural/subresource`) of `group`.
    pub fn resource(
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        name: Option<&'a str>,
        namespace: Option<&'a str>,
    ) -> Attributes<'a> {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        Attributes::Resource {
            verb,
            group,
            resource,
            subresource,
            name: name.unwrap_or(""),
            namespace: namespace.unwrap_or(""),
        }
    }

    /// The verb, whichever the kind.
    pub fn verb(&self) -> &'a str {
        match self {
            Attributes::Resource { verb, .. } | Attributes::NonResource { verb, .. } => verb,
        }
    }

    /// `plural` or `plural/subresource`, or the URL.
    pub fn combined_resource(&self) -> String {
        match self {
            Attributes::Resource {
                resource,
                subresource: "",
                ..
            } => resource.to_string(),
            Attributes::Resource {
                resource,
                subresource,
                ..
            } => format!("{resource}/{subresource}"),
            Attributes::NonResource { path, .. } => path.to_string(),
        }
    }

    /// The namespace, `None` at cluster scope.
    pub fn namespace(&self) -> Option<&'a str> {
        match self {
            Attributes::Resource { namespace, .. } if !namespace.is_empty() => Some(namespace),
            _ => None,
        }
    }
}

impl std::fmt::Display for Attributes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attributes::Resource {
                verb,
                group,
                name,
                namespace,
                ..
            } => {
                let group = if group.is_empty() { "core" } else { group };
                write!(f, "{verb} {} ({group})", self.combined_resource())?;
                if !name.is_empty() {
                    write!(f, " {name:?}")?;
                }
                match namespace.is_empty() {
                    true => write!(f, " at cluster scope"),
                    false => write!(f, " in {namespace:?}"),
                }
            }
            Attributes::NonResource { verb, path } => write!(f, "{verb} {path}"),
        }
    }
}

fn matches_any(list: &[String], wanted: &str) -> bool {
    list.iter().any(|x| x == "*" || x == wanted)
}

/// Whether `rule` allows the request: kube-apiserver's `RuleAllows`.
pub fn rule_allows(rule: &PolicyRule, attrs: &Attributes) -> bool {
    let verbs_ok = matches_any(&rule.verbs, attrs.verb());
    match attrs {
        Attributes::Resource {
            group,
            subresource,
            name,
            ..
        } => {
            let groups = rule.api_groups.as_deref().unwrap_or_default();
            let resources = rule.resources.as_deref().unwrap_or_default();
            let combined = attrs.combined_resource();
            let names = rule.resource_names.as_deref().unwrap_or_default();
            verbs_ok
                && matches_any(groups, group)
                && resources
                    .iter()
                    .any(|r| resource_matches(r, &combined, subresource))
                && (names.is_empty() || names.iter().any(|n| n == name))
        }
        Attributes::NonResource { path, .. } => {
            let urls = rule.non_resource_urls.as_deref().unwrap_or_default();
            verbs_ok && urls.iter().any(|u| url_matches(u, path))
        }
    }
}

/// A rule's resource against the request's: `*`, the same `plural[/sub]`, or `*/sub`.
fn resource_matches(rule_resource: &str, combined: &str, subresource: &str) -> bool {
    rule_resource == "*"
        || rule_resource == combined
        || (!subresource.is_empty() && rule_resource.strip_prefix("*/") == Some(subresource))
}

/// A rule's non-resource URL against a path: `*`, the same path, or a prefix ending in `*`.
fn url_matches(rule_url: &str, path: &str) -> bool {
    match rule_url.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => rule_url == path,
    }
}

/// One thing a role grants: a verb on a resource (or URL) of an API group, in one rule.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    /// The ClusterRole's name and the rule's index in it.
    pub role: String,
    pub rule: usize,
    /// `""`: the core group; for a non-resource URL, `""` too.
    pub api_group: String,
    /// `plural`, `plural/sub`, `*`, or the non-resource URL.
    pub resource: String,
    pub verb: String,
}

impl std::fmt::Display for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rule {}: {} {} in API group {:?}",
            self.role, self.rule, self.verb, self.resource, self.api_group
        )
    }
}

/// Every grant of `rule` (its verbs × groups × resources, or verbs × URLs).
fn grants_of(role: &str, index: usize, rule: &PolicyRule) -> Vec<Grant> {
    let mut out = Vec::new();
    let groups = rule.api_groups.as_deref().unwrap_or_default();
    let resources = rule.resources.as_deref().unwrap_or_default();
    let urls = rule.non_resource_urls.as_deref().unwrap_or_default();
    for verb in &rule.verbs {
        let grant = |api_group: &str, resource: &str| Grant {
            role: role.to_string(),
            rule: index,
            api_group: api_group.to_string(),
            resource: resource.to_string(),
            verb: verb.clone(),
        };
        for g in groups {
            out.extend(resources.iter().map(|r| grant(g, r)));
        }
        out.extend(urls.iter().map(|u| grant("", u)));
    }
    out
}

/// The grants of `rule` that the request used (those of its entries that match it).
fn grants_used(role: &str, index: usize, rule: &PolicyRule, attrs: &Attributes) -> Vec<Grant> {
    let verb_ok = |v: &str| v == "*" || v == attrs.verb();
    grants_of(role, index, rule)
        .into_iter()
        .filter(|g| {
            verb_ok(&g.verb)
                && match attrs {
                    Attributes::Resource {
                        group, subresource, ..
                    } => {
                        (g.api_group == "*" || g.api_group == *group)
                            && resource_matches(
                                &g.resource,
                                &attrs.combined_resource(),
                                subresource,
                            )
                    }
                    Attributes::NonResource { path, .. } => url_matches(&g.resource, path),
                }
        })
        .collect()
}

/// A ClusterRole and who it is bound to (by any binding).
#[derive(Clone, Debug)]
struct Bound {
    role: String,
    rules: Vec<PolicyRule>,
    subjects: Vec<Subject>,
}

/// Whether a binding's subject is `who`.
fn subject_is(s: &Subject, who: &Identity) -> bool {
    match s.kind.as_str() {
        "User" => s.name == who.user,
        "Group" => who.groups.contains(&s.name),
        "ServiceAccount" => {
            let ns = s.namespace.as_deref().unwrap_or_default();
            who.user == format!("system:serviceaccount:{ns}:{}", s.name)
        }
        _ => false,
    }
}

/// What the bound roles granted, what of it was used, and what they refused to a bound subject.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoleUsage {
    pub granted: Vec<Grant>,
    pub used: Vec<Grant>,
    /// Requests of a subject of these roles that nothing allowed, as `who: what`.
    pub denied: Vec<String>,
}

impl RoleUsage {
    /// The grants no request used.
    pub fn unused(&self) -> Vec<&Grant> {
        self.granted
            .iter()
            .filter(|g| !self.used.contains(g))
            .collect()
    }
}

#[derive(Debug, Default)]
struct Record {
    used: BTreeSet<Grant>,
    denied: Vec<String>,
}

/// The most refusals kept (a test reads the first ones).
const MAX_DENIED: usize = 256;

/// The ClusterRoles that ClusterRoleBindings bind, and what they were used for.
#[derive(Clone, Debug, Default)]
pub(crate) struct BoundRoles {
    bound: Vec<Bound>,
    record: Arc<Mutex<Record>>,
}

impl BoundRoles {
    /// The roles of `deploy/base/rbac.yaml`.
    pub(crate) fn deployed() -> BoundRoles {
        match BoundRoles::from_yaml(DEPLOY_RBAC) {
            Ok(b) => b,
            Err(e) => {
                // A test reads the same file and fails on it; serve then has no rights here.
                tracing::error!(error = %e, "reading deploy/base/rbac.yaml");
                BoundRoles::default()
            }
        }
    }

    /// The roles of `deploy/base/rbac.yaml` with the passthrough component's ClusterRole in its
    /// place, as `kubectl kustomize deploy/overlays/passthrough` makes them (a ClusterRole's
    /// `rules` have no merge key: the patch's replace the base's whole).
    pub(crate) fn passthrough() -> BoundRoles {
        let patched = BoundRoles::from_yaml(DEPLOY_RBAC).and_then(|mut base| {
            let patch = BoundRoles::from_yaml(PASSTHROUGH_ROLE)?;
            for role in patch.bound {
                let replaced = base.bound.iter_mut().find(|b| b.role == role.role);
                let replaced = replaced.ok_or_else(|| {
                    format!(
                        "the patch names a ClusterRole the base has not: {}",
                        role.role
                    )
                })?;
                replaced.rules = role.rules;
            }
            Ok(base)
        });
        patched.unwrap_or_else(|e| {
            tracing::error!(error = %e, "reading the passthrough role");
            BoundRoles::default()
        })
    }

    /// The ClusterRoles of the YAML documents in `text` that its ClusterRoleBindings bind
    /// (other kinds are left alone).
    pub(crate) fn from_yaml(text: &str) -> Result<BoundRoles, String> {
        let docs: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(text).map_err(|e| format!("parsing YAML: {e}"))?;
        let mut roles = Vec::new();
        let mut bindings = Vec::new();
        for doc in docs {
            match doc.get("kind").and_then(serde_json::Value::as_str) {
                Some("ClusterRole") => roles.push(
                    serde_json::from_value::<ClusterRole>(doc)
                        .map_err(|e| format!("a ClusterRole: {e}"))?,
                ),
                Some("ClusterRoleBinding") => bindings.push(
                    serde_json::from_value::<ClusterRoleBinding>(doc)
                        .map_err(|e| format!("a ClusterRoleBinding: {e}"))?,
                ),
                _ => {}
            }
        }
        // Every role, with whoever a binding names: a role bound to no one grants nothing,
        // yet is listed among the grants (none of which can be used).
        let mut bound: Vec<Bound> = roles
            .into_iter()
            .map(|r| Bound {
                role: r.metadata.name.unwrap_or_default(),
                rules: r.rules.unwrap_or_default(),
                subjects: Vec::new(),
            })
            .collect();
        for b in bindings {
            let name = &b.role_ref.name;
            let role = bound
                .iter_mut()
                .find(|r| r.role == *name && b.role_ref.kind == "ClusterRole")
                .ok_or_else(|| format!("the binding names no ClusterRole of the file: {name}"))?;
            role.subjects.extend(b.subjects.unwrap_or_default());
        }
        Ok(BoundRoles {
            bound,
            record: Arc::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `who` is a subject of any of the roles.
    pub(crate) fn binds(&self, who: &Identity) -> bool {
        self.bound
            .iter()
            .any(|b| b.subjects.iter().any(|s| subject_is(s, who)))
    }

    /// The rules that apply to `who`.
    pub(crate) fn rules_of(&self, who: &Identity) -> Vec<PolicyRule> {
        self.bound
            .iter()
            .filter(|b| b.subjects.iter().any(|s| subject_is(s, who)))
            .flat_map(|b| b.rules.iter().cloned())
            .collect()
    }

    /// Whether a role bound to `who` allows the request; each grant that matched is recorded
    /// as used when `acting` (a request made, not a question asked about one).
    pub(crate) fn allows(&self, who: &Identity, attrs: &Attributes, acting: bool) -> bool {
        let mut allowed = false;
        for b in &self.bound {
            if !b.subjects.iter().any(|s| subject_is(s, who)) {
                continue;
            }
            for (i, rule) in b.rules.iter().enumerate() {
                if !rule_allows(rule, attrs) {
                    continue;
                }
                allowed = true;
                if acting {
                    self.lock()
                        .used
                        .extend(grants_used(&b.role, i, rule, attrs));
                }
            }
        }
        allowed
    }

    /// Records that nothing allowed `who` (a subject of these roles) the request.
    pub(crate) fn refused(&self, who: &Identity, attrs: &Attributes) {
        let mut record = self.lock();
        if record.denied.len() < MAX_DENIED {
            record.denied.push(format!("{}: {attrs}", who.user));
        }
    }

    /// What the roles granted, used and refused so far.
    pub(crate) fn usage(&self) -> RoleUsage {
        let record = self.lock();
        let granted = self
            .bound
            .iter()
            .flat_map(|b| {
                b.rules
                    .iter()
                    .enumerate()
                    .flat_map(|(i, r)| grants_of(&b.role, i, r))
            })
            .collect::<BTreeSet<_>>();
        RoleUsage {
            granted: granted.into_iter().collect(),
            used: record.used.iter().cloned().collect(),
            denied: record.denied.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
