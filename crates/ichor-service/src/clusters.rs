//! ListClusters and GetCluster, and which cluster a request names (by name, or the only one of
//! its namespace). A cluster or machine that cannot be read is listed as such, never dropped.

use super::OperationService;
use super::access::Caller;
use super::convert;
use super::missing::{cluster_not_found, cluster_unreadable};
use super::tolerant::Unreadable;
use super::validate::{self, NameOf};
use ichor_model::{ApiError, Cluster, Code, Reason};
use ichor_resources::{IchorInstallation, Machine, TalosCluster, TalosOperation, names};

/// The cluster a request names, from the namespace's clusters; with no name, the only one.
pub(super) fn pick_cluster(
    namespace: &str,
    name: Option<&str>,
    mut all: Vec<TalosCluster>,
    unreadable: &[Unreadable],
) -> Result<TalosCluster, ApiError> {
    if let Some(name) = name {
        let found = all
            .iter()
            .position(|c| c.metadata.name.as_deref() == Some(name));
        return match found {
            Some(i) => Ok(all.swap_remove(i)),
            None => match unreadable.iter().find(|u| u.name() == name) {
                Some(u) => Err(cluster_unreadable(u)),
                None => Err(cluster_not_found(
                    namespace,
                    name,
                    ApiError::new(Code::NotFound, "not found"),
                )),
            },
        };
    }
    match (all.len(), unreadable) {
        (1, []) => Ok(all.remove(0)),
        (0, [u]) => Err(cluster_unreadable(u)),
        (0, []) => Err(ApiError::said(
            Code::NotFound,
            Reason::NoClusters,
            &[("namespace", namespace)],
        )),
        _ => {
            let mut names: Vec<String> = all
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .chain(unreadable.iter().map(Unreadable::name))
                .collect();
            names.sort();
            let choices = names.join(", ");
            Err(ApiError::said(
                Code::InvalidArgument,
                Reason::ClusterRequired,
                &[("namespace", namespace), ("choices", &choices)],
            ))
        }
    }
}

impl OperationService {
    /// The cluster named `name`, or the only one in the namespace.
    pub(super) async fn resolve_cluster(
        &self,
        caller: &Caller,
        namespace: &str,
        name: Option<&str>,
    ) -> Result<TalosCluster, ApiError> {
        if let Some(name) = name {
            return match self
                .get_tolerant::<TalosCluster>(caller, namespace, name, "reading the cluster")
                .await?
            {
                Some(Ok(c)) => Ok(c),
                Some(Err(u)) => Err(cluster_unreadable(&u)),
                None => Err(cluster_not_found(
                    namespace,
                    name,
                    ApiError::new(Code::NotFound, "not found"),
                )),
            };
        }
        let (all, unreadable) = self
            .list_tolerant::<TalosCluster>(caller, Some(namespace), "listing clusters")
            .await?;
        pick_cluster(namespace, None, all, &unreadable)
    }

    /// ListClusters: one namespace, or every namespace with `None`. A cluster or machine that
    /// cannot be read is listed as such; the rest is as the cluster holds it.
    pub async fn list_clusters(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
    ) -> Result<Vec<Cluster>, ApiError> {
        validate::list_scope(namespace)?;
        let (clusters, bad_clusters) = self
            .list_tolerant::<TalosCluster>(caller, namespace, "listing clusters")
            .await?;
        let (machines, bad_machines) = self
            .list_tolerant::<Machine>(caller, namespace, "listing machines")
            .await?;
        let (installs, _) = self
            .list_tolerant::<IchorInstallation>(caller, namespace, "listing ichor installations")
            .await?;
        let (ops, _) = self
            .list_tolerant::<TalosOperation>(caller, namespace, "listing operations")
            .await?;
        let readable = clusters.iter().map(|c| {
            let ns = &c.metadata.namespace;
            let ops = in_namespace(&ops, ns, |o| &o.metadata.namespace);
            let install = installs.iter().find(|i| {
                i.metadata.namespace == *ns
                    && i.metadata.name.as_deref() == Some(names::ICHOR_INSTALLATION_NAME)
            });
            let (machines, bad) = machines_in(&machines, &bad_machines, ns);
            convert::cluster(c, &machines, &bad, install, &ops)
        });
        let unreadable = bad_clusters.iter().map(|u| {
            let (machines, bad) = machines_in(&machines, &bad_machines, &u.meta.namespace);
            convert::unreadable_cluster(u, &machines, &bad)
        });
        Ok(readable.chain(unreadable).collect())
    }

    /// GetCluster. A cluster that cannot be read comes back saying so.
    pub async fn get_cluster(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<Cluster, ApiError> {
        validate::namespace(namespace)?;
        validate::name(NameOf::Cluster, name)?;
        let c = self
            .get_tolerant::<TalosCluster>(caller, namespace, name, "reading the cluster")
            .await?;
        let (machines, bad_machines) = self
            .list_tolerant::<Machine>(caller, Some(namespace), "listing machines")
            .await?;
        let c = match c {
            Some(Ok(c)) => c,
            Some(Err(u)) => return Ok(convert::unreadable_cluster(&u, &machines, &bad_machines)),
            None => {
                return Err(cluster_not_found(
                    namespace,
                    name,
                    ApiError::new(Code::NotFound, "not found"),
                ));
            }
        };
        let install = match self
            .get_tolerant::<IchorInstallation>(
                caller,
                namespace,
                names::ICHOR_INSTALLATION_NAME,
                "reading the ichor installation",
            )
            .await?
        {
            Some(Ok(i)) => Some(i),
            _ => None,
        };
        let (ops, _) = self
            .list_tolerant::<TalosOperation>(caller, Some(namespace), "listing operations")
            .await?;
        Ok(convert::cluster(
            &c,
            &machines,
            &bad_machines,
            install.as_ref(),
            &ops,
        ))
    }
}

/// The items of `all` in the namespace `ns` (`namespace` reads an item's).
fn in_namespace<T: Clone>(
    all: &[T],
    ns: &Option<String>,
    namespace: impl Fn(&T) -> &Option<String>,
) -> Vec<T> {
    all.iter().filter(|x| namespace(x) == ns).cloned().collect()
}

/// A cluster's machines: those of its namespace that could be read, and those that could not.
fn machines_in(
    machines: &[Machine],
    bad: &[Unreadable],
    ns: &Option<String>,
) -> (Vec<Machine>, Vec<Unreadable>) {
    (
        in_namespace(machines, ns, |m| &m.metadata.namespace),
        in_namespace(bad, ns, |u| &u.meta.namespace),
    )
}
