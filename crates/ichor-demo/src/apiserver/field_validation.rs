//! `?fieldValidation=`: what kube-apiserver does with fields the schema does not know, and the
//! schema's own checks. Unknown fields are always pruned (custom resources are structural);
//! `Strict` (kubectl's default) refuses them with 400, `Warn` (the server's default) says so in
//! a `Warning` header, `Ignore` says nothing. A value of the wrong type is 422 Invalid for a
//! custom resource (the CRD validator's words) and 400 for a built-in kind (a decoding error,
//! as kube-apiserver's JSON decoder answers).

use super::responses::{Failure, fail};
use super::routing::Target;
use super::schemas::schemas;
use super::structural::{Findings, MAX_NAMED, bounded, walk};
use super::validation::invalid_causes;
use serde_json::Value;

/// The `fieldValidation` directive of a write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    Strict,
    #[default]
    Warn,
    Ignore,
}

impl FieldValidation {
    pub(crate) fn parse(v: Option<&str>) -> Result<FieldValidation, Failure> {
        match v {
            None | Some("") | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some(other) => Err(fail(
                400,
                "BadRequest",
                format!(
                    "invalid or unsupported fieldValidation directive: {:?}, valid values include: \"Ignore\", \"Warn\", \"Strict\"",
                    other.chars().take(40).collect::<String>()
                ),
            )),
        }
    }
}

/// Prunes `obj` to its kind's schema and applies the directive: `Ok` with the warnings to
/// send, or the refusal.
pub(crate) fn conform(
    t: &Target,
    name: &str,
    obj: &mut Value,
    directive: FieldValidation,
) -> Result<Vec<String>, Failure> {
    let Some(found) = pruned(t, obj) else {
        return Ok(Vec::new());
    };
    let custom = !t.rt.group.ends_with(".k8s.io") && !t.rt.group.is_empty();
    let kind = t.rt.kind;
    let warnings = unknown_fields(t, &found.unknown, directive)?;
    let causes: Vec<_> = if custom {
        found.causes
    } else {
        found
            .causes
            .into_iter()
            .filter(|c| c.reason == "FieldValueTypeInvalid")
            .collect()
    };
    if let Some(first) = causes.first() {
        if !custom {
            return Err(fail(
                400,
                "BadRequest",
                format!(
                    "{kind} in version {:?} cannot be handled as a {kind}: {}: {}",
                    t.rt.version, first.field, first.message
                ),
            ));
        }
        return Err(invalid_causes(t, name, &causes));
    }
    Ok(warnings)
}

/// The fields `found` unknown under the directive: `Strict` refuses them (400), `Warn` has
/// the warnings to send, `Ignore` none.
fn unknown_fields(
    t: &Target,
    found: &[String],
    directive: FieldValidation,
) -> Result<Vec<String>, Failure> {
    let kind = t.rt.kind;
    let mut unknown: Vec<String> = found
        .iter()
        .take(MAX_NAMED)
        .map(|f| format!("unknown field {:?}", bounded(f)))
        .collect();
    if found.len() > MAX_NAMED {
        unknown.push(format!(
            "and {} more unknown fields",
            found.len() - MAX_NAMED
        ));
    }
    if directive == FieldValidation::Strict && !unknown.is_empty() {
        return Err(fail(
            400,
            "BadRequest",
            format!(
                "{kind} in version {:?} cannot be handled as a {kind}: strict decoding error: {}",
                t.rt.version,
                unknown.join(", ")
            ),
        ));
    }
    Ok(match directive {
        FieldValidation::Warn => unknown,
        _ => Vec::new(),
    })
}

/// Prunes the fields of a partial object (a server-side apply's configuration) that its
/// kind's schema does not know, under the directive; what it lacks is not checked here (the
/// merged object is, as every write).
pub(crate) fn prune_unknown(
    t: &Target,
    obj: &mut Value,
    directive: FieldValidation,
) -> Result<Vec<String>, Failure> {
    let Some(found) = pruned(t, obj) else {
        return Ok(Vec::new());
    };
    unknown_fields(t, &found.unknown, directive)
}

/// Walks `obj` against its kind's schema, pruning the fields it does not know: what was found,
/// or `None` for a kind without a schema.
fn pruned(t: &Target, obj: &mut Value) -> Option<Findings> {
    let s = schemas();
    let schema = s.of(&t.rt)?;
    let mut found = Findings::default();
    walk(s, schema, obj, "", &mut found);
    Some(found)
}
