use super::*;

fn entries(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    pairs
        .iter()
        .map(|(a, ks)| (a.to_string(), ks.iter().map(|k| k.to_string()).collect()))
        .collect()
}

#[test]
fn keys_are_read_as_a_config_writes_them() {
    assert_eq!(parse_key("P"), Some(Key::ch('P')));
    assert_eq!(parse_key("ctrl-r"), Some(Key::ctrl('r')));
    assert_eq!(parse_key("Ctrl+R"), Some(Key::ctrl('r')));
    assert_eq!(parse_key("F"), Some(Key::ch('F')));
    assert_eq!(parse_key("pagedown"), Some(Key::plain(KeyCode::PageDown)));
    assert_eq!(parse_key("space"), Some(Key::ch(' ')));
    for bad in ["", "ctrl-", "ctrl-ab", "pg down", "\u{1b}", "f13"] {
        assert_eq!(parse_key(bad), None, "{bad:?}");
    }
    assert_eq!(key_label(Key::ctrl('r')), "Ctrl-R");
    assert_eq!(key_label(Key::plain(KeyCode::Home)), "Home");
    assert_eq!(key_label(Key::plain(KeyCode::PageDown)), "PgDn");
}

#[test]
fn a_rebound_command_takes_the_keys_given_on_every_screen() {
    let o = KeyOverrides::new(&entries(&[
        ("delete", &["x"]),
        ("refresh", &["ctrl-r", "F"]),
    ]))
    .unwrap();
    for screen in [Screen::Operations, Screen::Operation] {
        assert_eq!(
            keymap::lookup(&o, screen, Key::ch('x')),
            Some(KeyCommand::Delete)
        );
        assert_eq!(keymap::lookup(&o, screen, Key::ch('d')), None);
        assert_eq!(
            keymap::lookup(&o, screen, Key::ctrl('d')),
            None,
            "its Ctrl-D row goes"
        );
        assert_eq!(
            keymap::lookup(&o, screen, Key::ctrl('r')),
            Some(KeyCommand::Refresh)
        );
    }
    let deletes: Vec<String> = keymap::bindings(&o, Screen::Operations)
        .filter(|b| b.command == KeyCommand::Delete)
        .map(|b| o.label(b).into_owned())
        .collect();
    assert_eq!(deletes, ["x"]);
    let refresh = keymap::bindings(&o, Screen::Clusters)
        .find(|b| b.command == KeyCommand::Refresh)
        .unwrap();
    assert_eq!(o.label(refresh), "Ctrl-R/F");
    // Nothing rebound: the tables as they are.
    let none = KeyOverrides::default();
    assert_eq!(
        keymap::lookup(&none, Screen::Operation, Key::ch('w')),
        Some(KeyCommand::Report)
    );
}

#[test]
fn an_unknown_action_a_bad_key_and_a_clash_are_refused_by_entry() {
    let refused = |pairs: &[(&str, &[&str])]| KeyOverrides::new(&entries(pairs)).unwrap_err();
    assert_eq!(
        refused(&[("pause", &["P"]), ("pasue", &["x"])]),
        (1, RebindError::UnknownAction("pasue".into()))
    );
    assert_eq!(
        refused(&[("pause", &["pg down"])]),
        (0, RebindError::BadKey("pg down".into()))
    );
    assert_eq!(
        refused(&[("pause", &[])]),
        (0, RebindError::BadKey(String::new()))
    );
    assert_eq!(
        refused(&[("help", &["ctrl-c"])]),
        (0, RebindError::Reserved)
    );
    assert_eq!(
        refused(&[("refresh", &["F"]), ("pause", &["d"])]),
        (
            1,
            RebindError::Clash {
                key: "d".into(),
                screen: Screen::Operations,
                other: "delete",
            }
        )
    );
    assert_eq!(
        refused(&[("pause", &["N"])]),
        (
            0,
            RebindError::Clash {
                key: "N".into(),
                screen: Screen::Operations,
                other: "sort",
            }
        )
    );
    // A key freed by rebinding its command may be taken by another.
    assert!(KeyOverrides::new(&entries(&[("delete", &["x"]), ("pause", &["d"])])).is_ok());
    let long = "a".repeat(500);
    let (_, e) = refused(&[(long.as_str(), &["x"])]);
    assert!(matches!(e, RebindError::UnknownAction(s) if s.chars().count() <= 40));
}
