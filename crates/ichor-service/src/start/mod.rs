//! CreateOperation, in the ADR's order and bound to what was confirmed: the request id (a
//! repeat returns the operation it made; the id is bound to its request only when the claim is
//! about to be written, so a start refused before that leaves it free), every refusal of the
//! plan on a fresh read, the plan the
//! person reviewed (its fingerprint), a dry-run create as the caller, the cluster's start claim
//! (a Lease, taken with the API server's optimistic concurrency so that of concurrent starts on
//! one cluster exactly one goes on), the spec write preconditioned on the read the refusals were
//! checked on, the create, and for kube-proxy switches the removal of the confirmation
//! annotation. A conflict anywhere starts again from the read, re-checking everything.
//!
//! The claim ends with the start's outcome: given back once the create answered (the operation
//! exists, or it was refused), so "delete it and start again" works at once. A create that got
//! no answer may still land until the API server's own request timeout has passed: the claim is
//! then kept, marked settling, and a detached task reads for the request id until then before it
//! gives the claim back; the caller is told the outcome is being settled, never to start again.

mod claim;
mod requests;
mod settle;
mod spec;

pub(crate) use claim::claim_read;
pub(crate) use requests::RequestLog;

/// The longest a start's outcome can stay unknown: a start that holds the claim makes no write
/// once its work limit has passed, and a create sent before then may still land until the API
/// server's request timeout after it. A caller that lost a start's answer, without the server's
/// word on until when it is settled, looks for it this long.
pub const START_OUTCOME_KNOWN_WITHIN: std::time::Duration = std::time::Duration::from_secs(
    claim::CLAIM_WORK_LIMIT.as_secs() + super::access::APISERVER_REQUEST_TIMEOUT.as_secs(),
);

use super::access::Caller;
use super::conflicts::{self, Conflicts};
use super::world::World;
use super::{OperationService, convert, plan, record};
use ichor_model::{
    ApiError, Code, Created, HistoryAction, HistoryOutcome, OperationKind, OperationRequest, Plan,
    Reason,
};
use ichor_resources::{TalosOperation, TalosOperationSpec, history, names};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use requests::Binding;
use spec::{annotation_left, confirmation_removed, half_failure};
use std::collections::BTreeMap;
use std::time::Instant;

fn request_id_of(op: &TalosOperation) -> Option<&str> {
    op.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(names::REQUEST_ID))
        .map(String::as_str)
}

/// Five characters as the API server's generateName makes them.
fn name_suffix() -> String {
    const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| char::from(CHARS[fastrand::usize(..CHARS.len())]))
        .collect()
}

/// The operation a start creates. Its name is chosen here, so the claim can name it.
fn operation_object(plan: &Plan, actor: (&str, &str), request_id: &str) -> TalosOperation {
    let (actor, route) = actor;
    let name = format!("{}-{}-{}", plan.cluster, plan.kind.as_str(), name_suffix());
    let mut op = TalosOperation::new(
        &name,
        TalosOperationSpec {
            cluster: plan.cluster.clone(),
            kind: plan.kind.as_str().to_string(),
            max_unavailable: plan.max_unavailable,
            paused: false,
        },
    );
    op.metadata.namespace = Some(plan.namespace.clone());
    let mut annotations = BTreeMap::from([
        (names::ACTOR.to_string(), actor.to_string()),
        (names::ACTOR_ROUTE.to_string(), route.to_string()),
        (names::REQUEST_ID.to_string(), request_id.to_string()),
        (
            names::HISTORY.to_string(),
            history::encode(&[record::entry(
                HistoryAction::Start,
                actor,
                HistoryOutcome::Created,
            )]),
        ),
    ]);
    if !plan.target.is_empty() {
        annotations.insert(convert::CURRENT.to_string(), plan.current.clone());
        annotations.insert(convert::TARGET.to_string(), plan.target.clone());
    }
    op.metadata.annotations = Some(annotations);
    op
}

/// `op` with the person's confirmation of a kube-proxy switch in its history, kept with the
/// start it was given for.
fn with_confirmation(mut op: TalosOperation, actor: &str) -> TalosOperation {
    let entry = record::entry(
        HistoryAction::ConfirmKubeProxySwitch,
        actor,
        HistoryOutcome::Applied,
    );
    let value = record::history_with(&op, entry);
    let annotations = op.metadata.annotations.get_or_insert_default();
    annotations.insert(names::HISTORY.to_string(), value);
    op
}

/// A start's conflicts: another writer changed what we read, or created the name first.
fn is_conflict(e: &ApiError) -> bool {
    conflicts::is_conflict(e) || e.code == Code::AlreadyExists
}

