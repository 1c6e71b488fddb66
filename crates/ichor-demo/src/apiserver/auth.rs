//! Authentication (bearer tokens), impersonation and RBAC of the embedded API.

use super::rbac::{Attributes, BoundRoles};
use std::collections::BTreeMap;

/// Who a request acts as.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) user: String,
    pub(crate) groups: Vec<String>,
    /// The uid a TokenReview names (and an impersonation may carry).
    pub(crate) uid: Option<String>,
    /// The extras a TokenReview names (and an impersonation may carry), key → values.
    pub(crate) extra: BTreeMap<String, Vec<String>>,
    /// Who impersonated this identity (the user the bearer token authenticated), when the
    /// request impersonated; `None` when it came with this identity's own token.
    pub(crate) impersonated_by: Option<String>,
}

/// One impersonation the API allowed: who (by their own token) acted as whom.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Impersonation {
    /// The user whose token made the request.
    pub by: String,
    pub user: String,
    /// The groups it acted with (`system:authenticated` aside): those asked for, or a service
    /// account's own when none were.
    pub groups: Vec<String>,
    pub uid: Option<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Identity {
    /// The impersonation this identity is, if it is one.
    pub(crate) fn impersonation(&self) -> Option<Impersonation> {
        Some(Impersonation {
            by: self.impersonated_by.clone()?,
            user: self.user.clone(),
            groups: self
                .groups
                .iter()
                .filter(|g| g.as_str() != "system:authenticated")
                .cloned()
                .collect(),
            uid: self.uid.clone(),
            extra: self.extra.clone(),
        })
    }
}

/// Who an RBAC rule is bound to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    User(String),
    Group(String),
}

/// One RBAC rule: verbs on resources (plural, or `plural/subresource`), in some namespaces
/// (`None`: every namespace and cluster scope). `"*"` matches anything.
#[derive(Clone, Debug)]
pub struct Rule {
    pub subject: Subject,
    pub verbs: Vec<String>,
    pub resources: Vec<String>,
    pub namespaces: Option<Vec<String>>,
}

impl Rule {
    /// A rule for `subject` allowing `verbs` on `resources` everywhere.
    pub fn new(subject: Subject, verbs: &[&str], resources: &[&str]) -> Rule {
        Rule {
            subject,
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            resources: resources.iter().map(|s| s.to_string()).collect(),
            namespaces: None,
        }
    }

    fn matches(&self, who: &Identity, attrs: &Attributes) -> bool {
        let (verb, resource, namespace) =
            (attrs.verb(), attrs.combined_resource(), attrs.namespace());
        let subject_ok = match &self.subject {
            Subject::User(u) => *u == who.user,
            Subject::Group(g) => who.groups.iter().any(|x| x == g),
        };
        let any = |list: &[String], v: &str| list.iter().any(|x| x == "*" || x == v);
        let ns_ok = match (&self.namespaces, namespace) {
            (None, _) => true,
            (Some(list), Some(ns)) => any(list, ns),
            (Some(_), None) => false,
        };
        subject_ok && ns_ok && any(&self.verbs, verb) && any(&self.resources, &resource)
    }
}

/// Tokens and RBAC rules: the demo's own, and the roles `deploy/base/rbac.yaml` binds (`serve`'s).
#[derive(Clone, Debug, Default)]
pub(crate) struct AuthConfig {
    tokens: BTreeMap<String, Identity>,
    rules: Vec<Rule>,
    deployed: BoundRoles,
}

/// The demo users, their tokens and what they may do.
///
/// Every human user below reads the ichor kinds and Leases (get, list, watch) in every
/// namespace, finds ichor-ui and port-forwards to it in `ichor-system`; all but
/// [`OPERATIONS_READER`](users::OPERATIONS_READER) also read Events (what the controller records about operations and
/// machines).
pub mod users {
    /// Cluster admin: group system:masters, and `ichor:admins` (which may do anything), the
    /// group `serve` impersonates for them (its role never names system:masters).
    pub const ADMIN: &str = "admin";
    pub const ADMIN_TOKEN: &str = "demo-admin-token";
    /// Read only, Events included.
    pub const VIEWER: &str = "viewer";
    pub const VIEWER_TOKEN: &str = "demo-viewer-token";
    /// Reads operations, clusters and machines but not Events (group
    /// `ichor:operation-readers`): for the dashboard's "you may not read events".
    pub const OPERATIONS_READER: &str = "operations-reader";
    pub const OPERATIONS_READER_TOKEN: &str = "demo-operations-reader-token";
    /// May create, pause and delete operations (and take the start claim, a Lease); may not
    /// edit clusters.
    pub const OPERATOR: &str = "operator";
    pub const OPERATOR_TOKEN: &str = "demo-operator-token";
    /// May edit clusters and installations; may not create operations.
    pub const CLUSTER_EDITOR: &str = "cluster-editor";
    pub const CLUSTER_EDITOR_TOKEN: &str = "demo-cluster-editor-token";
    /// The simulated controller's service account; it records Events (create, patch).
    pub const CONTROLLER: &str = "system:serviceaccount:ichor-system:ichor-controller";
    pub const CONTROLLER_TOKEN: &str = "demo-controller-token";
    /// `ichor-tui serve`'s own identity (the ServiceAccount of `deploy/base/rbac.yaml`): what its
    /// ClusterRole there grants, and nothing else.
    pub const SERVER: &str = "system:serviceaccount:ichor-system:ichor-tui";
    pub const SERVER_TOKEN: &str = "demo-server-token";
}

