//! Every screen and state that matters, as insta snapshots of a TestBackend, in English and
//! Japanese, at 80×24 and 160×48; styles too where colour carries meaning.

use crate::common;

use common::fixtures::{self, now, page};
use common::snap::{draw, row_text, styles};
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{Conn, Notice, RbacWrite, State};
use ichor_app::update::{start, update};
use ichor_model::{ApiError, Code, Reason};
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;

/// Snapshots `state` in both languages at both sizes.
fn snap(name: &str, state: &State) {
    crate::snap_all!(name, state);
}

fn snap_styles(name: &str, state: &State) {
    let term = draw(state, Lang::En, 80, 24, Theme::default());
    crate::snapshot!(format!("{name}_styles"), styles(term.backend().buffer()));
}

fn loaded_list() -> State {
    fixtures::listed(fixtures::list())
}

#[test]
fn operations_loading() {
    let mut s = fixtures::state();
    start(&mut s);
    snap("operations_loading", &s);
}

#[test]
fn operations_empty() {
    let mut s = fixtures::state();
    start(&mut s);
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Ok(vec![]),
        },
    );
    snap("operations_empty", &s);
}

#[test]
fn operations_list() {
    let s = loaded_list();
    snap("operations_list", &s);
    snap_styles("operations_list", &s);
}

/// The list drawn at `w`×`h` in each language, snapshotted (`operations_list_LANG_WxH`):
/// the words, the header and the rows of each, for `check`; then each row must hold every
/// operation's words that `whole` names, whole.
fn list_at(
    (w, h): (u16, u16),
    check: impl Fn(&ichor_views::i18n::Texts, &str),
    whole: impl Fn(&ichor_views::i18n::Texts, &ichor_model::Operation) -> Vec<String>,
) {
    let s = loaded_list();
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(&s, lang, w, h, Theme::default());
        crate::snapshot!(
            format!("operations_list_{}_{w}x{h}", lang.code()),
            term.backend()
        );
        let texts = ichor_views::i18n::Texts::new(lang);
        let buf = term.backend().buffer();
        check(&texts, &row_text(buf, 3));
        let rows: Vec<String> = (4..11).map(|y| row_text(buf, y)).collect();
        for op in fixtures::list() {
            let whole = whole(&texts, &op);
            assert!(
                rows.iter()
                    .any(|row| whole.iter().all(|w| row.contains(w.as_str()))),
                "{lang:?}: a row with {whole:?} whole in {rows:#?}"
            );
        }
    }
}

#[test]
fn operations_list_at_200_columns_cuts_nothing() {
    // 200 columns leave room for every column whole: nothing is cut while space is free (the
    // kind's full words, every name, every actor), and the actor column takes what is left.
    list_at(
        (200, 50),
        |_, _| {},
        |texts, op| {
            let kind = texts.t(&format!("kind-{}", op.kind.unwrap().as_str()));
            vec![
                op.name.clone(),
                kind,
                op.cluster.clone(),
                op.actor.clone().unwrap(),
            ]
        },
    );
}

#[test]
fn operations_list_at_120_columns_keeps_the_estimate_and_the_actors_whole() {
    // 120 columns: the bar narrows and the kind and the target take their short words before
    // the estimate is hidden or an actor is cut (alice@e…).
    list_at(
        (120, 36),
        |texts, header| {
            for id in ["col-name", "col-left", "col-actor"] {
                assert!(header.contains(&texts.t(id)), "{id} in {header}");
            }
        },
        |_, op| vec![op.name.clone(), op.actor.clone().unwrap()],
    );
}