/// What one pass of a start came to.
enum Step {
    Done(Box<Created>),
    /// Someone wrote first: read again and re-check everything.
    Conflict(ApiError),
}

/// A conflict makes another pass; anything else ends the start.
fn conflict_or(e: ApiError) -> Result<Step, ApiError> {
    if is_conflict(&e) {
        Ok(Step::Conflict(e))
    } else {
        Err(e)
    }
}

/// What a start's checks on a fresh read decided.
enum Decided {
    /// The request id's operation exists: return it, write nothing.
    Found(Box<Created>),
    /// Go ahead with this plan.
    Go(Box<Plan>),
}

/// What the create of a start came to.
enum Outcome {
    /// The operation exists: created now, or found after its answer was lost.
    Created(Box<TalosOperation>),
    /// The API server answered that it was not created.
    NotCreated(ApiError),
    /// No answer, and not found: it may still land until the API server's request timeout has
    /// passed since it was sent.
    Unknown {
        error: ApiError,
        sent: jiff::Timestamp,
    },
}

impl OperationService {
    /// CreateOperation. See the module's documentation for the order.
    pub async fn create_operation(
        &self,
        caller: &Caller,
        req: &OperationRequest,
    ) -> Result<Created, ApiError> {
        let checked = plan::check_request(req)?;
        // check_request has checked the request id, if one was given.
        let request_id = req
            .request_id
            .clone()
            .unwrap_or_else(ichor_model::new_request_id);
        let binding = Binding {
            namespace: req.namespace.clone(),
            cluster: req.cluster.clone(),
            kind: checked.kind.as_str().to_string(),
            target: checked.target.clone().unwrap_or_default(),
            actor: self.access.actor(caller),
        };
        // Refused at once when bound to another request; bound only before the first write.
        self.requests.check(&request_id, &binding)?;
        // The claim this start holds, once taken: given back when the start's outcome is
        // known (a settling start hands it to its settle task instead).
        let mut held = None;
        let result = self
            .start_passes(caller, req, &checked, &request_id, &binding, &mut held)
            .await;
        if let Some(lease) = held {
            self.release(caller, &req.namespace, &lease).await;
        }
        // Who started it, as Events, once the claim is given back.
        if let Ok(created) = result.as_ref()
            && !created.found
        {
            let subject = record::Subject::of_operation(&created.operation);
            for entry in &created.operation.history {
                self.record_event(caller, &subject, entry).await;
            }
        }
        result
    }

    /// Passes over fresh reads until one is done or the conflicts are too many.
    async fn start_passes(
        &self,
        caller: &Caller,
        req: &OperationRequest,
        checked: &plan::Checked,
        request_id: &str,
        binding: &Binding,
        held: &mut Option<Lease>,
    ) -> Result<Created, ApiError> {
        let mut conflicts = Conflicts::new();
        while conflicts.another() {
            let world = self
                .read_world(
                    caller,
                    &req.namespace,
                    req.cluster.as_deref(),
                    checked.kind,
                    true,
                )
                .await?;
            let pass = Pass {
                req,
                checked,
                request_id,
                binding,
                world: &world,
            };
            match self.start_pass(caller, pass, held).await? {
                Step::Done(created) => return Ok(*created),
                Step::Conflict(e) => conflicts.saw(e),
            }
        }
        Err(conflicts.exhausted("starting"))
    }

