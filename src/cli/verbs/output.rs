//! How `operation list` and `get` print (`-o`): kubectl's outputs, a JSONPath template checked
//! as the flag is read.

/// How to print.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Output {
    #[default]
    Table,
    /// The table with where each operation goes (current → target).
    Wide,
    Json,
    Yaml,
    /// `talosoperation.ichor.maesh.dev/NAME`, as kubectl prints a name.
    Name,
    /// kubectl's JSONPath template over the JSON shape (`-o jsonpath='{.items[*].name}'`).
    JsonPath(String),
}

/// The outputs `-o` takes, for its help and completion.
pub const OUTPUTS: &[&str] = &["table", "wide", "json", "yaml", "name", "jsonpath="];

/// `-o`: one of [`OUTPUTS`], the template after `jsonpath=` checked here.
pub fn parse_output(s: &str) -> Result<Output, String> {
    Ok(match s {
        "table" => Output::Table,
        "wide" => Output::Wide,
        "json" => Output::Json,
        "yaml" => Output::Yaml,
        "name" => Output::Name,
        _ => match s.strip_prefix("jsonpath=") {
            Some(t) => {
                super::jsonpath::Template::parse(t)?;
                Output::JsonPath(t.to_string())
            }
            None => {
                return Err(
                    "it must be one of table, wide, json, yaml, name, jsonpath=TEMPLATE".into(),
                );
            }
        },
    })
}

/// `-o`'s values, completed.
pub(super) fn candidates() -> Vec<clap_complete::CompletionCandidate> {
    OUTPUTS
        .iter()
        .map(|o| clap_complete::CompletionCandidate::new(*o))
        .collect()
}