#[test]
fn a_list_that_does_not_fit_says_how_many_more() {
    // 63 operations in a list of 18 rows, scrolled down: the bottom border counts the rows
    // above and below.
    let ops: Vec<_> = (0..9)
        .flat_map(|i| {
            fixtures::list().into_iter().map(move |mut op| {
                op.name = format!("{}-{i}", op.name);
                op
            })
        })
        .collect();
    let mut s = fixtures::listed(ops);
    for _ in 0..25 {
        update(&mut s, Action::Key(Key::ch('j')));
    }
    crate::snap_all!("operations_overflow", &s);
    let term = draw(&s, Lang::En, 80, 24, Theme::default());
    let bottom = row_text(term.backend().buffer(), 22);
    assert!(
        bottom.contains("↑ 8 above · +37 more"),
        "rows 9–26 of 63 shown: {bottom:?}"
    );
    // The keys of `?` on a terminal too short for them, even in two columns, are counted
    // too, and scroll.
    update(&mut s, Action::Key(Key::ch('?')));
    let term = draw(&s, Lang::En, 80, 12, Theme::default());
    let rows: Vec<String> = (0..12)
        .map(|y| row_text(term.backend().buffer(), y))
        .collect();
    assert!(
        rows.iter().any(|r| r.contains(" more ")),
        "{}",
        term.backend()
    );
    let texts = ichor_views::i18n::Texts::new(Lang::En);
    let ctx = ichor_views::widgets::Ctx {
        texts: &texts,
        theme: Theme::default(),
    };
    update(&mut s, Action::Resize(80, 12));
    let viewport = ichor_views::viewport(&s, &ctx, (80, 12));
    update(&mut s, Action::Viewport(viewport));
    update(&mut s, Action::Key(Key::ch('G')));
    let term = draw(&s, Lang::En, 80, 12, Theme::default());
    let screen = format!("{}", term.backend());
    assert!(
        screen.contains(" above ┘") && screen.contains("answer a question"),
        "scrolled to the end: the last key shows, the marker counts what is above\n{screen}"
    );
}

#[test]
fn operations_all_namespaces() {
    let mut s = fixtures::state();
    s.session.all_namespaces = true;
    start(&mut s);
    let mut ops = fixtures::list();
    ops[1].namespace = "platform-prod".into();
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Ok(ops),
        },
    );
    snap("operations_all_namespaces", &s);
}

#[test]
fn operations_filter_active() {
    let mut s = loaded_list();
    for k in [
        Key::ch('/'),
        Key::ch('p'),
        Key::ch('r'),
        Key::ch('o'),
        Key::ch('d'),
    ] {
        update(&mut s, Action::Key(k));
    }
    assert_eq!(s.ops.visible.len(), 3);
    snap("operations_filter_active", &s);
}

#[test]
fn operations_help_overlay() {
    let mut s = loaded_list();
    update(&mut s, Action::Key(Key::ch('?')));
    snap("operations_help", &s);
}

#[test]
fn operations_stale_banner() {
    let mut s = loaded_list();
    // The user stays on the status bar while the data is stale.
    s.session.user = Some("operator".into());
    s.last_ok = Some(fixtures::ago(4));
    update(
        &mut s,
        Action::Retry(ichor_model::RetryEvent::Retrying {
            what: "listing operations".into(),
            attempt: 3,
            delay: std::time::Duration::from_secs(8),
            since: fixtures::ago(3),
            error: ApiError::new(Code::Unavailable, "connection refused"),
        }),
    );
    snap("operations_stale", &s);
}

#[test]
fn operations_gave_up() {
    let mut s = loaded_list();
    s.last_ok = Some(fixtures::ago(11));
    s.conn = Conn::GaveUp {
        since: fixtures::ago(10),
    };
    snap("operations_gave_up", &s);
}

#[test]
fn operations_refusal_message() {
    let mut s = loaded_list();
    s.notice = Some(Notice::Failed(ApiError::refused(
        Code::PermissionDenied,
        Reason::PermissionDenied,
        &[(
            "detail",
            "talosoperations.ichor.maesh.dev \"prod-eu-talos-8xk2m\" is forbidden: User \"viewer\" cannot patch resource \"talosoperations\"",
        )],
        "forbidden",
    )));
    snap("operations_refusal", &s);
}

#[test]
fn operations_confirm_delete_running() {
    let mut s = loaded_list();
    update(&mut s, Action::Key(Key::ch('j')));
    update(&mut s, Action::Key(Key::ch('d')));
    snap("operations_confirm_delete", &s);
}

#[test]
fn operation_running_rollout() {
    let s = page(fixtures::running_rollout());
    snap("operation_running", &s);
    snap_styles("operation_running", &s);
}

#[test]
fn operation_paused_by_user() {
    snap(
        "operation_paused_by_user",
        &page(fixtures::paused_by_user()),
    );
}

