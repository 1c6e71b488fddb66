//! The embedded API over plain HTTP (`ichor-tui demo-cluster`), with the discovery documents
//! kubectl reads first.

use super::auth::users;
use super::store::RESOURCES;
use super::{BoxError, EmbeddedApi};
use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper_util::rt::{TokioExecutor, TokioIo};
use ichor_resources::{GROUP, VERSION};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;
use tokio::net::TcpListener;

const ADMIN_BEARER: &str = "Bearer demo-admin-token";

/// The discovery document for `path`, if it is one.
pub fn discovery(path: &str) -> Option<Value> {
    let group_version = format!("{GROUP}/{VERSION}");
    let doc = match path {
        "/version" => json!({
            "major": "1", "minor": "33", "gitVersion": "v1.33.0-ichor-demo",
            "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
            "buildDate": "2026-11-01T00:00:00Z", "goVersion": "go1.24", "compiler": "gc",
            "platform": "linux/amd64"
        }),
        "/api" => json!({
            "kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]
        }),
        "/api/v1" => json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": []}),
        "/apis" => json!({
            "kind": "APIGroupList", "apiVersion": "v1",
            "groups": [
                {
                    "name": GROUP,
                    "versions": [{"groupVersion": group_version, "version": VERSION}],
                    "preferredVersion": {"groupVersion": group_version, "version": VERSION}
                },
                {
                    "name": "authentication.k8s.io",
                    "versions": [{"groupVersion": "authentication.k8s.io/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": "authentication.k8s.io/v1", "version": "v1"}
                },
                {
                    "name": "authorization.k8s.io",
                    "versions": [{"groupVersion": "authorization.k8s.io/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": "authorization.k8s.io/v1", "version": "v1"}
                },
                {
                    "name": "coordination.k8s.io",
                    "versions": [{"groupVersion": "coordination.k8s.io/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": "coordination.k8s.io/v1", "version": "v1"}
                }
            ]
        }),
        "/apis/authentication.k8s.io/v1" => json!({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "authentication.k8s.io/v1",
            "resources": [{"name": "tokenreviews", "singularName": "tokenreview", "namespaced": false,
                           "kind": "TokenReview", "verbs": ["create"]},
                           {"name": "selfsubjectreviews", "singularName": "selfsubjectreview", "namespaced": false,
                           "kind": "SelfSubjectReview", "verbs": ["create"]}]
        }),
        "/apis/authorization.k8s.io/v1" => json!({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "authorization.k8s.io/v1",
            "resources": [{"name": "selfsubjectaccessreviews", "singularName": "selfsubjectaccessreview",
                           "namespaced": false, "kind": "SelfSubjectAccessReview", "verbs": ["create"]}]
        }),
        "/apis/coordination.k8s.io/v1" => json!({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "coordination.k8s.io/v1",
            "resources": [{"name": "leases", "singularName": "lease", "namespaced": true, "kind": "Lease",
                           "verbs": ["create", "delete", "get", "list", "patch", "update"]}]
        }),
        p if p == format!("/apis/{GROUP}/{VERSION}") => {
            let mut resources = Vec::new();
            for r in RESOURCES {
                resources.push(json!({
                    "name": r.plural, "singularName": r.singular, "namespaced": true, "kind": r.kind,
                    "verbs": ["create", "delete", "get", "list", "patch", "update"],
                    "shortNames": r.short_names, "categories": ["ichor"]
                }));
                if r.has_status {
                    resources.push(json!({
                        "name": format!("{}/status", r.plural), "singularName": "", "namespaced": true,
                        "kind": r.kind, "verbs": ["get", "patch", "update"]
                    }));
                }
            }
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
        }
        "/openapi/v3" => json!({
            "paths": {
                format!("apis/{GROUP}/{VERSION}"): {"serverRelativeURL": format!("/openapi/v3/apis/{GROUP}/{VERSION}")}
            }
        }),
        p if p == format!("/openapi/v3/apis/{GROUP}/{VERSION}") => openapi_v3(),
        _ => return None,
    };
    Some(doc)
}

/// The group's OpenAPI v3 document, as much of it as kubectl reads: each kind's PATCH operation
/// with its group-version-kind and the `fieldValidation` parameter, which tells kubectl that the
/// server validates fields itself.
fn openapi_v3() -> Value {
    let mut paths = serde_json::Map::new();
    for r in RESOURCES {
        let gvk = json!({"group": GROUP, "version": VERSION, "kind": r.kind});
        let query = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string"}});
        let op = |action: &str| {
            json!({
                "operationId": format!("{action}{}", r.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [query("dryRun"), query("fieldManager"), query("fieldValidation")],
                "responses": {"200": {"description": "OK"}}
            })
        };
        paths.insert(
            format!("/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/{}/{{name}}", r.plural),
            json!({"get": op("get"), "put": op("put"), "patch": op("patch"), "delete": op("delete")}),
        );
        paths.insert(
            format!(
                "/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/{}",
                r.plural
            ),
            json!({"get": op("list"), "post": op("post")}),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "ichor demo cluster", "version": VERSION},
        "paths": paths,
        "components": {"schemas": {}}
    })
}

/// Refuses a listen address that is not loopback unless remote access was asked for.
pub fn check_listen(addr: &SocketAddr, allow_remote: bool) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() && !allow_remote {
        anyhow::bail!(
            "refusing to listen on {addr}: the demo cluster has fixed, well-known tokens; use a loopback address or pass --allow-remote"
        );
    }
    Ok(())
}

/// Writes a kubeconfig for the admin user of a demo cluster served at `addr`.
pub fn write_kubeconfig(path: &Path, addr: &SocketAddr) -> anyhow::Result<()> {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: ichor-demo\n  cluster:\n    server: http://{addr}\n\
contexts:\n- name: ichor-demo\n  context:\n    cluster: ichor-demo\n    user: admin\n    namespace: default\n\
current-context: ichor-demo\nusers:\n- name: admin\n  user:\n    token: {}\n",
        users::ADMIN_TOKEN
    );
    std::fs::write(path, text).with_context(|| format!("writing kubeconfig {}", path.display()))
}

/// Serves the API on `listener` over HTTP/1.1 and h2c until the task is dropped. Loopback
/// only unless the caller checked otherwise ([`check_listen`]).
pub async fn serve(api: EmbeddedApi, listener: TcpListener) -> anyhow::Result<()> {
    loop {
        let (stream, _) = listener.accept().await.context("accepting a connection")?;
        let api = api.clone();
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let api = api.clone();
                    async move {
                        let (mut parts, body) = req.into_parts();
                        // kubectl (client-go) sends no bearer token over plain HTTP, so, like
                        // kube-apiserver's old localhost-only insecure port, a request without
                        // credentials acts as the demo admin; a token that is sent still decides,
                        // and `kubectl --as viewer` tries other users through impersonation.
                        if !parts.headers.contains_key(hyper::header::AUTHORIZATION) {
                            parts.headers.insert(
                                hyper::header::AUTHORIZATION,
                                hyper::header::HeaderValue::from_static(ADMIN_BEARER),
                            );
                        }
                        let bytes: Bytes = body
                            .collect()
                            .await
                            .map_err(std::io::Error::other)?
                            .to_bytes();
                        // A concrete error type: hyper's bounds do not infer a boxed one here.
                        api.serve(hyper::Request::from_parts(parts, bytes))
                            .await
                            .map_err(|e: BoxError| std::io::Error::other(e.to_string()))
                    }
                });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            if let Err(e) = builder.serve_connection(TokioIo::new(stream), svc).await {
                tracing::debug!(error = %e, "demo cluster connection ended");
            }
        });
    }
}