const ALL_ICHOR: &[&str] = &[
    "talosclusters",
    "talosclusters/status",
    "machines",
    "machines/status",
    "ichorinstallations",
    "talosoperations",
    "talosoperations/status",
    "leases",
];
const READ: &[&str] = &["get", "list", "watch"];

/// What the controller records: core Events (also read as `events.k8s.io`).
const EVENTS: &[&str] = &["events"];

/// What finds and reaches ichor-ui: its Service, Endpoints (and slices) and pods.
const ICHOR_UI_READ: &[&str] = &["services", "endpoints", "endpointslices", "pods"];

/// The namespace ichor-ui runs in (the dashboard reaches it through a port-forward).
pub(crate) const ICHOR_SYSTEM: &str = "ichor-system";

impl AuthConfig {
    /// The demo cluster's users and rules.
    pub(crate) fn demo() -> AuthConfig {
        use users::*;
        let mut a = AuthConfig::default();
        let g = |s: &str| Subject::Group(s.to_string());
        let u = |s: &str| Subject::User(s.to_string());
        a.add_token(ADMIN_TOKEN, ADMIN, &["system:masters", "ichor:admins"]);
        a.add_token(VIEWER_TOKEN, VIEWER, &["ichor:viewers"]);
        a.add_token(
            OPERATIONS_READER_TOKEN,
            OPERATIONS_READER,
            &["ichor:operation-readers"],
        );
        a.add_token(OPERATOR_TOKEN, OPERATOR, &["ichor:operators"]);
        a.add_token(
            CLUSTER_EDITOR_TOKEN,
            CLUSTER_EDITOR,
            &["ichor:cluster-editors"],
        );
        a.add_token(CONTROLLER_TOKEN, CONTROLLER, &["system:serviceaccounts"]);
        a.add_token(SERVER_TOKEN, SERVER, &["system:serviceaccounts"]);
        a.add_rule(Rule::new(g("system:masters"), &["*"], &["*"]));
        a.add_rule(Rule::new(g("ichor:admins"), &["*"], &["*"]));
        a.add_rule(Rule::new(g("ichor:viewers"), READ, ALL_ICHOR));
        a.add_rule(Rule::new(g("ichor:operation-readers"), READ, ALL_ICHOR));
        for readers in ["ichor:viewers", "ichor:operators", "ichor:cluster-editors"] {
            a.add_rule(Rule::new(g(readers), READ, EVENTS));
        }
        a.add_rule(Rule::new(g("ichor:operators"), READ, ALL_ICHOR));
        a.add_rule(Rule::new(
            g("ichor:operators"),
            &["create", "update", "patch", "delete"],
            &["talosoperations", "leases"],
        ));
        // OperationService records each write as an Event made as the person who asked.
        a.add_rule(Rule::new(g("ichor:operators"), &["create"], EVENTS));
        a.add_rule(Rule::new(g("ichor:cluster-editors"), READ, ALL_ICHOR));
        a.add_rule(Rule::new(
            g("ichor:cluster-editors"),
            &["update", "patch"],
            &["talosclusters", "ichorinstallations"],
        ));
        a.add_rule(Rule::new(u(CONTROLLER), &["*"], ALL_ICHOR));
        a.add_rule(Rule::new(u(CONTROLLER), &["*"], EVENTS));
        a.deployed = BoundRoles::deployed();
        a.add_ichor_ui_rules();
        a
    }

    /// `serve --allow-anonymous` acts as itself for a call without a token, so its identity
    /// then needs what those callers do: the demo grants it an operator's reads and writes.
    /// (`deploy/` runs with tokens required; its role grants none of this.)
    pub(crate) fn grant_anonymous_callers(&mut self) {
        let server = Subject::User(users::SERVER.to_string());
        self.add_rule(Rule::new(server.clone(), &["*"], ALL_ICHOR));
        self.add_rule(Rule::new(server.clone(), READ, EVENTS));
        self.add_rule(Rule::new(server, &["create"], EVENTS));
    }

