//! Every size, hostile text, no colour and no Unicode: the screens stay safe and readable.

use crate::common;

use common::fixtures;
use common::snap::{draw, styles};
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{Conn, Dialog, State};
use ichor_app::update::{start, update};
use ichor_model::{Cluster, ClusterMachine, OperationRef, Phase, Tracking};
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;

const HOSTILE: &str = "x\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}Pq#0\u{1b}\\\u{8}\r\n\u{202E}evil\u{2066}\u{9b}31m";

fn cluster(name: &str) -> Cluster {
    Cluster {
        namespace: "default".into(),
        name: name.into(),
        talos_version: "v1.9.2".into(),
        kubernetes_version: "v1.32.3".into(),
        kube_proxy: "enabled".into(),
        ichor_version: Some("v0.14.2".into()),
        machines: vec![ClusterMachine {
            name: format!("{name}-cp1"),
            role: "controlplane".into(),
            order: Some(1),
            approved: true,
            hold: Some(HOSTILE.into()),
            unreadable: None,
            talos_version: Some(HOSTILE.into()),
            kubernetes_version: Some(HOSTILE.into()),
        }],
        tracking: Some(Tracking {
            tool: "Argo CD".into(),
            object: HOSTILE.into(),
        }),
        active_operation: Some(OperationRef {
            name: HOSTILE.into(),
            kind: "talos".into(),
            phase: Phase::Running,
        }),
        unreadable: None,
        last_shutdown: None,
        stray_confirmation: false,
        bundle_backup_stale: None,
    }
}

/// States that cover every screen and dialog.
fn states(hostile: bool) -> Vec<State> {
    let mut ops = fixtures::list();
    if hostile {
        for op in &mut ops {
            op.name = format!("{}{HOSTILE}", op.name);
            op.cluster = HOSTILE.into();
            op.actor = Some(HOSTILE.into());
            op.failure_reason = Some(HOSTILE.into());
            for m in &mut op.machines {
                m.name = format!("{HOSTILE}{}", m.name);
                m.message = HOSTILE.into();
            }
        }
    }
    let base = || {
        let mut s = fixtures::state();
        start(&mut s);
        let seq = s.seq;
        update(
            &mut s,
            Action::Operations {
                seq,
                result: Ok(ops.clone()),
            },
        );
        s
    };
    let mut out = vec![base()];
    let mut help = base();
    update(&mut help, Action::Key(Key::ch('?')));
    out.push(help);
    let mut confirm = base();
    update(&mut confirm, Action::Key(Key::ch('j')));
    update(&mut confirm, Action::Key(Key::ch('d')));
    out.push(confirm);
    for i in 0..3 {
        let mut page = base();
        for _ in 0..i + 1 {
            update(&mut page, Action::Key(Key::ch('j')));
        }
        update(&mut page, Action::Key(Key::plain(KeyCode::Enter)));
        update(&mut page, Action::Key(Key::ch('r')));
        out.push(page);
    }
    let mut stale = base();
    stale.conn = Conn::GaveUp {
        since: fixtures::ago(3),
    };
    out.push(stale);
    let mut clusters = base();
    update(&mut clusters, Action::Key(Key::ch('2')));
    let seq = clusters.seq;
    update(
        &mut clusters,
        Action::Clusters {
            seq,
            result: Ok(vec![cluster("c1"), cluster("c2")]),
        },
    );
    out.push(clusters.clone());
    let mut page = clusters.clone();
    update(&mut page, Action::Key(Key::plain(KeyCode::Enter)));
    out.push(page);
    let mut form = clusters;
    update(&mut form, Action::Key(Key::ch('n')));
    out.push(form.clone());
    update(&mut form, Action::Key(Key::plain(KeyCode::Tab)));
    for c in "1.9".chars() {
        update(&mut form, Action::Key(Key::ch(c)));
    }
    out.push(form);
    out
}

#[test]
fn no_size_from_1x1_up_panics_and_small_terminals_say_so() {
    let mut sizes: Vec<(u16, u16)> = Vec::new();
    // Every tiny size, both sides of the 40×12 threshold, and the common sizes.
    for w in (1..=12).chain([20, 33, 34, 39, 40, 41, 45, 60, 79, 80, 81, 120, 160, 200]) {
        for h in (1..=6).chain([8, 11, 12, 13, 14, 24, 48]) {
            sizes.push((w, h));
        }
    }
    for (i, state) in states(false).iter().enumerate() {
        for &(w, h) in &sizes {
            for lang in [Lang::En, Lang::Ja] {
                let term = draw(state, lang, w, h, Theme::default());
                let first: String = (0..w)
                    .map(|x| term.backend().buffer()[(x, 0)].symbol().to_string())
                    .collect();
                if w < 40 || h < 12 {
                    if lang == Lang::En && w >= 34 {
                        assert!(
                            first.starts_with("terminal too small (need 40×12)"),
                            "state {i} {w}x{h}: {first:?}"
                        );
                    }
                } else if first.contains("too small") {
                    // The screens fit; a dialog that does not scroll (the y/N question, the
                    // form) needs more rows than there are, and says how many at this width.
                    assert!(
                        matches!(
                            state.dialog,
                            Some(Dialog::Confirm(_) | Dialog::NewOperation(_))
                        ) && h < 24,
                        "state {i} {w}x{h}: {first:?}"
                    );
                    if lang == Lang::En {
                        let need = first
                            .split_once("(need ")
                            .and_then(|(_, n)| n.split_once(')'))
                            .and_then(|(n, _)| n.split_once('×'))
                            .and_then(|(nw, nh)| Some((nw.parse().ok()?, nh.parse().ok()?)));
                        assert!(
                            need.is_some_and(|(nw, nh): (u16, u16)| nw == w && nh > h),
                            "state {i} {w}x{h}: {first:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn hostile_cluster_text_never_reaches_a_cell_as_a_control_character() {
    for state in states(true) {
        for lang in [Lang::En, Lang::Ja] {
            for (w, h) in [(80, 24), (160, 48)] {
                let term = draw(&state, lang, w, h, Theme::default());
                let buf = term.backend().buffer();
                for y in 0..h {
                    for x in 0..w {
                        let sym = buf[(x, y)].symbol();
                        assert!(
                            !sym.chars().any(|c| c.is_control()
                                || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')),
                            "{w}x{h} ({x},{y}): {sym:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn ascii_mode_draws_only_ascii_around_the_text() {
    for state in states(false) {
        let term = draw(
            &state,
            Lang::En,
            100,
            30,
            Theme {
                color: false,
                ascii: true,
                ..Theme::default()
            },
        );
        let buf = term.backend().buffer();
        for y in 0..30 {
            for x in 0..100 {
                let sym = buf[(x, y)].symbol();
                assert!(sym.is_ascii(), "({x},{y}): {sym:?} in\n{}", term.backend());
            }
        }
    }
}

#[test]
fn without_colour_nothing_is_coloured_and_states_stay_in_words() {
    for state in states(false) {
        let term = draw(
            &state,
            Lang::En,
            100,
            30,
            Theme {
                color: false,
                ascii: false,
                ..Theme::default()
            },
        );
        let st = styles(term.backend().buffer());
        for line in st.lines() {
            assert!(
                line.contains("fg=Reset bg=Reset"),
                "a colour without colour: {line}"
            );
        }
    }
}