#[test]
fn operation_paused_by_failure() {
    let mut s = page(fixtures::paused_by_failure());
    update(&mut s, Action::Key(Key::ch('r')));
    snap("operation_paused_by_failure", &s);
    snap_styles("operation_paused_by_failure", &s);
}

#[test]
fn operation_completed() {
    snap("operation_completed", &page(fixtures::completed()));
}

#[test]
fn operation_ca_rotation_mid_pass() {
    snap(
        "operation_ca_rotation",
        &page(fixtures::ca_rotation_mid_pass()),
    );
}

#[test]
fn operation_waiting_for_lock() {
    snap(
        "operation_waiting_for_lock",
        &page(fixtures::waiting_for_lock()),
    );
}

#[test]
fn operation_confirm_pause() {
    let mut s = page(fixtures::running_rollout());
    update(&mut s, Action::Key(Key::ch('p')));
    snap("operation_confirm_pause", &s);
}

#[test]
fn operation_gone() {
    let mut s = page(fixtures::running_rollout());
    let (ns, name) = (
        s.detail.as_ref().unwrap().namespace.clone(),
        s.detail.as_ref().unwrap().name.clone(),
    );
    update(&mut s, Action::Key(Key::ch('R')));
    let seq = s.seq;
    update(
        &mut s,
        Action::Operation {
            seq,
            namespace: ns.clone(),
            name: name.clone(),
            result: Err(ApiError::refused(
                Code::NotFound,
                Reason::OperationNotFound,
                &[("operation", &name), ("namespace", &ns)],
                "gone",
            )),
        },
    );
    crate::snap_every_size!("operation_gone", &s);
}

#[test]
fn no_colour_is_still_readable() {
    let s = loaded_list();
    let term = draw(
        &s,
        Lang::En,
        80,
        24,
        Theme {
            color: false,
            ascii: true,
            ..Theme::default()
        },
    );
    crate::snapshot!("operations_list_no_colour_ascii", term.backend());
    let st = styles(term.backend().buffer());
    assert!(
        !st.contains("fg=Red") && !st.contains("fg=Green") && !st.contains("fg=Cyan"),
        "{st}"
    );
    assert!(
        st.contains("BOLD | REVERSED"),
        "the selected row is bold and reversed: {st}"
    );
}

#[test]
fn the_clock_is_in_state() {
    // Same state, same frame: views never read the clock.
    let s = loaded_list();
    let a = draw(&s, Lang::En, 80, 24, Theme::default());
    let b = draw(&s, Lang::En, 80, 24, Theme::default());
    assert_eq!(a.backend().buffer(), b.backend().buffer());
    assert_eq!(s.now, now());
}

// ---- writes bound to what was confirmed ----

/// The rollout's page with a delete confirmed and sent: its answer awaited.
fn deleting() -> State {
    let mut s = page(fixtures::running_rollout());
    update(&mut s, Action::Key(Key::ch('d')));
    update(&mut s, Action::Key(Key::ch('y')));
    assert!(s.pending.is_some());
    s
}

/// `s` after its pending write was answered with `result`.
fn answered(mut s: State, result: Result<(), ApiError>) -> State {
    let p = s.pending.clone().unwrap();
    update(
        &mut s,
        Action::Written {
            seq: p.seq,
            action: p.action,
            namespace: p.namespace,
            name: p.name,
            result,
        },
    );
    s
}

#[test]
fn a_write_waiting_for_its_answer() {
    snap("operation_write_pending", &deleting());
}

#[test]
fn a_write_whose_answer_was_lost() {
    let name = "prod-eu-talos-8xk2m";
    let not_applied = answered(
        deleting(),
        Err(ApiError::refused(
            Code::Aborted,
            Reason::WriteNotApplied,
            &[("action", "delete"), ("operation", name), ("late", "yes")],
            "not applied",
        )),
    );
    snap("operation_write_not_applied", &not_applied);
    let unknown = answered(
        deleting(),
        Err(ApiError::refused(
            Code::Unavailable,
            Reason::WriteOutcomeUnknown,
            &[
                ("action", "delete"),
                ("operation", name),
                ("detail", "connection refused"),
            ],
            "unknown",
        )),
    );
    snap("operation_write_unknown", &unknown);
    let mut abandoned = deleting();
    update(&mut abandoned, Action::Key(Key::plain(KeyCode::Esc)));
    assert!(abandoned.pending.is_none());
    snap("operation_write_abandoned", &abandoned);
}

