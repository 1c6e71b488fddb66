use super::{ContextRules, Marks, api_server};
use crate::config::FileConfig;
use ichor_model::ApiServer;
use std::path::Path;

fn rules(text: &str) -> ContextRules {
    FileConfig::parse(text, Path::new("FILE"))
        .unwrap()
        .context_rules()
}

fn err(text: &str) -> String {
    ichor_model::error_text::one_line(&FileConfig::parse(text, Path::new("FILE")).unwrap_err())
}

fn server(url: &str) -> ApiServer {
    api_server(url).unwrap()
}

const PRODUCTION: Marks = Marks {
    production: true,
    read_only: false,
};
const READ_ONLY: Marks = Marks {
    production: false,
    read_only: true,
};
const NONE: Marks = Marks {
    production: false,
    read_only: false,
};

/// A kubeconfig's contexts: two users of the production server (its URL spelt two ways), one
/// of staging, and one whose cluster names no server.
fn kubeconfig() -> Vec<(&'static str, Option<ApiServer>)> {
    vec![
        (
            "prod-eu-admin",
            Some(server("https://API.prod-eu.example.com")),
        ),
        (
            "operator",
            Some(server("https://api.prod-eu.example.com:443/")),
        ),
        ("staging", Some(server("https://10.0.0.7:6443"))),
        ("nowhere", None),
    ]
}

/// The marks of `name` in [`kubeconfig`].
fn marks_of(rules: &ContextRules, name: &str) -> Marks {
    let all = kubeconfig();
    let own = all.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    rules.marks(
        name,
        own.as_ref(),
        all.iter().map(|(n, s)| (*n, s.as_ref())),
    )
}

#[test]
fn a_server_url_is_compared_normalised() {
    let s = server("HTTPS://API.Prod-EU.example.com/");
    assert_eq!(s, server("https://api.prod-eu.example.com:443"));
    assert_eq!(s.url(), "https://api.prod-eu.example.com:443");
    assert_eq!(
        server("http://[::1]:8080//").url(),
        "http://[::1]:8080",
        "IPv6 in brackets, trailing slashes dropped"
    );
    assert_eq!(
        server("https://admin:secret@k8s.example.com/clusters/c-1/").url(),
        "https://k8s.example.com:443/clusters/c-1",
        "no user info; the path is kept (a proxy serves several clusters)"
    );
    assert_ne!(server("http://h:6443"), server("https://h:6443"));
    for bad in [
        "k8s.example.com:6443",
        "ftp://h",
        "https://",
        "not a url",
        "",
    ] {
        assert_eq!(api_server(bad), None, "{bad:?}");
    }
}

#[test]
fn a_context_is_marked_by_its_name() {
    let r = rules("[[contexts]]\nmatch = \"prod-*\"\nproduction = true\n");
    assert_eq!(marks_of(&r, "prod-eu-admin"), PRODUCTION);
    assert_eq!(marks_of(&r, "staging"), NONE);
    // No server known: its own name only.
    let r = rules("[[contexts]]\nmatch = \"now*\"\nread-only = true\n");
    assert_eq!(marks_of(&r, "nowhere"), READ_ONLY);
    assert_eq!(marks_of(&r, "prod-eu-admin"), NONE);
}

#[test]
fn a_context_is_marked_by_its_api_server() {
    // Spelt as neither context spells it.
    let r = rules(
        "[[contexts]]\nserver = \"https://api.PROD-EU.example.com:443\"\nproduction = true\n",
    );
    assert_eq!(marks_of(&r, "prod-eu-admin"), PRODUCTION);
    assert_eq!(marks_of(&r, "operator"), PRODUCTION);
    assert_eq!(marks_of(&r, "staging"), NONE);
    assert_eq!(marks_of(&r, "nowhere"), NONE);
}

#[test]
fn a_rule_with_a_name_and_a_server_needs_both() {
    let r = rules(
        "[[contexts]]\nmatch = \"staging\"\nserver = \"https://10.0.0.7:6443\"\nread-only = true\n\
         [[contexts]]\nmatch = \"prod-*\"\nserver = \"https://10.0.0.7:6443\"\nproduction = true\n",
    );
    assert_eq!(marks_of(&r, "staging"), READ_ONLY);
    // prod-eu-admin's name matches, but it reaches another server.
    assert_eq!(marks_of(&r, "prod-eu-admin"), NONE);
    assert_eq!(marks_of(&r, "operator"), NONE);
}

#[test]
fn a_second_context_to_the_same_server_inherits_its_marks() {
    let r = rules(
        "[[contexts]]\nmatch = \"prod-*\"\nproduction = true\n\
         [[contexts]]\nmatch = \"prod-eu-admin\"\nread-only = true\n",
    );
    // `operator` is named by no rule: it reaches the server prod-eu-admin marks.
    let both = Marks {
        production: true,
        read_only: true,
    };
    assert_eq!(marks_of(&r, "operator"), both);
    assert_eq!(marks_of(&r, "prod-eu-admin"), both);
    assert_eq!(marks_of(&r, "staging"), NONE);
    // A context with no server known inherits nothing, and gives nothing.
    let r = rules("[[contexts]]\nmatch = \"nowhere\"\nproduction = true\n");
    assert_eq!(marks_of(&r, "operator"), NONE);
    assert_eq!(marks_of(&r, "nowhere"), PRODUCTION);
}

#[test]
fn a_rule_that_names_nothing_or_a_bad_server_is_refused_at_its_line() {
    assert_eq!(
        err("lang = \"en\"\n[[contexts]]\nproduction = true\n"),
        "config file FILE:2:1: [[contexts]] needs match = \"GLOB\" (the context's name) or server = \"URL\" (its API server)"
    );
    assert_eq!(
        err("[[contexts]]\nserver = \"10.0.0.7:6443\"\nproduction = true\n"),
        "config file FILE:2:10: [[contexts]] server must be an API server's URL, such as \"https://10.0.0.1:6443\", not \"10.0.0.7:6443\""
    );
    assert!(
        err("[[contexts]]\nmatch = \"x\"\nprod = true\n")
            .starts_with("config file FILE:3:1: unknown field `prod`")
    );
}
