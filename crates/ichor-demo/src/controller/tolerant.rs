//! Listing as Kubernetes controllers read: object by object, with the one tolerant decoder
//! (`ichor_resources::tolerant`). One object that cannot be read as its type is an
//! [`Unreadable`] that says which object and why, and every other object of the list is read.

use anyhow::Context as _;
use ichor_resources::tolerant::decode_list;
pub(crate) use ichor_resources::tolerant::{Tolerant, Unreadable};
use kube::api::{Api, ListParams};

/// One reading of an object: kind, namespace, name, uid, resourceVersion.
pub(crate) type Identity = (String, String, String, String, String);

/// What tells this reading of an object from another: a fixed object (or one broken again) has
/// another resourceVersion.
pub(crate) fn identity(u: &Unreadable) -> Identity {
    (
        u.kind.clone(),
        u.namespace(),
        u.name(),
        u.meta.uid.clone().unwrap_or_default(),
        u.meta.resource_version.clone().unwrap_or_default(),
    )
}

/// A list read object by object.
#[derive(Debug)]
pub(crate) struct Listed<K> {
    pub(crate) items: Vec<K>,
    pub(crate) unreadable: Vec<Unreadable>,
}

/// Every `K` of every namespace, read object by object.
pub(crate) async fn list<K: Tolerant + Send + 'static>(
    client: &kube::Client,
) -> anyhow::Result<Listed<K>> {
    let api: Api<K> = Api::all(client.clone());
    let req = kube::core::Request::new(api.resource_url())
        .list(&ListParams::default())
        .context("building the list request")?;
    let body = client.request_text(req).await?;
    // Read on a thread of its own: 10,000 operations take ~100 ms to read, time the API's
    // requests (this process serves them) would otherwise wait for a runtime thread.
    let (items, unreadable, _) = tokio::task::spawn_blocking(move || decode_list::<K>(&body))
        .await
        .context("reading the list")?
        .context("reading the list")?;
    Ok(Listed { items, unreadable })
}
