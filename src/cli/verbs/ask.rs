//! The questions before a write: y/N (No unless the answer is y or yes) and, for a shutdown
//! and a CA rotation, the cluster's name typed exactly. Asked on standard error, so standard
//! output carries only what the command prints; answered on standard input, a line at most
//! 1 KiB long (the rest of a longer one is not read).

use super::Io;
use ichor_model::inert::{sanitize, truncate};
use std::io::{BufRead, Read as _};

/// The longest answer read.
const MAX_ANSWER: u64 = 1024;

/// One line of the answer, without its line end; `None` at the end of input or without a
/// terminal.
fn answer(io: &mut Io<'_>, prompt: &str) -> Option<String> {
    let _ = write!(io.err, "{prompt} ");
    let _ = io.err.flush();
    let answers = io.answers.as_mut()?;
    let mut line = String::new();
    let read = (&mut **answers as &mut dyn BufRead)
        .take(MAX_ANSWER)
        .read_line(&mut line);
    match read {
        Ok(0) | Err(_) => {
            let _ = writeln!(io.err);
            None
        }
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
    }
}

/// Asks `question` with y/N; only y or yes (any case) is a yes.
pub(crate) fn yes_no(io: &mut Io<'_>, question: &str) -> bool {
    let prompt = format!("{question} {}", io.texts.t("cli-yes-no"));
    answer(io, &prompt).is_some_and(|a| matches!(a.trim().to_lowercase().as_str(), "y" | "yes"))
}

/// Asks for `name` to be typed; whether it was, exactly. A mismatch is said.
pub(crate) fn typed_name(io: &mut Io<'_>, name: &str) -> bool {
    let shown = sanitize(name);
    let prompt = io.tr("review-type-name", &[("name", &shown)]);
    let typed = answer(io, &prompt).unwrap_or_default();
    if typed.trim() == name {
        return true;
    }
    let typed = truncate(&sanitize(typed.trim()), 64);
    let line = io.tr("cli-name-mismatch", &[("typed", &typed), ("name", &shown)]);
    io.warn(&line);
    false
}
