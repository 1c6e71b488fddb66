//! `?` says something useful wherever it is pressed (issue 25, items 6 and 10): the
//! new-operation form, the Review, the YAML view and the events overlay list their own keys
//! (Ctrl-C, Ctrl-U, Ctrl-W where they apply) and close back to what was read; a viewer
//! without the permission, or read-only mode, is not offered the writes. Snapshots in en and ja
//! at 80×24, 160×48 and 40×12.

use crate::common;

use common::dialog::{dialog, form, review};
use common::fixtures::{self, ago};
use common::snap::draw;
use ichor_app::action::{Action, Key, KeyCode};
use ichor_app::state::{Dialog, NewOpStep, ReadingOf, Screen, State};
use ichor_app::update::update;
use ichor_client::inprocess::InProcessClient;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_demo::demo;
use ichor_model::{OperationClient, OperationEvent, OperationKind, Permissions};
use ichor_service::OperationService;
use ichor_service::access::{Caller, KubeAccess};
use ichor_views::i18n::Lang;
use ichor_views::widgets::{Ctx, Theme};
use std::sync::Arc;

/// `state` in en and ja at 80×24, 160×48 and 40×12.
pub(crate) fn snap3(name: &str, state: &State) {
    crate::snap_all!(name, state);
    for lang in [Lang::En, Lang::Ja] {
        let term = draw(state, lang, 40, 12, Theme::default());
        crate::snapshot!(format!("{name}_{}_40x12", lang.code()), term.backend());
    }
}

/// The screen's rows as text (a wide character once).
pub(crate) fn rows_of(state: &State, lang: Lang, w: u16, h: u16) -> Vec<String> {
    common::snap::rows(state, lang, w, h, Theme::default())
}