    /// One pass over a fresh read: decide, dry runs, claim, spec, create.
    async fn start_pass(
        &self,
        caller: &Caller,
        pass: Pass<'_>,
        held: &mut Option<Lease>,
    ) -> Result<Step, ApiError> {
        let Pass {
            req,
            checked,
            request_id,
            binding,
            world,
        } = pass;
        let ns = req.namespace.as_str();
        let plan = match decide(req, checked, request_id, binding, world)? {
            Decided::Found(created) => return Ok(Step::Done(created)),
            Decided::Go(plan) => plan,
        };
        let actor = self.access.actor(caller);
        let op = operation_object(&plan, (&actor, self.access.route(caller)), request_id);
        let op_name = op.metadata.name.clone().unwrap_or_default();
        if let Err(e) = self.dry_runs(caller, ns, &plan, &op, world).await {
            return conflict_or(e);
        }
        let read_lease = match &world.lease {
            Some(Ok(l)) => Some(l),
            None => None,
            // decide() refused it (CLAIM_UNREADABLE) already.
            Some(Err(u)) => return Err(ApiError::new(Code::FailedPrecondition, u.why.clone())),
        };
        // The first write (the claim, which names the id) is next: the id is this request's
        // from here on, and a concurrent start with it for anything else is refused here.
        self.requests.bind(request_id, binding)?;
        let claimed = self
            .claim(
                caller,
                ns,
                &plan.cluster,
                read_lease,
                request_id,
                &op_name,
                &actor,
            )
            .await;
        *held = match claimed {
            Ok(lease) => Some(lease),
            Err(e) => return conflict_or(e),
        };
        let since = Instant::now();
        // A conflict: the claim stays ours (it names this request id); the next pass renews it.
        let spec_written = match self.spec_step(caller, ns, &plan, world, since).await {
            Ok(written) => written,
            Err(e) => return conflict_or(e),
        };
        // A confirmation found on the cluster before this start wrote anything is stray: an
        // earlier start was stopped before taking it back. Any start takes it back.
        let stray = convert::has_confirmation(&world.cluster);
        let confirmed_switch = plan.kind == OperationKind::Cni && spec_written.is_some();
        let op = match confirmed_switch {
            true => with_confirmation(op, &actor),
            false => op,
        };
        let written = Written {
            caller,
            ns,
            plan: &plan,
            op: &op,
            request_id,
            actor,
            confirmation: stray || confirmed_switch,
            stray,
            spec_written,
        };
        self.create_and_answer(written, since, held).await
    }

    /// The create of a start whose claim and spec write are done, and its answer: the operation
    /// (the confirmation taken back), what was written before a refused create, or an outcome
    /// being settled.
    async fn create_and_answer(
        &self,
        w: Written<'_>,
        since: Instant,
        held: &mut Option<Lease>,
    ) -> Result<Step, ApiError> {
        let (caller, ns, cluster) = (w.caller, w.ns, w.plan.cluster.as_str());
        let created = match self
            .create_step(caller, ns, w.op, w.request_id, since)
            .await
        {
            Outcome::Created(op) => op,
            Outcome::NotCreated(e) => {
                // Nothing will carry the confirmation out: take it back before answering.
                let left = if w.confirmation {
                    let removed = self.remove_confirmation(caller, ns, cluster).await;
                    Some(removed.is_err())
                } else {
                    None
                };
                return Err(match &w.spec_written {
                    Some(change) => half_failure(e, change, left),
                    None => not_created(e, cluster),
                });
            }
            Outcome::Unknown { error, sent } => {
                let settling = settle::Settling {
                    caller: caller.clone(),
                    namespace: ns.to_string(),
                    cluster: cluster.to_string(),
                    operation: w.op.metadata.name.clone().unwrap_or_default(),
                    request_id: w.request_id.to_string(),
                    actor: w.actor,
                    confirmation: w.confirmation,
                    until: self.settled_at(sent),
                };
                return Err(self.settle(settling, held.take(), &error).await);
            }
        };
        let mut warnings = Vec::new();
        if w.confirmation {
            match self.remove_confirmation(caller, ns, cluster).await {
                Err(e) => warnings.push(annotation_left(cluster, &e)),
                Ok(()) if w.stray => warnings.push(confirmation_removed(cluster)),
                Ok(()) => {}
            }
        }
        Ok(Step::Done(Box::new(Created {
            operation: convert::operation(&created),
            found: false,
            spec_written: w.spec_written,
            warnings,
        })))
    }

    /// The spec write of a start, if it makes one, on the object as the refusals read it.
    async fn spec_step(
        &self,
        caller: &Caller,
        ns: &str,
        plan: &Plan,
        world: &World,
        since: Instant,
    ) -> Result<Option<ichor_model::SpecChange>, ApiError> {
        let Some(change) = &plan.spec_change else {
            return Ok(None);
        };
        self.too_slow(since)?;
        self.write_spec(caller, ns, plan.kind, change, world, false)
            .await?;
        Ok(Some(change.clone()))
    }

    /// The dry runs as the caller: the create, and the spec write. RBAC and admission refuse
    /// before anything is written (a caller who may start operations but not edit clusters
    /// changes nothing).
    async fn dry_runs(
        &self,
        caller: &Caller,
        ns: &str,
        plan: &Plan,
        op: &TalosOperation,
        world: &World,
    ) -> Result<(), ApiError> {
        let ops: Api<TalosOperation> = self.api(caller, Some(ns));
        let dry = crate::manager::post(true);
        self.access
            .call(
                "checking that you may create the operation (dry run)",
                ops.create(&dry, op),
            )
            .await?;
        match &plan.spec_change {
            Some(change) => {
                self.write_spec(caller, ns, plan.kind, change, world, true)
                    .await
            }
            None => Ok(()),
        }
    }