#[test]
fn a_write_refused_because_the_operation_changed() {
    let s = answered(
        deleting(),
        Err(ApiError::refused(
            Code::FailedPrecondition,
            Reason::ChangedSinceConfirmed,
            &[
                ("operation", "prod-eu-talos-8xk2m"),
                ("change", "replaced"),
                ("phase", "Running"),
            ],
            "changed",
        )),
    );
    snap("operation_changed_since_confirmed", &s);
}

#[test]
fn write_keys_are_not_offered_to_who_may_not_use_them() {
    let mut s = loaded_list();
    update(
        &mut s,
        Action::Permissions {
            namespace: "default".into(),
            result: Ok(ichor_model::Permissions::default()),
        },
    );
    update(&mut s, Action::Key(Key::ch('d')));
    assert_eq!(s.dialog, None);
    // The refusal names the verb and the resource, as a Review does.
    assert_eq!(
        s.notice,
        Some(Notice::NotPermitted(RbacWrite::Delete, "default".into()))
    );
    assert!(s.pending.is_none(), "nothing was sent");
    snap("operations_not_permitted", &s);
    update(&mut s, Action::Key(Key::ch('p')));
    assert_eq!(s.dialog, None);
    assert_eq!(
        s.notice,
        Some(Notice::NotPermitted(RbacWrite::Patch, "default".into()))
    );
    snap("operations_not_permitted_patch", &s);
    // `n` on the Clusters list: a start, and what it needs.
    update(&mut s, Action::Key(Key::ch('2')));
    let seq = s.seq;
    let cluster = fixtures::cluster_of(&fixtures::running_rollout());
    update(
        &mut s,
        Action::Clusters {
            seq,
            result: Ok(vec![cluster]),
        },
    );
    update(&mut s, Action::Key(Key::ch('n')));
    assert_eq!(s.dialog, None);
    assert_eq!(
        s.notice,
        Some(Notice::NotPermitted(RbacWrite::Start, "default".into()))
    );
    assert!(s.pending.is_none(), "nothing was sent");
    snap("clusters_not_permitted_start", &s);
}

/// An operation whose status was written with the wrong type, as the service lists it.
fn unreadable_op() -> ichor_model::Operation {
    let mut op = fixtures::completed();
    op.name = "prod-eu-talos-b4d42".into();
    op.unreadable = Some("status: invalid type: integer `42`, expected a string".into());
    op.phase = ichor_model::Phase::Unknown;
    op.machines.clear();
    op.created_at = Some(fixtures::ago(3));
    op
}

#[test]
fn operations_unreadable_row() {
    let mut ops = fixtures::list();
    ops.push(unreadable_op());
    let mut s = fixtures::listed(ops);
    // Select it: the footer offers no write, and `d` says why.
    for _ in 0..12 {
        if s.ops.selected().is_some_and(|o| o.unreadable.is_some()) {
            break;
        }
        update(&mut s, Action::Key(Key::ch('j')));
    }
    assert!(s.ops.selected().is_some_and(|o| o.unreadable.is_some()));
    update(&mut s, Action::Key(Key::ch('d')));
    assert_eq!(
        s.notice,
        Some(Notice::Unavailable(ichor_app::state::Why::Unreadable))
    );
    snap("operations_unreadable", &s);
    snap_styles("operations_unreadable", &s);
}

#[test]
fn operation_unreadable_page() {
    snap("operation_unreadable", &page(unreadable_op()));
}

#[test]
fn operations_stale_after_an_error() {
    let mut s = loaded_list();
    // The next poll, a minute later, fails for a reason the client does not retry.
    s.now = fixtures::ago(-1);
    update(&mut s, Action::Tick);
    let seq = s.seq;
    update(
        &mut s,
        Action::Operations {
            seq,
            result: Err(ApiError::refused(
                Code::Internal,
                Reason::Internal,
                &[
                    ("what", "listing operations"),
                    (
                        "detail",
                        "decoding the answer: expected value at line 1 column 1",
                    ),
                ],
                "listing operations: decoding the answer: expected value at line 1 column 1",
            )),
        },
    );
    assert!(s.stale());
    snap("operations_stale_after_error", &s);
    snap_styles("operations_stale_after_error", &s);
}

