//! The one test fake of [`OperationClient`], for the tests and the benches (behind the `fake`
//! feature; never in the product): it answers from data it can be told to change (the
//! operations, paged and filtered as the service pages them; the clusters; the permissions), or
//! with answers scripted per call, one a call; it records every call, and may take its time on
//! tokio's clock or panic where a test wants a bug.

use async_trait::async_trait;
use ichor_model::{
    ApiError, Cluster, Code, Confirmed, Created, ListQuery, Operation, OperationClient,
    OperationPage, OperationRequest, Permissions, Plan,
};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

/// A scripted answer.
pub type Answer<T> = Result<T, ApiError>;

/// A client for tests and benches (see the module's doc). Lock a field to change what it
/// answers.
#[derive(Default)]
pub struct FakeClient {
    /// The operations the reads answer with when nothing is scripted.
    pub ops: Mutex<Vec<Operation>>,
    pub clusters: Mutex<Vec<Cluster>>,
    pub permissions: Mutex<Permissions>,
    pub user: Option<String>,
    /// Scripted answers, taken before the data, one a call.
    pub lists: Mutex<VecDeque<Answer<Vec<Operation>>>>,
    pub gets: Mutex<VecDeque<Answer<Operation>>>,
    pub creates: Mutex<VecDeque<Answer<Created>>>,
    pub pauses: Mutex<VecDeque<Answer<Operation>>>,
    pub deletes: Mutex<VecDeque<Answer<()>>>,
    /// How long a call takes to answer, by its name (`"list"`, `"pause"`…), on tokio's clock.
    pub delays: Mutex<BTreeMap<&'static str, Duration>>,
    /// A call that panics, by its name (a bug in a worker).
    pub panics_on: Option<&'static str>,
    /// The request id of every create, in order.
    pub request_ids: Mutex<Vec<String>>,
    calls: Mutex<Vec<&'static str>>,
    answered: Mutex<Vec<&'static str>>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An answer to a call nobody scripted.
fn not_scripted(what: &str) -> ApiError {
    ApiError::new(Code::Unimplemented, format!("{what}: not scripted"))
}

impl FakeClient {
    /// A fake answering with `ops`.
    pub fn with_operations(ops: Vec<Operation>) -> FakeClient {
        FakeClient {
            ops: Mutex::new(ops),
            ..FakeClient::default()
        }
    }

    /// Every call asked, by name, in order.
    pub fn calls(&self) -> Vec<&'static str> {
        locked(&self.calls).clone()
    }

    /// How many `name` calls were asked.
    pub fn count(&self, name: &str) -> usize {
        locked(&self.calls).iter().filter(|c| **c == name).count()
    }

    /// How many `name` calls were answered (ran to their end).
    pub fn answered(&self, name: &str) -> usize {
        locked(&self.answered)
            .iter()
            .filter(|c| **c == name)
            .count()
    }

    /// Records the call, panics if it should, and takes its time.
    async fn call(&self, name: &'static str) {
        locked(&self.calls).push(name);
        if self.panics_on == Some(name) {
            panic!("a bug while answering {name}");
        }
        let delay = locked(&self.delays).get(name).copied();
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
    }

    fn answer<T>(&self, name: &'static str, a: Answer<T>) -> Answer<T> {
        locked(&self.answered).push(name);
        a
    }

    fn operation(&self, name: &str) -> Answer<Operation> {
        locked(&self.ops)
            .iter()
            .find(|o| o.name == name)
            .cloned()
            .ok_or_else(|| ApiError::new(Code::NotFound, format!("operation {name} is gone")))
    }
}

#[async_trait]
impl OperationClient for FakeClient {
    fn user(&self) -> Option<String> {
        self.user.clone()
    }
    async fn list_page(&self, q: &ListQuery) -> Result<OperationPage, ApiError> {
        self.call("list").await;
        let scripted = locked(&self.lists).pop_front();
        let page = match scripted {
            Some(a) => a.map(|ops| OperationPage {
                total: ops.len(),
                operations: ops,
                ..Default::default()
            }),
            None => ichor_service::list::page(locked(&self.ops).clone(), q),
        };
        self.answer("list", page)
    }
    async fn get_operation(&self, _: &str, name: &str) -> Result<Operation, ApiError> {
        self.call("get").await;
        let scripted = locked(&self.gets).pop_front();
        let a = scripted.unwrap_or_else(|| self.operation(name));
        self.answer("get", a)
    }
    async fn plan_operation(&self, _: &OperationRequest) -> Result<Plan, ApiError> {
        self.call("plan").await;
        self.answer("plan", Err(not_scripted("plan")))
    }
    async fn create_operation(&self, req: &OperationRequest) -> Result<Created, ApiError> {
        self.call("create").await;
        locked(&self.request_ids).push(req.request_id.clone().unwrap_or_default());
        let scripted = locked(&self.creates).pop_front();
        self.answer(
            "create",
            scripted.unwrap_or_else(|| Err(not_scripted("create"))),
        )
    }
    /// Answers with the operation as it stands (the fake changes nothing).
    async fn set_operation_paused(
        &self,
        _: &str,
        name: &str,
        _: bool,
        _: Option<&Confirmed>,
    ) -> Result<Operation, ApiError> {
        self.call("pause").await;
        let scripted = locked(&self.pauses).pop_front();
        let a = scripted.unwrap_or_else(|| self.operation(name));
        self.answer("pause", a)
    }
    async fn delete_operation(
        &self,
        _: &str,
        _: &str,
        _: Option<&Confirmed>,
    ) -> Result<(), ApiError> {
        self.call("delete").await;
        let scripted = locked(&self.deletes).pop_front();
        self.answer(
            "delete",
            scripted.unwrap_or_else(|| Err(not_scripted("delete"))),
        )
    }
    async fn permissions(&self, _: &str) -> Result<Permissions, ApiError> {
        self.call("permissions").await;
        let p = *locked(&self.permissions);
        self.answer("permissions", Ok(p))
    }
    async fn list_clusters(&self, _: Option<&str>) -> Result<Vec<Cluster>, ApiError> {
        self.call("clusters").await;
        let c = locked(&self.clusters).clone();
        self.answer("clusters", Ok(c))
    }
    async fn get_cluster(&self, _: &str, name: &str) -> Result<Cluster, ApiError> {
        self.call("cluster").await;
        let found = locked(&self.clusters)
            .iter()
            .find(|c| c.name == name)
            .cloned()
            .ok_or_else(|| ApiError::new(Code::NotFound, format!("cluster {name} is gone")));
        self.answer("cluster", found)
    }
}
