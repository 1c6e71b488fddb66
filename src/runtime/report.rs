//! The page's report key: the operation read whole (its cluster and all its events, as
//! `ichor-tui operation report` reads them) and its report written as Markdown to a new file
//! in the working directory, named after the operation and the moment.

use ichor_model::{OperationClient, Report};
use ichor_views::i18n::{Lang, Texts};
use std::io::Write as _;

/// The longest part of a file name taken from the operation's name.
const MAX_NAME: usize = 63;

/// The file name: `ichor-report-NAME-YYYYMMDDTHHMMSSZ.md`, the name kept to what a file name
/// may hold anywhere (letters, digits, `-`, `.`; the name is the cluster's: untrusted).
pub(crate) fn file_name(name: &str, at: jiff::Timestamp) -> String {
    let safe: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
        .take(MAX_NAME)
        .collect();
    let safe = safe.trim_start_matches('.');
    format!(
        "ichor-report-{}-{}.md",
        if safe.is_empty() { "operation" } else { safe },
        at.strftime("%Y%m%dT%H%M%SZ")
    )
}

/// Reads the report of `namespace`/`name` and writes it to a new file in `dir`; the path
/// written, or why not (in the person's language for a refusal of the read). A file of that
/// name already there is left as it is (refused).
pub async fn save(
    client: &dyn OperationClient,
    lang: Lang,
    tz: jiff::tz::TimeZone,
    dir: &std::path::Path,
    (namespace, name): (&str, &str),
) -> Result<String, String> {
    let texts = Texts::new(lang);
    let at = jiff::Timestamp::now();
    let report = Report::read(client, namespace, name, at)
        .await
        .map_err(|e| ichor_views::words::error_text(&texts, &e))?;
    let text = ichor_views::report::markdown(&texts, &report, &tz);
    let path = dir.join(file_name(name, at));
    let shown = path.display().to_string();
    tokio::task::spawn_blocking(move || {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("{shown}: {e}"))?;
    Ok(shown)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_file_is_named_after_the_operation_and_the_moment() {
        let at: jiff::Timestamp = "2026-11-29T10:04:05Z".parse().unwrap();
        assert_eq!(
            super::file_name("staging-talos-x7k2p", at),
            "ichor-report-staging-talos-x7k2p-20261129T100405Z.md"
        );
        assert_eq!(
            super::file_name("../\u{1b}[2J/etc/passwd", at),
            "ichor-report-2Jetcpasswd-20261129T100405Z.md"
        );
        assert_eq!(
            super::file_name("", at),
            "ichor-report-operation-20261129T100405Z.md"
        );
    }
}