#[test]
fn clusters_with_an_unreadable_cluster_and_machine() {
    use ichor_model::{Cluster, ClusterMachine};
    let machine = |name: &str, role: &str, unreadable: Option<&str>| ClusterMachine {
        name: name.into(),
        role: role.into(),
        order: None,
        approved: unreadable.is_none(),
        hold: None,
        unreadable: unreadable.map(String::from),
        talos_version: None,
        kubernetes_version: None,
    };
    let good = Cluster {
        namespace: "default".into(),
        name: "prod-eu".into(),
        talos_version: "v1.9.2".into(),
        kubernetes_version: "v1.32.3".into(),
        kube_proxy: "enabled".into(),
        ichor_version: Some("v0.14.2".into()),
        machines: vec![
            machine("prod-eu-cp-1", "controlplane", None),
            machine("prod-eu-w-1", "worker", None),
            machine(
                "prod-eu-w-2",
                "",
                Some("spec: invalid type: string \"yes\", expected a boolean"),
            ),
        ],
        tracking: None,
        active_operation: None,
        unreadable: None,
        last_shutdown: None,
        stray_confirmation: false,
        bundle_backup_stale: None,
    };
    let bad = Cluster {
        namespace: "default".into(),
        name: "staging".into(),
        talos_version: String::new(),
        kubernetes_version: String::new(),
        kube_proxy: String::new(),
        ichor_version: None,
        machines: vec![machine("staging-cp-1", "controlplane", None)],
        tracking: None,
        active_operation: None,
        unreadable: Some("spec: missing field `talosVersion`".into()),
        last_shutdown: None,
        stray_confirmation: false,
        bundle_backup_stale: None,
    };
    let mut s = loaded_list();
    update(&mut s, Action::Key(Key::ch('2')));
    let seq = s.seq;
    update(
        &mut s,
        Action::Clusters {
            seq,
            result: Ok(vec![good.clone(), bad]),
        },
    );
    update(&mut s, Action::Key(Key::ch('j')));
    update(&mut s, Action::Key(Key::ch('n')));
    assert_eq!(
        s.notice,
        Some(Notice::Unavailable(ichor_app::state::Why::Unreadable)),
        "no new operation on a cluster that cannot be read"
    );
    snap("clusters_unreadable", &s);
    // The readable cluster's page lists its unreadable machine.
    update(&mut s, Action::Key(Key::ch('k')));
    update(
        &mut s,
        Action::Key(Key::plain(ichor_app::action::KeyCode::Enter)),
    );
    snap("cluster_page_unreadable_machine", &s);
}

/// Below 40×12 the screen says only that it is too small, the size it needs, and that keys are
/// off but `q`, which quits. At 40×12 the new-operation form is drawn, scrolled to its focused
/// field, with a marker for what is above and below.
#[test]
fn a_terminal_too_small_says_so_and_that_keys_are_off() {
    let s = loaded_list();
    let mut form = loaded_list();
    update(&mut form, Action::Key(Key::ch('2')));
    let seq = form.seq;
    let cluster = ichor_model::Cluster {
        namespace: "default".into(),
        name: "prod-eu".into(),
        talos_version: "v1.9.2".into(),
        kubernetes_version: "v1.32.3".into(),
        kube_proxy: "enabled".into(),
        ichor_version: Some("v0.14.2".into()),
        machines: Vec::new(),
        tracking: None,
        active_operation: None,
        unreadable: None,
        last_shutdown: None,
        stray_confirmation: false,
        bundle_backup_stale: None,
    };
    update(
        &mut form,
        Action::Clusters {
            seq,
            result: Ok(vec![cluster]),
        },
    );
    update(&mut form, Action::Key(Key::ch('n')));
    assert!(form.dialog.is_some());
    for lang in [Lang::En, Lang::Ja] {
        for (name, state, (w, h)) in [
            ("too_small", &s, (30, 10)),
            ("form_at_the_smallest_size", &form, (40, 12)),
        ] {
            let term = draw(state, lang, w, h, Theme::default());
            crate::snapshot!(format!("{name}_{}_{w}x{h}", lang.code()), term.backend());
        }
    }
}
