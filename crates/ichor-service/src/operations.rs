//! The operation reads: ListOperations' entry (`list.rs` filters, orders and pages) and
//! GetOperation. An operation that cannot be read is listed, or returned, as such.

use super::OperationService;
use super::access::Caller;
use super::missing::op_not_found;
use super::tolerant;
use super::validate::{self, NameOf};
use super::{convert, list};
use ichor_model::{ApiError, Code, ListQuery, Operation, OperationPage};
use ichor_resources::TalosOperation;

impl OperationService {
    /// ListOperations: one page of the operations the query names (an object that cannot be
    /// read is listed as such, never dropped).
    pub async fn list_page(
        &self,
        caller: &Caller,
        query: &ListQuery,
    ) -> Result<OperationPage, ApiError> {
        list::check(query)?;
        let ns = query.namespace.as_deref();
        if list::unfiltered(query) {
            if query.known_version.is_none() {
                // A first page: the list's first chunk says whether it is small (then it is
                // the whole list, in one request, as before).
                let (good, bad, more) = self
                    .list_chunk::<TalosOperation>(caller, ns, "listing operations", None)
                    .await?;
                if more.is_none() {
                    return list::page(operations_of(&good, &bad), query);
                }
            }
            if let Some(page) = self.page_by_metadata(caller, query).await? {
                return Ok(page);
            }
        }
        let ops = self.read_operations(caller, ns).await?;
        list::page(ops, query)
    }

    /// The operations in scope, as the caller may read them.
    async fn read_operations(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
    ) -> Result<Vec<Operation>, ApiError> {
        let (ops, unreadable) = self
            .list_tolerant::<TalosOperation>(caller, namespace, "listing operations")
            .await?;
        Ok(operations_of(&ops, &unreadable))
    }

    /// GetOperation. An object that cannot be read comes back saying so.
    pub async fn get_operation(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
    ) -> Result<Operation, ApiError> {
        validate::namespace(namespace)?;
        validate::name(NameOf::Operation, name)?;
        match self
            .get_tolerant::<TalosOperation>(caller, namespace, name, "reading the operation")
            .await?
        {
            Some(Ok(op)) => Ok(convert::operation(&op)),
            Some(Err(u)) => Ok(convert::unreadable_operation(&u)),
            None => Err(op_not_found(
                namespace,
                name,
                ApiError::new(Code::NotFound, "not found"),
            )),
        }
    }
}

/// Operations as listed: the readable ones, and a row for each one that cannot be read.
fn operations_of(ops: &[TalosOperation], unreadable: &[tolerant::Unreadable]) -> Vec<Operation> {
    if let Some(first) = unreadable.first() {
        tracing::info!(
            count = unreadable.len(),
            first = %first.name(),
            why = %first.why,
            "operations that cannot be read are listed as such"
        );
    }
    ops.iter()
        .map(convert::operation)
        .chain(unreadable.iter().map(convert::unreadable_operation))
        .collect()
}
