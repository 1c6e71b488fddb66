//! What each client costs the API server: the authenticated requests served, by the user they
//! acted as (after impersonation), verb and resource, for tests and benchmarks. In-process
//! through [`EmbeddedApi::request_count_of`] (one user's total) and
//! [`EmbeddedApi::requests_by`] (every row); from a `demo-cluster` process at
//! `GET /debug/ichor-demo/requests` (JSON, to any demo user; the read itself is not counted).
//! A request is counted once it is authenticated, refused or not; discovery documents and
//! port-forwards are not (a port-forward is an upgrade, not a request to a resource). A watch
//! counts once, when it starts.

use super::EmbeddedApi;
use super::routing::{Query, Verb, parse_path};
use http::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The path of the counts.
pub const PATH: &str = "/debug/ichor-demo/requests";

/// One row of the counts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct RequestCount {
    /// The user the request acted as (the impersonated one, when it impersonated).
    pub user: String,
    /// Whose token made the request when it impersonated `user`; `None` when it came with
    /// `user`'s own token.
    #[serde(default)]
    pub impersonated_by: Option<String>,
    /// As RBAC names it: get, list, watch, create, update, patch, delete.
    pub verb: String,
    /// The resource's plural (`talosoperations`, `tokenreviews`, …), or the path when it
    /// names none.
    pub resource: String,
    pub count: u64,
}

/// The counts behind the API's lock.
#[derive(Default)]
pub(crate) struct Requests {
    counts: BTreeMap<Row, u64>,
}

/// A row's key: the user acted as, who impersonated them, the verb and the resource.
type Row = (String, Option<String>, &'static str, String);

impl Requests {
    /// Counts a request made as `user` (impersonated by `by`, when it was).
    pub(crate) fn count(
        &mut self,
        (user, by): (&str, Option<&str>),
        method: &Method,
        path: &str,
        query: Option<&str>,
    ) {
        let (verb, resource) = classify(method, path, query);
        let by = by.map(str::to_string);
        *self
            .counts
            .entry((user.to_string(), by, verb, resource))
            .or_default() += 1;
    }

    /// `user`'s requests, every verb and resource.
    fn of(&self, user: &str) -> u64 {
        self.counts
            .iter()
            .filter(|((u, _, _, _), _)| u == user)
            .map(|(_, n)| n)
            .sum()
    }

    fn rows(&self) -> Vec<RequestCount> {
        self.counts
            .iter()
            .map(|((user, by, verb, resource), count)| RequestCount {
                user: user.clone(),
                impersonated_by: by.clone(),
                verb: (*verb).to_string(),
                resource: resource.clone(),
                count: *count,
            })
            .collect()
    }

    /// The counts as `GET /debug/ichor-demo/requests` answers them.
    pub(crate) fn document(&self) -> Value {
        json!({ "requests": self.rows() })
    }
}

/// The verb and resource of a request, as RBAC names them (the routing's own reading; a
/// method no resource answers is `other`).
fn classify(method: &Method, path: &str, query: Option<&str>) -> (&'static str, String) {
    let target = parse_path(path).ok();
    let named = target.as_ref().is_some_and(|t| t.name.is_some());
    let verb = Verb::of(method, named, &Query::parse(query)).map_or("other", Verb::as_str);
    let resource = match target {
        Some(t) => t.resource(),
        None => path.rsplit('/').next().unwrap_or(path).to_string(),
    };
    (verb, resource)
}

impl EmbeddedApi {
    /// How many requests `user` made (as whom they acted; see the module's notes): the
    /// simulated controller's own polling, for one, apart from a dashboard's.
    pub fn request_count_of(&self, user: &str) -> u64 {
        self.lock().requests_by.of(user)
    }

    /// The requests served so far, by user, verb and resource (see the module's notes).
    pub fn requests_by(&self) -> Vec<RequestCount> {
        self.lock().requests_by.rows()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_named_as_rbac_names_them() {
        let ops = "/apis/ichor.maesh.dev/v1alpha1/namespaces/default/talosoperations";
        let cases = [
            (
                Method::GET,
                ops.to_string(),
                None,
                "list",
                "talosoperations",
            ),
            (
                Method::GET,
                ops.to_string(),
                Some("watch=true&resourceVersion=5"),
                "watch",
                "talosoperations",
            ),
            (
                Method::GET,
                format!("{ops}/a"),
                None,
                "get",
                "talosoperations",
            ),
            (
                Method::PUT,
                format!("{ops}/a/status"),
                None,
                "update",
                "talosoperations/status",
            ),
            (
                Method::POST,
                "/apis/authentication.k8s.io/v1/tokenreviews".to_string(),
                None,
                "create",
                "tokenreviews",
            ),
        ];
        let mut r = Requests::default();
        for (method, path, query, verb, resource) in &cases {
            assert_eq!(
                classify(method, path, *query),
                (*verb, resource.to_string()),
                "{method} {path}"
            );
            r.count(("viewer", None), method, path, *query);
        }
        r.count(("viewer", None), &Method::GET, ops, None);
        let rows = r.rows();
        assert_eq!(rows.len(), cases.len());
        let lists = rows
            .iter()
            .find(|c| c.verb == "list")
            .map(|c| (c.user.as_str(), c.count));
        assert_eq!(lists, Some(("viewer", 2)));
        assert_eq!(r.of("viewer"), 6);
        assert_eq!(r.of("admin"), 0);
    }
}