/// The screen's words as one line: borders dropped, wrapped lines joined, spaces collapsed.
pub(crate) fn flat(state: &State, lang: Lang, w: u16, h: u16) -> String {
    rows_of(state, lang, w, h)
        .iter()
        .map(|l| l.trim_matches(|c: char| "│┌┐└┘─ ".contains(c)))
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the runtime does before each frame: the app learns how the views lay the screen out.
pub(crate) fn lay_out(s: &mut State, w: u16, h: u16) {
    update(s, Action::Resize(w, h));
    let texts = ichor_views::i18n::Texts::new(Lang::En);
    let ctx = Ctx {
        texts: &texts,
        theme: Theme::default(),
    };
    let viewport = ichor_views::viewport(s, &ctx, s.size);
    update(s, Action::Viewport(viewport));
}

fn key(s: &mut State, k: Key) {
    update(s, Action::Key(k));
    lay_out(s, s.size.0, s.size.1);
}

pub(crate) async fn demo_client() -> (EmbeddedApi, Arc<dyn OperationClient>) {
    let api = EmbeddedApi::default();
    demo::seed(&api, fixtures::now()).unwrap();
    let service =
        OperationService::new(KubeAccess::new(api.client(users::ADMIN_TOKEN), "ichor-tui"));
    let client = Arc::new(InProcessClient::new(service, Caller::in_process()));
    (api, client)
}

fn keys_are_open(s: &State) -> bool {
    matches!(&s.dialog, Some(Dialog::Read(r)) if r.what == ReadingOf::Keys)
}

#[tokio::test]
async fn the_forms_keys_say_how_to_edit_and_close_back_to_the_form() {
    let (_api, client) = demo_client().await;
    let mut d = form(client, "prod-eu", OperationKind::Talos).await;
    d.code(KeyCode::Tab).await;
    d.type_text("1.9").await;
    // In the version's field `?` is text; on the kind, which takes none, it shows the keys.
    d.code(KeyCode::BackTab).await;
    d.key(Key::ch('?')).await;
    assert!(keys_are_open(&d.state), "{:?}", d.state.dialog);
    let said = flat(&d.state, Lang::En, 80, 24);
    for k in ["Ctrl-U", "Ctrl-W", "Ctrl-C", "Tab", "Enter", "review"] {
        assert!(said.contains(k), "{k} not in {said}");
    }
    assert!(!said.contains("new operation"), "{said}");
    snap3("help_form", &d.state);
    // Closed, the form is back as it was, the version typed still there.
    d.code(KeyCode::Esc).await;
    assert_eq!(dialog(&d).step, NewOpStep::Form);
    assert_eq!(dialog(&d).target, "1.9");
    d.key(Key::ch('?')).await;
    d.key(Key::ch('?')).await;
    assert_eq!(dialog(&d).target, "1.9", "? closes its keys too");
}

#[tokio::test]
async fn the_reviews_keys_and_a_plan_that_comes_while_they_are_read() {
    let (_api, client) = demo_client().await;
    let mut d = review(client, "prod-eu", OperationKind::Talos, Some("1.9.3")).await;
    d.key(Key::ch('?')).await;
    assert!(keys_are_open(&d.state));
    let said = flat(&d.state, Lang::En, 80, 24);
    for k in ["Shift-Tab", "start", "Ctrl-C", "review again"] {
        assert!(said.contains(k), "{k} not in {said}");
    }
    snap3("help_review", &d.state);
    d.code(KeyCode::Esc).await;
    assert_eq!(dialog(&d).step, NewOpStep::Review);
    assert!(dialog(&d).plan.data.is_some());
}

#[tokio::test]
async fn a_plan_answered_under_the_keys_reaches_the_review() {
    let (_api, client) = demo_client().await;
    let mut d = form(client, "prod-eu", OperationKind::Talos).await;
    d.code(KeyCode::Tab).await;
    d.type_text("1.9.3").await;
    // Enter asks for the plan; `?` before the answer is handled.
    let effects = update(&mut d.state, Action::Key(Key::plain(KeyCode::Enter)));
    d.lay_out();
    update(&mut d.state, Action::Key(Key::ch('?')));
    d.lay_out();
    assert!(keys_are_open(&d.state));
    for e in effects {
        if let Some(a) = ichor_runtime::perform(d.client.as_ref(), e).await {
            update(&mut d.state, a);
        }
    }
    d.lay_out();
    update(&mut d.state, Action::Key(Key::plain(KeyCode::Esc)));
    assert!(
        dialog(&d).plan.data.is_some(),
        "the plan came while the keys were read"
    );
}

fn page_with_events(events: Vec<OperationEvent>) -> State {
    let mut s = fixtures::opened(fixtures::running_rollout());
    let seq = s.seq;
    let d = s.detail.as_ref().unwrap();
    let (namespace, name) = (d.namespace.clone(), d.name.clone());
    update(
        &mut s,
        Action::Events {
            seq,
            namespace,
            name,
            result: Ok(events.into()),
        },
    );
    lay_out(&mut s, 80, 24);
    s
}

fn an_event(mins: i64, message: &str) -> OperationEvent {
    OperationEvent {
        warning: false,
        reason: "MachineStepFinished".into(),
        message: message.into(),
        object_kind: "Machine".into(),
        object_name: "prod-eu-w01".into(),
        count: 1,
        first_at: Some(ago(mins)),
        last_at: Some(ago(mins)),
    }
}

#[test]
fn the_yaml_views_keys_and_the_events_keys() {
    let mut s = page_with_events(vec![an_event(1, "running Talos v1.9.3")]);
    key(&mut s, Key::ch('y'));
    let (namespace, name) = (
        "default".to_string(),
        s.detail.as_ref().unwrap().name.clone(),
    );
    update(
        &mut s,
        Action::Manifest {
            namespace,
            name,
            result: Ok("apiVersion: v1\nkind: TalosOperation\n".into()),
        },
    );
    key(&mut s, Key::ch('?'));
    assert!(keys_are_open(&s));
    let said = flat(&s, Lang::En, 80, 24);
    for k in ["scroll down", "close", "Ctrl-C"] {
        assert!(said.contains(k), "{k} not in {said}");
    }
    assert!(!said.contains("pause"), "{said}");
    snap3("help_yaml", &s);
    key(&mut s, Key::plain(KeyCode::Esc));
    assert!(
        matches!(&s.dialog, Some(Dialog::Read(r)) if matches!(r.what, ReadingOf::Manifest { .. }))
    );
    key(&mut s, Key::plain(KeyCode::Esc));
    key(&mut s, Key::ch('e'));
    key(&mut s, Key::ch('?'));
    assert!(keys_are_open(&s));
    let said = flat(&s, Lang::En, 80, 24);
    for k in ["G/End", "g/Home", "Ctrl-C"] {
        assert!(said.contains(k), "{k} not in {said}");
    }
    snap3("help_events", &s);
    key(&mut s, Key::ch('?'));
    assert_eq!(s.dialog, Some(Dialog::Events { scroll: 0 }));
}

/// The screen's keys in `?`, as one line.
fn help_said(mut s: State) -> String {
    lay_out(&mut s, 160, 48);
    key(&mut s, Key::ch('?'));
    assert!(keys_are_open(&s));
    flat(&s, Lang::En, 160, 48)
}

fn refused_everything(s: &mut State) {
    update(
        s,
        Action::Permissions {
            namespace: "default".into(),
            result: Ok(Permissions::default()),
        },
    );
}

#[test]
fn a_viewer_is_not_offered_the_writes_in_the_keys() {
    let allowed = help_said(fixtures::listed(fixtures::list()));
    for k in ["p pause", "r resume", "d delete", "answer a question"] {
        assert!(allowed.contains(k), "{k} not in {allowed}");
    }
    let mut viewer = fixtures::listed(fixtures::list());
    refused_everything(&mut viewer);
    let said = help_said(viewer.clone());
    for k in ["p pause", "r resume", "d delete", "answer a question"] {
        assert!(!said.contains(k), "{k} in {said}");
    }
    assert!(said.contains("Ctrl-C") && said.contains("filter"), "{said}");
    key(&mut viewer, Key::ch('?'));
    snap3("help_viewer", &viewer);
    let mut read_only = fixtures::listed(fixtures::list());
    read_only.session.read_only = true;
    let said = help_said(read_only);
    assert!(
        !said.contains("p pause") && !said.contains("d delete") && !said.contains("Ctrl-D"),
        "{said}"
    );
}

#[tokio::test]
async fn new_operation_is_not_in_the_keys_of_who_may_not_start_one() {
    let (_api, client) = demo_client().await;
    let mut d = common::dialog::on_clusters(client).await;
    assert_eq!(d.state.screen, Screen::Clusters);
    assert!(help_said(d.state.clone()).contains("new operation"));
    let mut read_only = d.state.clone();
    read_only.session.read_only = true;
    assert!(!help_said(read_only).contains("new operation"));
    refused_everything(&mut d.state);
    assert!(!help_said(d.state.clone()).contains("new operation"));
}

/// `?` on the Operations list names every key it takes (issue 25, item 8): Ctrl-D beside `d`,
/// k9s's sort keys, the command line's commands (`:ctx` too), Tab on the command line and the
/// text keys of the filter; in Japanese, Ctrl-Z is said as going back to the shell. A viewer
/// still gets no delete, by either key.
#[test]
fn the_keys_of_the_operations_list_name_every_key_and_command() {
    let said = help_said(fixtures::listed(fixtures::list()));
    for k in [
        "d delete",
        "Ctrl-D delete",
        "Shift-N sort by name (again: the other way)",
        "Shift-A sort by age",
        "Shift-S sort by state",
        ": command line (its commands below) :ops CLUSTER",
        ":ns NAME list namespace NAME (all: every namespace)",
        ":ctx NAME switch kubeconfig context",
        ":clusters the clusters list",
        ":help these keys",
        ":q quit",
        "Tab complete a command (command line)",
        "Ctrl-U",
        "Ctrl-W",
        "Ctrl-Z back to the shell (fg returns)",
    ] {
        assert!(said.contains(k), "{k} not in {said}");
    }
    let mut s = fixtures::listed(fixtures::list());
    lay_out(&mut s, 160, 48);
    key(&mut s, Key::ch('?'));
    let ja = flat(&s, Lang::Ja, 160, 48);
    for k in [
        ":ctx NAME kubeconfig のコンテキストを切り替え",
        "Ctrl-Z シェルに戻る（fg で復帰）",
        "Shift-N 名前で並べ替え（もう一度押すと逆順）",
    ] {
        assert!(ja.contains(k), "{k} not in {ja}");
    }
    snap3("help_operations", &s);
    // At 40×12 the key column keeps the descriptions 22 wide: the widest key takes a line of
    // its own, its description under it.
    lay_out(&mut s, 40, 12);
    // Scrolled a line at a time until it is the first line shown.
    let mut rows = Vec::new();
    for _ in 0..60 {
        rows = rows_of(&s, Lang::En, 40, 12);
        if rows[2].contains(":ops CLUSTER") {
            break;
        }
        key(&mut s, Key::plain(KeyCode::Down));
    }
    let at = rows.iter().position(|r| r.contains(":ops CLUSTER"));
    let at = at.unwrap_or_else(|| panic!("{rows:#?}"));
    assert!(rows[at].contains(":ops CLUSTER  "), "{}", rows[at]);
    assert!(!rows[at].contains("operations"), "{}", rows[at]);
    assert!(rows[at + 1].contains("the operations list"), "{rows:#?}");
    // Scrolled to its end: the last keys are there, none cut without a marker.
    key(&mut s, Key::plain(KeyCode::End));
    snap3("help_operations_end", &s);
    let mut viewer = fixtures::listed(fixtures::list());
    refused_everything(&mut viewer);
    let said = help_said(viewer);
    assert!(
        !said.contains("Ctrl-D") && !said.contains("d delete"),
        "{said}"
    );
    // The sort keys are the Operations list's alone.
    let mut d = fixtures::listed(fixtures::list());
    key(&mut d, Key::ch('2'));
    assert!(!help_said(d).contains("Shift-N"));
}

/// `?` over the YAML view names its search keys (`/`, `n`, `N`) and the keys of the search
/// typed.
#[test]
fn the_keys_of_a_text_read_name_its_search() {
    let mut s = page_with_events(vec![an_event(1, "running Talos v1.9.3")]);
    key(&mut s, Key::plain(KeyCode::Enter));
    key(&mut s, Key::ch('?'));
    assert!(keys_are_open(&s));
    let said = flat(&s, Lang::En, 80, 24);
    for k in [
        "/ search (Enter finds; Esc clears)",
        "n next line found",
        "N previous line found",
        "Ctrl-U",
    ] {
        assert!(said.contains(k), "{k} not in {said}");
    }
    let ja = flat(&s, Lang::Ja, 80, 24);
    assert!(ja.contains("n 次の一致行"), "{ja}");
}
