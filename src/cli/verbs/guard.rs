//! A production context's guard on the commands' writes (pause, resume, delete, every start):
//! the cluster's name typed at the question, and `--yes` only with `--confirm-cluster NAME`
//! naming the write's cluster. A `--confirm-cluster` given in any context must name it.
//! Nothing is written when the guard says no.

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
    let Some(context) = io.production.clone() else {
        return Ok(());
    };
    let context = sanitize(&context);
    if yes {
        let line = io.tr("cli-needs-confirm-cluster", &[("context", &context)]);
        io.warn(&line);
        return Err(Exit::Usage);
    }
    let line = io.tr("cli-production", &[("context", &context)]);
    io.warn(&line);
    match ask::typed_name(io, cluster) {
        true => Ok(()),
        false => Err(Exit::Refused),
    }
}