    /// The create, read back when its answer is lost.
    async fn create_step(
        &self,
        caller: &Caller,
        ns: &str,
        op: &TalosOperation,
        request_id: &str,
        since: Instant,
    ) -> Outcome {
        if let Err(e) = self.too_slow(since) {
            return Outcome::NotCreated(e);
        }
        let ops: Api<TalosOperation> = self.api(caller, Some(ns));
        let sent = jiff::Timestamp::now();
        let error = match self
            .access
            .call_answered(
                "creating the operation",
                ops.create(&crate::manager::post(false), op),
            )
            .await
        {
            Ok(created) => return Outcome::Created(Box::new(created)),
            Err((e, false)) if e.code.is_transient() => e,
            Err((e, _)) => return Outcome::NotCreated(e),
        };
        // An answer lost on the way back from the API server: the create may have happened,
        // or may still happen.
        let name = op.metadata.name.clone().unwrap_or_default();
        match self.find_created(caller, ns, &name, request_id).await {
            Ok(Some(found)) => Outcome::Created(Box::new(found)),
            Ok(None) | Err(_) => Outcome::Unknown { error, sent },
        }
    }

    /// The operation a start created, read back after its create got no answer.
    pub(super) async fn find_created(
        &self,
        caller: &Caller,
        ns: &str,
        name: &str,
        request_id: &str,
    ) -> Result<Option<TalosOperation>, ApiError> {
        let ops: Api<TalosOperation> = self.api(caller, Some(ns));
        let found = self
            .access
            .call(
                "checking whether the operation was created",
                ops.get_opt(name),
            )
            .await?;
        Ok(found.filter(|op| request_id_of(op) == Some(request_id)))
    }
}

/// The API server answered that the create was not carried out: said as an answer (nothing was
/// created, nothing is retried), not as the transient fault a client would read as a lost one.
fn not_created(e: ApiError, cluster: &str) -> ApiError {
    if !e.code.is_transient() {
        return e;
    }
    let detail = e.param("detail").unwrap_or(&e.message).to_string();
    ApiError::said(
        Code::Aborted,
        Reason::WriteNotApplied,
        &[
            ("action", "start"),
            ("operation", cluster),
            // Not a lost answer: the API answered that it did not carry the create out.
            ("late", "refused"),
            ("detail", &detail),
        ],
    )
}

/// A start whose writes before the create are done.
struct Written<'a> {
    caller: &'a Caller,
    ns: &'a str,
    plan: &'a Plan,
    op: &'a TalosOperation,
    request_id: &'a str,
    actor: String,
    /// The kube-proxy confirmation is on the cluster (this start's, or stray).
    confirmation: bool,
    /// It was there before this start wrote anything.
    stray: bool,
    spec_written: Option<ichor_model::SpecChange>,
}

/// What one pass of a start works from.
struct Pass<'a> {
    req: &'a OperationRequest,
    checked: &'a plan::Checked,
    request_id: &'a str,
    binding: &'a Binding,
    world: &'a World,
}

/// The checks of a pass on its fresh read: a repeat of a start that already created its
/// operation (the same request: namespace, cluster, kind, target and caller), every refusal,
/// and the plan the person reviewed.
fn decide(
    req: &OperationRequest,
    checked: &plan::Checked,
    request_id: &str,
    binding: &Binding,
    world: &World,
) -> Result<Decided, ApiError> {
    if let Some(op) = world
        .operations
        .iter()
        .find(|o| request_id_of(o) == Some(request_id))
    {
        let cluster = world.cluster.metadata.name.as_deref().unwrap_or_default();
        if !binding.made(op, cluster) {
            return Err(requests::reused(request_id));
        }
        return Ok(Decided::Found(Box::new(Created {
            operation: convert::operation(op),
            found: true,
            spec_written: None,
            warnings: Vec::new(),
        })));
    }
    let plan = plan::compute(checked, &world.inputs(&req.namespace, Some(request_id)))?;
    if let Some(refusal) = plan.blocked.clone() {
        return Err(ApiError::from_refusal(refusal));
    }
    if let Some(confirmed) = &req.confirmed_plan
        && *confirmed != plan.fingerprint
    {
        return Err(ApiError::said(
            Code::FailedPrecondition,
            Reason::PlanChanged,
            &[("cluster", &plan.cluster), ("kind", plan.kind.as_str())],
        ));
    }
    Ok(Decided::Go(Box::new(plan)))
}
