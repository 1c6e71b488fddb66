//! The matcher against kube-apiserver's own cases (`evaluation_helpers_test.go`, `rule_test.go`).

use super::*;

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str], names: &[&str]) -> PolicyRule {
    let list = |l: &[&str]| Some(l.iter().map(|s| s.to_string()).collect());
    PolicyRule {
        api_groups: list(groups),
        resources: list(resources),
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        resource_names: (!names.is_empty()).then(|| list(names)).flatten(),
        non_resource_urls: None,
    }
}

fn urls(urls: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        non_resource_urls: Some(urls.iter().map(|s| s.to_string()).collect()),
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        ..PolicyRule::default()
    }
}

fn on<'a>(verb: &'a str, group: &'a str, resource: &'a str, name: &'a str) -> Attributes<'a> {
    Attributes::resource(
        verb,
        group,
        resource,
        Some(name).filter(|n| !n.is_empty()),
        Some("ns"),
    )
}

#[test]
fn verbs_groups_resources_and_names_all_have_to_match() {
    let pods = rule(&[""], &["pods"], &["get", "list"], &[]);
    assert!(rule_allows(&pods, &on("get", "", "pods", "a")));
    assert!(rule_allows(&pods, &on("list", "", "pods", "")));
    assert!(
        !rule_allows(&pods, &on("delete", "", "pods", "a")),
        "another verb"
    );
    assert!(
        !rule_allows(&pods, &on("get", "apps", "pods", "a")),
        "another group"
    );
    assert!(
        !rule_allows(&pods, &on("get", "", "pods/log", "a")),
        "a subresource is not its resource"
    );
    assert!(!rule_allows(&pods, &on("get", "", "services", "a")));

    let any = rule(&["*"], &["*"], &["*"], &[]);
    assert!(rule_allows(
        &any,
        &on(
            "impersonate",
            "authentication.k8s.io",
            "userextras/scopes",
            "x"
        )
    ));

    let sub = rule(&[""], &["*/status"], &["update"], &[]);
    assert!(rule_allows(&sub, &on("update", "", "pods/status", "a")));
    assert!(!rule_allows(&sub, &on("update", "", "pods", "a")));
    assert!(!rule_allows(&sub, &on("update", "", "pods/log", "a")));

    let named = rule(&[""], &["configmaps"], &["get", "list"], &["one"]);
    assert!(rule_allows(&named, &on("get", "", "configmaps", "one")));
    assert!(!rule_allows(&named, &on("get", "", "configmaps", "two")));
    assert!(
        !rule_allows(&named, &on("list", "", "configmaps", "")),
        "a list names nothing"
    );

    let no_groups = PolicyRule {
        api_groups: None,
        ..rule(&[], &["pods"], &["get"], &[])
    };
    assert!(
        !rule_allows(&no_groups, &on("get", "", "pods", "a")),
        "no group matches nothing"
    );
}

#[test]
fn non_resource_urls_match_exactly_or_by_a_trailing_star() {
    let health = urls(&["/healthz", "/apis/*"], &["get"]);
    let get = |path| Attributes::NonResource { verb: "get", path };
    assert!(rule_allows(&health, &get("/healthz")));
    assert!(!rule_allows(&health, &get("/healthz/etcd")));
    assert!(rule_allows(&health, &get("/apis/apps/v1")));
    assert!(!rule_allows(&health, &get("/api")));
    assert!(!rule_allows(
        &health,
        &Attributes::NonResource {
            verb: "post",
            path: "/healthz"
        }
    ));
    assert!(rule_allows(&urls(&["*"], &["*"]), &get("/anything")));
    // A resource rule never allows a URL, nor a URL rule a resource.
    assert!(!rule_allows(
        &rule(&["*"], &["*"], &["*"], &[]),
        &get("/healthz")
    ));
    assert!(!rule_allows(
        &urls(&["*"], &["*"]),
        &on("get", "", "pods", "a")
    ));
}

const ROLES: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
  - apiGroups: [""]
    resources: [pods, services]
    verbs: [get, list]
  - nonResourceURLs: [/metrics]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: unbound}
rules:
  - apiGroups: ["*"]
    resources: ["*"]
    verbs: ["*"]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: ops}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects:
  - {kind: ServiceAccount, name: robot, namespace: ops}
  - {kind: Group, name: readers, apiGroup: rbac.authorization.k8s.io}
"#;

fn identity(user: &str, groups: &[&str]) -> Identity {
    Identity {
        user: user.to_string(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Identity::default()
    }
}

#[test]
fn bound_roles_allow_their_subjects_and_record_what_was_used() {
    let roles = BoundRoles::from_yaml(ROLES).unwrap();
    let robot = identity(
        "system:serviceaccount:ops:robot",
        &["system:serviceaccounts"],
    );
    let reader = identity("someone", &["readers"]);
    let other = identity("system:serviceaccount:ops:other", &[]);
    assert!(roles.binds(&robot) && roles.binds(&reader) && !roles.binds(&other));
    assert!(roles.allows(&robot, &on("get", "", "pods", "a"), true));
    assert!(
        !roles.allows(&other, &on("get", "", "pods", "a"), true),
        "not bound"
    );
    assert!(!roles.allows(&robot, &on("delete", "", "pods", "a"), true));
    // A question about a request (a SubjectAccessReview's) uses nothing.
    assert!(roles.allows(&reader, &on("list", "", "services", ""), false));
    roles.refused(&robot, &on("delete", "", "pods", "a"));

    let usage = roles.usage();
    assert_eq!(
        usage.granted.len(),
        2 * 2 + 1 + 1,
        "the unbound role's grant is listed too"
    );
    let used: Vec<String> = usage.used.iter().map(|g| g.to_string()).collect();
    assert_eq!(used, ["reader rule 0: get pods in API group \"\""]);
    assert_eq!(usage.unused().len(), 5);
    assert_eq!(
        usage.denied,
        ["system:serviceaccount:ops:robot: delete pods (core) \"a\" in \"ns\""]
    );
}

#[test]
fn a_binding_to_a_role_the_file_lacks_is_an_error() {
    let e = BoundRoles::from_yaml(
        "kind: ClusterRoleBinding\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: b}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: gone}\n",
    )
    .unwrap_err();
    assert!(e.contains("gone"), "{e}");
}

#[test]
fn the_deployed_roles_are_read() {
    let roles = BoundRoles::from_yaml(DEPLOY_RBAC).unwrap();
    let serve = identity(
        super::super::auth::users::SERVER,
        &["system:serviceaccounts"],
    );
    assert!(
        roles.binds(&serve),
        "deploy/base/rbac.yaml binds the demo's serve identity"
    );
    assert!(!roles.usage().granted.is_empty());
}
