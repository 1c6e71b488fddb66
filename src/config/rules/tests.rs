use crate::config::FileConfig;
use jiff::SignedDuration;
use std::path::Path;

fn parse(text: &str) -> anyhow::Result<FileConfig> {
    FileConfig::parse(text, Path::new("FILE"))
}

fn err(text: &str) -> String {
    ichor_model::error_text::one_line(&parse(text).unwrap_err())
}

#[test]
fn timing_contexts_and_keys_are_read() {
    let c = parse(
        r#"
namespace = "prod"

[timing]
slow-factor = 3
slow-margin = "2m"

[[contexts]]
match = "prod-*"
production = true

[[contexts]]
match = "*-ro"
read-only = true

[keys]
pause = "P"
refresh = ["ctrl-r", "F"]
"#,
    )
    .unwrap();
    let rule = c.timing.rule();
    assert_eq!(
        (rule.factor, rule.margin),
        (3.0, SignedDuration::from_secs(120))
    );
    let rules = c.context_rules();
    let marks = |name| rules.marks(name, None, []);
    assert!(marks("prod-eu").production && !marks("prod-eu").read_only);
    assert!(marks("staging-ro").read_only && !marks("staging-ro").production);
    assert_eq!(marks("staging"), Default::default());
    let p = ichor_app::keymap::bindings(&c.key_overrides, ichor_app::state::Screen::Operation)
        .find(|b| b.command == ichor_app::keymap::KeyCommand::Pause)
        .unwrap();
    assert_eq!(c.key_overrides.label(p), "P");
    // Nothing written: the defaults.
    let d = parse("").unwrap();
    assert_eq!(d.timing.rule(), ichor_model::SlowRule::default());
    assert_eq!(d.key_overrides, Default::default());
}

#[test]
fn a_bad_value_names_its_line() {
    assert_eq!(
        err("[timing]\nslow-factor = 0.5\n"),
        "config file FILE:2:15: slow-factor must be a number from 1 to 100"
    );
    assert_eq!(
        err("[timing]\n\nslow-margin = \"soon\"\n"),
        "config file FILE:3:15: slow-margin must be a duration from 0s to 24h, such as \"30s\" or \"2m\", not \"soon\""
    );
}

#[test]
fn an_unknown_action_or_a_clash_is_refused_at_its_line() {
    assert_eq!(
        err("lang = \"en\"\n[keys]\npause = \"P\"\npasue = \"x\"\n"),
        "config file FILE:4:1: [keys] has no action \"pasue\"; the actions are up, down, top, bottom, page-up, page-down, open, back, filter, pause, resume, delete, refresh, help, quit, suspend, operations, clusters, switch-screen, new, command-line, yaml, events, report"
    );
    assert_eq!(
        err("[keys]\nrefresh = \"F\"\npause = \"d\"\n"),
        "config file FILE:3:9: [keys] pause: d is already delete's key on the Operations screen"
    );
    assert_eq!(
        err("[keys]\nquit = \"ctrl-c\"\n"),
        "config file FILE:2:8: [keys] quit: ctrl-c quits everywhere and cannot be rebound"
    );
    assert_eq!(
        err("[keys]\nhelp = [\"F1\"]\n"),
        "config file FILE:2:8: [keys] help: \"F1\" is not a key (a character, ctrl-X, or one of enter, esc, tab, backtab, backspace, up, down, left, right, pageup, pagedown, home, end, space)"
    );
}
