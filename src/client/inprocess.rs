//! The in-process client: the service's handlers called directly.

use super::{Backend, OperationClient, read_only_refusal};
use crate::model::{
    ApiError, Cluster, Confirmed, Created, Operation, OperationRequest, Permissions, Plan,
};
use crate::service::OperationService;
use crate::service::access::Caller;

/// Calls the service in the same process, as the caller.
pub struct InProcessClient {
    service: OperationService,
    caller: Caller,
    backend: Backend,
    read_only: bool,
}

impl InProcessClient {
    pub fn new(
        service: OperationService,
        caller: Caller,
        backend: Backend,
        read_only: bool,
    ) -> InProcessClient {
        InProcessClient {
            service,
            caller,
            backend,
            read_only,
        }
    }

    fn writable(&self, what: &str) -> Result<(), ApiError> {
        if self.read_only {
            return Err(read_only_refusal(what));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl OperationClient for InProcessClient {
    fn backend(&self) -> Backend {
        self.backend.clone()
    }

    fn user(&self) -> Option<String> {
        self.caller.identity.as_ref().map(|i| i.user.clone())
    }

    async fn list_operations(&self, namespace: Option<&str>) -> Result<Vec<Operation>, ApiError> {
        self.service.list_operations(&self.caller, namespace).await
    }

    async fn get_operation(&self, namespace: &str, name: &str) -> Result<Operation, ApiError> {
        self.service
            .get_operation(&self.caller, namespace, name)
            .await
    }

    async fn plan_operation(&self, req: &OperationRequest) -> Result<Plan, ApiError> {
        self.service.plan_operation(&self.caller, req).await
    }

    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError> {
        self.writable("starting an operation")?;
        self.service.create_operation(&self.caller, req).await
    }

    async fn set_operation_paused(
        &self,
        namespace: &str,
        name: &str,
        paused: bool,
        confirmed: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        self.writable(if paused {
            "pausing an operation"
        } else {
            "resuming an operation"
        })?;
        self.service
            .set_operation_paused(&self.caller, namespace, name, paused, confirmed)
            .await
    }

    async fn delete_operation(
        &self,
        namespace: &str,
        name: &str,
        confirmed: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        self.writable("deleting an operation")?;
        self.service
            .delete_operation(&self.caller, namespace, name, confirmed)
            .await
    }

    async fn permissions(&self, namespace: &str) -> Result<Permissions, ApiError> {
        if self.read_only {
            return Ok(Permissions::default());
        }
        self.service.permissions(&self.caller, namespace).await
    }

    async fn list_clusters(&self, namespace: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        self.service.list_clusters(&self.caller, namespace).await
    }

    async fn get_cluster(&self, namespace: &str, name: &str) -> Result<Cluster, ApiError> {
        self.service
            .get_cluster(&self.caller, namespace, name)
            .await
    }
}
