//! `upgrade`, `cni`, `cluster shutdown` and `cluster rotate-ca`: the plan and the question (the
//! cluster name typed for a shutdown and a CA rotation, then y/N), or `--yes`; then one
//! CreateOperation bound to the plan shown (its fingerprint) with a request id of its own, as
//! the dashboard's Start. A start whose answer was lost is looked for by its request id until
//! its create can no longer land, never sent again.

use super::args::Verb;
use super::{Exit, Io, ask, follow, plan_text};
use ichor_model::inert::sanitize;
use ichor_model::{
    ApiError, Code, Created, OperationClient, OperationKind, OperationRequest, Reason,
};
use std::time::Duration;

/// How often a start whose outcome is not known is looked for (as the dashboard does).
const LOOK_FOR_START: Duration = Duration::from_secs(3);

/// The request `verb` describes.
fn request(namespace: &str, verb: &Verb) -> Option<OperationRequest> {
    let Verb::Start {
        kind,
        cluster,
        target,
        max_unavailable,
        ..
    } = verb
    else {
        return None;
    };
    let mut req = OperationRequest::new(namespace, cluster.as_deref(), *kind);
    req.target = target.clone();
    req.max_unavailable = *max_unavailable;
    Some(req)
}

/// Shows the plan and asks; the request bound to what was shown, or how it ended.
async fn reviewed(
    client: &dyn OperationClient,
    mut req: OperationRequest,
    io: &mut Io<'_>,
) -> Result<OperationRequest, Exit> {
    let plan = client.plan_operation(&req).await.map_err(|e| io.fail(&e))?;
    for line in plan_text::lines(io.texts, &plan, &io.tz) {
        io.say(&line);
    }
    if plan_text::refusal(&plan).is_some() {
        // Said at the top of the plan.
        return Err(Exit::Refused);
    }
    // In a production context the guard asks for the name (or --confirm-cluster named it);
    // elsewhere a shutdown and a CA rotation ask for it.
    super::guard::confirmed(io, &plan.cluster, false)?;
    let typed = matches!(
        plan.kind,
        OperationKind::Shutdown | OperationKind::CaRotation
    ) && io.production.is_none()
        && io.confirm_cluster.is_none();
    if typed && !ask::typed_name(io, &plan.cluster) {
        return Err(Exit::Refused);
    }
    let kind = io.texts.t(&format!("kind-{}", plan.kind.as_str()));
    let question = io.tr(
        "cli-ask-start",
        &[("kind", &kind), ("cluster", &sanitize(&plan.cluster))],
    );
    if !ask::yes_no(io, &question) {
        let line = io.texts.t("cli-declined");
        io.warn(&line);
        return Err(Exit::Refused);
    }
    req.cluster = Some(plan.cluster.clone());
    req.confirmed_plan = Some(plan.fingerprint.clone());
    Ok(req)
}

pub(super) async fn run(
    client: &dyn OperationClient,
    namespace: &str,
    verb: &Verb,
    io: &mut Io<'_>,
) -> Exit {
    let Some(req) = request(namespace, verb) else {
        return Exit::Usage;
    };
    let (yes, follow) = match verb {
        Verb::Start { yes, follow, .. } => (*yes, *follow),
        _ => (false, false),
    };
    let mut req = req;
    if yes {
        // With --yes the cluster confirmed is the one started on: named, or the one named
        // by --confirm-cluster (the guard refuses a mismatch, or no name in production).
        let cluster = req.cluster.clone().or_else(|| io.confirm_cluster.clone());
        let named = cluster.clone().unwrap_or_default();
        if (cluster.is_some() || io.production.is_some())
            && let Err(exit) = super::guard::confirmed(io, &named, true)
        {
            return exit;
        }
        req.cluster = cluster;
    }
    let mut req = if yes {
        // --yes asks for no plan (ADR 0068, Decision 5); one read first all the same, so the
        // client knows the server's version before it writes (the version-skew check).
        if let Err(e) = client.permissions(namespace).await
            && e.code.is_transient()
        {
            return io.fail(&e);
        }
        req
    } else {
        match reviewed(client, req, io).await {
            Ok(r) => r,
            Err(exit) => return exit,
        }
    };
    req.request_id = Some(ichor_model::new_request_id());
    let created = match client.create_operation(&req).await {
        Ok(c) => c,
        Err(e) if e.reason == Some(Reason::StartOutcomeUnknown) => {
            match settle(client, &req, &e, io).await {
                Some(c) => c,
                None => return Exit::Refused,
            }
        }
        Err(e) if e.reason == Some(Reason::PlanChanged) => {
            io.fail(&e);
            let line = io.texts.t("cli-plan-changed");
            io.warn(&line);
            return Exit::Refused;
        }
        Err(e) => return io.fail(&e),
    };
    said_started(io, &created);
    if follow {
        let name = created.operation.name.clone();
        return follow::follow(client, namespace, &name, io, None, true).await;
    }
    Exit::Done
}

/// "Started NAME.", the spec field written, a CA rotation's bundle-export reminder, and any
/// warning first.
fn said_started(io: &mut Io<'_>, created: &Created) {
    for w in &created.warnings {
        let e = ApiError {
            code: Code::Internal,
            reason: Some(w.reason),
            params: w.params.clone(),
            message: w.message.clone(),
        };
        let line = format!("⚠ {}", ichor_views::words::error_text(io.texts, &e));
        io.warn(&line);
    }
    let op = &created.operation;
    let mut text = io.tr("started", &[("name", &sanitize(&op.name))]);
    if let Some(c) = &created.spec_written {
        text.push_str(&io.tr(
            "started-spec-written",
            &[
                ("field", &sanitize(&c.field)),
                ("from", &sanitize(&c.from)),
                ("to", &sanitize(&c.to)),
            ],
        ));
    }
    if op.kind == Some(OperationKind::CaRotation) {
        text.push_str(&io.tr("started-ca-bundle", &[("name", &sanitize(&op.cluster))]));
    }
    io.say(&text);
}

/// A start whose outcome is not known: said, then looked for by its request id until the
/// create can no longer land. The operation if it was created; `None` (said) if not.
async fn settle(
    client: &dyn OperationClient,
    req: &OperationRequest,
    e: &ApiError,
    io: &mut Io<'_>,
) -> Option<Created> {
    io.fail(e);
    let id = e
        .param("request_id")
        .or(req.request_id.as_deref())
        .unwrap_or_default()
        .to_string();
    let until = e
        .param("until")
        .and_then(|u| u.parse::<jiff::Timestamp>().ok())
        .unwrap_or_else(|| {
            let within = ichor_service::START_OUTCOME_KNOWN_WITHIN;
            jiff::Timestamp::now() + jiff::SignedDuration::from_secs(within.as_secs() as i64)
        });
    loop {
        match client.find_start(&req.namespace, &id).await {
            Ok(Some(operation)) => {
                return Some(Created {
                    operation,
                    found: true,
                    spec_written: None,
                    warnings: Vec::new(),
                });
            }
            Ok(None) if jiff::Timestamp::now() > until => break,
            Ok(None) => {}
            Err(e) => {
                io.fail(&e);
                return None;
            }
        }
        tokio::time::sleep(LOOK_FOR_START.min(io.poll.max(Duration::from_millis(10)))).await;
    }
    let cluster = sanitize(req.cluster.as_deref().unwrap_or_default());
    let line = io.tr("start-not-created", &[("cluster", &cluster)]);
    io.warn(&line);
    None
}
