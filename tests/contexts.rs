//! `:ctx NAME`, as k9s has it: the service is reached again through another kubeconfig
//! context, and the route, the user and what they may do are asked again; what was shown,
//! asked and allowed under the context before goes. Driven against the in-process service over
//! the embedded API, with the runtime's part (reaching the context) played by the test.

use crate::common;

use common::driver::Driver;
use common::fixtures;
use common::paths::{Path, User, connect};
use ichor_app::action::{Action, Effect, Key, KeyCode, Reached};
use ichor_app::state::{Notice, RbacWrite, Route, Screen, State};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_views::i18n::Lang;
use ichor_views::widgets::Theme;

/// At 80×24 and 160×48, and at 40×12 (a notice cut with "…" there, never silently).
fn snap(name: &str, state: &State) {
    crate::snap_all!(name, state);
    for lang in [Lang::En, Lang::Ja] {
        let term = common::snap::draw(state, lang, 40, 12, Theme::default());
        crate::snapshot!(format!("{name}_{}_40x12", lang.code()), term.backend());
    }
}

const CONTEXTS: [&str; 3] = ["ichor-demo", "operator", "viewer"];

fn route(context: &str) -> Route {
    Route::InProcess {
        context: context.into(),
        why: None,
        asked: false,
    }
}

/// The dashboard as the admin, through context `ichor-demo` of a kubeconfig with three.
async fn dashboard(api: &EmbeddedApi) -> Driver {
    let client = connect(Path::InProcess, api, User::Admin).await;
    let mut state = fixtures::state();
    state.session.demo = false;
    state.session.route = route("ichor-demo");
    state.session.user = Some("admin".into());
    state.session.context = Some("ichor-demo".into());
    state.session.contexts = CONTEXTS.map(String::from).to_vec();
    Driver::new(state, client).await
}

async fn command(d: &mut Driver, line: &str) {
    d.key(Key::ch(':')).await;
    d.type_text(line).await;
    d.code(KeyCode::Enter).await;
}

/// What the runtime does for `Effect::SwitchContext`: `user`'s client answers from now on.
async fn reached(d: &mut Driver, api: &EmbeddedApi, context: &str, user: User) {
    d.client = connect(Path::InProcess, api, user).await;
    let reached = Reached {
        context: context.into(),
        route: route(context),
        namespace: "default".into(),
        all_namespaces: false,
        user: Some(user.name().into()),
        pushes: false,
        production: false,
        read_only: false,
        api_server: None,
    };
    d.act(Action::ContextReached(Box::new(reached))).await;
}

#[tokio::test]
async fn ctx_reaches_the_context_and_asks_who_and_what_again() {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    let mut d = dashboard(&api).await;
    // The admin may start: on the Clusters list `n` opens the form.
    d.key(Key::ch('2')).await;
    assert_eq!(d.state.screen, Screen::Clusters);
    let asked = d.effects.len();
    command(&mut d, "ctx viewer").await;
    assert_eq!(d.effects[asked..], [Effect::SwitchContext("viewer".into())]);
    assert_eq!(
        d.state.notice,
        Some(Notice::ContextSwitching("viewer".into()))
    );
    assert_eq!(d.state.switching.as_deref(), Some("viewer"));
    snap("ctx_switching", &d.state);
    // A second one meanwhile is not started.
    command(&mut d, "ctx operator").await;
    assert_eq!(d.state.notice, Some(Notice::ContextBusy));
    assert_eq!(d.effects.len(), asked + 1);

    reached(&mut d, &api, "viewer", User::Viewer).await;
    let s = &d.state;
    assert_eq!(s.session.context.as_deref(), Some("viewer"));
    assert_eq!(s.session.user.as_deref(), Some("viewer"));
    assert_eq!(s.session.route, route("viewer"));
    assert_eq!(
        s.session.contexts, CONTEXTS,
        "the kubeconfig's contexts stay"
    );
    assert_eq!(s.screen, Screen::Operations, "started again, on the list");
    assert_eq!(s.switching, None);
    assert_eq!(s.notice, Some(Notice::ContextSwitched("viewer".into())));
    assert!(
        d.effects[asked + 1..]
            .iter()
            .any(|e| matches!(e, Effect::Permissions { namespace } if namespace == "default")),
        "what the viewer may do is asked again"
    );
    snap("ctx_switched", &d.state);
    // The viewer's permissions, not the admin's, decide now.
    d.key(Key::ch('2')).await;
    d.key(Key::ch('n')).await;
    assert_eq!(
        d.state.notice,
        Some(Notice::NotPermitted(RbacWrite::Start, "default".into()))
    );
    assert!(d.state.dialog.is_none());
    assert!(!d.wrote());
    assert!(api.write_log().is_empty());
}

#[tokio::test]
async fn ctx_alone_unknown_or_without_a_kubeconfig_says_what_can_be_typed_and_asks_nothing() {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    let mut d = dashboard(&api).await;
    let before = d.state.session.clone();
    let asked = d.effects.len();
    command(&mut d, "ctx").await;
    assert_eq!(d.state.notice, Some(Notice::ContextUsage(None)));
    snap("ctx_usage", &d.state);
    command(&mut d, "ctx nope").await;
    assert_eq!(
        d.state.notice,
        Some(Notice::ContextUsage(Some("nope".into())))
    );
    snap("ctx_unknown", &d.state);
    // Refused: the context in use stays.
    d.state.switching = Some("viewer".into());
    d.act(Action::ContextFailed {
        context: "viewer".into(),
        message: "kubeconfig /k, context \"viewer\": the certificate names no data and no file"
            .into(),
    })
    .await;
    assert!(matches!(&d.state.notice, Some(Notice::ContextFailed(c, _)) if c == "viewer"));
    assert_eq!(d.state.switching, None);
    snap("ctx_failed", &d.state);
    // A late answer of a context no longer being reached changes nothing.
    let shown = d.state.clone();
    d.act(Action::ContextFailed {
        context: "operator".into(),
        message: "late".into(),
    })
    .await;
    assert_eq!(d.state.notice, shown.notice);
    assert_eq!(d.state.session, before);
    // Without a kubeconfig (a server, the demo) there is nothing to switch.
    d.state.session.contexts.clear();
    d.state.session.context = None;
    d.state.session.route = Route::Server {
        url: "https://ichor.example".into(),
    };
    command(&mut d, "ctx viewer").await;
    assert_eq!(d.state.notice, Some(Notice::NoContexts));
    snap("ctx_none", &d.state);
    assert_eq!(d.effects[asked..], [], "nothing was asked of the server");
}

#[test]
fn ctx_waits_for_a_write_awaiting_its_answer() {
    use ichor_app::update::update;
    let mut s = fixtures::listed(vec![fixtures::running_rollout()]);
    s.session.demo = false;
    s.session.route = route("ichor-demo");
    s.session.contexts = CONTEXTS.map(String::from).to_vec();
    update(&mut s, Action::Key(Key::ch('d')));
    update(&mut s, Action::Key(Key::ch('y')));
    assert!(s.pending.is_some(), "a delete is awaited");
    let mut effects = Vec::new();
    for c in ":ctx viewer".chars() {
        effects.extend(update(&mut s, Action::Key(Key::ch(c))));
    }
    effects.extend(update(&mut s, Action::Key(Key::plain(KeyCode::Enter))));
    assert_eq!(s.notice, Some(Notice::ContextBusy));
    assert_eq!(s.switching, None);
    assert_eq!(effects, []);
    snap("ctx_busy", &s);
}
