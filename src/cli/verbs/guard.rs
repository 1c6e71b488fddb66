//! A production context's guard on the commands' writes (pause, resume, delete, every start):
//! a context the config marks production, or one that reaches the API server of a context it
//! marks. The cluster's name typed at the question, and `--yes` only with
//! `--confirm-cluster NAME` naming the write's cluster. A `--confirm-cluster` given in any
//! context must name it. Nothing is written when the guard says no.

use super::{Exit, Io, ask};
use ichor_model::inert::{sanitize, truncate};

/// Whether a write on `cluster` may go on (said when not); `yes`: `--yes` was given. In a
/// production context without `--confirm-cluster`, the name is asked for here.
pub(crate) fn confirmed(io: &mut Io<'_>, cluster: &str, yes: bool) -> Result<(), Exit> {
    if let Some(named) = io.confirm_cluster.clone() {
        if named == cluster {
            return Ok(());
        }
        let line = io.tr(
            "cli-confirm-cluster-mismatch",
            &[
                ("typed", &truncate(&sanitize(&named), 64)),
                ("cluster", &sanitize(cluster)),
            ],
        );
        io.warn(&line);
        return Err(Exit::Refused);
    }
    let Some(production) = io.production.clone() else {
        return Ok(());
    };
    let context = truncate(&sanitize(&production.context), 64);
    // The API server named when known: the context may be production through another.
    let server = production.api_server.map(|s| truncate(&sanitize(&s), 200));
    let said = |id: &str| match &server {
        Some(server) => io.tr(
            &format!("{id}-server"),
            &[("context", &context), ("server", server)],
        ),
        None => io.tr(id, &[("context", &context)]),
    };
    if yes {
        let line = said("cli-needs-confirm-cluster");
        io.warn(&line);
        return Err(Exit::Usage);
    }
    let line = said("cli-production");
    io.warn(&line);
    match ask::typed_name(io, cluster) {
        true => Ok(()),
        false => Err(Exit::Refused),
    }
}
