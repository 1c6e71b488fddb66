//! The embedded API over plain HTTP for kubectl (`ichor-tui demo-cluster`): the listen check,
//! the kubeconfig and the server.

use super::auth::users;
use super::{BoxError, EmbeddedApi};
use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::net::SocketAddr;
use std::path::Path;
use tokio::net::TcpListener;

const ADMIN_BEARER: &str = "Bearer demo-admin-token";

/// Refuses a listen address that is not loopback unless remote access was asked for.
pub fn check_listen(addr: &SocketAddr, allow_remote: bool) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() && !allow_remote {
        anyhow::bail!(
            "refusing to listen on {addr}: the demo cluster has fixed, well-known tokens; use a loopback address or pass --allow-remote"
        );
    }
    Ok(())
}

/// The demo users a kubeconfig names, each a context of its own: the admin first (the current
/// context, `ichor-demo`), then one context per other person, named as the user.
/// Each names its token, and its user and group for `as` (kubectl sends no token over plain
/// HTTP: it impersonates them instead; the admin needs neither).
const KUBECONFIG_USERS: &[(&str, &str, &str, Option<&str>)] = &[
    ("ichor-demo", users::ADMIN, users::ADMIN_TOKEN, None),
    (
        users::VIEWER,
        users::VIEWER,
        users::VIEWER_TOKEN,
        Some("ichor:viewers"),
    ),
    (
        users::OPERATOR,
        users::OPERATOR,
        users::OPERATOR_TOKEN,
        Some("ichor:operators"),
    ),
    (
        users::OPERATIONS_READER,
        users::OPERATIONS_READER,
        users::OPERATIONS_READER_TOKEN,
        Some("ichor:operation-readers"),
    ),
    (
        users::CLUSTER_EDITOR,
        users::CLUSTER_EDITOR,
        users::CLUSTER_EDITOR_TOKEN,
        Some("ichor:cluster-editors"),
    ),
];

/// A kubeconfig for a demo cluster served at `addr`: one context per demo user with the
/// user's token (`--context viewer`, `--context operator`, ...), the admin's current.
pub fn kubeconfig(addr: &SocketAddr) -> String {
    let mut contexts = String::new();
    let mut users_text = String::new();
    for (context, user, token, group) in KUBECONFIG_USERS {
        contexts.push_str(&format!(
            "- name: {context}\n  context:\n    cluster: ichor-demo\n    user: {user}\n    namespace: default\n"
        ));
        users_text.push_str(&format!("- name: {user}\n  user:\n    token: {token}\n"));
        if let Some(group) = group {
            users_text.push_str(&format!("    as: {user}\n    as-groups:\n    - {group}\n"));
        }
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: ichor-demo\n  cluster:\n    server: http://{addr}\n\
contexts:\n{contexts}current-context: ichor-demo\nusers:\n{users_text}"
    )
}

/// Writes [`kubeconfig`] to `path`.
pub fn write_kubeconfig(path: &Path, addr: &SocketAddr) -> anyhow::Result<()> {
    std::fs::write(path, kubeconfig(addr))
        .with_context(|| format!("writing kubeconfig {}", path.display()))
}

/// Serves the API on `listener` over HTTP/1.1 and h2c until the task is dropped. Loopback
/// only unless the caller checked otherwise ([`check_listen`]).
pub async fn serve(api: EmbeddedApi, listener: TcpListener) -> anyhow::Result<()> {
    loop {
        let (stream, _) = listener.accept().await.context("accepting a connection")?;
        // As Go's net package does: small frames of a port-forward go out at once, not after
        // a delayed ACK (about 40 ms for each new forwarded connection otherwise).
        let _ = stream.set_nodelay(true);
        tokio::spawn(serve_connection(api.clone(), TokioIo::new(stream), true));
    }
}

/// Serves one connection, upgrades (port-forwards) included. `default_admin`: a request
/// without credentials acts as the demo admin (plain HTTP for kubectl, see [`serve`]).
pub(crate) async fn serve_connection<I>(api: EmbeddedApi, io: I, default_admin: bool)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let api = api.clone();
        async move {
            let (mut parts, body) = req.into_parts();
            // kubectl (client-go) sends no bearer token over plain HTTP, so, like
            // kube-apiserver's old localhost-only insecure port, a request without
            // credentials acts as the demo admin; a token that is sent still decides,
            // and `kubectl --as viewer` tries other users through impersonation.
            if default_admin && !parts.headers.contains_key(hyper::header::AUTHORIZATION) {
                parts.headers.insert(
                    hyper::header::AUTHORIZATION,
                    hyper::header::HeaderValue::from_static(ADMIN_BEARER),
                );
            }
            if super::portforward::parse_path(parts.uri.path().trim_end_matches('/')).is_some() {
                // An upgrade: the body stays unread, the connection is handed over.
                let resp = api.port_forward(hyper::Request::from_parts(parts, body));
                return Ok(resp.map(|b| b.map_err(|e| match e {}).boxed_unsync()));
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
    if let Err(e) = builder.serve_connection_with_upgrades(io, svc).await {
        tracing::debug!(error = %e, "demo cluster connection ended");
    }
}