    /// Every human demo user may find ichor-ui and port-forward to its pod in ichor-system: the
    /// dashboard reaches it that way whoever runs it.
    fn add_ichor_ui_rules(&mut self) {
        for group in [
            "ichor:viewers",
            "ichor:operation-readers",
            "ichor:operators",
            "ichor:cluster-editors",
        ] {
            let subject = Subject::Group(group.to_string());
            let in_ichor_system = |mut r: Rule| {
                r.namespaces = Some(vec![ICHOR_SYSTEM.to_string()]);
                r
            };
            self.add_rule(in_ichor_system(Rule::new(
                subject.clone(),
                READ,
                ICHOR_UI_READ,
            )));
            self.add_rule(in_ichor_system(Rule::new(
                subject,
                &["create"],
                &["pods/portforward"],
            )));
        }
    }

    /// The rules that apply to `who` in `namespace` (`None`: cluster-wide rules only), as
    /// (verbs, resources): what a SelfSubjectRulesReview lists.
    pub(crate) fn rules_for(
        &self,
        who: &Identity,
        namespace: Option<&str>,
    ) -> Vec<(Vec<String>, Vec<String>)> {
        self.rules
            .iter()
            .filter(|r| {
                let subject_ok = match &r.subject {
                    Subject::User(u) => *u == who.user,
                    Subject::Group(g) => who.groups.iter().any(|x| x == g),
                };
                let ns_ok = match (&r.namespaces, namespace) {
                    (None, _) => true,
                    (Some(list), Some(ns)) => list.iter().any(|x| x == "*" || x == ns),
                    (Some(_), None) => false,
                };
                subject_ok && ns_ok
            })
            .map(|r| (r.verbs.clone(), r.resources.clone()))
            .collect()
    }

    /// The deployed roles' rules that apply to `who` (what a SelfSubjectRulesReview lists).
    pub(crate) fn deployed_rules_for(
        &self,
        who: &Identity,
    ) -> Vec<k8s_openapi::api::rbac::v1::PolicyRule> {
        self.deployed.rules_of(who)
    }

    /// What the deployed roles granted, what of it was used and what they refused.
    pub(crate) fn deployed_usage(&self) -> super::rbac::RoleUsage {
        self.deployed.usage()
    }

    /// Adds a bearer token for a user.
    pub(crate) fn add_token(&mut self, token: &str, user: &str, groups: &[&str]) {
        self.add_token_with(token, user, groups, None, BTreeMap::new());
    }

    /// Adds a bearer token for a user whose reviews also name a uid and extras (as a
    /// service account's token names its uid, pod and node).
    pub(crate) fn add_token_with(
        &mut self,
        token: &str,
        user: &str,
        groups: &[&str],
        uid: Option<&str>,
        extra: BTreeMap<String, Vec<String>>,
    ) {
        let mut groups: Vec<String> = groups.iter().map(|s| s.to_string()).collect();
        groups.push("system:authenticated".to_string());
        self.tokens.insert(
            token.to_string(),
            Identity {
                user: user.to_string(),
                groups,
                uid: uid.map(str::to_string),
                extra,
                impersonated_by: None,
            },
        );
    }

    /// serve's identity gets the passthrough component's ClusterRole in the base's place
    /// (`deploy/components/passthrough`): what it reads as itself, nothing to impersonate.
    pub(crate) fn deploy_passthrough(&mut self) {
        self.deployed = BoundRoles::passthrough();
    }

    /// Adds an RBAC rule.
    pub(crate) fn add_rule(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// Removes every rule of `subject` (a permission revoked).
    #[cfg(feature = "faults")]
    pub(crate) fn remove_rules_of(&mut self, subject: &Subject) {
        self.rules.retain(|r| &r.subject != subject);
    }

    /// Forgets a token (revoked): the API answers 401 to it and a TokenReview rejects it.
    #[cfg(feature = "faults")]
    pub(crate) fn remove_token(&mut self, token: &str) {
        self.tokens.remove(token);
    }

    /// The identity a token authenticates, if any.
    pub(crate) fn authenticate(&self, token: &str) -> Option<&Identity> {
        self.tokens.get(token)
    }

    /// Whether `who` may make the request: a demo rule or a deployed role allows it. What a
    /// deployed role allowed is recorded as used, and what nothing allowed a subject of one as
    /// refused.
    pub(crate) fn allowed(&self, who: &Identity, attrs: &Attributes) -> bool {
        let by_rule = self.rules.iter().any(|r| r.matches(who, attrs));
        let by_role = self.deployed.allows(who, attrs, true);
        if !by_rule && !by_role && self.deployed.binds(who) {
            self.deployed.refused(who, attrs);
        }
        by_rule || by_role
    }

    /// Whether `who` may make the request, asked about it (a SubjectAccessReview): nothing is
    /// recorded.
    pub(crate) fn would_allow(&self, who: &Identity, attrs: &Attributes) -> bool {
        self.rules.iter().any(|r| r.matches(who, attrs)) || self.deployed.allows(who, attrs, false)
    }
}
