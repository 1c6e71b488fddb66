//! Shared fixtures for the integration tests.
#![allow(dead_code)]

pub mod attacks;
pub mod dialog;
pub mod driver;
pub mod fixtures;
pub mod fluent;
pub mod lines;
pub mod paths;
pub mod process;
pub mod proxy;
pub mod pty;
pub mod server;
pub mod snap;

use ichor_demo::apiserver::{EmbeddedApi, WriteRecord};
use ichor_resources::*;
pub use server::SETTLE_WINDOW;

/// A small cluster `c1` (2 control planes, 4 workers, one held) with the ichor installation.
pub fn small_cluster(api: &EmbeddedApi) {
    let mut c = TalosCluster::new(
        "c1",
        TalosClusterSpec {
            talos_version: "v1.9.2".into(),
            kubernetes_version: "v1.32.3".into(),
            cni: CniSpec {
                kube_proxy: "enabled".into(),
            },
        },
    );
    c.metadata.namespace = Some("default".into());
    api.seed(&c).unwrap();
    let mut i = IchorInstallation::new(
        "ichor",
        IchorInstallationSpec {
            version: "v0.14.2".into(),
        },
    );
    i.metadata.namespace = Some("default".into());
    api.seed(&i).unwrap();
    for m in [
        machine("c1", "c1-w-b", "worker", None, true, None),
        machine("c1", "c1-cp-b", "controlplane", Some(2), true, None),
        machine("c1", "c1-w-a", "worker", Some(7), true, None),
        machine("c1", "c1-cp-a", "controlplane", Some(1), true, None),
        machine(
            "c1",
            "c1-w-held",
            "worker",
            Some(5),
            true,
            Some("disk replacement"),
        ),
        machine("c1", "c1-w-c", "worker", Some(6), true, None),
        machine("c1", "c1-w-unapproved", "worker", Some(1), false, None),
    ] {
        let mut m = m;
        m.metadata.namespace = Some("default".into());
        api.seed(&m).unwrap();
    }
}

/// A TalosOperation object.
pub fn op(name: &str, cluster: &str, kind: &str, max_unavailable: i32) -> TalosOperation {
    let mut o = TalosOperation::new(
        name,
        TalosOperationSpec {
            cluster: cluster.into(),
            kind: kind.into(),
            max_unavailable,
            paused: false,
        },
    );
    o.metadata.namespace = Some("default".into());
    o
}

/// The write log as "verb resource by user" lines.
/// The writes of the operations' protocol ("create talosoperations by admin"), in order: the
/// Events that record who asked, made after a write that landed, are left to
/// [`events_written`] (a refusal test asserts the whole log empty, Events included).
pub fn names(log: &[WriteRecord]) -> Vec<String> {
    log.iter()
        .filter(|w| w.resource != "events")
        .map(|w| format!("{} {} by {}", w.verb, w.resource, w.user))
        .collect()
}

/// The Events written, as "create events by admin".
pub fn events_written(log: &[WriteRecord]) -> Vec<String> {
    log.iter()
        .filter(|w| w.resource == "events")
        .map(|w| format!("{} {} by {}", w.verb, w.resource, w.user))
        .collect()
}

/// Whether a start claim is held on cluster `c1` of `default` (a Lease with a holder).
pub fn claim_held(api: &EmbeddedApi) -> bool {
    let name = format!("{}c1", names::START_CLAIM_PREFIX);
    api.object("leases", "default", &name)
        .and_then(|l| l.pointer("/spec/holderIdentity").cloned())
        .is_some_and(|h| !h.is_null() && h != "")
}

/// Waits (up to 10 s, polling) until no start claim is held on cluster `c1` of `default`: a
/// settling start gave it back once its settle window passed.
pub async fn claim_given_back(api: &EmbeddedApi) {
    eventually("the start claim of c1 was given back", || !claim_held(api)).await;
}

/// Waits until `done` holds, asking every 20 ms; fails the test naming `what` once
/// [`lines::NEVER`] has passed (a wait for an event, not a pause that hopes it is over). The
/// tests' one "poll until"; [`eventually_async`] when the question itself awaits.
pub async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    eventually_async(what, async || done()).await;
}

/// [`eventually`] for a test without a runtime (a child process, a blocking client).
pub fn eventually_blocking(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + lines::NEVER;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "never came, in {:?}: {what}",
            lines::NEVER
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// [`eventually`] for a question that awaits (a call, a read).
pub async fn eventually_async(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + lines::NEVER;
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never came, in {:?}: {what}",
            lines::NEVER
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Waits until the API holds no request it has not answered or (a late fault's) carried out:
/// after it, a write that was sent has been written.
pub async fn api_settled(api: &EmbeddedApi) {
    eventually("every request answered", || api.requests_in_hand() == 0).await;
}

/// How many TalosOperations were created.
pub fn operations_created(api: &EmbeddedApi) -> usize {
    api.write_log()
        .iter()
        .filter(|w| w.verb == "create" && w.resource == "talosoperations")
        .count()
}

/// A kube client whose requests carry impersonation headers.
pub fn impersonating(api: &EmbeddedApi, token: &str, user: &str, groups: &[&str]) -> kube::Client {
    let inner = api.client(token);
    let user = user.to_string();
    let groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
    let svc = tower::service_fn(move |mut req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        req.headers_mut()
            .insert("impersonate-user", user.parse().unwrap());
        for g in &groups {
            req.headers_mut()
                .append("impersonate-group", g.parse().unwrap());
        }
        async move { inner.send(req).await }
    });
    kube::Client::new(svc, "default")
}

/// An insta snapshot named as when each test file was a binary of its own
/// (`screens__name.snap`): the test module's own name before the snapshot's, not the path of
/// the binary that now includes it.
#[macro_export]
macro_rules! snapshot {
    ($name:expr, $value:expr $(,)?) => {{
        let module = module_path!().rsplit("::").next().unwrap_or_default();
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!(format!("{module}__{}", $name), $value));
    }};
}
