//! What the controller reconciles from: the operations, clusters and machines, read object by
//! object (`tolerant`). [`Watching`] keeps them as a controller does, with one watch of each
//! kind (kube-runtime's watcher and reflector: one list at the start, then the changes), so a
//! pass costs the API nothing; [`World::listed`] lists them, for a test's one pass at a time.
//!
//! A pass needs only the operations not yet finished, the clusters they name and those
//! clusters' machines, with every object that cannot be read: [`Watching::world`] takes those
//! from the watched objects (a fleet's thousands of finished operations stay where they are).

use super::tolerant::{self, Listed, Tolerant, Unreadable};
use futures_util::StreamExt as _;
use ichor_resources::{Machine, TalosCluster, TalosOperation};
use kube::api::{Api, ObjectMeta};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde::de::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The objects of one pass.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) ops: Listed<TalosOperation>,
    pub(crate) clusters: Listed<TalosCluster>,
    pub(crate) machines: Listed<Machine>,
}

/// Whether an operation has finished (Completed or Failed).
pub(crate) fn is_finished(op: &TalosOperation) -> bool {
    op.status
        .as_ref()
        .is_some_and(|s| s.phase == "Completed" || s.phase == "Failed")
}

impl World {
    /// Every operation, cluster and machine, listed.
    pub(crate) async fn listed(client: &kube::Client) -> anyhow::Result<World> {
        use anyhow::Context as _;
        Ok(World {
            ops: tolerant::list(client).await.context("listing operations")?,
            clusters: tolerant::list(client).await.context("listing clusters")?,
            machines: tolerant::list(client).await.context("listing machines")?,
        })
    }

    /// Whether an operation is running: its machine steps advance with time, so the next pass
    /// is due after a while even if nothing changes.
    pub(crate) fn has_running(&self) -> bool {
        self.ops
            .items
            .iter()
            .any(|o| o.status.as_ref().is_some_and(|s| s.phase == "Running"))
    }
}

/// One watched object: the kind it is, or why it cannot be read as that.
#[derive(Clone, Debug)]
pub(crate) struct Watched<K>(Result<K, Box<Unreadable>>);

/// Any JSON is a watched object; one that does not read as `K` says why (a watch that refused
/// it would stop for every other object).
impl<'de, K: Tolerant> Deserialize<'de> for Watched<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Watched<K>, D::Error> {
        let raw = Value::deserialize(d)?;
        Ok(Watched(
            ichor_resources::tolerant::decode::<K>(raw).map_err(Box::new),
        ))
    }
}

impl<K: Tolerant> kube::Resource for Watched<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }
    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        match &self.0 {
            Ok(k) => k.meta(),
            Err(u) => &u.meta,
        }
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match &mut self.0 {
            Ok(k) => k.meta_mut(),
            Err(u) => &mut u.meta,
        }
    }
}

/// The watched objects of one kind.
struct Kind<K: Tolerant + Clone + 'static> {
    store: Store<Watched<K>>,
    task: tokio::task::JoinHandle<()>,
}

impl<K> Kind<K>
where
    K: Tolerant + Clone + std::fmt::Debug + Send + Sync + 'static,
{
    /// Watches every `K`, bumping `changes` on each event (and each failure, after which the
    /// watcher backs off and lists again).
    fn follow(client: &kube::Client, changes: tokio::sync::watch::Sender<u64>) -> Kind<K> {
        let api: Api<Watched<K>> = Api::all(client.clone());
        let (store, writer) = reflector::store();
        let events = reflector::reflector(
            writer,
            watcher(api, watcher::Config::default()).default_backoff(),
        );
        let task = tokio::spawn(events.for_each(move |event| {
            if let Err(e) = &event {
                tracing::debug!(error = %e, kind = %K::kind(&()), "the controller's watch failed; it lists again");
            }
            changes.send_modify(|n| *n = n.wrapping_add(1));
            std::future::ready(())
        }));
        Kind { store, task }
    }

    /// The readable objects `keep` keeps, and every unreadable one.
    fn listed(&self, keep: impl Fn(&K) -> bool) -> Listed<K> {
        let mut listed = Listed {
            items: Vec::new(),
            unreadable: Vec::new(),
        };
        for w in self.store.state() {
            match &w.0 {
                Ok(k) if keep(k) => listed.items.push(k.clone()),
                Ok(_) => {}
                Err(u) => listed.unreadable.push((**u).clone()),
            }
        }
        listed
    }
}

impl<K: Tolerant + Clone + 'static> Drop for Kind<K> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The operations, clusters and machines as the controller's watches keep them.
pub(crate) struct Watching {
    ops: Kind<TalosOperation>,
    clusters: Kind<TalosCluster>,
    machines: Kind<Machine>,
    changes: tokio::sync::watch::Receiver<u64>,
}

impl Watching {
    /// Starts the three watches, acting through `client`.
    pub(crate) fn start(client: &kube::Client) -> Watching {
        let (tx, changes) = tokio::sync::watch::channel(0);
        Watching {
            ops: Kind::follow(client, tx.clone()),
            clusters: Kind::follow(client, tx.clone()),
            machines: Kind::follow(client, tx),
            changes,
        }
    }

    /// Once each watch has listed.
    pub(crate) async fn ready(&self) {
        let _ = self.ops.store.wait_until_ready().await;
        let _ = self.clusters.store.wait_until_ready().await;
        let _ = self.machines.store.wait_until_ready().await;
    }

    /// What one pass needs (see the module's notes). The changes up to now are seen.
    pub(crate) fn world(&mut self) -> World {
        self.changes.borrow_and_update();
        let ops = self.ops.listed(|o| !is_finished(o));
        let named: BTreeSet<(String, String)> = ops
            .items
            .iter()
            .map(|o| (ns_of(o), o.spec.cluster.clone()))
            .collect();
        let clusters = self
            .clusters
            .listed(|c| named.contains(&(ns_of(c), name_of(c))));
        let machines = self
            .machines
            .listed(|m| named.contains(&(ns_of(m), m.spec.cluster.clone())));
        World {
            ops,
            clusters,
            machines,
        }
    }

    /// Once any watched object changed since the last [`Watching::world`] (never, if the
    /// watches have stopped).
    pub(crate) async fn changed(&mut self) {
        if self.changes.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

fn name_of<K: kube::Resource>(k: &K) -> String {
    k.meta().name.clone().unwrap_or_default()
}

fn ns_of<K: kube::Resource>(k: &K) -> String {
    k.meta().namespace.clone().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_that_does_not_read_is_watched_as_unreadable() {
        let bad = json!({"apiVersion": "ichor.maesh.dev/v1alpha1", "kind": "TalosOperation",
                         "metadata": {"name": "op", "namespace": "default"},
                         "spec": {"cluster": 7}});
        let w: Watched<TalosOperation> = serde_json::from_value(bad).unwrap();
        assert!(w.0.is_err());
        assert_eq!(kube::Resource::meta(&w).name.as_deref(), Some("op"));
    }
}
