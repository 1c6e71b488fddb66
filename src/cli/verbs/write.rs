//! `operation pause|resume|delete NAME`: read the operation, ask y/N about it as it is (or
//! `--yes`), then one write bound to what was asked about (its uid, generation and state, as the
//! dashboard's `p`/`r`/`d` send). A resume of an operation a failed machine paused is refused
//! with the reason before anything is asked (the service refuses it too).

use super::args::WriteKind;
use super::{Exit, Io, ask};
use ichor_model::inert::sanitize;
use ichor_model::{ApiError, Code, Operation, OperationClient, Phase, Reason};

/// What a delete says it does, by where the operation is (the dashboard's words).
fn delete_body(op: &Operation) -> &'static str {
    match &op.phase {
        _ if op.paused_by_failure() => "confirm-delete-paused-failed",
        Phase::Completed => "confirm-delete-body",
        Phase::Failed => "confirm-delete-failed",
        Phase::Paused => "confirm-delete-paused",
        Phase::Pending | Phase::Unknown => "confirm-delete-waiting",
        Phase::Running | Phase::Other(_) => "confirm-delete-running",
    }
}

fn ids(kind: WriteKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        WriteKind::Pause => ("confirm-pause-title", "confirm-pause-body", "done-pause"),
        WriteKind::Resume => ("confirm-resume-title", "confirm-resume-body", "done-resume"),
        WriteKind::Delete => ("confirm-delete-title", "", "done-delete"),
    }
}

/// The refusal of a resume that would do nothing: a failed machine paused the operation.
fn resume_after_failure(op: &Operation) -> ApiError {
    let machine = op
        .failed_machine()
        .map(|m| m.name.clone())
        .unwrap_or_default();
    let reason = op.failure_reason.clone().unwrap_or_default();
    ApiError::said(
        Code::FailedPrecondition,
        Reason::ResumeAfterFailure,
        &[
            ("operation", &op.name),
            ("machine", &machine),
            ("reason", &reason),
        ],
    )
}

pub(super) async fn run(
    client: &dyn OperationClient,
    namespace: &str,
    kind: WriteKind,
    name: &str,
    yes: bool,
    io: &mut Io<'_>,
) -> Exit {
    // The read tells the client the server's version too (the version-skew check).
    let op = match client.get_operation(namespace, name).await {
        Ok(op) => op,
        Err(e) => return io.fail(&e),
    };
    if kind == WriteKind::Resume && op.paused_by_failure() {
        return io.fail(&resume_after_failure(&op));
    }
    let shown = sanitize(&op.name);
    let (title, body, done) = ids(kind);
    if yes && let Err(exit) = super::guard::confirmed(io, &op.cluster, true) {
        return exit;
    }
    if !yes {
        let body = if kind == WriteKind::Delete {
            delete_body(&op)
        } else {
            body
        };
        let text = io.texts.t(body);
        io.say(&text);
        // In a production context, the cluster's name typed first.
        if let Err(exit) = super::guard::confirmed(io, &op.cluster, false) {
            return exit;
        }
        let question = io.tr(title, &[("name", &shown)]);
        if !ask::yes_no(io, &question) {
            let line = io.texts.t("cli-declined");
            io.warn(&line);
            return Exit::Refused;
        }
    }
    let confirmed = op.confirmed();
    let result = match kind {
        WriteKind::Pause | WriteKind::Resume => client
            .set_operation_paused(namespace, name, kind == WriteKind::Pause, Some(&confirmed))
            .await
            .map(drop),
        WriteKind::Delete => {
            client
                .delete_operation(namespace, name, Some(&confirmed))
                .await
        }
    };
    match result {
        Ok(()) => {
            let line = io.tr(done, &[("name", &shown)]);
            io.say(&line);
            Exit::Done
        }
        Err(e) => io.fail(&e),
    }
}
