//! The one mapping from an Effect to a call of the client, and from its result to an Action.

use ichor_app::action::{Action, Effect, PRIOR_RUNS};
use ichor_app::state::WriteAction;
use ichor_model::{OperationClient, PriorPaces};

/// Runs one effect against the client and says what came of it as an Action; `None` for the
/// effects that are not calls (suspend, quit). The one mapping from Effect to call.
pub async fn perform(client: &dyn OperationClient, effect: Effect) -> Option<Action> {
    Some(match effect {
        Effect::ListOperations { seq, query, more } => Action::OperationsPage {
            seq,
            more,
            result: client.list_page(&query).await,
        },
        read @ (Effect::GetOperation { .. }
        | Effect::GetManifest { .. }
        | Effect::ListEvents { .. }
        | Effect::GetCluster { .. }) => return read_one(client, read).await,
        Effect::ListClusters { seq, namespace } => Action::Clusters {
            seq,
            result: client.list_clusters(namespace.as_deref()).await,
        },
        Effect::ListRoles { namespace } => {
            Action::Roles(client.list_clusters(namespace.as_deref()).await)
        }
        Effect::PriorRuns(key) => {
            let (ns, cluster) = (key.namespace.as_str(), key.cluster.as_str());
            let runs = PriorPaces::read_runs(client, ns, cluster, key.kind, PRIOR_RUNS);
            let result = runs.await;
            Action::PriorRuns { key, result }
        }
        Effect::Plan { seq, request } => Action::Planned {
            seq,
            result: client.plan_operation(&request).await,
        },
        Effect::Create { seq, request } => Action::Started {
            seq,
            result: client.create_operation(&request).await,
        },
        Effect::Write {
            seq,
            action,
            namespace,
            name,
            confirmed,
        } => {
            let result = write(client, action, &namespace, &name, &confirmed).await;
            Action::Written {
                seq,
                action,
                namespace,
                name,
                result,
            }
        }
        Effect::Permissions { namespace } => {
            let result = client.permissions(&namespace).await;
            Action::Permissions { namespace, result }
        }
        Effect::FindStart {
            namespace,
            request_id,
        } => {
            let result = client.find_start(&namespace, &request_id).await;
            Action::StartFound { request_id, result }
        }
        // The runtime keeps the subscription itself (see `live`).
        Effect::Watch { .. }
        | Effect::SaveReport { .. }
        | Effect::Notify { .. }
        | Effect::Suspend
        | Effect::Quit
        | Effect::SwitchContext(_) => {
            return None;
        }
    })
}

/// A read of one operation, its resource as YAML, its events or one cluster.
async fn read_one(client: &dyn OperationClient, effect: Effect) -> Option<Action> {
    Some(match effect {
        Effect::GetOperation {
            seq,
            namespace,
            name,
        } => {
            let result = client.get_operation(&namespace, &name).await;
            Action::Operation {
                seq,
                namespace,
                name,
                result,
            }
        }
        Effect::GetManifest { namespace, name } => {
            let result = client.get_operation_manifest(&namespace, &name).await;
            Action::Manifest {
                namespace,
                name,
                result,
            }
        }
        Effect::ListEvents {
            seq,
            namespace,
            name,
            wanted,
        } => {
            let result = client.list_events(&namespace, &name, wanted).await;
            Action::Events {
                seq,
                namespace,
                name,
                result,
            }
        }
        Effect::GetCluster {
            seq,
            purpose,
            namespace,
            name,
        } => {
            let result = client.get_cluster(&namespace, &name).await;
            Action::Cluster {
                seq,
                purpose,
                namespace,
                name,
                result,
            }
        }
        _ => return None,
    })
}

/// A pause, resume or delete, bound to what the person confirmed.
async fn write(
    client: &dyn OperationClient,
    action: WriteAction,
    namespace: &str,
    name: &str,
    confirmed: &ichor_model::Confirmed,
) -> Result<(), ichor_model::ApiError> {
    let confirmed = Some(confirmed);
    match action {
        WriteAction::Pause | WriteAction::Resume => client
            .set_operation_paused(namespace, name, action == WriteAction::Pause, confirmed)
            .await
            .map(drop),
        WriteAction::Delete => client.delete_operation(namespace, name, confirmed).await,
    }
}
